"""Which JSON Schema validator goes on the hot path? Measured, not assumed.

For a typical tool schema, times compile (once per tool) and validate (once per call) for a
valid and an invalid argument object with jsonschema, jsonschema-rs and fastjsonschema, and
checks that each one's error says which field failed and what was expected (the model needs
that). Run: `.venv/bin/python bench/validators.py`.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import fastjsonschema
import jsonschema
import jsonschema_rs

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "units": {"type": "string", "enum": ["metric", "imperial"]},
        "include": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["city", "days"],
    "additionalProperties": False,
}
VALID = {"city": "Paris", "days": 3, "units": "metric", "include": ["rain", "wind"]}
INVALID = {"city": "Paris", "days": "three", "extra": 1}


def timeit(fn: Callable[[], Any], n: int = 20000) -> float:
    best = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(best)


def main() -> None:
    rs = jsonschema_rs.validator_for(SCHEMA)
    js = jsonschema.Draft202012Validator(SCHEMA)
    fj = fastjsonschema.compile(SCHEMA)

    def fj_check(value: dict[str, Any]) -> list[str]:
        try:
            fj(value)
            return []
        except fastjsonschema.JsonSchemaValueException as exc:
            return [exc.message]

    rows = [
        ("jsonschema-rs", lambda: jsonschema_rs.validator_for(SCHEMA),
         lambda: rs.is_valid(VALID),
         lambda: [e.message for e in rs.iter_errors(INVALID)]),
        ("jsonschema", lambda: jsonschema.Draft202012Validator(SCHEMA),
         lambda: js.is_valid(VALID),
         lambda: [e.message for e in js.iter_errors(INVALID)]),
        ("fastjsonschema", lambda: fastjsonschema.compile(SCHEMA),
         lambda: fj_check(VALID),
         lambda: fj_check(INVALID)),
    ]
    print(f"{'validator':<16}{'compile us':>12}{'valid us':>10}{'invalid us':>12}  errors reported")
    for name, compile_, valid, invalid in rows:
        c = timeit(compile_, 200)
        v = timeit(valid)
        i = timeit(invalid, 5000)
        print(f"{name:<16}{c:>12.1f}{v:>10.2f}{i:>12.2f}  {invalid()}")


if __name__ == "__main__":
    main()
