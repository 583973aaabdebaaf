"""A hostile MCP server over stdio, written by hand (no SDK) so that it can break the rules.

Tools: ``echo`` (well behaved), ``fail`` (an ``isError`` result), ``error`` (a JSON-RPC error),
``crash`` (exits mid-call, after a line on stderr), ``hang`` (never answers), ``garbage``
(answers with a line that is not JSON-RPC), ``garbage_after`` (answers, then writes such a
line), ``flood`` (5,000 notifications before its answer), ``huge`` (a 2,000,000-character
result), ``grow`` (adds ``late.tool`` and says the list changed), and ``late.tool`` once grown.

Environment: ``HOSTILE_LOG`` (a file: every message received is appended as one JSON line, so
tests can see ``notifications/cancelled``), ``HOSTILE_START_DELAY`` (seconds to sleep before
reading anything: a slow start), ``HOSTILE_SLOW_RESTART`` (the same delay, only from the second
start on: a start counter lives in ``HOSTILE_LOG`` + ``.starts``), ``HOSTILE_INIT_CRASH``
(``always`` or ``restart``: exit with a line on stderr when ``initialize`` arrives, on every
start or only from the second on).
"""

from __future__ import annotations

import json
import os
import sys
import time

LOG = os.environ.get("HOSTILE_LOG")


def send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def result(request_id: object, value: dict[str, object]) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": value})


def text(value: str, is_error: bool = False) -> dict[str, object]:
    return {"content": [{"type": "text", "text": value}], "isError": is_error}


def tool(name: str, description: str, properties: dict[str, object] | None = None,
         required: list[str] | None = None) -> dict[str, object]:
    schema: dict[str, object] = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = required
    return {"name": name, "description": description, "inputSchema": schema}


TOOLS = [
    tool("echo", "Echo the text.", {"text": {"type": "string"}}, ["text"]),
    tool("fail", "Report an error."),
    tool("error", "Answer with a JSON-RPC error."),
    tool("crash", "Exit mid-call."),
    tool("hang", "Never answer."),
    tool("garbage", "Answer with a line that is not JSON-RPC."),
    tool("garbage_after", "Answer, then write a line that is not JSON-RPC."),
    tool("flood", "Send many notifications, then answer."),
    tool("huge", "Answer with 2,000,000 characters."),
    tool("grow", "Add a tool and say the list changed."),
]


def starts() -> int:
    if not LOG:
        return 1
    path = LOG + ".starts"
    count = 1
    if os.path.exists(path):
        with open(path) as f:
            count = int(f.read()) + 1
    with open(path, "w") as f:
        f.write(str(count))
    return count


def main() -> None:
    count = starts()
    delay = float(os.environ.get("HOSTILE_START_DELAY", "0"))
    if count > 1:
        delay = float(os.environ.get("HOSTILE_SLOW_RESTART", delay))
    time.sleep(delay)
    tools = list(TOOLS)
    for line in sys.stdin:
        message = json.loads(line)
        if LOG:
            with open(LOG, "a") as f:
                f.write(json.dumps(message) + "\n")
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # a notification
        if method == "initialize" and os.environ.get("HOSTILE_INIT_CRASH") in (
                "always", "restart" if count > 1 else "always"):
            sys.stderr.write("fatal: crashed during initialize\n")
            sys.stderr.flush()
            os._exit(4)
        if method == "initialize":
            result(request_id, {"protocolVersion": "2025-11-25",
                                "capabilities": {"tools": {"listChanged": True}},
                                "serverInfo": {"name": "hostile", "version": "0"}})
        elif method == "tools/list":
            result(request_id, {"tools": tools})
        elif method == "tools/call":
            call(request_id, message["params"], tools)
        else:
            send({"jsonrpc": "2.0", "id": request_id,
                  "error": {"code": -32601, "message": f"method not found: {method}"}})


def call(request_id: object, params: dict[str, object], tools: list[dict[str, object]]) -> None:
    name = params["name"]
    arguments = params.get("arguments") or {}
    assert isinstance(arguments, dict)
    if name == "echo":
        result(request_id, text(str(arguments.get("text"))))
    elif name == "late.tool":
        result(request_id, text("late tool ran"))
    elif name == "fail":
        result(request_id, text("the disk is full", is_error=True))
    elif name == "error":
        send({"jsonrpc": "2.0", "id": request_id,
              "error": {"code": -32603, "message": "internal: database locked"}})
    elif name == "crash":
        sys.stderr.write("fatal: crashed on purpose\n")
        sys.stderr.flush()
        os._exit(3)
    elif name == "hang":
        return
    elif name == "garbage":
        sys.stdout.write("this is not JSON-RPC {\n")
        sys.stdout.flush()
    elif name == "garbage_after":
        result(request_id, text("answered"))
        sys.stdout.write("stray garbage after the answer\n")
        sys.stdout.flush()
    elif name == "flood":
        for i in range(5000):
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "info", "data": f"line {i}"}})
        result(request_id, text("flood done"))
    elif name == "huge":
        result(request_id, text("x" * 2_000_000))
    elif name == "grow":
        if not any(t["name"] == "late.tool" for t in tools):
            tools.append(tool("late.tool", "A tool added later (a dotted name)."))
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        result(request_id, text("grown"))
    else:
        send({"jsonrpc": "2.0", "id": request_id,
              "error": {"code": -32602, "message": f"unknown tool {name}"}})


if __name__ == "__main__":
    main()
