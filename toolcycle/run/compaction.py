"""Context compaction: a long run's requests fit the model's window.

The budget is ``Limits.max_context_tokens``, else the window the adapter knows for its model
(:meth:`~toolcycle.models.base.Model.context_tokens`); without either, nothing is compacted.
Before a request whose history (estimated at 4 characters a token, the tools' schemas
included) is over :data:`COMPACT_AT` of the budget, the older turns are compacted, in two
steps, each taken only if the one before did not bring the request under :data:`TARGET`:

1. **stubs**: the tool results of the older turns are cut to their first characters and a note
   of what was cut;
2. **summary**: the older turns are replaced by a summary the model writes (or the cheaper
   ``compaction_model`` the agent names), in one user message after the task, so the roles
   still alternate. The summary is rolled forward: a later compaction summarises the previous
   summary and the turns since, read from their full text.

What is never compacted: the system message, the first user message (the task of the run, or
of the conversation it continues), the current run's prompt (kept verbatim inside the summary's
message when it lies among the older turns), and the last turn (the latest assistant message
and everything after it: its calls and their results, never split). Whole messages go, so a
call is never separated from its result.

The run's own record (``state.messages``: the result's messages, a conversation's store, the
trace) stays whole and append-only: compaction changes the *view* each request sends, a prefix
that stands in for ``messages[:view_from]``. A conversation keeps the summary its run ended
with (:attr:`~toolcycle.result.RunResult.context_summary`), and its next run starts from it
(:func:`starting_from`) instead of summarising the whole history again; a conversation whose
store keeps no summary has its loaded history compacted the same way at the first request.
Each compaction is recorded in ``trace.compactions`` with the tokens it saved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..messages import Message, TextPart, ToolResult, Usage
from ..models.base import Model, ModelSettings, usage_of
from ..pricing import cost_of
from ..result import ContextSummary
from .context_view import ContextView
from .scope import CancelledByToken, LimitHit
from .state import RunState, message_chars

#: Compact once a request would hold this share of the budget...
COMPACT_AT = 0.75
#: ...and bring it down to this share.
TARGET = 0.5
#: The characters a stubbed tool result keeps from its start.
STUB_KEEP = 240
SUMMARY_INSTRUCTIONS = (
    "You compact an agent's working history so it fits the model's context window. Summarise "
    "the transcript below for the agent that continues the work: keep every fact, figure, "
    "name, identifier and decision it may still need (tool results included), what was "
    "tried and failed, and what remains to do. Write plain prose or bullets, no preamble."
)


def context_budget(state: RunState) -> int | None:
    """The tokens a request may hold, or ``None`` (no compaction)."""
    return state.limits.max_context_tokens or state.setup.model.context_tokens()


def start_compaction(state: RunState) -> None:
    """With a budget, the history's size is tracked from the start (as a token budget does)."""
    if context_budget(state) is not None and not state.counts_tokens:
        state.counts_tokens = True
        state.history_chars = sum(message_chars(m) for m in state.messages)


def request_messages(state: RunState) -> list[Message]:
    """The messages this request sends: the history, or its compacted view."""
    view = state.view
    if view is None:
        return state.messages
    return [*view.prefix, *state.messages[view.view_from:]]


async def compact(state: RunState) -> None:
    """Compact the view if the next request would be over :data:`COMPACT_AT` of the budget."""
    budget = context_budget(state)
    if budget is None or state.upcoming_input_tokens <= budget * COMPACT_AT:
        return
    messages = state.messages
    head = _head_end(messages)
    tail = _tail_start(messages)
    if tail <= head:  # nothing older than the last turn: the request goes as it is
        return
    before = state.upcoming_input_tokens
    view = state.view or ContextView()
    start = max(head, view.summary_upto)  # what an earlier summary covers stays summarised
    base = messages[:head] if not view.summary else [
        *messages[:head - 1],
        _with_summary(messages, head, start, state.new_message_index, view.summary)]
    stubbed = _stubbed(messages, start, tail)
    _set_prefix(state, view, [*base, *stubbed], tail)
    step = "stubs"
    summarised = 0
    if state.upcoming_input_tokens > budget * TARGET:
        summary, requests = await _summary(state, view, start, tail, budget)
        merged = _with_summary(messages, head, tail, state.new_message_index, summary)
        summarised = tail - start
        view.summary, view.summary_upto = summary, tail
        _set_prefix(state, view, [*messages[:head - 1], merged], tail)
        step = f"summary ({requests} request(s))"
    after = state.upcoming_input_tokens
    state.trace.trace.compactions.append({
        "attempt": state.attempt, "iteration": state.iteration, "step": step,
        "stubbed_results": sum(len(m.results) for m in stubbed if m.role == "tool"),
        "summarised_messages": summarised, "kept_from": tail,
        "tokens_before": before, "tokens_after": after, "tokens_saved": before - after,
        "budget": budget,
    })


def summary_of(state: RunState) -> ContextSummary | None:
    """The summary the run's view ended with (``None``: no summary was written or given)."""
    view = state.view
    if view is None or not view.summary:
        return None
    return ContextSummary(view.summary, _head_end(state.messages) - 1, view.summary_upto)


def starting_from(state: RunState, summary: ContextSummary | None) -> RunState:
    """A run on a conversation that starts from the summary stored with it: its view is the
    first user message with the summary merged in, then the turns after the summary, as if
    the run had compacted its history itself (later compactions roll the summary forward);
    the record (``state.messages``) stays whole. ``summary``'s indices are into the history
    the run was given, whose first message is that user message. The trace says so: a
    compaction of step ``"stored summary"``."""
    if summary is None:
        return state
    if not state.counts_tokens:  # the view's size is tracked, with a budget or without
        state.counts_tokens = True
        state.history_chars = sum(message_chars(m) for m in state.messages)
    offset = _head_end(state.messages) - 1  # where the given history starts: after the system
    before = state.upcoming_input_tokens
    head, upto = offset + 1, offset + summary.upto
    view = ContextView(summary=summary.text, summary_upto=upto)
    merged = _with_summary(state.messages, head, upto, state.new_message_index, summary.text)
    _set_prefix(state, view, [*state.messages[:offset], merged], upto)
    after = state.upcoming_input_tokens
    state.trace.trace.compactions.append({
        "attempt": state.attempt, "iteration": state.iteration, "step": "stored summary",
        "stubbed_results": 0, "summarised_messages": upto - head, "kept_from": upto,
        "tokens_before": before, "tokens_after": after, "tokens_saved": before - after,
        "budget": context_budget(state),
    })
    return state


def take_paid(state: RunState) -> Usage:
    """What the summaries written for this request cost: counted in the request's step, so
    that a run's usage stays the sum of its steps (a request that fails leaves it to the
    next one)."""
    paid, state.compaction_paid = state.compaction_paid, Usage()
    return paid


def _set_prefix(state: RunState, view: ContextView, prefix: list[Message], upto: int) -> None:
    view.prefix, view.view_from = prefix, upto
    view.prefix_chars = sum(message_chars(m) for m in prefix)
    view.replaced_chars = sum(message_chars(m) for m in state.messages[:upto])
    state.view = view


def _head_end(messages: Sequence[Message]) -> int:
    """The index after the first user message (the system message and the task stay)."""
    for index, message in enumerate(messages):
        if message.role == "user":
            return index + 1
    return len(messages)


def _tail_start(messages: Sequence[Message]) -> int:
    """The index of the latest assistant message: the last turn, kept whole."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "assistant":
            return index
    return 0


def _stubbed(messages: Sequence[Message], head: int, tail: int) -> list[Message]:
    """The older turns with their long tool results cut to a stub."""
    out: list[Message] = []
    for message in messages[head:tail]:
        if message.role != "tool" or all(len(r.content) <= STUB_KEEP for r in message.results):
            out.append(message)
            continue
        out.append(replace(message, parts=[_stub(r) for r in message.results]))
    return out


def _stub(result: ToolResult) -> ToolResult:
    """The result cut to its first characters; the media a tool returned go first (an image
    weighs about as much as 4,000 characters)."""
    cut = len(result.content) - STUB_KEEP
    if cut <= 0 and not result.media:
        return result
    content = result.content if cut <= 0 else (
        f"{result.content[:STUB_KEEP]}… [compacted: {cut} more characters cut to fit the "
        "context window]")
    if result.media:
        content += (f" [compacted: {len(result.media)} media part(s) the tool returned "
                    "no longer sent]")
    return replace(result, content=content, media=())


def _with_summary(messages: Sequence[Message], head: int, tail: int, task_index: int,
                  summary: str) -> Message:
    """The first user message, the summary, and the run's prompt when it was summarised over
    (a conversation's later run): one user message, so the roles still alternate."""
    first = messages[head - 1]
    parts: list[Any] = [*first.parts, TextPart(f"\n\n[Summary of the earlier work, compacted "
                                               f"to fit the context window]\n{summary}")]
    if head <= task_index < tail and messages[task_index].role == "user":
        parts += [TextPart("\n\n[The current request]\n"), *messages[task_index].parts]
    return replace(first, parts=parts)


async def _summary(state: RunState, view: ContextView, start: int, tail: int, budget: int
                   ) -> tuple[str, int]:
    """Roll the summary forward over ``messages[start:tail]`` in chunks that fit the budget.
    A summariser that fails leaves a clipped digest instead: compaction never fails the run."""
    summary = view.summary
    chunk_chars = max(budget * 4 // 2, 2000)
    requests = 0
    for chunk in _chunks(state.messages[start:tail], chunk_chars):
        text = (f"[Summary so far]\n{summary}\n\n[Transcript]\n{chunk}" if summary
                else f"[Transcript]\n{chunk}")
        model: Model = state.setup.core.compaction_model or state.setup.model
        prompt = [Message.system(SUMMARY_INSTRUCTIONS), Message.user(text)]
        try:
            reply = await state.interrupts.guard(model.request(prompt, ModelSettings()))
        except (LimitHit, CancelledByToken):  # the run's timeout or its cancel: the run's
            raise
        except Exception:  # the summariser failed: the run goes on with a digest
            summary = _digest(summary, chunk, budget)
            continue
        requests += 1
        paid = usage_of(reply).copy()
        paid.cost = cost_of(paid, model, reply.model_name)  # the summariser's own price
        state.compaction_paid.add(paid)
        summary = reply.text.strip() or _digest(summary, chunk, budget)
    return summary, requests


def _chunks(messages: Sequence[Message], size: int) -> list[str]:
    """The transcript in pieces of at most ``size`` characters (a long message is cut)."""
    chunks: list[str] = []
    current = ""
    for message in messages:
        line = _line(message)
        while len(current) + len(line) > size:
            room = size - len(current)
            chunks.append(current + line[:room])
            current, line = "", line[room:]
        current += line
    if current:
        chunks.append(current)
    return chunks


def _line(message: Message) -> str:
    if message.role == "tool":
        return "".join(f"[result of {r.name}] {r.content}\n" for r in message.results)
    calls = "".join(f"[call {c.name}] {c.raw_arguments}\n" for c in message.tool_calls)
    return f"[{message.role}] {message.text}\n{calls}"


def _digest(summary: str, chunk: str, budget: int) -> str:
    """Without a summariser: the head of each chunk, the whole held to a tenth of the budget
    (the earliest kept: the task's first findings)."""
    return f"{summary}\n{chunk[:STUB_KEEP]}".strip()[:budget * 4 // 10]
