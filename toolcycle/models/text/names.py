"""What a tool name a model wrote means: an offered tool, an answer, or neither.

Small models write names loosely (``Algebra Quadratic Roots`` for ``algebra_quadratic_roots``)
and invent tools to answer through (``answer``, ``final_answer``). Both are read here, for
every text protocol, so that the loop sees the call or the answer the model meant; a name that
could mean none or several is kept as written, and the loop answers it as an unknown tool.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ...messages import ToolCall, names_an_answer, tool_name_key

#: The keys a model writes its answer under (``{"answer": "..."}``).
ANSWER_KEYS = ("answer", "final_answer", "response")


def answer_written_as_call(calls: Sequence[ToolCall], tool_names: Collection[str]) -> str | None:
    """The answer a reply gave as a call to a tool named for answering that is not offered
    (``answer({"answer": "..."})``, ``final_answer({"price": "2.215"})``), or None.

    Why: the JSON protocol asks for ``{"answer": ...}``, but Qwen2.5-Coder-1.5B wrote its
    answer as a call to an ``answer`` tool 41 times in the logged train runs of 2026-12-02/03
    (chains train-08 and train-15, hotel train-04 in every hotel JSON row); told "Unknown
    tool `answer`", it wrote the same call again to the iteration limit, or wandered off and
    lost the answer it had (chains train-15: the rate 2.215 in hand, then a weather call,
    then "unknown"). Only when every call of the reply is such a call, each with one value
    (or an answer key): a reply that also calls a real tool is calls, and the loop answers
    the unknown one.
    """
    texts: list[str] = []
    for call in calls:
        if call.name in tool_names or not names_an_answer(call.name) or not call.arguments:
            return None
        args = call.arguments
        keyed = [args[k] for k in ANSWER_KEYS if k in args]
        values = keyed if len(keyed) == 1 else list(args.values()) if len(args) == 1 else []
        if not values or values[0] is None or isinstance(values[0], dict | list):
            return None
        texts.append(str(values[0]).strip())
    return "\n".join(texts) if texts and all(texts) else None


def resolve_tool_name(name: str, tool_names: Collection[str]) -> str:
    """The offered tool ``name`` can only mean, else ``name`` as written.

    Small models write tool names loosely: measured on BFCL with Qwen2.5-Coder 0.5B,
    ``Algebra Quadratic Roots`` for ``algebra_quadratic_roots``, BFCL's own dotted
    ``math.hypot`` for the offered ``math_hypot``, an OpenAI-style ``functions.`` prefix. Names
    are compared without case, separators and that prefix; only a match with exactly one
    offered tool counts, so a guess never picks between two tools.
    """
    if name in tool_names:
        return name
    key = tool_name_key(name)
    if not key:
        return name
    matches = [known for known in tool_names if tool_name_key(known) == key]
    return matches[0] if len(matches) == 1 else name
