// libpq for the sync-postgres benchmark's raw-libpq limit (Debian: libpq-dev).
#include <libpq-fe.h>
