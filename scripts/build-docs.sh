#!/usr/bin/env bash
# Builds the DocC catalog of the Trove module (Sources/Trove/Trove.docc) with the toolchain's own
# `docc`, no plugin package: SwiftPM dumps the public symbol graphs, docc converts the catalog
# with Trove's graphs, and any warning (a broken ``Symbol`` link in an article or a doc
# comment) fails the build. A second pass checks the links in internal symbols' doc comments.
# Usage: bash scripts/build-docs.sh [output folder]   (default: .build/docs/Trove.doccarchive)
set -euo pipefail
cd "$(dirname "$0")/.."

output="${1:-.build/docs/Trove.doccarchive}"
log=$(mktemp) marker=$(mktemp) internal_output=$(mktemp -d)
trap 'rm -rf "$log" "$marker" "$internal_output"' EXIT

# Converts the catalog with Trove's symbols of at least `level` access into `archive`; any
# warning fails. `dump-symbol-graph` builds what is not built yet, writes every module's graph
# and prints "Files written to <dir>". On Linux it also tries SwiftPM's synthesized
# test-discovery modules, fails on them and exits 1; so its status is not the test: Trove's
# graph must be fresh. Only the Trove module's graphs (its own symbols and its extensions of
# other modules' types) go in: the catalog documents one module.
convert() {
    local level="$1" graphs="$2" archive="$3"
    shift 3
    touch "$marker"
    local status=0
    swift package dump-symbol-graph --minimum-access-level "$level" --emit-extension-block-symbols >"$log" 2>&1 || status=$?
    local dumped
    dumped=$(sed -n 's/^Files written to //p' "$log" | tail -n 1)
    if [ -z "$dumped" ] || [ ! "$dumped/Trove.symbols.json" -nt "$marker" ]; then
        cat "$log" >&2
        echo "build-docs: no fresh $level symbol graph for Trove (dump-symbol-graph exited $status)" >&2
        exit 1
    fi
    rm -rf "$graphs" "$archive"
    mkdir -p "$graphs" "$(dirname "$archive")"
    cp "$dumped"/Trove.symbols.json "$graphs"/
    cp "$dumped"/Trove@*.symbols.json "$graphs"/ 2>/dev/null || true
    docc convert Sources/Trove/Trove.docc \
        --additional-symbol-graph-dir "$graphs" \
        --output-path "$archive" \
        --fallback-display-name Trove \
        --fallback-bundle-identifier trove.Trove \
        --warnings-as-errors "$@"
}

convert public .build/docs/symbol-graphs "$output"
echo "build-docs: $output"

# The same check over internal symbols' doc comments, so a ``link`` to a renamed or deleted type
# fails too. Only the links: parameter lists of internal helpers are not held to the public rule.
convert internal .build/docs/internal-symbol-graphs "$internal_output/Trove.doccarchive" \
    --disable-parameters-and-returns-validation
echo "build-docs: internal symbols' links resolve"
