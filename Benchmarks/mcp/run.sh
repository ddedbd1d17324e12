#!/usr/bin/env bash
# MCP search round trip on notes-dev: builds the release `trove` and runs roundtrip.py.
# Needs the models (bash scripts/setup.sh) and TROVE_SHARED (default: ../shared beside the repository).
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build -c release --product trove
python3 Benchmarks/mcp/roundtrip.py "$(swift build -c release --show-bin-path)/trove"
