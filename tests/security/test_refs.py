"""rel-05: a ``$ref`` in an untrusted JSON Schema is refused at construction and never fetched.

Every entry point that takes a schema from outside (tools built from a schema, JSON and gram
agent specs with tool or output schemas, imported OpenAI/Anthropic/MCP/BFCL tool lists, the
output type a spec binds) is tried with a reference under each scheme. Each must raise a
ConfigurationError or SpecError that names the reference, and no access may be attempted:
the references point at a TCP listener on 127.0.0.1 that records every connection (the
validator's fetches are native code, invisible to Python-level patches) and at a readable
file whose directory inotify watches for opens (Linux), and Python-level ``socket.connect``
is patched to record as well. A control test shows both sentinels do see a fetching validator.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import socket
import struct
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from toolcycle import Tool
from toolcycle.errors import ConfigurationError, SpecError
from toolcycle.spec.agent_spec import AgentSpec, output_type
from toolcycle.spec.formats import import_anthropic_tools, import_mcp_tools, import_openai_tools
from toolcycle.spec.formats.bfcl import import_bfcl_tools
from toolcycle.testing import ScriptedModel
from toolcycle.tools import ToolSpec

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="inotify watches file access (Linux only)")

_IN_ACCESS, _IN_OPEN = 0x1, 0x20


class Sentinels:
    """A listener that records connections and a watched directory that records opens."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.secret = directory / "secret.json"
        self.secret.write_text('{"type": "integer"}', encoding="utf-8")
        self.connections: list[Any] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()
        libc = ctypes.CDLL(None, use_errno=True)
        self._inotify = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert self._inotify >= 0, "inotify_init1 failed"
        watch = libc.inotify_add_watch(self._inotify, str(directory).encode(),
                                       _IN_OPEN | _IN_ACCESS)
        assert watch >= 0, "inotify_add_watch failed"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, peer = self._listener.accept()
            except OSError:  # the timeout: look at the stop flag again
                continue
            self.connections.append(peer)
            conn.close()

    def file_opens(self) -> list[str]:
        """Names opened or read in the watched directory since the last call."""
        names: list[str] = []
        while True:
            try:
                data = os.read(self._inotify, 65536)
            except BlockingIOError:
                return names
            offset = 0
            while offset < len(data):
                _wd, _mask, _cookie, length = struct.unpack_from("iIII", data, offset)
                raw = data[offset + 16: offset + 16 + length]
                names.append(raw.rstrip(b"\0").decode() or ".")
                offset += 16 + length

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._listener.close()
        os.close(self._inotify)


@pytest.fixture
def sentinels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sentinels]:
    found = Sentinels(tmp_path)
    real_connect = socket.socket.connect

    def recording_connect(sock: socket.socket, address: Any) -> Any:
        found.connections.append(("python", address))
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", recording_connect)
    found.file_opens()  # writing the secret file is not an access by the code under test
    yield found
    found.close()


#: name -> (schema fragment holding the reference, the text the error must name)
def _references(s: Sentinels) -> dict[str, tuple[dict[str, Any], str]]:
    host = f"127.0.0.1:{s.port}"
    plain = {
        "http": f"http://{host}/schema.json",
        "https": f"https://{host}/schema.json",
        "ftp": f"ftp://{host}/schema.json",
        "unknown-scheme": f"toolcycle-x://{host}/schema.json",
        "file": s.secret.as_uri(),
        "file-localhost": f"file://localhost{s.secret}",
        "relative-path": "secret.json",
        "absolute-path": str(s.secret),
    }
    refs = {name: ({"$ref": ref}, ref) for name, ref in plain.items()}
    # Relative references resolved against a base the schema declares.
    refs["relative-to-file-id"] = ({"$id": s.directory.as_uri() + "/", "$ref": "secret.json"},
                                   "secret.json")
    refs["relative-to-http-id"] = ({"$id": f"http://{host}/base/", "$ref": "schema.json"},
                                   "schema.json")
    refs["dynamic-ref"] = ({"$dynamicRef": f"http://{host}/dyn.json"}, f"http://{host}/dyn.json")
    return refs


REFERENCES = ["http", "https", "ftp", "unknown-scheme", "file", "file-localhost",
              "relative-path", "absolute-path", "relative-to-file-id", "relative-to-http-id",
              "dynamic-ref"]


def _object(fragment: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": fragment}}


def _gram_spec(spec: AgentSpec) -> AgentSpec:
    return AgentSpec.from_gram(spec.to_gram())


def _json_spec(spec: AgentSpec) -> AgentSpec:
    return AgentSpec.from_json(spec.to_json())


def _bind_output(schema: dict[str, Any]) -> object:
    return AgentSpec("agent", output_schema=schema).bind([], model=ScriptedModel(["done"]))


#: entry point -> (construct from a schema, the error it must raise)
ENTRY_POINTS: dict[str, tuple[Callable[[dict[str, Any]], object], type[Exception]]] = {
    "Tool.from_schema": (lambda s: Tool.from_schema("lookup", "Look up.", s, lambda **kw: 1),
                         ConfigurationError),
    "Tool(ToolSpec)": (lambda s: Tool(ToolSpec("lookup", "Look up.", s)), ConfigurationError),
    "json-spec-parameters": (
        lambda s: _json_spec(AgentSpec("a", tools=[ToolSpec("t", "", s)])), SpecError),
    "json-spec-result-schema": (
        lambda s: _json_spec(AgentSpec("a", tools=[ToolSpec("t", "", {"type": "object"}, s)])),
        SpecError),
    "json-spec-output-schema": (lambda s: _json_spec(AgentSpec("a", output_schema=s)), SpecError),
    "gram-spec-parameters": (
        lambda s: _gram_spec(AgentSpec("a", tools=[ToolSpec("t", "", s)])), SpecError),
    "gram-spec-output-schema": (lambda s: _gram_spec(AgentSpec("a", output_schema=s)), SpecError),
    "output_type": (output_type, ConfigurationError),
    "AgentSpec.bind-output": (_bind_output, ConfigurationError),
    "openai-import": (
        lambda s: import_openai_tools(
            [{"type": "function", "function": {"name": "t", "parameters": s}}]),
        ConfigurationError),
    "anthropic-import": (
        lambda s: import_anthropic_tools([{"name": "t", "input_schema": s}]), ConfigurationError),
    "mcp-import-input": (
        lambda s: import_mcp_tools({"tools": [{"name": "t", "inputSchema": s}]}),
        ConfigurationError),
    "mcp-import-output": (
        lambda s: import_mcp_tools(
            {"tools": [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": s}]}),
        ConfigurationError),
    "bfcl-import": (
        lambda s: import_bfcl_tools([{"name": "t", "parameters": {
            "type": "dict", "properties": {"x": dict(s["properties"]["x"], default=1)}}}]),
        ConfigurationError),
}


@pytest.mark.parametrize("reference", REFERENCES)
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_reference_refused_at_construction_without_access(
    entry: str, reference: str, sentinels: Sentinels
) -> None:
    fragment, named = _references(sentinels)[reference]
    construct, error = ENTRY_POINTS[entry]
    with pytest.raises(error) as raised:
        construct(_object(fragment))
    assert named in str(raised.value), str(raised.value)
    assert sentinels.connections == [], "a connection was attempted"
    assert sentinels.file_opens() == [], "a file in the watched directory was opened"


@pytest.mark.parametrize("entry", ["Tool.from_schema", "json-spec-parameters", "output_type",
                                   "mcp-import-input"])
def test_remote_meta_schema_refused_without_access(entry: str, sentinels: Sentinels) -> None:
    """``$schema`` naming an unknown (remote) meta-schema is refused as well, not fetched."""
    url = f"http://127.0.0.1:{sentinels.port}/meta.json"
    construct, error = ENTRY_POINTS[entry]
    with pytest.raises(error, match=r"127\.0\.0\.1"):
        construct({"$schema": url, "type": "object"})
    assert sentinels.connections == []


def test_local_references_still_work(sentinels: Sentinels) -> None:
    """References inside the schema (and to bundled meta-schemas) are untouched."""
    schema = {"type": "object", "properties": {"x": {"$ref": "#/$defs/n"}},
              "$defs": {"n": {"type": "integer"}}}
    tool = Tool.from_schema("lookup", "Look up.", schema, lambda **kw: 1)
    assert tool.validate({"x": 1}) == {"x": 1}
    spec = AgentSpec.from_json(json.dumps({"name": "a", "output_schema": schema,
                                           "tools": [{"name": "t", "parameters": schema}]}))
    assert spec.output_schema == schema
    assert import_mcp_tools({"tools": [{"name": "t", "inputSchema": schema}]})[0].parameters
    assert sentinels.connections == [] and sentinels.file_opens() == []


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_sentinels_see_a_fetching_validator(scheme: str, sentinels: Sentinels) -> None:
    """Control: jsonschema-rs's default retriever does fetch, and the sentinels notice it."""
    fragment, _ = _references(sentinels)[scheme]
    with contextlib.suppress(Exception):  # the listener closes at once: the fetch fails
        jsonschema_rs.validator_for(_object(fragment))
    if scheme == "http":
        assert sentinels.connections
    else:
        assert "secret.json" in sentinels.file_opens()
