"""Routines: a learned tool chain offered to the model as one tool.

Why: a playbook that only writes advice cannot make a run shorter than its tools allow. A
chain such as ``country_info`` → ``exchange_rate`` takes three model turns at best (two calls,
then the answer) however well the model is advised; a run that already succeeds that way
cannot be cut by advice. A routine runs the chain in one call: the model calls
``country_info_then_exchange_rate(country)``, the routine calls ``country_info``, takes the
currency code out of its result and calls ``exchange_rate`` with it, and the model answers in
the next turn: two turns instead of three, and one request less of the whole history.

How the value is taken out of a result is learned, not guessed: every successful run of the
chain shows where the fed value stood in the earlier result (``Freedonia: capital Fredville,
currency code FDK``). Across runs of different tasks the text just before the value and just
after it stays the same while the value changes, so the longest common context on each side
is the extraction rule (the left-right wrapper of wrapper induction). A rule is kept only when
it finds the value again in every example it was learned from; a run that finds nothing where
the rule says returns the first result and says so, so the model can go on by hand.

A routine executes the tools the model would have called, with their own validation and
timeouts; a chain with a tool that needs approval is never made a routine (the approval is a
person's decision about that call, not the routine's). Offered only with
``Playbook(routines=True)``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .._observation import serialize_result
from ..context import RunContext
from ..tools import Tool, ToolArgumentsError, ToolSpec
from .applicability import row_named
from .carry import CallRefused, invoke_step, properties, typed
from .evidence import is_empty_result
from .routine_result import StandIn, StepOutcome, completed, note
from .strategy import Strategy

#: Context kept on each side of a fed value (characters): enough for a label such as
#: "currency code ", short enough that an entity's own words rarely survive the intersection.
CONTEXT_CHARS = 40
#: Examples (from runs of different tasks) a routine needs before it is offered.
MIN_FEED_EXAMPLES = 2
#: Results up to this long are kept whole with an example, so a rule is checked against the
#: result it will read (an anchor may also occur earlier, outside the context kept).
CHECK_CHARS = 600
#: An extracted value longer than this is not a value the chain passed on.
MAX_VALUE_CHARS = 200

_NAME_OK = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_WORDISH = re.compile(r"\w")


@dataclass(frozen=True, slots=True)
class Feed:
    """How one step gets its argument: ``arg`` is the text of the previous result between
    ``left`` and ``right`` (``left`` empty: from the start; ``right`` empty: to the end); or,
    where ``by`` is set, the ``key`` of the one record of the result's list whose ``by``
    field the task names (a picked row, :func:`~toolcycle.playbook.applicability.row_named`).

    Why picked rows: where a lookup lists one record per thing (a guest's bills, one per
    outlet) and the task names which ("the spa total"), the record asked about may be any row;
    a small model tends to pass the first row's id, and no left-right rule finds a row that
    moves."""

    arg: str
    left: str
    right: str
    key: str = ""
    by: str = ""

    def extract(self, text: str, prompt: str = "") -> str | None:
        """The value in ``text`` where this rule says it is (for the task ``prompt``), or
        None."""
        if self.by:
            picked = row_named(text, self.key, self.by, prompt)
            return picked if picked and len(picked) <= MAX_VALUE_CHARS else None
        start = 0
        if self.left:
            at = text.find(self.left)
            if at < 0:
                return None
            start = at + len(self.left)
        end = len(text)
        if self.right:
            at = text.find(self.right, start)
            if at < 0:
                return None
            end = at
        value = text[start:end].strip()
        return value if 0 < len(value) <= MAX_VALUE_CHARS else None


@dataclass(frozen=True, slots=True)
class Routine:
    """A learned chain: ``tools`` in order, ``feeds[i]`` feeding ``tools[i + 1]``."""

    name: str
    tools: tuple[str, ...]
    feeds: tuple[Feed, ...]
    strategy_id: str
    support: int


def routine_name(tools: Sequence[str]) -> str:
    """The tool name of the routine for ``tools``: readable when it fits the 64-character
    limit every provider enforces, else a stable hash."""
    name = "_then_".join(tools)
    if _NAME_OK.match(name):
        return name
    return "routine_" + hashlib.sha1(">".join(tools).encode()).hexdigest()[:12]


def feed_example(result: str, value: str) -> dict[str, Any] | None:
    """Where ``value`` stood in ``result``: the context on each side (or None if absent).

    Case is ignored to find it (a model may lower-case what it copies); the value recorded
    is the result's own text.
    """
    if not value:
        return None
    at = result.find(value)
    end = at + len(value)
    if at < 0:  # not str.lower(): it can change a string's length ("İ"), and so the offsets
        found = re.search(re.escape(value), result, re.IGNORECASE)
        if found is None:
            return None
        at, end = found.span()
    left = result[max(0, at - CONTEXT_CHARS):at]
    right = result[end:end + CONTEXT_CHARS]
    if at > CONTEXT_CHARS:  # cut off mid-word: drop the partial word, it is not a label
        left = re.sub(r"^\w+", "", left)
    if len(result) - end > CONTEXT_CHARS:
        right = re.sub(r"\w+$", "", right)
    return {"left": left, "value": result[at:end],
            "text": result if len(result) <= CHECK_CHARS else "",
            "right": right, "whole_left": at <= CONTEXT_CHARS,
            "whole_right": len(result) - end <= CONTEXT_CHARS}


def induce(strategy: Strategy) -> Routine | None:
    """The routine a sequence strategy's feed examples support, or None.

    Needs a chain of two or more tools, :data:`MIN_FEED_EXAMPLES` examples that agree on
    which argument each step is fed, and for every step a rule that finds each example's
    value again in its own context.
    """
    tools = tuple(strategy.tools)
    if strategy.kind != "sequence" or len(tools) < 2 or len(set(tools)) != len(tools):
        return None
    runs = [run for run in strategy.feeds if len(run) == len(tools) - 1]
    if len(runs) < MIN_FEED_EXAMPLES:
        return None
    feeds = []
    for step in range(len(tools) - 1):
        examples = [run[step] for run in runs]
        args = {e.get("arg") for e in examples}
        if len(args) != 1:
            return None
        arg = str(args.pop())
        known = [e.get("pick") for e in examples if "pick" in e]  # (older ones: unknown)
        picks = {tuple(p) for p in known if isinstance(p, list)}
        if len(picks) == 1 and all(known):  # every row the task named, by one field
            key, by = picks.pop()
            feed: Feed | None = Feed(arg, "", "", str(key), str(by))
        elif picks:  # a row the task named, its place task-dependent: no place rule holds
            return None
        else:
            feed = _wrapper(arg, examples)
        if feed is None:
            return None
        feeds.append(feed)
    return Routine(routine_name(tools), tools, tuple(feeds), strategy.id, strategy.support)


def _wrapper(arg: str, examples: list[dict[str, Any]]) -> Feed | None:
    lefts = [str(e["left"]) for e in examples]
    rights = [str(e["right"]) for e in examples]
    left = _common_suffix(lefts)
    right = _common_prefix(rights)
    left = _word_boundary(left, lefts, side="left")
    right = _word_boundary(right, rights, side="right")
    # An empty anchor means "from the start" or "to the end": only true when every example's
    # value stood there (its whole context on that side was seen and was empty).
    if not left and any(e["left"] or e.get("whole_left") is not True for e in examples):
        return None
    if not right and any(e["right"].strip() or e.get("whole_right") is not True
                         for e in examples):
        return None
    feed = Feed(arg, left, right)
    for e in examples:  # the rule must find every value it was learned from, in its result
        text = str(e.get("text") or e["left"] + e["value"] + e["right"])
        if feed.extract(text) != str(e["value"]).strip():
            return None
    return feed


def _common_suffix(texts: list[str]) -> str:
    reversed_prefix = _common_prefix([t[::-1] for t in texts])
    return reversed_prefix[::-1]


def _common_prefix(texts: list[str]) -> str:
    if not texts:
        return ""
    first = min(texts)
    last = max(texts)
    size = 0
    while size < len(first) and first[size] == last[size]:
        size += 1
    return first[:size]


def _word_boundary(anchor: str, contexts: list[str], side: str) -> str:
    """Cut an anchor that ends inside a word shared by chance ("...burg, currency code " and
    "...berg, currency code " share "rg, currency code "): the part of a word kept would
    belong to the entity, not the label."""
    if not anchor:
        return anchor
    if side == "left":
        if not _WORDISH.match(anchor[0]):
            return anchor
        longer = [c for c in contexts if len(c) > len(anchor)]
        if not any(_WORDISH.match(c[-len(anchor) - 1]) for c in longer):
            return anchor  # the word starts where the anchor starts in every example
        cut = 0
        while cut < len(anchor) and _WORDISH.match(anchor[cut]):
            cut += 1
        return anchor[cut:]
    if not _WORDISH.match(anchor[-1]):
        return anchor
    longer = [c for c in contexts if len(c) > len(anchor)]
    if not any(_WORDISH.match(c[len(anchor)]) for c in longer):
        return anchor
    cut = len(anchor)
    while cut > 0 and _WORDISH.match(anchor[cut - 1]):
        cut -= 1
    return anchor[:cut]


# -- the routine as a tool -------------------------------------------------------------------


def routine_tool(routine: Routine, tools: Mapping[str, Tool[Any]]) -> Tool[Any] | None:
    """A :class:`Tool` running ``routine`` over the agent's own ``tools``, or None.

    None when a step's tool is missing, needs approval, or the parameters do not combine
    (a later step's other parameter named like an earlier one).
    """
    steps = [tools.get(name) for name in routine.tools]
    if any(t is None or t.requires_approval or t.function is None for t in steps):
        return None
    chain: list[Tool[Any]] = [t for t in steps if t is not None]
    parameters = _parameters(chain, routine.feeds)
    if parameters is None:
        return None
    # Short: it is read on every request of every run of the agent.
    description = (
        f"Runs {chain[0].name}, then " + ", then ".join(
            f"{chain[i + 1].name} with the {f.arg} "
            + (f"of the row whose {f.by} the task names" if f.by else "from its result")
            for i, f in enumerate(routine.feeds))
        + f"; returns every result. Learned from {routine.support} runs.")

    run = _runner(routine, chain)

    async def run_routine(ctx: RunContext[Any], **arguments: Any) -> str:
        text, ran = await run(ctx, arguments)
        note(ctx, ran)  # what ran, for the learner (typed)
        return text

    spec = ToolSpec(routine.name, description, parameters)
    return Tool(spec, run_routine, context_param="ctx")


_Run = Callable[[RunContext[Any], dict[str, Any]], Awaitable[tuple[str, StandIn]]]


def _runner(routine: Routine, chain: Sequence[Tool[Any]]) -> _Run:
    """What runs ``routine``'s ``chain`` of tools: the text the model reads, and what ran,
    typed, for the learner (:class:`StandIn`). A step takes the caller's arguments that are
    its own (not the one fed from the previous result)."""
    own = {i: set(properties(t)) - ({routine.feeds[i - 1].arg} if i else set())
           for i, t in enumerate(chain)}

    async def run(ctx: RunContext[Any], arguments: dict[str, Any]) -> tuple[str, StandIn]:
        lines: list[str] = []
        steps: list[StepOutcome] = []

        def answer(ok: bool) -> tuple[str, StandIn]:
            name = routine.name if ctx is None else ctx.tool_name or routine.name
            return (completed([t.name for t in chain], lines) if ok else "\n".join(lines),
                    StandIn("routine", name, ok, steps=tuple(steps)))

        carried: str | None = None
        for i, step in enumerate(chain):
            args = {k: v for k, v in arguments.items() if k in own[i]}
            if i:
                feed = routine.feeds[i - 1]
                assert carried is not None
                if is_empty_result(carried):  # nothing to pass on: the chain ends here
                    lines.append(f"(stopped: {chain[i - 1].name} found nothing, so "
                                 f"{step.name} was not called)")
                    return answer(False)
                value = feed.extract(carried, getattr(ctx, "prompt", None) or "")
                if value is None:
                    where = (f"in one row whose {feed.by} the task names" if feed.by else
                             "where the learned routine expects it")
                    lines.append(f"(stopped: no {feed.arg} for {step.name} {where} in the "
                                 f"result above; call {step.name} yourself if the result has "
                                 "it)")
                    return answer(False)
                args[feed.arg] = typed(value, properties(step).get(feed.arg))
            shown = json.dumps(args, ensure_ascii=False, default=str)
            try:
                checked = step.validate(args)
                value_out = await invoke_step(step, ctx, checked)
            except ToolArgumentsError as exc:
                lines.append(f"{step.name}({shown}) rejected its arguments: {exc}")
                steps.append(StepOutcome(step.name, args, "error", str(exc)))
                return answer(False)
            except CallRefused as exc:
                lines.append(f"(stopped: {exc})")
                return answer(False)
            except TimeoutError:
                lines.append(f"{step.name}({shown}) timed out after {step.timeout} s")
                steps.append(StepOutcome(step.name, args, "timeout", f"{step.timeout} s",
                                         step.timeout))
                return answer(False)
            except Exception as exc:  # a step's failure is what the model must hear
                failure = f"{type(exc).__name__}: {exc}"
                lines.append(f"{step.name}({shown}) failed: {failure}")
                steps.append(StepOutcome(step.name, args, "error", failure))
                return answer(False)
            carried, _ = serialize_result(value_out)
            lines.append(f"{step.name}({shown}) -> {carried}")
            steps.append(StepOutcome(step.name, args, "empty" if is_empty_result(carried)
                                     else "ok", carried))
        return answer(True)

    return run


def stand_in(routine: Routine, built: Tool[Any], tools: Mapping[str, Tool[Any]]
             ) -> Tool[Any] | None:
    """The routine ``built`` (its tool) answering calls of its first tool, or None.

    Why: offered ``lookup_then_detail`` beside ``lookup``, a small model tends to call the
    tool it knows first, ``lookup`` itself, and then the routine: three turns, as without
    the routine. Answering that first call with the whole chain ends such runs a turn
    earlier; taking the first tool away instead makes a small model answer without looking
    anything up.

    Only when every later step is ``read_only`` (the model asked for the first call, not for
    the others) and the routine takes exactly the first tool's parameters (a call of it must
    be a complete call of the routine). The stand-in keeps the first tool's name, schema and
    call limit; each step keeps its own timeout inside the routine.
    """
    first = tools.get(routine.tools[0])
    if first is None or built.function is None or not all(
            (t := tools.get(name)) is not None and t.policy.read_only
            for name in routine.tools[1:]):
        return None
    if set(properties(built)) != set(properties(first)):
        return None
    policy = replace(first.policy, timeout=None, inline=False)
    return Tool(first.spec, built.function, policy=policy, context_param=built.context_param,
                check_schema=False)


#: In every result a repair gives (see :func:`repair`). The learner reads the call's typed
#: note (:class:`~.routine_result.StandIn`); :func:`repaired` reads a stored trace's text.
REPAIRED = "needs the result of"


def repair(routine: Routine, built: Tool[Any], tools: Mapping[str, Tool[Any]]
           ) -> Tool[Any] | None:
    """The routine ``built`` (its tool) answering failed calls of its last tool, or None.

    Why: a small model often calls the detail tool first with the name the question gives
    (``exchange_rate("Zarovia")`` where the tool takes a currency code): the lookup the routine
    runs first was skipped, and the tool rejects the name; few such runs recover, and many call
    the same tool again to the iteration limit. The routine already knows the repair: look the
    name up, take the value out of the result, call the tool with it. So in a run offered the
    routine, a call of its last tool that fails (or finds nothing) runs the routine with the
    call's value, and answers with every result; if the routine does not get through (the lookup
    finds nothing too), the call's own failure stands, unchanged.

    Only for a routine of one parameter whose last tool takes one parameter, the fed one (so
    the call's one value is the routine's one input), and only when every step is
    ``read_only``: the model asked for none of the calls the repair makes.
    """
    last = tools.get(routine.tools[-1])
    if last is None or built.function is None or not all(
            (t := tools.get(name)) is not None and t.policy.read_only for name in routine.tools):
        return None
    params, fed = list(properties(built)), routine.feeds[-1].arg
    if len(params) != 1 or list(properties(last)) != [fed]:
        return None
    chain = [t for name in routine.tools if (t := tools.get(name)) is not None]
    run = _runner(routine, chain)
    param = params[0]
    lookups = ", ".join(routine.tools[:-1])

    async def call_or_repair(ctx: RunContext[Any], **arguments: Any) -> Any:
        failure: Exception | None = None
        try:
            value = await invoke_step(last, ctx, last.validate(arguments))
        except (ToolArgumentsError, TimeoutError):
            raise  # the model's arguments to fix; a timeout is not a missing lookup
        except Exception as exc:  # the call the lesson is about: the name in the id's place
            failure = exc
        else:
            if not is_empty_result(serialize_result(value)[0]):
                return value
        given = arguments.get(fed)
        chained, ran = (await run(ctx, {param: given}) if isinstance(given, str)
                        else ("", None))
        if ran is None or not ran.ok:  # not through
            if failure is not None:
                raise failure
            return value
        note(ctx, StandIn("repair", last.name, steps=ran.steps))
        body = chained.split("\n", 1)[1]
        return (f"Ran {', then '.join(routine.tools)} for you, since {last.name} {REPAIRED} "
                f"{lookups} first (already called; answer from these results):\n{body}")

    policy = replace(last.policy, timeout=None, inline=False)
    return Tool(last.spec, call_or_repair, policy=policy, context_param="ctx",
                check_schema=False)


def repaired(tool: str, result: str | None) -> bool:
    """Whether a call of ``tool`` with ``result`` was answered by a routine's repair."""
    if result is None or not result.startswith("Ran "):
        return False
    return f", since {tool} {REPAIRED} " in result.split("\n", 1)[0]


def _parameters(chain: list[Tool[Any]], feeds: tuple[Feed, ...]) -> dict[str, Any] | None:
    """The routine's JSON Schema: the first tool's parameters and the later steps' parameters
    that are not fed (None when two of them share a name, or a schema uses ``$ref``)."""
    combined: dict[str, Any] = {}
    required: list[str] = []
    for i, tool in enumerate(chain):
        schema = tool.spec.parameters
        if "$defs" in schema or "definitions" in schema:
            return None  # references would not resolve inside the combined schema
        fed = feeds[i - 1].arg if i else None
        props = properties(tool)
        if fed is not None and fed not in props:
            return None
        for key, value in props.items():
            if key == fed:
                continue
            if key in combined:
                return None
            combined[key] = value
        required += [r for r in schema.get("required", []) if r != fed and isinstance(r, str)]
    return {"type": "object", "properties": combined, "required": required,
            "additionalProperties": False}
