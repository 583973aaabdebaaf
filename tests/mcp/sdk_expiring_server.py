"""The SDK's quickstart server (tests/mcp/sdk_example_server.py) over streamable HTTP, with
sessions that expire after ``argv[2]`` idle seconds (the SDK then answers 404 for them):
``python sdk_expiring_server.py PORT IDLE_SECONDS``."""

import sys

from sdk_example_server import mcp

if __name__ == "__main__":
    mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]),
            session_idle_timeout=float(sys.argv[2]))
