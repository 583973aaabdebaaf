"""A streamable-HTTP MCP server of the 2025-11-25 protocol, written by hand (starlette, no SDK)
so that it can expire sessions when told: ``python expiring_http_server.py PORT``.

``POST /mcp`` answers JSON-RPC with ``application/json`` bodies; ``initialize`` opens a session
(its id in the ``Mcp-Session-Id`` header), every other request must carry a live one, else
HTTP 404 (what the spec says a server does with a session it ended). ``POST /expire`` ends
every session; ``GET /initializations`` says how many sessions were opened. One tool,
``add(a, b)``.
"""

from __future__ import annotations

import json
import sys
import uuid

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

SESSIONS: set[str] = set()
OPENED = [0]
ADD = {"name": "add", "description": "Add two numbers.",
       "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"},
                                                        "b": {"type": "integer"}}}}


def reply(request_id: object, result: dict) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


async def mcp(request: Request) -> Response:
    if request.method == "GET":
        return PlainTextResponse("no stream here", status_code=405)
    if request.method == "DELETE":
        SESSIONS.discard(request.headers.get("mcp-session-id", ""))
        return Response(status_code=200)
    message = json.loads(await request.body())
    method, request_id = message.get("method"), message.get("id")
    if method == "initialize":
        session = uuid.uuid4().hex
        SESSIONS.add(session)
        OPENED[0] += 1
        return JSONResponse(reply(request_id, {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "expiring", "version": "0"}}),
            headers={"mcp-session-id": session})
    if request.headers.get("mcp-session-id") not in SESSIONS:
        return PlainTextResponse("session not found", status_code=404)
    if request_id is None:
        return Response(status_code=202)  # a notification
    if method == "tools/list":
        return JSONResponse(reply(request_id, {"tools": [ADD]}))
    if method == "tools/call":
        arguments = message["params"].get("arguments") or {}
        total = int(arguments.get("a", 0)) + int(arguments.get("b", 0))
        return JSONResponse(reply(request_id, {"content": [{"type": "text", "text": str(total)}]}))
    return JSONResponse({"jsonrpc": "2.0", "id": request_id,
                         "error": {"code": -32601, "message": f"method not found: {method}"}})


async def expire(request: Request) -> Response:
    SESSIONS.clear()
    return PlainTextResponse("expired")


async def initializations(request: Request) -> Response:
    return PlainTextResponse(str(OPENED[0]))


app = Starlette(routes=[Route("/mcp", mcp, methods=["GET", "POST", "DELETE"]),
                        Route("/expire", expire, methods=["POST"]),
                        Route("/initializations", initializations)])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
