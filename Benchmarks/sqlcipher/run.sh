#!/usr/bin/env bash
# sqlite3 vs Debian's sqlcipher (SQLCipher 3.4.1 on SQLite 3.15.2) on the same SQL: a reference
# point for what SQLCipher's own encryption costs on this machine. Needs: apt-get install sqlite3 sqlcipher
# Usage: bash Benchmarks/sqlcipher/run.sh [rounds]
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
now() { date +%s.%N; }
for round in $(seq 1 "$rounds"); do
    for tool in sqlite3 sqlcipher; do
        db="$dir/$tool-$round.db"
        key=""
        [ "$tool" = sqlcipher ] && key="PRAGMA key = 'bench passphrase'; PRAGMA cipher_page_size = 4096;"
        start=$(now)
        { echo "$key"; cat workload.sql; } | "$tool" "$db" > /dev/null
        mid=$(now)
        { echo "$key"; cat query.sql; } | "$tool" "$db" > /dev/null
        end=$(now)
        size=$(stat -c %s "$db")
        printf '%s round %d: insert 200000 rows %.2f s, open + 3 scans %.2f s, %d bytes\n' \
            "$tool" "$round" "$(echo "$mid - $start" | bc)" "$(echo "$end - $mid" | bc)" "$size"
    done
done
