#!/usr/bin/env bash
# Builds the DocC catalog of the Trove module (Sources/Trove/Trove.docc) with the toolchain's own
# `docc`, no plugin package: SwiftPM dumps the public symbol graphs, docc converts the catalog
# with Trove's graphs, and any warning (a broken ``Symbol`` link in an article or a doc
# comment) fails the build.
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
