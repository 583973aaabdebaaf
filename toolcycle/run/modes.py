"""The run's output mode (:mod:`toolcycle.output_modes`): what each request offers for it, how
a reply without calls becomes the output, and the fallback to the model's next mode.

The chain is fixed when the run starts: the output's own mode (or the model's profile's
first), then the rest of the profile. With reflection, a JSON answer is previewed in a user
message (the output tool's call would have been answered with it) and ``submit``, still
offered, ends the attempt. An
attempt that ends with no output in the current mode's form (a :class:`ProtocolSlip` of code
``INVALID_RESPONSE``) moves the next attempt to the next mode; the prompt of that attempt says
how to answer. Schema and validator errors do not: the model understood the mode.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import ModelError
from ..messages import Message, TextPart
from ..models.base import ModelSettings
from ..output import SUBMIT_TOOL_NAME, OutputSchemaError, ValidationProblem
from ..output_modes import NotJSON, OutputMode, mode_chain, parse_json_answer
from .endings import Forced, OutputGiven, ProtocolSlip
from .scope import LimitHit
from .state import RunState

_NATIVE_NOTE = "Give your output as the JSON object of your answer's text, not as a tool call."


def start_modes(state: RunState) -> None:
    """Fix the run's chain of modes (once; a resumed run keeps its own)."""
    output = state.output
    if output.is_text or state.mode_chain:
        return
    state.mode_chain = mode_chain(output.mode, state.setup.model.output_modes())


def current_mode(state: RunState) -> OutputMode | None:
    """The mode of this attempt (``None`` for free text)."""
    return state.mode_chain[state.mode_index] if state.mode_chain else None


def enter_mode(state: RunState) -> None:
    """At an attempt's start: tell the model how to answer in a mode it has not used yet, in
    the user message that opens the attempt (the task, or the last rejection's prompt; not
    sent yet, so nothing the provider saw is changed)."""
    mode = current_mode(state)
    if mode in (None, "tool") or mode in state.modes_told or not state.messages:
        return
    if mode == "native" and state.attempt == 1:  # the response format says it on the wire
        return
    last = state.messages[-1]
    if last.role != "user":
        return
    note = state.output.instructions() if mode == "prompted" else _NATIVE_NOTE
    state.messages[-1] = replace(last, parts=[*last.parts, TextPart(f"\n\n{note}")])
    if state.counts_tokens:
        state.history_chars += len(note) + 2
    state.modes_told.add(mode)


def mode_settings(state: RunState, settings: ModelSettings) -> ModelSettings:
    """This request's settings in the attempt's mode: the output tool withdrawn outside tool
    mode (reflection's ``submit`` has none to follow), and the response format in native."""
    mode = current_mode(state)
    if mode in (None, "tool"):
        return settings
    output = state.output
    tools = state.mode_tools.get(mode)
    if tools is None:  # reflection's submit stays: it ends the attempt after a preview
        tools = tuple(t for t in settings.tools if t is not output.tool)
        state.mode_tools[mode] = tools  # one tuple per mode: adapters cache by identity
    choice = settings.tool_choice
    if choice not in ("auto", "none"):  # "required" or the output tool: a JSON answer is due
        choice = "none" if choice == (output.tool and output.tool.name) else "auto"
    return replace(settings, tools=tools, tool_choice=choice if tools else "auto",
                   response_format=output.response_format() if mode == "native" else None)


def text_output(state: RunState, text: str, forced: Forced | None = None
                ) -> OutputGiven | ProtocolSlip:
    """A reply without calls in native or prompted mode: its JSON is the output tool's
    arguments would have been, so parsing and validation are the same in every mode."""
    mode = current_mode(state)
    assert mode is not None and mode != "tool"
    try:
        return OutputGiven(parse_json_answer(text), forced)
    except NotJSON:
        return ProtocolSlip(state.output.no_json_answer(mode), forced)


def format_refused(state: RunState, error: ModelError) -> ProtocolSlip:
    """A provider that refuses the response format (HTTP 400 to a native request: an older
    model, a compatible server without it) is a mode the model fails: the attempt ends so, and
    the next takes the next mode. Any other failure is the run's: ``error`` is raised."""
    if current_mode(state) != "native" or error.context.get("status") != 400:
        raise error
    message = error.context.get("provider_message") or str(error)
    return ProtocolSlip(ValidationProblem(
        [f"the provider refused the response format: {message}"], "protocol", "INVALID_RESPONSE"))


async def text_answer(state: RunState, text: str) -> OutputGiven | ProtocolSlip | None:
    """A reply without calls in native or prompted mode. With reflection, the output is
    previewed in a user message, as the output tool's call would have been answered, and the
    attempt goes on (``None``): ``submit``, or the same answer given again, ends it with the
    last previewed output."""
    ending = text_output(state, text)
    if not state.reflecting or not isinstance(ending, OutputGiven):
        return ending
    if ending.arguments == state.last_preview_args:
        # The same answer again after its preview: the model confirms it. A text model
        # repeats it rather than calling submit (the 0.5B, four times running until the
        # iteration limit), as it repeats an output tool's call, which on_repeat turns into
        # submit; here the repeat is the submission.
        return ending
    output = state.output
    try:
        value = output.parse(ending.arguments)
    except OutputSchemaError as exc:
        note = "Output does not match the schema:\n" + "\n".join(exc.errors)
    else:
        try:
            preview = await state.interrupts.guard(output.preview(value, state.ctx))
        except Exception as exc:  # LimitHit included: the run's timeout ends it as a limit
            if isinstance(exc, LimitHit):
                raise
            preview = f"The reflection handler failed: {type(exc).__name__}: {exc}"
        state.last_preview_args, state.last_output = ending.arguments, value
        note = preview
    state.append(Message.user(f"{note}\n\nIf this is right, call `{SUBMIT_TOOL_NAME}`; "
                              "otherwise answer again with the corrected JSON."))
    return None


def fall_back(state: RunState, problem: ValidationProblem) -> list[str]:
    """After an attempt without output in the mode's form, the next attempt takes the next
    mode of the chain (the last mode stays once the chain is used up). Returns the errors the
    next attempt's prompt names: on a switch, what failed, not how to answer in the old mode
    (the new mode's instructions follow)."""
    if problem.code != "INVALID_RESPONSE" or state.mode_index + 1 >= len(state.mode_chain):
        return problem.errors
    failed = state.mode_chain[state.mode_index]
    state.mode_index += 1
    state.trace.trace.mode_fallbacks.append(
        {"attempt": state.attempt, "from": failed, "to": state.mode_chain[state.mode_index]})
    return [f"no output came in {failed} mode"]


def uses_text(state: RunState) -> bool:
    """Whether a reply's text ends the attempt (free text, native or prompted)."""
    return current_mode(state) != "tool"

