"""MCP search tool call round trip: `trove mcp` (warm, one process) against `trove search --json`
(one process per query, what a tool that shells out pays), on the notes-dev sample.

    bash Benchmarks/mcp/run.sh            # builds release trove, then runs this

Times the client's round trip over the pipes (write the request line, read the answer line) with
raw JSON-RPC, so the figure is the server's plus the pipes', not a client library's. Rounds
alternate between the two; every answer is checked to hold results. Prints every parameter.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

TROVE = sys.argv[1]
SHARED = os.environ.get("TROVE_SHARED", os.path.join(os.path.dirname(__file__), "../../../shared"))
NOTES = os.path.join(SHARED, "eval/notes-dev/notes.jsonl")
QUERIES = [json.loads(line)["query"] for line in open(os.path.join(SHARED, "eval/notes-dev/queries.jsonl"), encoding="utf-8")]
ROUNDS = int(os.environ.get("ROUNDS", "3"))
MODES = ["hybrid", "text"]


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main():
    work = tempfile.mkdtemp(prefix="trove-mcp-bench-")
    db = os.path.join(work, "notes.sqlite")
    start = time.perf_counter()
    subprocess.run([TROVE, "index", "--quiet", "--db", db, NOTES], check=True)
    print(f"trove: {TROVE}\nnotes: {NOTES} (indexed in {time.perf_counter() - start:.1f} s)")
    stats = json.loads(subprocess.run([TROVE, "stats", "--json", "--db", db], check=True, capture_output=True, text=True).stdout)
    print(f"records: {stats['records']}, models: {', '.join(field['model'] for field in stats['vector_fields'])}, index: {stats['index']}")
    print(f"queries: {len(QUERIES)} per round and mode, k = 10, rounds: {ROUNDS}, modes: {', '.join(MODES)}")

    server = subprocess.Popen([TROVE, "mcp", "--db", db], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
    ids = iter(range(1, 10**9))

    def rpc(method, params):
        request = {"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        answer = json.loads(server.stdout.readline())
        assert answer["id"] == request["id"], answer
        return answer

    rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    for query in QUERIES[:10]:  # warm: models loaded, pages cached
        rpc("tools/call", {"name": "search", "arguments": {"query": query}})

    mcp = {mode: [] for mode in MODES}
    cli = {mode: [] for mode in MODES}
    found = {mode: 0 for mode in MODES}
    for round_ in range(ROUNDS):
        for mode in MODES:
            for query in QUERIES:
                start = time.perf_counter()
                answer = rpc("tools/call", {"name": "search", "arguments": {"query": query, "mode": mode, "k": 10}})
                mcp[mode].append(time.perf_counter() - start)
                assert not answer["result"]["isError"], answer
                found[mode] += bool(answer["result"]["structuredContent"]["results"])
            # The peer on a third of the queries per round (a process per query is slow).
            for query in QUERIES[round_::3]:
                start = time.perf_counter()
                done = subprocess.run([TROVE, "search", "--json", "--db", db, "--mode", mode, "-k", "10", "--", query], capture_output=True, text=True)
                cli[mode].append(time.perf_counter() - start)
                assert done.returncode == 0 and "results" in json.loads(done.stdout), done.stderr
    server.stdin.close()
    server.wait(timeout=30)

    print()
    print("| mode | trove mcp p50 | p90 | p99 | trove search --json (process per query) p50 | ratio | calls (with results) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for mode in MODES:
        a, b = mcp[mode], cli[mode]
        print(f"| {mode} | {statistics.median(a) * 1000:.1f} ms | {percentile(a, 90) * 1000:.1f} ms | {percentile(a, 99) * 1000:.1f} ms "
              f"| {statistics.median(b) * 1000:.1f} ms | {statistics.median(b) / statistics.median(a):.0f}x | {len(a)} ({found[mode]}) / {len(b)} |")


main()
