"""What reading, writing and binding an agent spec costs (once per agent, not per iteration).

    .venv/bin/python bench/specs.py

Prints the best of three runs of 200 calls each, per call, for the two-tool
``examples/hello_goodbye.gram``.
"""

from __future__ import annotations

import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from examples import hello_goodbye_tools  # noqa: E402
from toolcycle.models.scripted import ScriptedModel  # noqa: E402
from toolcycle.spec import AgentSpec  # noqa: E402
from toolcycle.spec.signatures import format_signature, parse_signature  # noqa: E402

SIGNATURE = (
    '(personName::Text)==>(tone::Text {default: "warm", enum: ["warm", "formal"]})==>(::String)'
)


def main() -> None:
    text = (ROOT / "examples" / "hello_goodbye.gram").read_text(encoding="utf-8")
    spec = AgentSpec.from_gram(text)
    as_json = spec.to_json()
    signature = parse_signature(SIGNATURE)
    cases: list[tuple[str, Callable[[], Any]]] = [
        ("AgentSpec.from_gram (2 tools)", lambda: AgentSpec.from_gram(text)),
        ("AgentSpec.from_json (2 tools)", lambda: AgentSpec.from_json(as_json)),
        ("AgentSpec.to_gram (2 tools)", spec.to_gram),
        ("AgentSpec.to_json (2 tools)", spec.to_json),
        ("parse_signature (2 parameters)", lambda: parse_signature(SIGNATURE)),
        ("format_signature (2 parameters)",
         lambda: format_signature(signature.parameters, signature.result)),
        ("AgentSpec.bind (module, checks)",
         lambda: spec.bind(hello_goodbye_tools, model=ScriptedModel(["x"]))),
    ]
    for label, case in cases:
        best = min(timeit.repeat(case, number=200, repeat=3)) / 200
        print(f"{label:34s} {best * 1e6:8.0f} µs")


if __name__ == "__main__":
    main()
