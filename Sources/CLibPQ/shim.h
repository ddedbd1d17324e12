// PostgreSQL's client library (Debian: libpq-dev). Only TroveSync imports it.
#include <libpq-fe.h>
