"""An MCP client over streamable HTTP for tests/it/http.rs: the official
MCP Python SDK (`pip install mcp`, installed by `cargo xtask setup`).

Usage: client.py SCENARIO, with MCP_URL and MCP_TOKEN in the environment
(and JVM_PORT, JVM_PORT2, TICK_LINE where a scenario needs them). Prints
one JSON object on stdout: what each call answered. A missing SDK is an
error (exit 3), never a skip.
"""

import asyncio
import json
import os
import sys

try:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
except ImportError as e:  # the test fails on this, naming the fix
    print(f"the MCP Python SDK is missing ({e}); run `cargo xtask setup` "
          "or `python3 -m pip install mcp`", file=sys.stderr)
    sys.exit(3)

URL = os.environ["MCP_URL"]
TOKEN = os.environ["MCP_TOKEN"]


def client():
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    return Client(streamable_http_client(URL, http_client=http))


async def call(c, tool, args):
    r = await c.call_tool(tool, args)
    text = "\n".join(getattr(b, "text", "") for b in r.content)
    return {"error": bool(r.is_error), "text": text}


def session_id(attached):
    """The id an attach reply names (`session s3 …`)."""
    for word in attached["text"].replace(",", " ").replace(":", " ").split():
        if word.startswith("s") and word[1:].isdigit():
            return word
    raise SystemExit(f"no session id in {attached['text']!r}")


async def trace():
    port = int(os.environ["JVM_PORT"])
    line = int(os.environ["TICK_LINE"])
    out = {}
    async with client() as c:
        out["attach"] = await call(c, "debug_attach", {"port": port})
        out["stop"] = await call(c, "debug_set_stop", {
            "kind": "line", "class_pattern": "Ticker", "line": line,
            "trace": True, "trace_max_hits": 5})
        # Polled: Ticker passes the line every 50 ms.
        for _ in range(400):
            traces = await call(c, "debug_get_traces", {})
            if not traces["error"] and f"Ticker.main:{line}" in traces["text"]:
                break
            await asyncio.sleep(0.05)
        out["traces"] = traces
    print(json.dumps(out))


async def isolation():
    port, port2 = int(os.environ["JVM_PORT"]), int(os.environ["JVM_PORT2"])
    out = {}
    async with client() as a, client() as b:
        out["a_attach"] = await call(a, "debug_attach", {"port": port})
        sa = session_id(out["a_attach"])
        out["b_list_before"] = await call(b, "debug_list_sessions", {})
        out["b_names_a"] = await call(b, "debug_list_stop_points", {"session_id": sa})
        out["b_default"] = await call(b, "debug_list_stop_points", {})
        out["b_attach"] = await call(b, "debug_attach", {"port": port2})
        sb = session_id(out["b_attach"])
        out["a_names_b"] = await call(a, "debug_disconnect", {"session_id": sb})
        out["a_list"] = await call(a, "debug_list_sessions", {})
        out["b_list"] = await call(b, "debug_list_sessions", {})
        out["sa"], out["sb"] = sa, sb
    print(json.dumps(out))


async def mutate():
    port = int(os.environ["JVM_PORT"])
    out = {}
    async with client() as c:
        out["attach"] = await call(c, "debug_attach", {"port": port})
        out["set"] = await call(c, "debug_set_value", {"target": "Ticker.ticks", "value": "1"})
        out["list"] = await call(c, "debug_list_sessions", {})
    print(json.dumps(out))


async def hello():
    async with client() as c:
        tools = await c.list_tools()
        print(json.dumps({"tools": len(tools.tools)}))


SCENARIOS = {"trace": trace, "isolation": isolation, "mutate": mutate, "hello": hello}

if __name__ == "__main__":
    asyncio.run(SCENARIOS[sys.argv[1]]())
