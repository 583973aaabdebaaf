"""rel-09: hostile spec files end in ``SpecError`` (CLI: ``error: ...``, status 2), never a crash.

Before the fix a gram spec nested ~8,000 levels deep killed the process (SIGSEGV in the native
parser), 1,000-5,000 levels and deep JSON raised ``RecursionError``, and huge integers, bytes
that are not UTF-8 and the like gave tracebacks. Deep gram inputs run in a subprocess, so a
segfault fails its test instead of killing pytest.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolcycle.errors import SpecError
from toolcycle.spec import AgentSpec
from toolcycle.spec.bounds import MAX_INT_DIGITS, MAX_SPEC_BYTES, MAX_SPEC_DEPTH
from toolcycle.spec.signatures import parse_signature

EXAMPLES = Path(__file__).parents[2] / "examples"
GOOD_TOOL = {"name": "t", "description": "d", "parameters": {"type": "object", "properties": {}}}


def _gram_records(depth: int) -> str:
    return "[a:Agent {metadata: " + "{a: " * depth + "1" + "}" * depth + "}]"


def _json_nested(depth: int, opener: str = '{"a":', closer: str = "}") -> str:
    return '{"name": "a", "metadata": ' + opener * depth + "1" + closer * depth + "}"


# -- gram: deep and long inputs, each in a subprocess -------------------------------------

DEEP_GRAM = {
    f"records-{depth}": _gram_records(depth) for depth in (MAX_SPEC_DEPTH, 1000, 2000, 8000, 50000)
} | {
    f"lists-{depth}": "[a:Agent {metadata: {a: " + "[" * depth + "1" + "]" * depth + "}}]"
    for depth in (1000, 8000)
} | {
    f"patterns-{depth}": "[a:Agent | " + "[b | " * depth + "(c)" + "]" * depth + "]"
    for depth in (1000, 8000)
} | {
    "parens-8000": "(" * 8000 + "a" + ")" * 8000,
    "unclosed-8000": "[a:Agent {metadata: " + "{a: " * 8000,
    "path-30000": "(a)" + "-->(a)" * 30000,
    "path-with-details-30000": "(a)" + "-[r]->(a)" * 30000,
    "signature-records-8000": "[a:Agent | [t:Tool | (x::" + "{a: " * 8000 + "String"
    + "}" * 8000 + ")==>(::String)]]",
}

_LOAD_IN_CHILD = """
import sys
from toolcycle.errors import SpecError
from toolcycle.spec import AgentSpec
try:
    AgentSpec.from_gram(sys.stdin.read(), "hostile.gram")
except SpecError as exc:
    print("SpecError:", exc)
    sys.exit(3)
print("loaded")
"""


@pytest.mark.parametrize("name", list(DEEP_GRAM))
def test_deep_gram_is_a_spec_error_not_a_crash(name: str) -> None:
    run = subprocess.run(
        [sys.executable, "-c", _LOAD_IN_CHILD], input=DEEP_GRAM[name], capture_output=True,
        text=True, timeout=120,
    )
    assert run.returncode == 3, f"exit {run.returncode}: {run.stderr[-800:]}"
    assert "hostile.gram:1:" in run.stdout  # where it went too deep
    assert "more than" in run.stdout


def test_the_depth_bound_is_exact() -> None:
    """The deepest accepted spec still loads; one level more is refused."""
    inner = MAX_SPEC_DEPTH - 2  # the agent's [ and its record's { are two levels
    assert AgentSpec.from_gram(_gram_records(inner)).metadata
    with pytest.raises(SpecError, match="nested more than"):
        AgentSpec.from_gram(_gram_records(inner + 1))


def test_a_deep_signature_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="nested more than"):
        parse_signature("(x::" + "{a: " * 5000 + "String" + "}" * 5000 + ")==>(::String)")


# -- in-process corpus: every item must be a SpecError ------------------------------------

HOSTILE_JSON: dict[str, str] = {
    **{f"objects-{d}": _json_nested(d) for d in (MAX_SPEC_DEPTH, 1000, 100000)},
    **{f"arrays-{d}": _json_nested(d, "[", "]") for d in (1000, 100000)},
    "unclosed-100000": '{"name": "a", "metadata": ' + "[" * 100000,
    "deep-parameters": json.dumps({"name": "a", "tools": [GOOD_TOOL]}).replace(
        '"properties": {}', '"properties": ' + '{"a":' * 5000 + "1" + "}" * 5000
    ),
    "bigint-5000": '{"name": "a", "limits": {"max_iterations": ' + "9" * 5000 + "}}",
    "bigint-in-metadata": '{"name": "a", "metadata": {"n": -' + "9" * (MAX_INT_DIGITS + 1) + "}}",
    "float-overflow": '{"name": "a", "metadata": {"n": 1e999}}',
    "nan": '{"name": "a", "limits": {"timeout": NaN}}',
    "infinity": '{"name": "a", "metadata": {"n": -Infinity}}',
    "not-an-object": "[1, 2, 3]",
    "empty": "",
    "truncated": '{"name": "a", "tools": [',
    "trailing-garbage": '{"name": "a"} xyz',
    "unknown-key": '{"name": "a", "evil": 1}',
    "unknown-tool-key": json.dumps({"name": "a", "tools": [{**GOOD_TOOL, "evil": 1}]}),
    "unknown-limit": '{"name": "a", "limits": {"max_everything": 1}}',
    "bad-version": '{"spec_version": 99, "name": "a"}',
    "duplicate-tools": json.dumps({"name": "a", "tools": [GOOD_TOOL, GOOD_TOOL]}),
    "invalid-schema": json.dumps(
        {"name": "a", "tools": [{**GOOD_TOOL, "parameters": {"type": "object", "required": 5}}]}
    ),
    "non-object-parameters": json.dumps(
        {"name": "a", "tools": [{**GOOD_TOOL, "parameters": {"type": "string"}}]}
    ),
    "bad-output-schema": '{"name": "a", "output_schema": {"type": 12}}',
    "negative-limit": '{"name": "a", "limits": {"max_iterations": -1}}',
    "string-limit": '{"name": "a", "limits": {"timeout": "soon"}}',
    "long-strings-bad-type": '{"name": "a", "description": ["' + "x" * 1_000_000 + '"]}',
    # an unknown key is searched for in the text to give its line: as text, not as a regex
    "regex-limit-key": '{"name": "a", "limits": {"(": 1}}',
    "regex-selection-key": '{"name": "a", "tool_selection": {"[a-": 1}}',
    "nan-relevance": '{"name": "a", "tool_selection": {"min_relevance": NaN}}',
    "huge-max-tools": '{"name": "a", "tool_selection": {"max_tools": 1e999}}',
}

#: Wrong values for every field of a spec and of a tool.
WRONG_TYPES: dict[str, list[Any]] = {
    "name": [None, 1, 1.5, True, [], {}, ""],
    "description": [None, 1, True, [], {}],
    "instructions": [1, False, ["x"], {"a": 1}],
    "model": [1, True, ["x"], {}],
    "tools": [1, "x", {}, True],
    "output_schema": [1, "x", [], True],
    "limits": [1, "x", [], True],
    "tool_selection": [1, "x", [], True],
    "metadata": [1, "x", [], True],
    "spec_version": [None, "1", 2, [], {}],
}
TOOL_WRONG_TYPES: dict[str, list[Any]] = {
    "name": [None, 1, [], {}, ""],
    "description": [None, 1, [], {}],
    "parameters": [None, 1, "x", [], True],
    "result_schema": [1, "x", [], True],
    "(the tool itself)": [None, 1, "x", [], True],
}
for key, values in WRONG_TYPES.items():
    for k, value in enumerate(values):
        HOSTILE_JSON[f"{key}-wrong-{k}"] = json.dumps({"name": "a", key: value})
for key, values in TOOL_WRONG_TYPES.items():
    for k, value in enumerate(values):
        tool = value if key.startswith("(") else {**GOOD_TOOL, key: value}
        HOSTILE_JSON[f"tool-{key}-wrong-{k}"] = json.dumps({"name": "a", "tools": [tool]})

HOSTILE_GRAM: dict[str, str] = {
    "empty": "",
    "two-agents": "[a:Agent] [b:Agent]",
    "no-name": "[:Agent]",
    "unknown-property": "[a:Agent {evil: 1}]",
    "wrong-description": "[a:Agent {description: 1}]",
    "wrong-metadata": "[a:Agent {metadata: 1}]",
    "wrong-limits": "[a:Agent {limits: 1}]",
    "regex-limit-key": "[a:Agent {limits: {`(`: 1}}]",
    "wrong-tool-selection": "[a:Agent {tool_selection: [1]}]",
    "regex-selection-key": "[a:Agent {tool_selection: {`*`: 1}}]",
    "huge-int": "[a:Agent {metadata: {a: " + "9" * 5000 + "}}]",
    "unclosed-string": '[a:Agent {description: "abc',
    "unclosed-fence": "[a:Agent {description: ```abc",
    "bad-signature": "[a:Agent | [t:Tool | (x::NoSuchType)==>(::String)]]",
    "two-signatures": "[a:Agent | [t:Tool | (x::String)==>(::String), (y::String)==>(::String)]]",
    "not-a-tool": "[a:Agent | [t:Thing]]",
    "deep-json-in-parameters": "[a:Agent | [t:Tool {parameters: \""
    + '{\\"a\\":' * 5000 + "1" + "}" * 5000 + '"}]]',
    "huge-int-in-json-parameters": '[a:Agent | [t:Tool {parameters: "{\\"type\\": \\"object\\", '
    '\\"maxProperties\\": ' + "9" * 5000 + '}"}]]',
    "symbol-value": "[a:Agent {metadata: {a: ZZZ}}]",
    "binary-text": "\x00\x01\x02\xff\ufffe[a:Agent]\x7f",
}


@pytest.mark.parametrize("name", list(HOSTILE_JSON))
def test_hostile_json_spec_is_a_spec_error(name: str) -> None:
    with pytest.raises(SpecError):
        AgentSpec.from_json(HOSTILE_JSON[name], "hostile.json")


@pytest.mark.parametrize("name", list(HOSTILE_GRAM))
def test_hostile_gram_spec_is_a_spec_error(name: str) -> None:
    with pytest.raises(SpecError):
        AgentSpec.from_gram(HOSTILE_GRAM[name], "hostile.gram")


# -- files: size, encoding, garbage bytes ---------------------------------------------------

HOSTILE_FILES: dict[str, bytes] = {
    "latin1.json": b'{"name": "caf\xe9"}',
    "latin1.gram": b'[caf\xe9:Agent]',
    "garbage.json": bytes(range(256)) * 4,
    "garbage.gram": bytes(range(255, -1, -1)) * 4,
    "utf16.json": '{"name": "a"}'.encode("utf-16"),
    "too-large.json": b'{"name": "a", "description": "' + b"x" * MAX_SPEC_BYTES + b'"}',
    "too-large.gram": b'[a:Agent {description: "' + b"x" * MAX_SPEC_BYTES + b'"}]',
    "surrogate.json": b'{"name": "\xed\xa0\x80"}',
}


@pytest.mark.parametrize("name", list(HOSTILE_FILES))
def test_hostile_spec_file_is_a_spec_error(name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(HOSTILE_FILES[name])
    with pytest.raises(SpecError, match=f"{name}"):
        AgentSpec.load(path)


def test_invalid_utf8_file_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_bytes(b'{\n  "name": "caf\xe9"}')
    message = r"spec\.json:2:15: not UTF-8 text: cannot decode byte\(s\) e9"
    with pytest.raises(SpecError, match=message):
        AgentSpec.load(path)


# -- the CLI: `error: file:line:col: ...`, status 2, no traceback ---------------------------

CLI_FILES = {
    "deep.gram": _gram_records(8000).encode(),
    "deep.json": _json_nested(100000).encode(),
    "bigint.json": HOSTILE_JSON["bigint-5000"].encode(),
    "latin1.json": HOSTILE_FILES["latin1.json"],
}


@pytest.mark.parametrize("command", ["check", "convert"])
@pytest.mark.parametrize("name", list(CLI_FILES))
def test_cli_reports_hostile_specs_as_errors(name: str, command: str, tmp_path: Path) -> None:
    path = tmp_path / name
    path.write_bytes(CLI_FILES[name])
    run = subprocess.run(
        [sys.executable, "-m", "toolcycle", "spec", command, str(path)],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 2, run.stderr[-800:]
    assert run.stderr.startswith(f"error: {path}:"), run.stderr[-800:]
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize(
    "content",
    [b"[" * 100000, b'{"tools": [' + b"9" * 5000 + b"]}", b"\xff\xfe", b"NaN"],
    ids=["deep", "bigint", "not-utf8", "nan"],
)
def test_cli_import_reports_hostile_definitions(content: bytes, tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_bytes(content)
    run = subprocess.run(
        [sys.executable, "-m", "toolcycle", "spec", "import", str(path), "--from", "openai",
         "--name", "a"],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 2, run.stderr[-800:]
    assert run.stderr.startswith("error: "), run.stderr[-800:]
    assert "Traceback" not in run.stderr


# -- good specs still load ------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.gram")), ids=lambda p: p.name)
def test_example_specs_still_load(path: Path) -> None:
    spec = AgentSpec.load(path)
    assert spec.tools
    assert AgentSpec.from_json(spec.to_json()) == spec
    assert AgentSpec.from_gram(spec.to_gram()) == spec


def test_large_but_sane_spec_loads() -> None:
    """A thousand tools with long descriptions and 64-bit numbers stay well inside the bounds."""
    tools = [
        {**GOOD_TOOL, "name": f"t{k}", "description": "x" * 2000,
         "parameters": {"type": "object", "properties": {"n": {"type": "integer",
                                                              "maximum": 2**64 - 1}}}}
        for k in range(1000)
    ]
    spec = AgentSpec.from_json(json.dumps({"name": "a", "tools": tools}))
    assert len(spec.tools) == 1000
