"""``answer_with_rag``: retrieve, then let the agent loop answer, searching again if it must.

This is a thin layer over :class:`~toolcycle.Agent`, not a second loop: it retrieves passages
for the question, puts them in the prompt with their chunk ids, and runs an agent whose tools
are ``search_knowledge_base`` (so the model can search again with other words when the first
retrieval missed) plus the caller's tools. Everything the loop guarantees holds here too:
every tool call gets its result, limits end the run gracefully, structured output is validated
and retried, the trace is complete.

``max_tool_cycles`` is the number of iterations in which the model may call tools; it maps to
``Limits(max_iterations=max_tool_cycles, on_limit="final_answer")``, so when the cycles run out
the model is asked once more for an answer with tools disabled (or, in structured mode, with
the output tool forced). It is validated (an integer >= 0) and clamped to
:data:`MAX_TOOL_CYCLES_CAP` with a warning. ``0`` means "answer from the first retrieval only".
"""

from __future__ import annotations

import asyncio
import re
import time
import warnings
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..agent import Agent
from ..context import RunContext
from ..errors import AgentError, ConfigurationError, ValidationFailed
from ..events import CallbacksArg, Event
from ..limits import Limits
from ..models.base import Model, ModelSettings
from ..output import Output
from ..result import RunResult
from ..tools import Tool, ToolFunction
from .attribution import CITATION_GROUP, attributed
from .knowledge_base import KnowledgeBase, SearchHit, SearchMode
from .telemetry import RagTelemetry, RetrievedChunk, SearchRecord, tool_call_dicts

#: The most tool cycles one answer may take; larger values are clamped with a warning.
MAX_TOOL_CYCLES_CAP = 16
SEARCH_TOOL_NAME = "search_knowledge_base"
_CHUNK_ID = re.compile(r"^[^\s#]+#\d+$")

DEFAULT_INSTRUCTIONS = (
    "You answer questions from a knowledge base. Passages retrieved for the question come with "
    "it, each starting with its chunk id in square brackets. If they do not contain the answer, "
    f"call `{SEARCH_TOOL_NAME}` with other words (synonyms, broader or narrower terms) before "
    "answering. Cite every passage you use by its chunk id in square brackets, for example "
    "[refunds#0]. If the knowledge base does not hold the answer, say so plainly."
)

TelemetryCallback = Callable[[RagTelemetry], Any]


@dataclass(slots=True)
class RagAnswer[OutputT]:
    """The answer, the chunks it cites, every chunk seen, the telemetry and the full run;
    ``attributed``: the chunks seen that hold what the answer adds to the question, read from
    its text (:mod:`.attribution`), whether or not the model cited them."""

    output: OutputT
    citations: list[str]
    sources: dict[str, SearchHit]
    telemetry: RagTelemetry
    run: RunResult[OutputT]
    attributed: list[str] = field(default_factory=list)


@dataclass(slots=True)
class RetrievalEvent(Event):
    """Streaming: the first retrieval finished (before the loop's first event)."""

    hook: ClassVar[str] = "on_retrieval"
    query: str
    hits: list[SearchHit]
    duration_ms: float


@dataclass(slots=True)
class AnswerEvent(Event):
    """Streaming: the last event, carrying the complete :class:`RagAnswer`."""

    hook: ClassVar[str] = "on_rag_answer"
    answer: RagAnswer[Any]


async def answer_with_rag(
    question: str,
    kb: KnowledgeBase,
    model: Model | str,
    *,
    tools: Sequence[Tool[Any] | ToolFunction] = (),
    max_tool_cycles: int = 4,
    output: type[Any] | Output[Any] | Any = str,
    k: int = 5,
    search_mode: SearchMode = "auto",
    instructions: str = DEFAULT_INSTRUCTIONS,
    on_telemetry: TelemetryCallback | None = None,
    callbacks: CallbacksArg = None,
    model_settings: ModelSettings | None = None,
    deps: Any = None,
) -> RagAnswer[Any]:
    """Answer ``question`` from ``kb``; see the module docstring for the flow and the limits.

    Raises the loop's ``AgentError`` on failure; the telemetry (path ``"failed"``) still goes
    to ``on_telemetry`` and into ``error.result.trace.metadata["rag"]``.
    """
    session = _Session(question, kb, k, search_mode, max_tool_cycles, on_telemetry)
    agent = session.agent(model, tools, output, instructions, callbacks, model_settings)
    hits = await session.retrieve()
    try:
        result = await agent.run(session.prompt(hits), deps=deps)
    except AgentError as error:
        session.record(error.result, error)
        raise
    return session.answer(result)


class RagStream:
    """``async for event in stream``: a :class:`RetrievalEvent`, the loop's events (text
    deltas of the final answer included, as they arrive), then an :class:`AnswerEvent`.
    ``stream.answer`` is set when the iteration ends."""

    def __init__(self, session: _Session, agent: Agent[Any, Any], deps: Any) -> None:
        self._session = session
        self._agent = agent
        self._deps = deps
        self.answer: RagAnswer[Any] | None = None

    async def __aiter__(self) -> AsyncIterator[Event]:
        session = self._session
        started = time.perf_counter()
        hits = await session.retrieve()
        yield RetrievalEvent(session.question, hits, (time.perf_counter() - started) * 1000)
        stream = self._agent.stream(session.prompt(hits), deps=self._deps)
        try:
            async for event in stream:
                yield event
        except AgentError as error:
            session.record(error.result, error)
            raise
        assert stream.result is not None
        self.answer = session.answer(stream.result)
        yield AnswerEvent(self.answer)

    async def get_answer(self) -> RagAnswer[Any]:
        """Drain the events and return the answer."""
        async for _ in self:
            pass
        assert self.answer is not None
        return self.answer


def answer_with_rag_stream(
    question: str,
    kb: KnowledgeBase,
    model: Model | str,
    *,
    tools: Sequence[Tool[Any] | ToolFunction] = (),
    max_tool_cycles: int = 4,
    output: type[Any] | Output[Any] | Any = str,
    k: int = 5,
    search_mode: SearchMode = "auto",
    instructions: str = DEFAULT_INSTRUCTIONS,
    on_telemetry: TelemetryCallback | None = None,
    callbacks: CallbacksArg = None,
    model_settings: ModelSettings | None = None,
    deps: Any = None,
) -> RagStream:
    """:func:`answer_with_rag` with streaming; arguments are validated here, before iterating."""
    session = _Session(question, kb, k, search_mode, max_tool_cycles, on_telemetry)
    agent = session.agent(model, tools, output, instructions, callbacks, model_settings)
    return RagStream(session, agent, deps)


def clamp_tool_cycles(value: int) -> int:
    """Validate ``max_tool_cycles`` and clamp it to :data:`MAX_TOOL_CYCLES_CAP`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigurationError(
            [f"max_tool_cycles must be an integer >= 0, got {value!r}"], subject="answer_with_rag"
        )
    if value > MAX_TOOL_CYCLES_CAP:
        warnings.warn(
            f"max_tool_cycles={value} exceeds its cap {MAX_TOOL_CYCLES_CAP}; clamped",
            stacklevel=3,
        )
        return MAX_TOOL_CYCLES_CAP
    return value


def says_more_than_ids(output: str, ctx: RunContext[Any]) -> None:
    """A text answer must say something besides chunk ids: told to cite, the 1.5B answered
    two questions with an id alone ("[install#0]"); refused, the attempt is retried."""
    if CITATION_GROUP.search(output) and not CITATION_GROUP.sub("", output).strip(" \t\n.,;:"):
        raise ValidationFailed("The answer holds only chunk ids. Write the answer in words, "
                               "then the chunk id of each passage it comes from in square "
                               "brackets.")


def find_citations(output: Any, known: Callable[[str], bool]) -> list[str]:
    """Chunk ids the output cites, in order of first appearance, keeping only ids that
    ``known`` confirms exist (a model can invent ids).

    In text, a citation is an id in square brackets (``[refunds#0]``, ``[a#0, b#1]``); in
    structured output, every string field is read that way, and a string field that is
    exactly a chunk id (an item of a ``sources: list[str]`` field, say) counts too.
    """
    found: list[str] = []
    for text in _strings(_plain(output)):
        tokens = [text] if _CHUNK_ID.match(text) else [
            token for group in CITATION_GROUP.findall(text)
            for token in re.split(r"[,;\s]+", group)
        ]
        for token in tokens:
            if _CHUNK_ID.match(token) and token not in found and known(token):
                found.append(token)
    return found


def _plain(output: Any) -> Any:
    """A structured output as JSON values (a pydantic model's dump); anything else as is."""
    dump = getattr(output, "model_dump", None)
    return dump(mode="json") if callable(dump) else output


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list | tuple):
        return [s for item in value for s in _strings(item)]
    return []


class _Session:
    """One answer in progress: the first retrieval, the search tool, the telemetry."""

    def __init__(
        self,
        question: str,
        kb: KnowledgeBase,
        k: int,
        search_mode: SearchMode,
        max_tool_cycles: int,
        on_telemetry: TelemetryCallback | None,
    ) -> None:
        problems = []
        if not isinstance(question, str) or not question.strip():
            problems.append("question must be a non-empty string")
        if not isinstance(kb, KnowledgeBase):
            problems.append(f"kb must be a KnowledgeBase, got {type(kb).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 50:
            problems.append(f"k must be an integer in [1, 50], got {k!r}")
        if search_mode not in ("auto", "fts", "vector", "hybrid"):
            problems.append(f"search_mode must be auto, fts, vector or hybrid, got {search_mode!r}")
        elif search_mode in ("vector", "hybrid") and getattr(kb, "embedder", None) is None:
            problems.append(f"search_mode {search_mode!r} needs a knowledge base with an embedder")
        if problems:
            raise ConfigurationError(problems, subject="answer_with_rag")
        self.question = question
        self.kb = kb
        self.k = k
        self.search_mode = search_mode
        self.cycles = clamp_tool_cycles(max_tool_cycles)
        self.on_telemetry = on_telemetry
        self.started = time.perf_counter()
        self.telemetry = RagTelemetry(question, max_tool_cycles=self.cycles)
        self.sources: dict[str, SearchHit] = {}

    async def retrieve(self) -> list[SearchHit]:
        self.started = time.perf_counter()
        hits = await asyncio.to_thread(self._search, self.question, self.k, "retrieval", 0)
        self.telemetry.retrieval_ms = (time.perf_counter() - self.started) * 1000
        self.telemetry.retrieved = [RetrievedChunk(h.chunk_id, h.score) for h in hits]
        return hits

    def _search(self, query: str, k: int, source: Any, iteration: int) -> list[SearchHit]:
        started = time.perf_counter()
        hits = self.kb.search(query, k, mode=self.search_mode)
        record = SearchRecord(query, source, iteration, (time.perf_counter() - started) * 1000,
                              [RetrievedChunk(h.chunk_id, h.score) for h in hits])
        self.telemetry.searches.append(record)
        for hit in hits:
            self.sources.setdefault(hit.chunk_id, hit)
        return hits

    def search_tool(self) -> Tool[Any]:
        def search_knowledge_base(ctx: RunContext[Any], query: str, k: int = 5) -> dict[str, Any]:
            """Search the knowledge base again, e.g. with other words than the question's.

            Args:
                query: Words to look for (synonyms, broader or narrower terms than before).
                k: How many passages to return (1 to 10).
            """
            hits = self._search(query, max(1, min(k, 10)), "tool", ctx.iteration)
            if not hits:
                return {"results": [], "note": f"no passages matched {query!r}; "
                        "try other words, or answer that the knowledge base does not say"}
            return {"results": [
                {"chunk_id": h.chunk_id, "title": h.title, "text": h.text} for h in hits
            ]}

        return Tool.from_function(search_knowledge_base, concurrent=True)

    def agent(
        self,
        model: Model | str,
        tools: Sequence[Tool[Any] | ToolFunction],
        output: Any,
        instructions: str,
        callbacks: CallbacksArg,
        model_settings: ModelSettings | None,
    ) -> Agent[Any, Any]:
        offered = [self.search_tool(), *tools] if self.cycles > 0 else []
        return Agent(
            model,
            instructions,
            offered,
            name="rag",
            output=Output(str, validators=[says_more_than_ids]) if output is str else output,
            limits=Limits(max_iterations=max(self.cycles, 1), on_limit="final_answer"),
            callbacks=callbacks,
            model_settings=model_settings,
        )

    def prompt(self, hits: list[SearchHit]) -> str:
        """The question, the passages with their chunk ids, and what to do next.

        When nothing matched, a closing directive repeats in the user turn what the instructions
        say: measured with Qwen2.5-Coder-1.5B, without it the model answered from memory
        instead of searching; with it, it searched. After found passages there is none, measured
        on the 1.5B over three held-out sets (bench/runs/2026-12-07/rag/): asked there to cite
        them, it cited in 18 of 20 answers instead of 4 but put ids where facts belong in 4
        (right 16 of 20 instead of 20); with the search tool offered, told also to answer
        from them when they answer and to search when not, it searched on 6 of 36 questions
        instead of 17 and answered 29 of 30 right instead of 27, but cited in 3 of 30 and spent
        ten times the output tokens on a direct answer (79 instead of 8 for "18 euros"; the
        one such reply seen whole had put the id in a JSON key the protocol drops), so a
        direct answer took twice as long. Provenance comes from :mod:`.attribution`.
        """
        question = f"Question: {self.question}"
        if hits:
            passages = "\n\n".join(
                f"[{h.chunk_id}]" + (f" ({h.title})" if h.title else "") + f" {h.text}"
                for h in hits
            )
            return f"{question}\n\nPassages retrieved for the question:\n{passages}"
        directive = (
            f"Call {SEARCH_TOOL_NAME} with other words (synonyms, broader terms) before "
            "answering; do not answer from memory." if self.cycles > 0
            else "Say that the knowledge base does not answer it."
        )
        return f"{question}\n\nNo passages matched the question.\n\n{directive}"

    def record(self, result: RunResult[Any] | None, error: AgentError | None) -> RagTelemetry:
        """Complete the telemetry from the run (or the failed run) and deliver it."""
        t = self.telemetry
        t.total_ms = (time.perf_counter() - self.started) * 1000
        t.generation_ms = max(t.total_ms - t.retrieval_ms, 0.0)
        if result is not None:
            t.run_id = result.run_id
            t.tool_calls = tool_call_dicts(result.tool_calls)
            t.iterations = result.iterations
            t.input_tokens = result.usage.input_tokens
            t.output_tokens = result.usage.output_tokens
            t.termination = result.termination.to_dict()
            helper_calls = [c for c in result.tool_calls if c.kind in ("tool", "unknown")]
            t.path = ("forced_final_answer" if result.forced_final_answer
                      else "tools" if helper_calls else "direct")
        if error is not None:
            t.path = "failed"
            t.error_code = error.code
        else:
            assert result is not None
            t.cited_chunk_ids = find_citations(result.output, self._known)
            t.attributed_chunk_ids = attributed(
                "\n".join(_strings(_plain(result.output))), self.question,
                {chunk_id: hit.text for chunk_id, hit in self.sources.items()})
        if result is not None:
            result.trace.metadata["rag"] = t.to_dict()
        if self.on_telemetry is not None:
            self.on_telemetry(t)
        return t

    def answer(self, result: RunResult[Any]) -> RagAnswer[Any]:
        t = self.record(result, None)
        return RagAnswer(result.output, t.cited_chunk_ids, dict(self.sources), t, result,
                         t.attributed_chunk_ids)

    def _known(self, chunk_id: str) -> bool:
        return chunk_id in self.sources or self.kb.chunk(chunk_id) is not None
