#!/usr/bin/env bash
# Runs the sync fault harness (Tests/TroveSyncTests/FaultHarnessTests.swift) once per seed and
# prints each run's summary line, then the seeds that failed. The sizes come from the
# environment as for one run (TROVE_FAULT_DEVICES, TROVE_FAULT_SECONDS, TROVE_FAULT_RESTARTS).
# Usage: bash scripts/fault-sweep.sh [first seed] [count]      (default: 1 20)
# Example: TROVE_FAULT_DEVICES=6 TROVE_FAULT_SECONDS=60 bash scripts/fault-sweep.sh 1 20
# Each run's full output is kept in .build/fault-sweep/seed-<n>.log, its devices' output and
# ledgers in .build/fault-sweep/seed-<n>/.
set -uo pipefail
cd "$(dirname "$0")/.."

first="${1:-1}" count="${2:-20}"
mkdir -p .build/fault-sweep
swift build --build-tests >/dev/null || { echo "build failed"; exit 1; }
failed=()
for seed in $(seq "$first" $((first + count - 1))); do
    log=".build/fault-sweep/seed-$seed.log"
    start=$(date +%s)
    rm -rf ".build/fault-sweep/seed-$seed"
    TROVE_FAULT_SEED="$seed" TROVE_FAULT_LOG="$PWD/.build/fault-sweep/seed-$seed" swift test --skip-build --filter FaultHarnessTests >"$log" 2>&1
    status=$?
    took=$(( $(date +%s) - start ))
    summary=$(grep -a -o 'fault harness seed .*' "$log" | tail -1)
    if [ "$status" -eq 0 ]; then
        echo "seed $seed: passed (${took} s): ${summary}"
    else
        failed+=("$seed")
        echo "seed $seed: FAILED (${took} s), see $log:"
        grep -a -E "Expectation failed|recorded an issue|error:" "$log" | head -5
    fi
done
echo "${count} seeds from ${first}: $((count - ${#failed[@]})) passed, ${#failed[@]} failed ${failed[*]:-}"
[ ${#failed[@]} -eq 0 ]
