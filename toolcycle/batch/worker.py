"""What one batch worker does: bind the spec once, then turn input lines into output records.

A :class:`BatchRecipe` is everything a worker needs to build the agent, as plain data, so it
travels to Ray workers on other machines: the spec's *text* (no shared file system needed), the
tool modules by name (they must be importable there, as the model string's module must), the
model string and the stores' paths or ``postgresql://`` URLs. Each process binds it once
(:func:`agent_for`) and reuses the agent for every input it is given.

Every way an input can fail becomes an error record, never a lost input: a run that raises
keeps its run id, usage and termination (from the error's partial result), and anything else
(a tool module that crashes the loop, a bug) is recorded with its type and message. A run that
pauses for approval keeps its pending calls and snapshot in its record, so that a later
``--resume`` with a person's decisions (:class:`Resumption`) continues it as the same run.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..approval import ApprovalAnswer
from ..errors import AgentError
from ..limits import Limits
from .inputs import InputLine
from .records import base_record, error_record


@dataclass(frozen=True, slots=True)
class BatchRecipe:
    """How to build the batch's agent, anywhere."""

    spec_text: str
    spec_suffix: str = ".json"
    tools: tuple[str, ...] = ()
    model: str | None = None
    #: a SQLite path or ``postgresql://`` URL; ``True``: the default store; ``False``: none
    trace_store: str | bool = False
    #: a SQLite path or ``postgresql://`` URL of a playbook the runs use and learn into
    playbook: str | None = None
    max_iterations: int | None = None
    #: a SQLite path or ``postgresql://`` URL of the ledger of consumed snapshots the resumes
    #: claim in (docs/approval.md); None: the agent's default (one SQLite file per machine)
    snapshot_ledger: str | None = None
    #: the driver's working directory: relative tool modules and paths resolve against it
    cwd: str = "."

    @classmethod
    def from_files(cls, spec_path: str, tools: Sequence[str] = (), **options: Any) -> BatchRecipe:
        """A recipe from a spec file; relative paths become absolute for workers elsewhere."""
        from pathlib import Path

        path = Path(spec_path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            from ..errors import ConfigurationError

            raise ConfigurationError([f"no such spec file: {spec_path}"],
                                     subject="batch") from exc
        absolute = tuple(str(Path(t).resolve()) if t.endswith(".py") or "/" in t else t
                         for t in tools)
        stores = {name: _absolute(options.pop(name, None))
                  for name in ("trace_store", "playbook", "snapshot_ledger")}
        return cls(text, path.suffix or ".json", absolute,
                   trace_store=stores["trace_store"] or False, playbook=stores["playbook"],
                   snapshot_ledger=stores["snapshot_ledger"], cwd=str(Path.cwd()), **options)


def _absolute(location: Any) -> Any:
    """A store's local path made absolute (workers elsewhere resolve it alike); URLs, booleans
    and None as they are."""
    if isinstance(location, str) and "://" not in location:
        from pathlib import Path

        return str(Path(location).resolve())
    return location


_AGENTS: dict[BatchRecipe, tuple[Any, Any]] = {}


def agent_for(recipe: BatchRecipe) -> tuple[Any, Any]:
    """The bound agent and its playbook (or None), built once per process and recipe."""
    found = _AGENTS.get(recipe)
    if found is not None:
        return found
    from ..cli._loading import load_library, resolve_model_argument
    from ..spec.agent_spec import AgentSpec, spec_format

    if recipe.cwd not in sys.path:
        sys.path.insert(0, recipe.cwd)  # `--tools package.module` from the driver's checkout
    if os.path.isdir(recipe.cwd) and os.getcwd() != recipe.cwd:
        os.chdir(recipe.cwd)  # so that python:module:attribute model strings import alike
    spec: AgentSpec = spec_format(recipe.spec_suffix).read(recipe.spec_text, "batch spec")
    options: dict[str, Any] = {}
    playbook = None
    if recipe.playbook is not None:
        from ..playbook import Playbook

        playbook = Playbook(recipe.playbook)
        options["playbook"] = playbook
    if recipe.snapshot_ledger is not None:
        options["snapshot_ledger"] = recipe.snapshot_ledger
    agent = spec.bind(load_library(recipe.tools), model=resolve_model_argument(recipe.model),
                      trace_store=recipe.trace_store, **options)
    _AGENTS[recipe] = (agent, playbook)
    return agent, playbook


def check_tools(recipe: BatchRecipe) -> None:
    """Raise :class:`~toolcycle.errors.ConfigurationError` if the spec's tools do not bind to
    the modules here (the model is left to the workers: it may exist only there)."""
    from ..cli._loading import load_library
    from ..errors import ConfigurationError
    from ..spec.agent_spec import spec_format

    spec = spec_format(recipe.spec_suffix).read(recipe.spec_text, "batch spec")
    problems = spec.check(load_library(recipe.tools))
    if problems:
        raise ConfigurationError(problems, subject=f"binding of agent spec {spec.name!r}")


@dataclass(frozen=True, slots=True)
class Resumption:
    """A paused run to continue: its snapshot and a person's answer for every pending call."""

    snapshot: dict[str, Any]
    approvals: dict[str, ApprovalAnswer]


@dataclass(frozen=True, slots=True)
class Work:
    """One run a batch hands out: an input line, the attempt its record will carry, and the
    paused run it continues (None: a fresh run)."""

    item: InputLine
    attempt: int = 1
    resume: Resumption | None = None


async def run_input(agent: Any, recipe: BatchRecipe, work: Work) -> dict[str, Any]:
    """The output record of one piece of work (never raises, except on cancellation)."""
    item = work.item
    if item.problem is not None:
        return error_record(item, item.problem, status="malformed", attempt=work.attempt)
    limits = Limits(max_iterations=recipe.max_iterations) if recipe.max_iterations else None
    try:
        if work.resume is not None:
            result = await agent.resume(work.resume.snapshot, work.resume.approvals)
        elif isinstance(item.value, str):
            result = await agent.run(item.value, limits=limits)
        else:
            result = await agent.run(input=item.value, limits=limits)
    except AgentError as exc:
        record = error_record(item, f"{type(exc).__name__}: {exc}", attempt=work.attempt)
        if exc.result is not None:
            record.update(run_id=exc.result.run_id, usage=exc.result.usage.to_dict(),
                          termination=exc.result.termination.to_dict())
        return record
    except Exception as exc:  # a crash of this input must not take the batch down
        record = error_record(item, f"{type(exc).__name__}: {exc}", attempt=work.attempt)
        if work.resume is not None:  # a refused resume (consumed, damaged) is still that run
            run_id = work.resume.snapshot.get("run_id")
            record["run_id"] = run_id if isinstance(run_id, str) else None
        return record
    record = base_record(item, result.status, work.attempt)
    record.update(output=_plain(result.output), termination=result.termination.to_dict(),
                  usage=result.usage.to_dict(), run_id=result.run_id)
    if result.status == "paused":  # what resuming needs: the calls to decide and the state
        record.update(pending=[request.to_dict() for request in result.pending_approvals],
                      snapshot=result.snapshot)
    return record


def _plain(value: Any) -> Any:
    """Typed outputs (pydantic models) as JSON data."""
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else value


def run_chunk(
    recipe: BatchRecipe, works: list[Work], concurrency: int
) -> list[dict[str, Any]]:
    """Run a chunk of inputs in this process (a Ray task's body), ``concurrency`` at a time.

    A spec that cannot be bound here (a tool module or model missing on this machine) gives
    each input an error record saying so, rather than a task failure Ray would report as such.
    """
    try:
        agent, playbook = agent_for(recipe)
    except Exception as exc:
        return [error_record(work.item, f"cannot bind the spec on worker "
                                        f"{os.uname().nodename}: {type(exc).__name__}: {exc}",
                             attempt=work.attempt) for work in works]

    async def run_all() -> list[dict[str, Any]]:
        gate = asyncio.Semaphore(max(1, concurrency))

        async def one(work: Work) -> dict[str, Any]:
            async with gate:
                return await run_input(agent, recipe, work)

        return list(await asyncio.gather(*(one(work) for work in works)))

    records = asyncio.run(run_all())
    if playbook is not None:
        playbook.flush()  # the lessons of this chunk are stored before its records return
    return records
