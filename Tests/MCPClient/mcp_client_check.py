"""Drives `trove mcp` with the official MCP Python SDK, as an assistant would.

Started by TroveCLITests (MCPClientTests) with the venv that scripts/setup.sh creates:

    .build/mcp-venv/bin/python Tests/MCPClient/mcp_client_check.py TROVE DB NOTES

TROVE is the built `trove` binary, DB a database indexed from the folder NOTES. The script talks
to `trove mcp --db DB` over stdio in both protocol eras (the per-request 2026 revision the SDK
negotiates by default, and the 2025 initialize handshake), calls every tool with good and bad
arguments, reads resources, runs 20 calls at once, compares search results with
`trove search --json` for the same queries, checks the raw protocol's error answers and a clean
stop on end of input, and exits non-zero with the failed checks on stderr.
"""

import asyncio
import json
import os
import subprocess
import sys

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

TROVE, DB, NOTES = sys.argv[1:4]
failures: list[str] = []
checks = 0


def check(condition: bool, what: str) -> None:
    global checks
    checks += 1
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


def cli(*arguments: str) -> dict:
    """`trove ARGS --json --db DB` run in NOTES, parsed."""
    done = subprocess.run([TROVE, "--db", DB, "--json", *arguments], cwd=NOTES, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"trove {arguments} failed: {done.stderr}")
    return json.loads(done.stdout)


def server(*extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=TROVE, args=["mcp", "--db", DB, *extra], cwd=NOTES)


SEARCHES = [
    {"query": "when is the dentist appointment"},
    {"query": "furnace filter size", "mode": "text"},
    {"query": "what did we cook for dinner", "mode": "vector", "k": 2},
    {"query": "lake", "k": 1},
    {"query": "insurance card", "mode": "hybrid", "k": 3},
    {"query": "blue folder", "collection": "home"},
    {"query": "blue folder", "collection": ["home"], "mode": "text"},
    {"query": "dentist appointment", "min_score": 0.5},
]


def search_argv(arguments: dict) -> list[str]:
    argv = ["search"]
    if "mode" in arguments:
        argv += ["--mode", arguments["mode"]]
    if "k" in arguments:
        argv += ["-k", str(arguments["k"])]
    if "min_score" in arguments:
        argv += ["--min-score", str(arguments["min_score"])]
    names = arguments.get("collection", [])
    for name in [names] if isinstance(names, str) else names:
        argv += ["-c", name]
    return argv + ["--", arguments["query"]]


async def tool_error(client: Client, name: str, arguments: dict, expect: str, what: str) -> None:
    """The call answers a tool error (isError) whose message contains `expect`."""
    result = await client.call_tool(name, arguments)
    text = result.content[0].text if result.content else ""
    check(result.is_error is True and expect in text, f"{what}: expected a tool error with '{expect}', got {result.is_error} {text!r}")


async def session(mode: str, expected: list[dict]) -> None:
    async with Client(server(), mode=mode) as client:
        era = client.protocol_version
        check(era == ("2026-07-28" if mode == "auto" else "2025-11-25"), f"{mode}: negotiated {era}")
        info = client.server_info
        check(info is not None and info.name == "trove", f"{mode}: server info {info}")

        tools = (await client.list_tools()).tools
        names = sorted(tool.name for tool in tools)
        check(names == ["get", "list_collections", "list_sources", "multi_get", "search", "status"], f"{mode}: tools {names}")
        for tool in tools:
            check(tool.input_schema.get("type") == "object", f"{mode}: {tool.name} input schema")
            check(tool.output_schema is not None and tool.output_schema.get("type") == "object", f"{mode}: {tool.name} output schema")

        # search: the same results as `trove search --json`, structured and as text.
        for arguments, want in zip(SEARCHES, expected):
            result = await client.call_tool("search", arguments)
            check(not result.is_error, f"{mode}: search {arguments} failed: {result.content}")
            await client.session.validate_tool_result("search", result)
            check(result.structured_content == want, f"{mode}: search {arguments} differs from trove search --json:\n{result.structured_content}\n{want}")
            check(json.loads(result.content[0].text) == want, f"{mode}: search {arguments} text content differs")
        check(len(expected[0]["results"]) > 0, f"{mode}: the dentist query found nothing")
        check(all(r["collection"] == "home" and r["context"] == "Household notes" for r in expected[0]["results"]), f"{mode}: results carry the collection's context")
        await tool_error(client, "search", {"query": "x", "collection": "garage"}, "no collection named 'garage'", f"{mode}: unknown collection")
        collections = (await client.call_tool("list_collections", {})).structured_content["collections"]
        check([c["name"] for c in collections] == ["home"] and collections[0]["context"] == "Household notes", f"{mode}: list_collections {collections}")
        check(collections[0]["records"] == cli("stats")["records"], f"{mode}: list_collections records")

        # search with bad arguments: tool errors with a clear message, never a crash.
        await tool_error(client, "search", {"query": "x", "k": 0}, "'k' must be a whole number from 1 to 1000", f"{mode}: k=0")
        await tool_error(client, "search", {"query": "x", "k": "three"}, "'k'", f"{mode}: k as text")
        await tool_error(client, "search", {"query": "x", "mode": "fuzzy"}, "--mode must be hybrid, vector or text", f"{mode}: bad mode")
        await tool_error(client, "search", {"query": "   "}, "the query is empty", f"{mode}: blank query")
        await tool_error(client, "search", {}, "'query' is required", f"{mode}: no query")
        await tool_error(client, "search", {"query": "x", "colour": "red"}, "unknown argument 'colour'", f"{mode}: unknown argument")
        await tool_error(client, "search", {"query": "x", "min_score": 2}, "--min-score expects a number from 0 to 1", f"{mode}: min_score above 1")
        await tool_error(client, "search", {"query": "x", "min_score": "high"}, "'min_score' must be a number", f"{mode}: min_score as text")
        for want in expected:
            scores = [r["score"] for r in want["results"]]
            check(scores == sorted(scores, reverse=True) and all(0 <= x <= 1 for x in scores), f"{mode}: scores are 0..1 and fall with rank: {scores}")
        check(all(r["score"] >= 0.5 for r in expected[-1]["results"]), f"{mode}: min_score keeps only scores of at least 0.5")
        try:
            await client.call_tool("frobnicate", {})
            check(False, f"{mode}: an unknown tool was accepted")
        except MCPError as error:
            check(error.error.code == -32602 and "unknown tool" in error.error.message, f"{mode}: unknown tool error {error.error}")
        try:
            await client.call_tool("index", {"paths": [NOTES]})
            check(False, f"{mode}: index was callable without --allow-index")
        except MCPError as error:
            check("--allow-index" in error.error.message, f"{mode}: index refusal {error.error}")

        # get: by path, short id and record id; a line range; bad references.
        dentist = os.path.join(NOTES, "dentist.md")
        with open(dentist, encoding="utf-8") as f:
            dentist_text = f.read()
        top = expected[0]["results"][0]
        whole = await client.call_tool("get", {"note": "dentist.md"})
        check(not whole.is_error and whole.structured_content["text"] == dentist_text.rstrip("\n"), f"{mode}: get by path {whole.content}")
        check(whole.structured_content["short_id"] == top["short_id"], f"{mode}: the short id of search and get differ")
        check(whole.structured_content["collections"] == [{"name": "home", "context": "Household notes"}], f"{mode}: get names the note's collection and context")
        by_short = await client.call_tool("get", {"note": top["short_id"], "from_line": 2, "to_line": 3})
        lines = dentist_text.split("\n")
        check(by_short.structured_content["text"] == "\n".join(lines[1:3]), f"{mode}: get by short id, lines 2-3: {by_short.structured_content}")
        by_id = await client.call_tool("get", {"note": str(top["id"])})
        check(by_id.structured_content["path"] == top["source"], f"{mode}: get by record id")
        await tool_error(client, "get", {"note": "#ffffffff"}, "no note with short id", f"{mode}: unknown short id")
        await tool_error(client, "get", {"note": "nowhere.md"}, "no indexed note", f"{mode}: unknown path")
        await tool_error(client, "get", {"note": "dentist.md", "from_line": 99}, "past its end", f"{mode}: range past the end")
        await tool_error(client, "get", {"note": "dentist.md", "from_line": 3, "to_line": 2}, "'to_line'", f"{mode}: reversed range")
        await tool_error(client, "get", {"note": 7}, "'note' must be a string", f"{mode}: note as a number")

        # multi_get: a glob within a budget; what was cut or left out is said.
        everything = await client.call_tool("multi_get", {"pattern": "**/*.md"})
        paths = [note["path"] for note in everything.structured_content["notes"]]
        check(len(paths) == 3 and all(p.endswith(".md") for p in paths) and paths == sorted(paths), f"{mode}: multi_get **/*.md: {paths}")
        small = await client.call_tool("multi_get", {"notes": ["*.md", "furnace.txt"], "max_bytes": 120})
        content = small.structured_content
        check(content["bytes"] <= 120 and len(content["left_out"]) >= 1, f"{mode}: multi_get within 120 bytes: {content}")
        check(any(note["cut"] for note in content["notes"]) or content["left_out"], f"{mode}: multi_get says what did not fit")
        await tool_error(client, "multi_get", {}, "give 'pattern'", f"{mode}: multi_get without notes")
        await tool_error(client, "multi_get", {"pattern": "*.pdf"}, "no indexed note matches", f"{mode}: multi_get no match")
        await tool_error(client, "multi_get", {"pattern": "*.md", "max_bytes": -1}, "'max_bytes'", f"{mode}: negative budget")

        # list_sources and status agree with the CLI.
        sources = (await client.call_tool("list_sources", {})).structured_content["sources"]
        stats = cli("stats")
        check(len(sources) == stats["sources"] and sum(s["records"] for s in sources) == stats["records"], f"{mode}: list_sources {sources}")
        status = (await client.call_tool("status", {})).structured_content
        check(status["records"] == stats["records"] and status["last_indexed"] is not None and len(status["vector_fields"]) >= 1 and status["collections"] == ["home"], f"{mode}: status {status}")

        # Resources: one per note, readable, attachable.
        listed = (await client.list_resources()).resources
        check(len(listed) == 4, f"{mode}: {len(listed)} resources")
        uri = next(r.uri for r in listed if str(r.name).endswith("dentist.md"))
        read = await client.read_resource(str(uri))
        check(read.contents[0].text == dentist_text, f"{mode}: resource text")
        try:
            await client.read_resource("trove://note/ffffffff")
            check(False, f"{mode}: an unknown resource was read")
        except MCPError as error:
            check(error.error.code == -32002, f"{mode}: unknown resource error {error.error}")

        # 20 calls at once, each answered with its own result.
        calls = [SEARCHES[i % len(SEARCHES)] for i in range(16)]
        answers = await asyncio.gather(
            *[client.call_tool("search", arguments) for arguments in calls],
            client.call_tool("status", {}), client.call_tool("get", {"note": "furnace.txt"}),
            client.call_tool("list_sources", {}), client.call_tool("multi_get", {"pattern": "journal/*.md"}),
        )
        for i, answer in enumerate(answers[:16]):
            check(answer.structured_content == expected[i % len(SEARCHES)], f"{mode}: concurrent search {i} differs")
        check(answers[16].structured_content["records"] == stats["records"], f"{mode}: concurrent status")
        check(answers[17].structured_content["text"].startswith("Furnace"), f"{mode}: concurrent get")
        check(len(answers[19].structured_content["notes"]) == 1, f"{mode}: concurrent multi_get")


async def indexing() -> None:
    """--allow-index offers the index tool; a note added to the collection's folder is searchable after a refresh."""
    with open(os.path.join(NOTES, "bicycle.md"), "w", encoding="utf-8") as f:
        f.write("The bicycle needs a new chain and the brakes adjusted before the spring ride.\n")
    async with Client(server("--allow-index")) as client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
        check("index" in names, f"--allow-index: tools {names}")
        summary = await client.call_tool("index", {})
        check(not summary.is_error and summary.structured_content["added"] == 1, f"index: {summary.content}")
        found = await client.call_tool("search", {"query": "bicycle chain", "mode": "text", "k": 1})
        check(found.structured_content["results"][0]["source"].endswith("bicycle.md"), f"index: the new note is not found {found.structured_content}")
        await tool_error(client, "index", {"paths": 3}, "'paths' must be a string or an array of strings", "index with a number for paths")
        one = await client.call_tool("index", {"collection": "home"})
        check(not one.is_error and one.structured_content["unchanged"] >= 1, f"index with one collection name: {one.content}")
        await tool_error(client, "index", {"collection": ["garage"]}, "garage", "index of an unknown collection")


def raw_protocol() -> None:
    """What a client library would never send: answered with JSON-RPC errors; EOF stops the server."""
    lines = [
        "this is not json",
        json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "no/such/method"}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}}}),
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "old", "version": "0"}}}),
        json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "search", "arguments": "dentist"}}),
        json.dumps({"jsonrpc": "2.0", "id": 6, "method": "resources/list", "params": {"cursor": "not-a-cursor"}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}),
    ]
    done = subprocess.run([TROVE, "mcp", "--db", DB], cwd=NOTES, input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=60)
    check(done.returncode == 0, f"raw: exit status {done.returncode} on end of input; stderr {done.stderr}")
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    check(len(answers) == 8, f"raw: {len(answers)} answers to 8 requests (one notification): {done.stdout}")
    by_id = {json.dumps(a.get("id")): a for a in answers}
    codes = {key: a.get("error", {}).get("code") for key, a in by_id.items()}
    check(any(a.get("id") is None and a.get("error", {}).get("code") == -32700 for a in answers), f"raw: parse error {answers}")
    check(codes.get("2") == -32601, f"raw: unknown method {codes}")
    check(codes.get("3") == -32022 and "2026-07-28" in by_id["3"]["error"]["data"]["supported"], f"raw: unsupported version {by_id.get('3')}")
    check(by_id["4"]["result"]["protocolVersion"] == "2025-11-25", f"raw: an older client is offered 2025-11-25: {by_id.get('4')}")
    check(codes.get("5") == -32602, f"raw: arguments not an object {by_id.get('5')}")
    check(codes.get("6") == -32602, f"raw: bad cursor {by_id.get('6')}")
    check(by_id["7"].get("result") == {}, f"raw: ping {by_id.get('7')}")
    check(any(a.get("error", {}).get("code") == -32600 for a in answers), f"raw: a batch is an invalid request {answers}")


async def main() -> None:
    expected = [cli(*search_argv(arguments)) for arguments in SEARCHES]
    await session("auto", expected)
    await session("legacy", expected)
    raw_protocol()
    await indexing()


asyncio.run(main())
print(f"{checks} checks, {len(failures)} failed")
sys.exit(1 if failures else 0)
