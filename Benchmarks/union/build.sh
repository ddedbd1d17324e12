#!/usr/bin/env bash
# Builds the 172,067-vector "union" set for `trove-bench ann`: the 58,029 shared package-description
# vectors plus Trove's own all-MiniLM-L6-v2 embeddings of the 114,038 WordNet 3.0 glosses.
#
#   bash Benchmarks/union/build.sh          # about 30 min on 2 busy cores, ~10 min idle
#
# Needs: the model (scripts/fetch-model.sh), /tmp/trove-bench/data/wordnet.jsonl
# (../shared/bench/data/build_corpora.py) and the peers' venv (../shared/bench/setup.sh).
# Writes /tmp/union/union_base.f32.npy and, for peers/vector.py --dataset union,
# /tmp/trove-bench/emb/{pkg_body,pkg_synopsis,wn_gloss}.npy.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$HERE/../.."
PY="${TROVE_BENCH_CACHE:-/tmp/trove-bench}/venv/bin/python"
OUT=/tmp/union
mkdir -p "$OUT"
(cd "$ROOT" && swift build -c release --product trove)
"$PY" -c "
import json
with open('$OUT/glosses.txt', 'w') as f:
    for line in open('${TROVE_BENCH_CACHE:-/tmp/trove-bench}/data/wordnet.jsonl'):
        f.write(json.loads(line)['gloss'].replace('\n', ' ').replace('\r', ' ') + '\n')
"
"$ROOT/.build/release/trove" embed < "$OUT/glosses.txt" > "$OUT/glosses.vec"
(cd "$OUT" && "$PY" "$HERE/make_union.py" glosses.vec && "$PY" "$HERE/check_glosses.py")
