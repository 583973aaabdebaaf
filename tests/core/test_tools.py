"""Tools: schemas from type hints and docstrings (three styles), from JSON Schema, argument
validation with precise errors, and the annotation fast path matching ``get_type_hints``."""

from __future__ import annotations

import enum
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import pydantic
import pytest
from pydantic import BaseModel

from toolcycle import RunContext, Tool, tool
from toolcycle._tool_schema import type_hints
from toolcycle.errors import ConfigurationError
from toolcycle.tools import ToolArgumentsError


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Place(BaseModel):
    city: str
    country: str = "FR"


def google(city: str, days: int = 3) -> str:
    """Forecast the weather.

    Looks the city up first.

    Args:
        city: Name of the city.
        days: How many days ahead.
    """
    return city


def numpy_style(city: str, days: int = 3) -> str:
    """Forecast the weather.

    Parameters
    ----------
    city : str
        Name of the city.
    days : int
        How many days ahead.
    """
    return city


def sphinx(city: str, days: int = 3) -> str:
    """Forecast the weather.

    :param city: Name of the city.
    :param days: How many days ahead.
    """
    return city


@pytest.mark.parametrize("function", [google, numpy_style, sphinx])
def test_docstring_styles_give_descriptions(function: Any) -> None:
    spec = Tool.from_function(function).spec
    assert spec.description.startswith("Forecast the weather.")
    props = spec.parameters["properties"]
    assert props["city"] == {"type": "string", "description": "Name of the city."}
    assert props["days"] == {"type": "integer", "description": "How many days ahead.",
                             "default": 3}
    assert spec.parameters["required"] == ["city"]
    assert "Args" not in spec.description and ":param" not in spec.description


def test_google_long_description_kept() -> None:
    assert Tool.from_function(google).spec.description == (
        "Forecast the weather.\n\nLooks the city up first."
    )


def test_rich_types_go_through_pydantic() -> None:
    def book(place: Place, unit: Unit, mode: Literal["fast", "slow"],
             tags: list[str] | None = None,
             count: Annotated[int, pydantic.Field(ge=1, le=9)] = 1) -> str:
        """Book something."""
        return "ok"

    built = Tool.from_function(book)
    props = built.spec.parameters["properties"]
    assert props["mode"]["enum"] == ["fast", "slow"]
    assert props["count"]["minimum"] == 1 and props["count"]["maximum"] == 9
    assert "title" not in str(props["place"])  # pydantic's generated titles are stripped
    converted = built.validate({"place": {"city": "Lyon"}, "unit": "celsius", "mode": "fast"})
    assert converted["place"] == Place(city="Lyon") and converted["unit"] is Unit.CELSIUS


def test_validation_errors_name_the_field_and_what_was_expected() -> None:
    built = Tool.from_function(google)
    with pytest.raises(ToolArgumentsError) as info:
        built.validate({"days": "three"})
    problems = info.value.problems
    assert any(p.startswith("days:") and "integer" in p for p in problems), problems
    assert any("city" in p and "required" in p for p in problems), problems
    with pytest.raises(ToolArgumentsError) as extra:
        built.validate({"city": "Lyon", "colour": "red"})
    assert "colour" in str(extra.value)


def test_run_context_parameter_is_injected_not_in_schema() -> None:
    def lookup(ctx: RunContext[dict[str, str]], key: str) -> str:
        """Look a key up in the deps."""
        return ctx.deps[key]

    built = Tool.from_function(lookup)
    assert built.context_param == "ctx"
    assert list(built.spec.parameters["properties"]) == ["key"]


def test_from_schema_rejects_an_invalid_schema_and_bad_name_together() -> None:
    with pytest.raises(ConfigurationError) as info:
        Tool.from_schema("bad name!", "x", {"type": "object", "properties": {"a": {"type": 5}}})
    assert len(info.value.problems) == 2


def test_decorator_options_are_kept() -> None:
    @tool(timeout=2.5, concurrent=True, max_calls=3)
    async def fetch(url: str) -> str:
        """Fetch a page."""
        return url

    assert (fetch.timeout, fetch.concurrent, fetch.max_calls, fetch.is_async) == (
        2.5, True, 3, True
    )


# -- the annotation fast path must agree with typing.get_type_hints ------------------------

LocalAlias = int


def _plain(a: int, b: str, c: float, d: bool, p: Path, u: Unit, n: None, m: Place) -> None:
    pass


def _complex(a: list[int], b: int | None, c: dict[str, Place], d: LocalAlias) -> str:
    return ""


@pytest.mark.parametrize("function", [_plain, _complex, google])
def test_type_hint_fast_path_matches_gettype_hints(function: Any) -> None:
    assert type_hints(function, None) == typing.get_type_hints(function, include_extras=True)


def test_type_hint_names_resolve_from_the_defining_scope() -> None:
    class Local(BaseModel):  # only visible in this function's locals
        x: int

    @tool
    def use(item: Local) -> int:
        """Use a local model."""
        return item.x

    assert use.validate({"item": {"x": 2}})["item"] == Local(x=2)


def test_unresolvable_annotation_raises_a_name_error() -> None:
    def broken(a: Missing) -> None:  # type: ignore[name-defined]  # noqa: F821
        pass

    with pytest.raises(NameError):
        type_hints(broken, None)
    with pytest.raises(ConfigurationError, match=r"(?s)tool 'broken'.*Missing"):
        Tool.from_function(broken)


def test_unsupported_parameter_type_is_a_configuration_error() -> None:
    class Opaque:  # not a pydantic-known type
        pass

    def takes(thing: Opaque) -> None:
        """Takes something pydantic cannot describe."""

    with pytest.raises(ConfigurationError, match="argument schema"):
        Tool.from_function(takes, localns={"Opaque": Opaque})


#: A child program: one run of an agent with a plain JSON tool that answers in free text.
PLAIN_RUN = (
    "import sys\n"
    "from toolcycle import Agent, tool\n"
    "from toolcycle.messages import ToolCall\n"
    "from toolcycle.models.scripted import ScriptedModel\n"
    "@tool\n"
    "def add(a: int, b: int) -> int:\n"
    "    '''Add two numbers.'''\n"
    "    return a + b\n"
    "model = ScriptedModel([ToolCall.from_args('c1', 'add', {'a': 1, 'b': 2}), 'three'])\n"
    "result = Agent(model, tools=[add]).run_sync('1 + 2?')\n"
    "assert result.tool_calls[0].result == '3', result.tool_calls\n"
)


def test_free_text_agent_with_plain_tools_never_imports_pydantic() -> None:
    """pydantic costs ~30 ms of import time; plain JSON tools and text answers do not need it."""
    import subprocess
    import sys

    program = PLAIN_RUN + "print(result.output, 'pydantic' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["three", "False"]


def test_a_plain_run_loads_no_module_only_pauses_specs_or_viewers_need() -> None:
    """hashlib (OpenSSL), hmac, html, agent specs, the fallback model and the word stemmer
    cost import time every user pays; only snapshots, the viewer, specs, FallbackModel and
    runs that read word roots (the playbook, grounding) need them."""
    import subprocess
    import sys

    lazy = ["hashlib", "hmac", "html", "toolcycle.spec", "toolcycle._postgres",
            "toolcycle.stores", "sqlite3", "toolcycle.models.fallback", "toolcycle.models.retry",
            "snowballstemmer"]
    program = (PLAIN_RUN + "result.trace.render()\n"
               f"print([m for m in {lazy!r} if m in sys.modules])\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
