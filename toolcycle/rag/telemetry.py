"""What one RAG answer cost and how it came about: a flat record for dashboards and logs.

The trace already holds everything at full detail; this record picks what people ask about a
RAG answer first: which path it took (answered from the first retrieval, searched again, ran
out of tool cycles, failed), where the time went (retrieval vs generation), which chunks were
retrieved with what scores, and every tool call. It is plain data with ``to_dict``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ..tracing.trace import ToolCallRecord

#: ``"direct"``: answered from the first retrieval without tools; ``"tools"``: called tools
#: (searched again, queried something) and then answered; ``"forced_final_answer"``: the tool
#: cycles ran out and the model was asked for an answer without tools; ``"failed"``: the run
#: raised (the error's code is in ``error_code``).
AnswerPath = Literal["direct", "tools", "forced_final_answer", "failed"]


@dataclass(slots=True)
class RetrievedChunk:
    chunk_id: str
    score: float


@dataclass(slots=True)
class SearchRecord:
    """One search of the knowledge base: the first retrieval (``iteration`` 0) or a tool call."""

    query: str
    source: Literal["retrieval", "tool"]
    iteration: int
    duration_ms: float
    hits: list[RetrievedChunk] = field(default_factory=list)


@dataclass(slots=True)
class RagTelemetry:
    """One record per answer (see the module docstring); ``tool_calls`` hold
    ``{name, args, result, error, iteration}`` for every call, the output tool included."""

    question: str
    path: AnswerPath = "direct"
    retrieval_ms: float = 0.0
    generation_ms: float = 0.0
    total_ms: float = 0.0
    retrieved: list[RetrievedChunk] = field(default_factory=list)
    searches: list[SearchRecord] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    cited_chunk_ids: list[str] = field(default_factory=list)
    #: The passages seen that hold what the answer adds to the question (:mod:`.attribution`).
    attributed_chunk_ids: list[str] = field(default_factory=list)
    max_tool_cycles: int = 0
    iterations: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    termination: dict[str, Any] | None = None
    error_code: str | None = None
    run_id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def tool_call_dicts(records: list[ToolCallRecord]) -> list[dict[str, Any]]:
    """The ``{name, args, result, error, iteration}`` view of the trace's tool calls."""
    return [
        {"name": r.name, "args": r.args, "result": r.result, "error": r.error,
         "iteration": r.iteration, "kind": r.kind}
        for r in records
    ]
