#!/usr/bin/env bash
# Builds the DocC catalog of the Trove module (Sources/Trove/Trove.docc) with the toolchain's own
# `docc`, no plugin package: SwiftPM dumps the public symbol graphs, docc converts the catalog
# with Trove's graphs, and any warning (a broken ``Symbol`` link in an article or a doc
# comment) fails the build. A second pass checks the links in internal symbols' doc comments.
# Usage: bash scripts/build-docs.sh [output folder]   (default: .build/docs/Trove.doccarchive)
set -euo pipefail
cd "$(dirname "$0")/.."

output="${1:-.build/docs/Trove.doccarchive}"
graphs=".build/docs/symbol-graphs"

# `dump-symbol-graph` builds what is not built yet, writes every module's graph and prints
# "Files written to <dir>". On Linux it also tries SwiftPM's synthesized test-discovery modules,
# fails on them and exits 1; so its status is not the test: Trove's graph must be fresh.
log=$(mktemp) marker=$(mktemp)
trap 'rm -f "$log" "$marker"' EXIT
status=0
swift package dump-symbol-graph --minimum-access-level public --emit-extension-block-symbols >"$log" 2>&1 || status=$?
dumped=$(sed -n 's/^Files written to //p' "$log" | tail -n 1)
if [ -z "$dumped" ] || [ ! "$dumped/Trove.symbols.json" -nt "$marker" ]; then
    cat "$log" >&2
    echo "build-docs: no fresh symbol graph for Trove (dump-symbol-graph exited $status)" >&2
    exit 1
fi

# Only the Trove module's graphs (its own symbols and its extensions of other modules' types):
# the catalog documents one module.
rm -rf "$graphs" "$output"
mkdir -p "$graphs" "$(dirname "$output")"
cp "$dumped"/Trove.symbols.json "$graphs"/
cp "$dumped"/Trove@*.symbols.json "$graphs"/ 2>/dev/null || true

docc convert Sources/Trove/Trove.docc \
    --additional-symbol-graph-dir "$graphs" \
    --output-path "$output" \
    --fallback-display-name Trove \
    --fallback-bundle-identifier trove.Trove \
    --warnings-as-errors
echo "build-docs: $output"

# The same check over internal symbols' doc comments, so a ``link`` to a renamed or deleted type
# fails too. Only the links: parameter lists of internal helpers are not held to the public rule.
internal_graphs=".build/docs/internal-symbol-graphs"
touch "$marker"
status=0
swift package dump-symbol-graph --minimum-access-level internal --emit-extension-block-symbols >"$log" 2>&1 || status=$?
dumped=$(sed -n 's/^Files written to //p' "$log" | tail -n 1)
if [ -z "$dumped" ] || [ ! "$dumped/Trove.symbols.json" -nt "$marker" ]; then
    cat "$log" >&2
    echo "build-docs: no fresh internal symbol graph for Trove (dump-symbol-graph exited $status)" >&2
    exit 1
fi
rm -rf "$internal_graphs"
mkdir -p "$internal_graphs"
cp "$dumped"/Trove.symbols.json "$internal_graphs"/
cp "$dumped"/Trove@*.symbols.json "$internal_graphs"/ 2>/dev/null || true
internal_output=$(mktemp -d)
trap 'rm -rf "$log" "$marker" "$internal_output"' EXIT
docc convert Sources/Trove/Trove.docc \
    --additional-symbol-graph-dir "$internal_graphs" \
    --output-path "$internal_output/Trove.doccarchive" \
    --fallback-display-name Trove \
    --fallback-bundle-identifier trove.Trove \
    --disable-parameters-and-returns-validation \
    --warnings-as-errors >/dev/null
echo "build-docs: internal symbols' links resolve"
