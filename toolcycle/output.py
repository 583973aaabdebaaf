"""Structured output: the output tool, layered validation and opt-in reflection with ``submit``.

With ``output=str`` (the default) the run ends when the model answers without tool calls. With
any other type the model gets an *output tool* whose parameters are the type's JSON Schema;
calling it ends the attempt. Validation runs in layers and fails fast: the schema (pydantic)
first, then each custom validator in order. A validator signals failure by raising
:class:`~toolcycle.errors.ValidationFailed`.

Reflection is opt-in: ``Output(T, reflect=handler)`` makes the output tool return a preview
(the handler's string) instead of ending the attempt, and injects a parameterless ``submit``
tool that ends it with the last output. A handler without ``submit`` (or the reverse) cannot be
expressed: both come from the one ``reflect`` argument.

The call that ends an attempt (the output tool, or ``submit``) cannot be answered when it is
made: its observation says whether the output was accepted, which only validation decides.
:class:`HeldAnswer` is that answer in waiting; the run engine writes it at exactly one of
three points: accepted, rejected, or the run stopped first.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast, overload

from ._observation import Observation
from ._tool_schema import strip_titles
from .context import RunContext
from .errors import ConfigurationError, ValidationFailed
from .messages import ToolCall, ToolResult
from .output_modes import OUTPUT_MODES, OutputMode, ResponseFormat, prompted_instructions
from .output_repair import schema_problems
from .tools import TOOL_NAME_PATTERN, ToolDefinition

if TYPE_CHECKING:
    import pydantic

Validator = Callable[[Any, RunContext[Any]], Any]
"""``validator(output, ctx)``: sync or async; raise ``ValidationFailed`` to reject."""

ReflectHandler = Callable[[Any, RunContext[Any]], str | Awaitable[str]]
"""``handler(output, ctx) -> preview``: the text the model sees after calling the output tool."""

SUBMIT_TOOL_NAME = "submit"
SUBMIT_DESCRIPTION = (
    "Submit your final output for validation. Call this when you are satisfied with your output."
)
DEFAULT_OUTPUT_TOOL = "final_result"

ErrorPrompt = Callable[[list[str], int], str]


def default_error_prompt(errors: list[str], attempt: int) -> str:
    """The user message that starts the next attempt after a failed validation."""
    listed = "\n".join(f"- {e}" for e in errors)
    return (
        f"Your output (attempt {attempt}) was rejected:\n{listed}\n"
        "Fix these problems and provide the output again."
    )


class OutputSchemaError(Exception):
    """The output tool's arguments do not fit the output type."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(slots=True)
class ValidationProblem:
    """Why an attempt's output was rejected: which layer and what it said."""

    errors: list[str]
    validator: str  # "schema", a validator's name, or a protocol code
    code: str = "VALIDATION"


#: An observation and, when the call failed, the kind of failure (``ToolResultEvent.error_type``).
#: The observation is text, or an :class:`Observation` when the tool returned media.
Answer = tuple[str | Observation, str | None]


def answer_result(call: ToolCall, answer: Answer) -> ToolResult:
    """The history's answer to ``call``: its text, and the media a tool returned."""
    said, error = answer
    if type(said) is str:
        return ToolResult(call.id, call.name, said, error is not None)
    assert isinstance(said, Observation)
    return ToolResult(call.id, call.name, said.text, error is not None, media=said.media)


@dataclass(frozen=True, slots=True)
class HeldAnswer:
    """The answer to the call that ended the attempt, held back until the output is judged.

    ``call`` is the output tool's call (or ``submit``'s); ``arguments`` the output it gave (for
    ``submit``, the last previewed output); ``started`` the ``perf_counter`` time the call was
    made, so its recorded duration runs to the verdict.
    """

    call: ToolCall
    arguments: dict[str, Any] | None
    started: float

    @staticmethod
    def accepted() -> Answer:
        return "Output accepted.", None

    @staticmethod
    def rejected(errors: Sequence[str]) -> Answer:
        return "Rejected:\n" + "\n".join(errors), "output_rejected"

    @staticmethod
    def stopped(why: str, error_type: str) -> Answer:
        """The run stopped before the output was judged (a limit, a cancel, a failure)."""
        return f"not validated: {why}", error_type


class Output[OutputT]:
    """How a run's output is typed, validated and (optionally) reflected on.

    Typing: ``Output(Report)`` is an ``Output[Report]`` and ``Output(list[int])`` an
    ``Output[list[int]]``. Types that are not classes to a type checker (``A | B``,
    ``Literal[...]``) give ``Output[Any]``; annotate the agent to keep them precise:
    ``agent: Agent[None, A | B] = Agent(model, output=Output(A | B))``.
    """

    @overload
    def __init__(
        self: Output[str],
        *,
        validators: Sequence[Validator] = (),
        error_prompt: ErrorPrompt | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self,
        type_: type[OutputT],
        *,
        validators: Sequence[Validator] = (),
        reflect: ReflectHandler | None = None,
        name: str = DEFAULT_OUTPUT_TOOL,
        description: str | None = None,
        error_prompt: ErrorPrompt | None = None,
        mode: OutputMode | None = None,
    ) -> None: ...

    @overload
    def __init__(
        self: Output[Any],
        type_: Any,
        *,
        validators: Sequence[Validator] = (),
        reflect: ReflectHandler | None = None,
        name: str = DEFAULT_OUTPUT_TOOL,
        description: str | None = None,
        error_prompt: ErrorPrompt | None = None,
        mode: OutputMode | None = None,
    ) -> None: ...

    def __init__(
        self,
        type_: Any = str,
        *,
        validators: Sequence[Validator] = (),
        reflect: ReflectHandler | None = None,
        name: str = DEFAULT_OUTPUT_TOOL,
        description: str | None = None,
        error_prompt: ErrorPrompt | None = None,
        mode: OutputMode | None = None,
    ) -> None:
        argument_problems = _argument_problems(validators, name, description, error_prompt)
        self.type = type_
        # A lone validator (not in a list) is reported, not iterated (a TypeError before).
        self.validators = list(validators) if isinstance(validators, list | tuple) else []
        self.reflect = reflect
        self.name = name
        #: ``"tool"``, ``"native"``, ``"prompted"``, or ``None``: the model's profile decides.
        self.mode = mode
        self.error_prompt = error_prompt or default_error_prompt
        self.is_text = type_ is str
        # Free text needs no adapter, so an agent answering in text never imports pydantic.
        self._adapter: pydantic.TypeAdapter[Any] | None = None
        problems = argument_problems + self._problems()
        if problems:
            raise ConfigurationError(problems, subject="output")
        self.wrapped = False
        self.tool: ToolDefinition | None = None
        self.submit_tool: ToolDefinition | None = None
        if self._adapter is not None:  # a structured output: its tool's schema
            schema = strip_titles(self._adapter.json_schema())
            if schema.get("type") != "object":
                schema = _wrapped(schema)
                self.wrapped = True
            doc = description or _type_description(type_)
            self.tool = ToolDefinition(name, doc, schema)
            if reflect is not None:
                self.submit_tool = ToolDefinition(
                    SUBMIT_TOOL_NAME, SUBMIT_DESCRIPTION, {"type": "object", "properties": {}}
                )

    def _problems(self) -> list[str]:
        found: list[str] = []
        if isinstance(self.name, str) and not TOOL_NAME_PATTERN.match(self.name):
            found.append(f"output tool name {self.name!r} must match {TOOL_NAME_PATTERN.pattern}")
        if self.name == SUBMIT_TOOL_NAME:
            found.append("the output tool cannot be named 'submit' (reserved for reflection)")
        for v in self.validators:
            if not callable(v):
                found.append(f"validator {v!r} is not callable")
        if self.reflect is not None and not callable(self.reflect):
            found.append("reflect must be a callable handler(output, ctx) -> str")
        if self.mode is not None and self.mode not in OUTPUT_MODES:
            found.append(f"mode must be one of {OUTPUT_MODES}, got {self.mode!r}")
        if self.mode is not None and self.type is str:
            found.append("an output mode needs a structured output type (free text has none)")
        if self.reflect is not None and self.type is str:
            found.append("reflection needs a structured output type (an output tool to preview)")
        if self.type is not str:
            import pydantic

            try:
                self._adapter = pydantic.TypeAdapter(self.type)
            except Exception as exc:
                found.append(f"output type {self.type!r} has no JSON Schema: {exc}")
        return found

    @property
    def tool_definitions(self) -> tuple[ToolDefinition, ...]:
        return tuple(t for t in (self.tool, self.submit_tool) if t is not None)

    def response_format(self) -> ResponseFormat:
        """Native mode: the schema the reply's text must follow (the output tool's)."""
        assert self.tool is not None, "a structured output has an output tool"
        return ResponseFormat(self.name, self.tool.parameters)

    def instructions(self) -> str:
        """Prompted mode: what the prompt tells the model about its answer."""
        assert self.tool is not None, "a structured output has an output tool"
        return prompted_instructions(self.tool.parameters)

    def parse(self, arguments: dict[str, Any]) -> OutputT:
        """Schema layer: turn the output tool's arguments into the typed output."""
        value: Any = arguments
        if self.wrapped:
            if "response" not in arguments:
                raise OutputSchemaError(["response: Field required"])
            value = arguments["response"]
        import pydantic  # loaded already: the adapter is pydantic's

        assert self._adapter is not None, "parse() is for structured outputs"
        try:
            return cast(OutputT, self._adapter.validate_python(value))
        except pydantic.ValidationError as exc:
            # Paths as the model wrote them: under ``response`` when the type is wrapped.
            top = ("response",) if self.wrapped else ()
            assert self.tool is not None
            raise OutputSchemaError(
                schema_problems(list(exc.errors()), top, self.tool.parameters)) from exc

    async def validate(self, output: OutputT, ctx: RunContext[Any]) -> ValidationProblem | None:
        """Custom-validator layer, in order, stopping at the first failure."""
        for validator in self.validators:
            name = getattr(validator, "__name__", None) or type(validator).__name__
            try:
                outcome = validator(output, ctx)
                if inspect.isawaitable(outcome):
                    await outcome
            except ValidationFailed as exc:
                return ValidationProblem([exc.message], name)
        return None

    async def preview(self, output: OutputT, ctx: RunContext[Any]) -> str:
        """Reflection: the handler's rendering of ``output`` for the model to inspect."""
        assert self.reflect is not None
        preview = self.reflect(output, ctx)
        if inspect.isawaitable(preview):
            preview = await preview
        return str(preview)

    # -- the output protocol: what the model is told ------------------------------------------

    async def preview_answer(
        self, call: ToolCall, ctx: RunContext[Any]
    ) -> tuple[Answer, OutputT | None]:
        """Reflection: answer an output-tool call with a preview (or its schema errors).

        Returns the observation and the parsed output when it fits the schema.
        """
        assert call.arguments is not None
        try:
            value = self.parse(call.arguments)
        except OutputSchemaError as exc:
            return ("Output does not match the schema:\n" + "\n".join(exc.errors),
                    "invalid_arguments"), None
        try:
            preview = await self.preview(value, ctx)
        except Exception as exc:
            return (f"The reflection handler failed: {type(exc).__name__}: {exc}",
                    type(exc).__name__), value
        text = (f"{preview}\n\nIf this is right, call `{SUBMIT_TOOL_NAME}`; otherwise call "
                f"`{call.name}` again with a corrected output.")
        return (text, None), value

    def no_output_call(self) -> ValidationProblem:
        """The model answered in text where a structured output was due."""
        names = [self.name] + ([SUBMIT_TOOL_NAME] if self.submit_tool else [])
        return ValidationProblem(
            [f"you answered without calling a tool; give your output by calling "
             f"`{'` then `'.join(names)}`"],
            "protocol",
            "INVALID_RESPONSE",
        )

    def no_json_answer(self, mode: OutputMode) -> ValidationProblem:
        """A native or prompted reply whose text is no JSON object."""
        return ValidationProblem(
            [f"your answer is not a JSON object: answer with the JSON of your output only "
             f"({mode} mode)"], "protocol", "INVALID_RESPONSE")

    def empty_reply(self) -> ValidationProblem:
        """The model replied with neither text nor a tool call (seen from llama_cpp.server's
        function-calling chat format); an empty string is no answer, so the attempt retries."""
        way = "answer the user" if self.is_text else f"call `{self.name}` with your output"
        return ValidationProblem(
            [f"your reply was empty: {way}, or call a tool"], "protocol", "INVALID_RESPONSE")

    def submit_before_output(self) -> ValidationProblem:
        return ValidationProblem(
            ["submit was called before any output: call the output tool "
             f"`{self.name}` first, then submit"],
            "submit",
            "SUBMIT_BEFORE_OUTPUT",
        )


def as_output(output: Any) -> Output[Any]:
    """Accept ``str``, any type pydantic can validate, or an :class:`Output`."""
    return output if isinstance(output, Output) else Output(output)


def _wrapped(schema: dict[str, Any]) -> dict[str, Any]:
    """Tool parameters must be an object: wrap scalars, lists and unions in ``response``.

    ``$ref``s point at ``#/$defs/...`` from the root, so the definitions move up to the new
    root (left under ``response`` they would no longer resolve).
    """
    inner = dict(schema)
    defs = inner.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object", "properties": {"response": inner}, "required": ["response"],
    }
    if defs:
        wrapped["$defs"] = defs
    return wrapped


def _type_description(type_: Any) -> str:
    doc = inspect.getdoc(type_) if isinstance(type_, type) else None
    pydantic = sys.modules.get("pydantic")  # a type pydantic validates has loaded it
    if doc and pydantic is not None and doc == inspect.getdoc(pydantic.BaseModel):
        doc = None
    base = "Call this tool to give your final output."
    return f"{base} {doc}" if doc else base


def _argument_problems(
    validators: object, name: object, description: object, error_prompt: object
) -> list[str]:
    """Problems with the shape of Output's arguments, found before they are used: a wrong
    type here used to raise a raw TypeError at construction, or at the first rejection."""
    found: list[str] = []
    if not isinstance(validators, list | tuple):
        found.append("validators must be a list of callables validator(output, ctx), got "
                     f"{type(validators).__name__}")
    if not isinstance(name, str):
        found.append(f"the output tool name must be a string, got {type(name).__name__}")
    if description is not None and not isinstance(description, str):
        found.append(f"description must be a string, got {type(description).__name__}")
    if error_prompt is not None and not callable(error_prompt):
        found.append("error_prompt must be a callable (errors, attempt) -> str, got "
                     f"{type(error_prompt).__name__}")
    return found
