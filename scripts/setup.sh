#!/usr/bin/env bash
# One-time setup for a fresh Debian machine with the Swift toolchain:
# the C libraries Trove links or loads, and the two built-in embedding models.
# Safe to re-run: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
[ -f /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
# OpenSSL's libcrypto: AES-256-GCM and PBKDF2 for encrypted databases (CCrypto target).
[ -f /usr/include/openssl/evp.h ] || missing+=(libssl-dev)
ldconfig -p 2>/dev/null | grep -q 'libopenblas\.so\.0' || missing+=(libopenblas0)
# Sync: libpq (CLibPQ target) and a PostgreSQL 15 server the sync tests start in a temporary folder.
[ -f /usr/include/postgresql/libpq-fe.h ] || missing+=(libpq-dev)
[ -x /usr/lib/postgresql/15/bin/initdb ] || missing+=(postgresql-15)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "setup: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ -x scripts/fetch-model.sh ]; then
    bash scripts/fetch-model.sh
fi
# The multilingual model (multilingual-e5-small, 4-bit): `--model multilingual-e5-small`.
if [ -x scripts/fetch-e5.sh ]; then
    bash scripts/fetch-e5.sh
fi
