"""A hostile MCP server over stdio, raw JSON-RPC (no SDK: it must be free to break the rules),
whose misbehaviour is a plan: the JSON in ``$FUZZ_MCP_PLAN``.

The MCP fuzzer (tests/fuzz/mcp.py) draws a plan per seed; the regression tests in
tests/mcp/test_bad_servers.py write one by hand. Plan keys (all optional):

- ``start_delay``: seconds to sleep before reading anything (a slow start);
- ``init``: ``"ok"``, ``"hang"`` (never answers ``initialize``) or ``"crash"``;
- ``list``: ``"ok"``, ``"hang"``, ``"crash"``, or ``"hang_later"`` (answers the first listing,
  never a later one);
- ``tools``: ``[[name, schema], ...]`` where schema is ``"object"``, ``"string"`` (a
  non-object ``inputSchema``) or ``"junk"`` (not a schema at all); names may repeat;
- ``calls``: ``{name: behaviour}``: ``"ok"``, ``"hang"``, ``"crash"`` (exits mid-call),
  ``"slow"`` (answers after 0.3 s), ``"error"`` (a JSON-RPC error), ``"is_error"``,
  ``"huge"`` (a 3,000,000-character text), ``"garbage"`` (a line that is not JSON-RPC),
  ``"endless_line"`` (an unterminated line of 70 MB: past the client's line limit),
  ``"changed"`` (says the tool list changed, then answers), ``"stderr"`` (5 MB to stderr,
  then answers);
- ``stderr_bytes``: bytes written to stderr at start;
- ``children``: how many ``sleep`` children to start (their pids go to ``pidfile``, one a
  line), and ``grandchildren``: whether each child starts one of its own;
- ``ignore_stdin_close``: keep running after stdin closes (a server that must be killed).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

PLAN: dict = json.loads(os.environ.get("FUZZ_MCP_PLAN", "{}"))


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request_id: object, result: dict) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def text(value: str, is_error: bool = False) -> dict:
    return {"content": [{"type": "text", "text": value}], "isError": is_error}


SCHEMAS = {"object": {"type": "object", "properties": {}}, "string": {"type": "string"},
           "junk": "not a schema"}


def listing() -> list[dict]:
    return [{"name": name, "description": f"Fuzzed tool {name}.",
             "inputSchema": SCHEMAS.get(kind, SCHEMAS["object"])}
            for name, kind in PLAN.get("tools", [["echo", "object"]])]


def start_children() -> None:
    count = int(PLAN.get("children", 0))
    pids = []
    for _ in range(count):
        command = ["sleep", "300"]
        if PLAN.get("grandchildren"):
            command = ["sh", "-c", "sleep 300 & echo $! >> \"$PIDFILE\"; sleep 300"]
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, env={
            **os.environ, "PIDFILE": PLAN.get("pidfile", "/dev/null")})
        pids.append(child.pid)
    if pids and PLAN.get("pidfile"):
        with open(PLAN["pidfile"], "a") as f:
            f.write("".join(f"{pid}\n" for pid in pids))


def call(request_id: object, name: str) -> None:
    behaviour = PLAN.get("calls", {}).get(name, "ok")
    if behaviour == "hang":
        return
    if behaviour == "crash":
        sys.stderr.write(f"fatal: {name} crashed\n")
        sys.stderr.flush()
        os._exit(3)
    if behaviour == "slow":
        time.sleep(0.3)
    if behaviour == "error":
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32603, "message": "boom"}})
    elif behaviour == "is_error":
        answer(request_id, text("the tool failed", is_error=True))
    elif behaviour == "huge":
        answer(request_id, text("x" * 3_000_000))
    elif behaviour == "garbage":
        sys.stdout.write("this is not JSON-RPC {\n")
        sys.stdout.flush()
    elif behaviour == "endless_line":
        chunk = "y" * 1_000_000
        for _ in range(70):
            sys.stdout.write(chunk)
        sys.stdout.write("\n")
        sys.stdout.flush()
        answer(request_id, text("after the endless line"))
    elif behaviour == "changed":
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        answer(request_id, text("changed"))
    elif behaviour == "stderr":
        for _ in range(5):
            sys.stderr.write("e" * 1_000_000 + "\n")
        sys.stderr.flush()
        answer(request_id, text("wrote stderr"))
    else:
        answer(request_id, text(f"{name} ok"))


def main() -> None:
    if PLAN.get("ignore_stdin_close"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    start_children()
    if PLAN.get("stderr_bytes"):
        sys.stderr.write("s" * int(PLAN["stderr_bytes"]) + "\n")
        sys.stderr.flush()
    time.sleep(float(PLAN.get("start_delay", 0)))
    lists = 0
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue  # a notification
        if method == "initialize":
            if PLAN.get("init") == "hang":
                continue
            if PLAN.get("init") == "crash":
                os._exit(4)
            answer(request_id, {"protocolVersion": "2025-11-25",
                                "capabilities": {"tools": {"listChanged": True}},
                                "serverInfo": {"name": "fuzz", "version": "0"}})
        elif method == "tools/list":
            lists += 1
            mode = PLAN.get("list", "ok")
            if mode == "hang" or (mode == "hang_later" and lists > 1):
                continue
            if mode == "crash":
                os._exit(5)
            answer(request_id, {"tools": listing()})
        elif method == "tools/call":
            call(request_id, str(message.get("params", {}).get("name")))
        else:
            send({"jsonrpc": "2.0", "id": request_id,
                  "error": {"code": -32601, "message": f"method not found: {method}"}})
    if PLAN.get("ignore_stdin_close"):
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
