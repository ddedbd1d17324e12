#!/usr/bin/env bash
# libFuzzer targets for Trove's parsers. Each target is compiled together with the sources of the
# module it tests (so internal code is reachable) and a `LLVMFuzzerTestOneInput` entry point.
#
#   bash Fuzz/run.sh build <target>            # -> Fuzz/.build/<target>
#   bash Fuzz/run.sh run <target> [seconds]    # default 600 s; new inputs go to Fuzz/.build/corpus/<target>
#   bash Fuzz/run.sh list
#
# Seeds live in Fuzz/Corpus/<target> (small, committed). Crashes are written to
# Fuzz/.build/artifacts/<target>/ ; reproduce one with `Fuzz/.build/<target> <crash-file>`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT="$ROOT/Fuzz/.build"
mkdir -p "$OUT"

TARGETS="TypedQuery WordPiece SafeTensorsHeader SnapshotLoader"

sources_for() {
    case "$1" in
        TypedQuery) echo "-module-name TroveSQLite -I $ROOT/Sources/CSQLite $ROOT/Sources/TroveSQLite/*.swift" ;;
        WordPiece|SafeTensorsHeader) echo "-module-name TroveEmbeddings $ROOT/Sources/TroveEmbeddings/*.swift" ;;
        SnapshotLoader) echo "-module-name TroveVectors $(find "$ROOT/Sources/TroveVectors" -name '*.swift' | tr '\n' ' ')" ;;
        *) echo "unknown target $1" >&2; exit 2 ;;
    esac
}

build() {
    local target=$1
    # shellcheck disable=SC2046
    swiftc -sanitize=fuzzer,address -parse-as-library -swift-version 6 -O -g \
        $(sources_for "$target") "$ROOT/Fuzz/Targets/$target.swift" -o "$OUT/$target" 2>&1 | { grep -v "Cannot export local symbol" || true; }
    echo "built $OUT/$target"
}

run() {
    local target=$1 seconds=${2:-600}
    [ -x "$OUT/$target" ] || build "$target"
    mkdir -p "$OUT/corpus/$target" "$OUT/artifacts/$target"
    local env=()
    if [ "$target" = WordPiece ]; then
        local vocab="${TROVE_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/trove/models/all-MiniLM-L6-v2}/vocab.txt"
        [ -f "$vocab" ] && env=(TROVE_FUZZ_VOCAB="$vocab")
    fi
    # First corpus dir receives new inputs; the committed seeds are read only.
    env "${env[@]}" "$OUT/$target" -max_total_time="$seconds" -rss_limit_mb=1024 -max_len=4096 \
        -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$target/" \
        "$OUT/corpus/$target" "$ROOT/Fuzz/Corpus/$target"
}

case "${1:-}" in
    build) build "$2" ;;
    run) run "$2" "${3:-600}" ;;
    list) echo "$TARGETS" ;;
    *) echo "usage: $0 build|run <target> [seconds] | list" >&2; exit 2 ;;
esac
