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

TARGETS="TypedQuery TextTypedQuery WordPiece SafeTensorsHeader SnapshotLoader PageDecoder"

sources_for() {
    case "$1" in
        TypedQuery) echo "-module-name TroveSQLite -I $ROOT/Sources/CSQLite $ROOT/Sources/TroveSQLite/*.swift" ;;
        TextTypedQuery)
            # Sources/TroveText once the text branch is merged; until then, from the branch itself.
            local text="$ROOT/Sources/TroveText"
            if [ ! -d "$text" ]; then
                text="$OUT/src-text/Sources/TroveText"
                rm -rf "$OUT/src-text" && mkdir -p "$OUT/src-text"
                git -C "$ROOT" archive "${TROVE_TEXT_BRANCH:-text}" Sources/TroveText | tar -x -C "$OUT/src-text"
            fi
            echo "-module-name TroveText -I $ROOT/Sources/CSQLite $text/*.swift" ;;
        WordPiece|SafeTensorsHeader) echo "-module-name TroveEmbeddings $ROOT/Sources/TroveEmbeddings/*.swift" ;;
        SnapshotLoader)
            # TroveVectors uses the CTroveKernels C module: compile it and give it a module map.
            mkdir -p "$OUT/CTroveKernels"
            for c in kernels snapshot; do
                clang -O2 -g -fsanitize=address -c "$ROOT/Sources/CTroveKernels/$c.c" \
                    -I "$ROOT/Sources/CTroveKernels/include" -o "$OUT/CTroveKernels/$c.o"
            done
            printf 'module CTroveKernels {\n  header "%s"\n  export *\n}\n' \
                "$ROOT/Sources/CTroveKernels/include/CTroveKernels.h" > "$OUT/CTroveKernels/module.modulemap"
            echo "-module-name TroveVectors -package-name Trove -I $OUT/CTroveKernels $OUT/CTroveKernels/kernels.o $OUT/CTroveKernels/snapshot.o" \
                "$(find "$ROOT/Sources/TroveVectors" -name '*.swift' | tr '\n' ' ')" ;;
        *) echo "unknown target $1" >&2; exit 2 ;;
    esac
}

build() {
    local target=$1
    if [ "$target" = PageDecoder ]; then
        # A C target: the encrypted-page codec with OpenSSL's AES-GCM (libssl-dev).
        clang -fsanitize=fuzzer,address -O1 -g -I "$ROOT/Sources/CTroveCipher/include" \
            "$ROOT/Sources/CTroveCipher/page.c" "$ROOT/Sources/CTroveCipher/backend.c" "$ROOT/Sources/CTroveCipher/gcm_vaes.c" \
            "$ROOT/Fuzz/Targets/PageDecoder.c" -lcrypto -o "$OUT/$target"
        echo "built $OUT/$target"
        return
    fi
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
    if [ "$target" = SnapshotLoader ] && [ ! -f "$ROOT/Fuzz/Corpus/$target/seed-0" ]; then
        mkdir -p "$ROOT/Fuzz/Corpus/$target"
        TROVE_FUZZ_WRITE_SEEDS="$ROOT/Fuzz/Corpus/$target" "$OUT/$target"
    fi
    if [ "$target" = WordPiece ]; then
        local vocab="${TROVE_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/trove/models/all-MiniLM-L6-v2}/vocab.txt"
        [ -f "$vocab" ] && env=(TROVE_FUZZ_VOCAB="$vocab")
    fi
    # First corpus dir receives new inputs; the committed seeds are read only.
    # The Swift runtime's backtracer stalls under ASan; libFuzzer prints the crash itself.
    env SWIFT_BACKTRACE=enable=no "${env[@]}" "$OUT/$target" -max_total_time="$seconds" -rss_limit_mb=1024 -max_len=4096 \
        -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$target/" \
        "$OUT/corpus/$target" "$ROOT/Fuzz/Corpus/$target"
}

case "${1:-}" in
    build) build "$2" ;;
    run) run "$2" "${3:-600}" ;;
    list) echo "$TARGETS" ;;
    *) echo "usage: $0 build|run <target> [seconds] | list" >&2; exit 2 ;;
esac
