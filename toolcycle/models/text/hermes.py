"""Qwen2.5's own tool-call format (Hermes style), spoken as a text protocol.

Qwen2.5 (Coder and Instruct) was trained on one tool-calling layout, the one its chat template
writes (read from the GGUF's ``tokenizer.chat_template`` metadata; tests/local checks this
module against it): the tools as JSON lines inside ``<tools>...</tools>`` at the end of the
system turn, each call as ``<tool_call>\\n{"name": ..., "arguments": {...}}\\n</tool_call>``
(several blocks for parallel calls), and each result as ``<tool_response>\\n...\\n</tool_response>``
in a user turn. A model asked in the words it was trained on needs no instructions of ours.

:class:`HermesToolsModel` writes the conversation in that layout through any text chat model
(llama.cpp applies the rest of the ChatML template), so the result is token for token what
the template would render for the same conversation. With ``constrained=True`` (the default)
each reply is decoded under a GBNF grammar (:func:`reply_grammar`): either calls, each JSON
naming an offered tool with arguments of the right shape (in ``<tool_call>`` blocks, or bare
or fenced as the Qwen2.5-Coder models write them), or free text that opens with none of those
forms (the answer). Unlike the JSON protocol's
``{"answer": ...}`` branch, the answer is what the model writes by itself: whether to call
stays the model's trained decision, and only the calls are shaped. Replies are parsed
tolerantly (:func:`~.calls.parse_tool_calls`); an unknown tool or undecodable arguments become
calls the loop answers with an error observation, as in every text protocol.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from ...messages import Message, ToolCall, ToolResult
from ..base import Model, ModelSettings, OutputMode, ToolDefinition
from .constrained import reply_schema, schema_gbnf
from .describe import one_line
from .further import ONLY_FURTHER
from .native import answer_form, answer_schema
from .protocol import JsonToolsModel

#: The system prompt Qwen2.5's template uses when tools are offered and the conversation has
#: none of its own.
DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
_TOOLS_OPEN = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
_TOOLS_CLOSE = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)
#: The ``ModelSettings.extra`` key of a GBNF grammar for the inner model (llama-cpp-python's
#: ``grammar``; ``llama_cpp.server`` takes the same key in a request's body).
GRAMMAR = "grammar"
_RULE_PREFIX = "toolcycle-"
_ROOT_RULE = re.compile(r"^root ::=", re.MULTILINE)
#: What a tool's JSON line writes as a ``\\uXXXX`` escape although ``json.dumps`` keeps it:
#: the ``<`` that would open one of the layout's own tags, and the line breaks beyond ASCII.
_UNSPOKEN = re.compile(r"<(?=/?(?:tools|tool_call|tool_response)>)|[\x85\u2028\u2029]")


def tool_line(tool: ToolDefinition) -> str:
    """One tool as the template writes it: ``{"type": "function", "function": {...}}``,
    JSON with the template's separators and non-ASCII kept (Hugging Face's ``tojson``).

    The description is one line, as in every text protocol (:func:`~.describe.one_line`).
    And text its author wrote cannot close the tools block, open a call or break the line:
    a ``<`` that starts one of the layout's tags (``</tools>``, ``<tool_call>`` ...) and a
    line break ``json.dumps`` leaves raw (``\\u2028`` ...), in a description or a schema,
    are written as JSON escapes: the same string, in a spelling that is neither. A tool
    with none of them is the template's line, token for token.
    """
    function = {"name": tool.name, "description": one_line(tool.description),
                "parameters": tool.parameters or {"type": "object", "properties": {}}}
    line = json.dumps({"type": "function", "function": function}, ensure_ascii=False)
    # JSON has neither outside its strings, where an escape spells the same character
    return _UNSPOKEN.sub(lambda found: f"\\u{ord(found[0]):04x}", line)


def call_block(call: ToolCall) -> str:
    """One past call as the template writes it (the name the model wrote, where repaired)."""
    name = call.original_name if call.original_name is not None else call.name
    arguments: Any = call.arguments if call.arguments is not None else call.raw_arguments
    body = f'{{"name": {json.dumps(name, ensure_ascii=False)}, "arguments": ' \
           f"{json.dumps(arguments, ensure_ascii=False)}}}"
    return f"<tool_call>\n{body}\n</tool_call>"


def response_block(result: ToolResult) -> str:
    """One result as the template writes a ``tool`` message (an error says so first)."""
    content = f"Error: {result.content}" if result.is_error else result.content
    return f"<tool_response>\n{content}\n</tool_response>"


def reply_grammar(tools: Sequence[ToolDefinition], settings: ModelSettings) -> str | None:
    """The GBNF grammar of one reply, or ``None`` when nothing is to be constrained.

    A call may be written in any of the three forms these models write it in, each shaped to
    a call of an offered tool with arguments of the right shape: ``<tool_call>`` blocks (the
    template's), bare JSON objects one per line, or those in a ```` ```json ```` fence.
    Measured on Qwen2.5-Coder-1.5B: shown the template's tools block it writes bare or fenced
    JSON, rarely the tag; a grammar that offered only the tag left it writing prose with the
    call inside (the tag's first token is far down its list). ``tool_choice="auto"`` adds the
    answer: any text that opens with none of those forms (nor whitespace), so no call can hide
    in it unshaped. ``"required"`` or a tool named: calls only (of that tool).
    ``parallel_tool_calls``: one or more calls, else exactly one. A further-calls request
    (:mod:`.further`): one or more calls, or ``[]`` for none, and no answer.
    """
    choice = settings.tool_choice
    if not tools or choice == "none":
        return None
    schema = reply_schema(tools, "required" if choice == "auto" else choice)
    if schema is None:
        return None
    try:
        converted = schema_gbnf(json.dumps(schema))
    except Exception:  # (the converter raises what it meets: AssertionError, KeyError...)
        # A schema llama.cpp cannot convert: the reply goes unconstrained and is read
        # tolerantly, as llama.cpp's own response_format falls back to any JSON.
        return None
    call_rules = _ROOT_RULE.sub(f"{_RULE_PREFIX}call ::=", converted)
    call, block = f"{_RULE_PREFIX}call", f"{_RULE_PREFIX}block"
    more = settings.parallel_tool_calls

    def several(item: str) -> str:
        return f'{item} ("\\n" {item})*' if more else item

    forms = [f"{_RULE_PREFIX}tagged", f"{_RULE_PREFIX}bare", f"{_RULE_PREFIX}fenced"]
    if settings.extra.get(ONLY_FURTHER):
        forms.append('"[]"')
    elif choice == "auto":
        forms.append(f"{_RULE_PREFIX}answer")
    return "\n".join([
        f"root ::= {' | '.join(forms)}",
        f'{block} ::= "<tool_call>\\n" {call} "\\n</tool_call>"',
        f"{_RULE_PREFIX}tagged ::= {several(block)}",
        f"{_RULE_PREFIX}bare ::= {several(call)}",
        f'{_RULE_PREFIX}fenced ::= "```json\\n" {several(call)} "\\n```"',
        f"{_RULE_PREFIX}answer ::= [^<{{[`\\n\\r\\t ] [^\\x00]*",
        call_rules,
    ])


class HermesToolsModel(JsonToolsModel):
    """Qwen2.5's native tool-call layout as a text protocol (see the module docstring).

    A JSON protocol in its parsing (the same tolerant reader, the same ``constrained``,
    ``"lazy"`` and ``further_calls`` options); what differs is what the model is shown and how
    it is constrained. The further calls are asked for in this layout's words: calls, not "a
    JSON list" (the template never shows one). No ``argument_notes`` option: the template's
    tool lines hold each tool's whole schema, its arguments' descriptions included.
    """

    further_wording = ("If the request asks for more calls, reply with only the further "
                       "calls; if it does not, reply [].")

    def __init__(self, inner: Model, *, constrained: bool | Literal["lazy"] = True,
                 default_system: str = DEFAULT_SYSTEM, further_calls: bool = False,
                 invented_values: bool = False) -> None:
        super().__init__(inner, constrained=constrained, further_calls=further_calls,
                         invented_values=invented_values)
        self.default_system = default_system

    def render_conversation(
        self, messages: Sequence[Message], settings: ModelSettings
    ) -> list[Message]:
        """As the template renders it: with tools and no system turn, Qwen's own system line
        comes before the tools block."""
        tools = settings.tools if settings.tool_choice != "none" else ()
        if tools and not any(m.role == "system" and m.text for m in messages):
            messages = [Message.system(self.default_system), *messages]
        return super().render_conversation(messages, settings)

    def tool_instructions(self, tools: Sequence[ToolDefinition], settings: ModelSettings) -> str:
        """The template's tools block; in native mode its last words say the JSON forms the
        grammar admits instead of the ``<tool_call>`` tag (see :meth:`output_modes`)."""
        block = _TOOLS_OPEN + "".join(f"\n{tool_line(t)}" for t in tools)
        if answer_schema(settings) is None:
            return block + _TOOLS_CLOSE
        call = '{"name": <function-name>, "arguments": <args-json-object>}'
        how = (f"a JSON list [{call}, ...] to call functions" if settings.parallel_tool_calls
               else f"one JSON object {call} to call a function")
        return (f"{block}\n</tools>\n\nReply with {how}, or with {answer_form(settings)} "
                "to answer the user.")

    def render_assistant(self, message: Message, settings: ModelSettings) -> str:
        """Past calls as ``<tool_call>`` blocks (their thought left out, as the JSON protocol
        does: a small model shown its plan rewrites it), or the answer's text; in native mode
        too, so the history stays the template's (an answer there is the output's JSON)."""
        if not message.tool_calls:
            return message.text
        return "\n".join(call_block(c) for c in message.tool_calls)

    def render_observations(self, results: Sequence[ToolResult], settings: ModelSettings) -> str:
        return "\n".join(response_block(r) for r in results)

    def output_modes(self) -> tuple[OutputMode, ...]:
        """The output tool, then native mode where the inner model decodes under a schema's
        grammar (llama.cpp). Native mode is the JSON protocol's (:mod:`.native`): every reply
        under the union of the offered calls and ``{"answer": <the output's schema>}``, said
        so at the end of the tools block. Not prompted mode: this layout's grammar keeps a
        free answer from opening with ``{``, so a JSON answer could not be written."""
        return ("tool", "native") if self.inner.schema_grammar else ("tool",)

    def request_extra(self, settings: ModelSettings) -> dict[str, Any]:
        if not self.is_constrained(settings) or answer_schema(settings) is not None:
            return {}  # (native mode: the response format is the grammar)
        grammar = reply_grammar(settings.tools, settings)
        return {} if grammar is None else {GRAMMAR: grammar}
