"""Text ReAct for any model that writes text: Thought / Action / Action Input / Final Answer.

:class:`ReActModel` wraps a text model (local or remote) and speaks the classic ReAct format
(Yao et al., 2022) with it, so a model without native tool calling still drives the normal
loop: each reply becomes a neutral assistant message whose thought is a text part and whose
action is a :class:`~toolcycle.messages.ToolCall`; observations come back as ``Observation:``
lines; ``Final Answer:`` ends the attempt with the answer as the message text and the last
thought kept as a thinking part, so the trace shows every thought.

Parsing is tolerant of what models actually write: several Action blocks in one reply (each
becomes a call, in order), text the model invents after ``Observation:`` (cut off, and
generation is stopped there when the inner model honours ``stop``), ``Action Input`` that is
a Python literal, a fenced block, or bare text for a tool with a single parameter, markdown
emphasis around the keywords, and a reply with no keywords at all (taken as the answer).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from ...messages import Message, Part, TextPart, ThinkingPart, ToolCall, ToolResult
from ..base import ModelSettings, ToolDefinition
from .calls import (
    TRUNCATED,
    decode_first_object,
    decode_lenient,
    render_observation_text,
    unclosed,
)
from .describe import describe_tools
from .names import resolve_tool_name
from .protocol import TextProtocolModel
from .streaming import react_answer_so_far

_KEYWORD = r"(?:^|\n)[ \t]*[*_]*{word}[*_]*[ \t]*(?:\d+)?[ \t]*[*_]*:[*_]*[ \t]*"
_ACTION = re.compile(_KEYWORD.format(word="Action"), re.IGNORECASE)
_INPUT = re.compile(_KEYWORD.format(word="Action[ _]Input"), re.IGNORECASE)
_FINAL = re.compile(_KEYWORD.format(word="Final[ _]Answer"), re.IGNORECASE)
_THOUGHT = re.compile(_KEYWORD.format(word="Thought"), re.IGNORECASE)
_OBSERVATION = re.compile(_KEYWORD.format(word="Observation"), re.IGNORECASE)
_FENCE = re.compile(r"^```[A-Za-z]*\s*|\s*```$")
_LEADING_NAME = re.compile(r"^[A-Za-z0-9_.-]+(?=[^A-Za-z0-9_.-])")
_COPIED_LIST = re.compile(r",?\s*one of \[", re.IGNORECASE)

FORMAT = """Use this format:
Thought: think about what to do
Action: the tool to use, one of [{names}]
Action Input: the tool's arguments as a JSON object
Observation: the tool's result (I will write it)
... (Thought/Action/Action Input/Observation can repeat)
{ending}"""
_FINAL_ANSWER = "Thought: I know the answer\nFinal Answer: the answer to the user"
# Structured output (the loop requires a call): the answer is a call, never "Final Answer:".
_FINAL_CALL = ("Thought: I know the answer\nAction: the tool that gives the final answer\n"
               "Action Input: the answer as that tool's arguments")


class ReActModel(TextProtocolModel):
    """The ReAct text protocol around any text model (see the module docstring)."""

    def tool_instructions(self, tools: Sequence[ToolDefinition], settings: ModelSettings) -> str:
        names = ", ".join(t.name for t in tools)
        ending = _FINAL_ANSWER if answers_in_text(settings) else _FINAL_CALL
        return (f"You can use these tools:\n{describe_tools(tools)}\n\n"
                f"{FORMAT.format(names=names, ending=ending)}")

    def render_assistant(self, message: Message, settings: ModelSettings) -> str:
        lines: list[str] = []
        thought = (message.thinking if not message.tool_calls else message.text).strip()
        if thought:
            lines.append(thought if _THOUGHT.match(thought) else f"Thought: {thought}")
        for call in message.tool_calls:
            arguments = call.raw_arguments if call.arguments is None else json.dumps(call.arguments)
            name = call.original_name if call.original_name is not None else call.name
            lines += [f"Action: {name}", f"Action Input: {arguments}"]
        if not message.tool_calls:
            lines.append(f"Final Answer: {message.text}")
        return "\n".join(lines)

    def render_observations(self, results: Sequence[ToolResult], settings: ModelSettings) -> str:
        if len(results) == 1:
            result = results[0]
            prefix = "Error: " if result.is_error else ""
            return f"Observation: {prefix}{result.content}"
        return "\n".join(f"Observation: {render_observation_text(r)}" for r in results)

    def answer_so_far(self, written: str) -> str:
        return react_answer_so_far(written)

    def request_extra(self, settings: ModelSettings) -> dict[str, Any]:
        if not settings.tools or settings.tool_choice == "none":
            return {}
        return {"stop": ["\nObservation:", "Observation:"]}

    def parse_reply(
        self, text: str, tools: Sequence[ToolDefinition], id_prefix: str,
        *, truncated: bool = False,
    ) -> list[Part]:
        return parse_react(text, tools, id_prefix, truncated=truncated)


def answers_in_text(settings: ModelSettings) -> bool:
    """Whether the run's answer is a ``Final Answer:`` line, not a call of the output tool.

    Not only when the request leaves the choice free: a tool named for one request of a text
    run (a playbook's first call, an agent's own ``tool_choice``; the loop frees it after the
    first call) is said by the directive at the end of the prompt, so the instructions keep
    the text answer. Structured output forces calls with ``"required"``, or names the output
    tool (at a limit, or after a repeat), and its runs ask a repeat for the output
    (``on_repeat``), where a text run asks for the answer (``"none"``). Why: with the
    structured ending ("Action: the tool that gives the final answer") under "Call the tool
    service_history now.", the 1.5B wrote nothing twice before it called (rail test split,
    a delay run, seed 1: 4 turns instead of 2), and the instructions changed between the first
    request and the next, so llama.cpp could not reuse the prompt's cached prefix.
    """
    choice = settings.tool_choice
    return choice in ("auto", "none") or (choice != "required" and settings.on_repeat == "none")


def parse_react(text: str, tools: Sequence[ToolDefinition], id_prefix: str,
                *, truncated: bool = False) -> list[Part]:
    """Neutral parts from a ReAct reply (see the module docstring for what is tolerated).

    ``truncated``: the reply stopped at the output token limit; a last Action Input left
    open is then a cut-off call (:data:`~.calls.TRUNCATED`), not one to close and run.
    """
    observation = _OBSERVATION.search(text)
    if observation is not None and (_ACTION.search(text, 0, observation.start())):
        text = text[: observation.start()]
    final = _FINAL.search(text)
    actions = list(_ACTION.finditer(text, 0, final.start() if final else len(text)))
    if final is not None and not actions:
        thought = _strip_thought(text[: final.start()])
        answer = _unquote(text[final.end() :].strip())
        return [ThinkingPart(thought), TextPart(answer)] if thought else [TextPart(answer)]
    if not actions:
        return [TextPart(_strip_thought(text))] if text.strip() else []
    parts: list[Part] = []
    thought = _strip_thought(text[: actions[0].start()])
    if thought:
        parts.append(TextPart(thought))
    by_name = {t.name: t for t in tools}
    for index, action in enumerate(actions):
        end = actions[index + 1].start() if index + 1 < len(actions) else len(text)
        if final is not None and index + 1 == len(actions):
            end = final.start()
        cut = truncated and final is None and index + 1 == len(actions)
        parts.append(_call(text[action.end() : end], by_name, f"{id_prefix}_{index + 1}", cut))
    return parts


def _call(block: str, tools: dict[str, ToolDefinition], call_id: str, cut: bool = False
          ) -> ToolCall:
    """One Action (+ Action Input) block as a call; ``cut``: the reply ended inside it."""
    found = _INPUT.search(block)
    name_text = block[: found.start()] if found else block.split("\n", 1)[0]
    name = name_text.strip().strip("`*'\"[]").strip()
    # "Action: add({"a": 1})" — a call written inline.
    inline = re.match(r"^([A-Za-z0-9_.-]+)\s*\((.*)\)\s*$", name, re.DOTALL)
    raw = block[found.end() :] if found else ""
    if inline and (not raw.strip() or _empty_object(raw)):
        # also 'Action: atlas(name: "Ann")' + 'Action Input: {}' (Qwen2.5-Coder-1.5B): the
        # arguments are the inline ones, not the empty object that follows them
        name, raw = inline.group(1), _inline_arguments(inline.group(2))
    elif inline:
        # the same call written twice, inline and as its Action Input: the tool is the name
        # before the parenthesis. Kept whole, the 1.5B was told only that the text was no
        # tool name, and wrote it again to the iteration limit; named, an unknown name is
        # answered with the tool it most likely meant (:mod:`toolcycle.run.calls`)
        name = inline.group(1)
    if name not in tools:
        # the format line's own words copied after the choice ("find_booking, one of [...]",
        # "the find_ticker tool, one of [...]": Qwen2.5-Coder-1.5B) are not part of it
        name = _COPIED_LIST.split(name, maxsplit=1)[0].strip().strip("`*'\"") or name
    if name not in tools:
        # "Action: The `latest_order` tool." (Qwen 0.5B): take the one tool it mentions.
        mentioned = [known for known in tools if re.search(rf"\b{re.escape(known)}\b", name)]
        name = mentioned[0] if len(mentioned) == 1 else resolve_tool_name(name, tools)
    if name not in tools:
        # An offered name followed by other words ("find_booking - to get the reference"):
        # the name the text starts with, as a whole name. Read back as written, an invalid
        # name made the 1.5B repeat it until the iteration limit (8 of 60 runs of rail's seat
        # train tasks, 2026-11-28, with the format line's tool list after the name).
        leading = _LEADING_NAME.match(name)
        if leading is not None and leading.group(0) in tools:
            name = leading.group(0)
    raw = _first_thought_cut(raw).strip()
    raw = _FENCE.sub("", raw).strip()
    if len(raw) > 1 and raw[0] == raw[-1] == "`":
        raw = raw.strip("`").strip()  # Action Input: `{"a": 1}` (Qwen 0.5B, inline code)
    if cut and unclosed(raw):
        return ToolCall(call_id, name, None, raw, TRUNCATED)
    value = decode_lenient(raw) if raw else {}
    if value is None:  # several inputs, or text after one: the first complete object counts
        value = decode_first_object(raw)
    if isinstance(value, dict):
        return ToolCall.from_value(call_id, name, value, raw)
    single = _single_parameter(tools.get(name))
    if single is not None and raw:
        text_value: Any = raw.strip().strip("\"'")
        return ToolCall.from_args(call_id, name, {single: text_value})
    return ToolCall.from_raw(call_id, name, raw)


def _empty_object(raw: str) -> bool:
    return re.fullmatch(r"\s*\{\s*\}\s*", _first_thought_cut(raw)) is not None


def _inline_arguments(text: str) -> str:
    """Inline arguments as an object: ``name: "Ann"`` is read as ``{name: "Ann"}``."""
    if text.strip() and decode_lenient(text) is None:
        braced = "{" + text + "}"
        if isinstance(decode_lenient(braced), dict):
            return braced
    return text


def _first_thought_cut(raw: str) -> str:
    """Drop a ``Thought:`` the model wrote after its Action Input."""
    thought = _THOUGHT.search(raw)
    return raw[: thought.start()] if thought else raw


def _single_parameter(tool: ToolDefinition | None) -> str | None:
    if tool is None:
        return None
    properties = tool.parameters.get("properties", {})
    return next(iter(properties)) if len(properties) == 1 else None


def _unquote(answer: str) -> str:
    """``Final Answer: "Hello, Alice!"`` (Qwen 0.5B quotes its answers) -> ``Hello, Alice!``."""
    if len(answer) > 1 and answer[0] == answer[-1] == '"' and '"' not in answer[1:-1]:
        return answer[1:-1]
    return answer


def _strip_thought(text: str) -> str:
    return _THOUGHT.sub("\n", text).strip()
