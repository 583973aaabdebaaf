"""``run_batch``: every input line through the bound spec, here on asyncio or across Ray.

Why the driver alone writes the output file: workers return records, the driver appends each
the moment it arrives (:class:`~.journal.JournalWriter`) and ignores a second record for a key
and attempt, so a Ray task retried after its worker died cannot write an input twice, and a
task that exhausted its retries still gets a record per input (an error naming the lost
worker): nothing is lost. Traces and playbook lessons are written by the workers themselves,
straight into the stores the recipe names (a shared ``postgresql://`` database for a cluster).

What a batch runs (:func:`_plan`), under the output's lock: every input without a record; with
``retry_errors``, every input whose record failed (superseded by the new one); with
``approvals``, every paused input whose pending calls they all answer (resumed as the same
run). Once every input has a record, the file is rewritten in input order.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..approval import bind_to_snapshot
from .approvals import BatchApprovals
from .inputs import MAX_LINE_BYTES, InputLine, read_inputs
from .journal import JournalWriter, output_lock, rewrite_in_order
from .ray_session import ray_session
from .records import NOT_RETRIED, RESUMING, Entry, base_record, error_record, load, read_journal
from .worker import BatchRecipe, Resumption, Work, agent_for, check_tools, run_chunk, run_input

Progress = Callable[[int], None]
Accept = Callable[[dict[str, Any]], None]
#: Called with each piece of work just before it is handed out (resumes are marked there).
Start = Callable[[Work], None]

INTERRUPTED_RESUME = ("the batch was killed while it resumed this input's paused run: its "
                      "snapshot is consumed and is not resumed twice (the calls approved "
                      "then may have run); --retry-errors runs the input again from the start")


@dataclass(frozen=True, slots=True)
class BatchReport:
    """What a batch did: inputs in the file, skipped as already done, records written (of
    which errors and malformed lines), and how the output's records stand now.

    ``statuses``: the records written, counted by their ``status`` (docs/status.md: a run that
    returned is ``success`` only when it succeeded; ``forced``, ``partial`` and ``tool_error``
    records hold an output that is not an answer), ``error`` and ``malformed`` included.
    ``holds``: every input's record in the output after the batch (those written before
    included), counted by status."""

    inputs: int
    skipped: int
    written: int
    errors: int
    malformed: int
    seconds: float
    statuses: dict[str, int] = field(default_factory=dict)
    #: inputs whose record now says ``paused`` (waiting for a person's decisions)
    paused: int = 0
    #: failed inputs run again (``retry_errors``) and paused inputs resumed (``approvals``)
    retried: int = 0
    resumed: int = 0
    holds: dict[str, int] = field(default_factory=dict)

    @property
    def succeeded(self) -> int:
        """The records written whose run succeeded."""
        return self.statuses.get("success", 0)


def run_batch(
    recipe: BatchRecipe,
    inputs: str | Path,
    out: str | Path,
    *,
    concurrency: int = 8,
    ray: str | bool | None = None,
    workers: int | None = None,
    chunk_size: int = 8,
    max_retries: int = 3,
    progress: bool | None = None,
    retry_errors: bool = False,
    approvals: BatchApprovals | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
) -> BatchReport:
    """Run ``recipe`` over every line of ``inputs``, one record per line in ``out``.

    ``ray``: ``None``/``False`` runs here on asyncio, ``concurrency`` inputs at a time;
    ``True`` starts a local Ray with ``workers`` CPUs (default: all), or joins the Ray this
    process already initialised; a string joins the cluster at that address. On Ray, inputs go
    out in chunks of ``chunk_size``, each task runs its chunk ``concurrency`` at a time, and a
    task whose worker dies is retried up to ``max_retries`` times elsewhere. ``progress``: a
    progress bar on stderr (default: when stderr is a terminal). ``retry_errors``: run the
    inputs whose record failed again; ``approvals``: resume the paused inputs they answer.
    ``max_line_bytes``: longer input lines are malformed records.

    Raises :class:`~.journal.BatchLockedError` when another batch is writing ``out``.
    """
    started = time.monotonic()
    items = read_inputs(inputs, max_line_bytes)
    by_key = {item.key: item for item in items}
    target = Path(out)
    on_ray = not (ray is None or ray is False)
    with output_lock(target):
        journal = read_journal(target, items)
        latest = dict(journal.latest)
        todo = _plan(target, items, latest, retry_errors, approvals)
        if todo:  # binding problems raise here, before the output file is written
            check_tools(recipe) if on_ray else agent_for(recipe)
        written: Counter[str] = Counter()
        with open(target, "ab") as handle, _progress_bar(
                len(items), len(items) - len(todo),
                sys.stderr.isatty() if progress is None else progress) as advance:
            writer = JournalWriter(handle)
            _settle_interrupted_resumes(items, latest, writer)

            def accept(record: dict[str, Any]) -> None:
                entry = writer.add(record, by_key[record["key"]])
                if entry is not None:
                    latest[entry.key] = entry
                    written[entry.status] += 1
                    advance(1)

            def start(work: Work) -> None:
                if work.resume is not None:  # the snapshot is consumed from here on
                    marker = base_record(work.item, RESUMING, work.attempt)
                    latest[work.item.key] = writer.mark(marker)

            if todo and not on_ray:
                asyncio.run(_run_local(recipe, todo, concurrency, accept, start))
            elif todo:
                _run_ray(recipe, todo, accept, start, address=ray if isinstance(ray, str)
                         else None, workers=workers, chunk_size=chunk_size,
                         concurrency=concurrency, max_retries=max_retries)
            _, playbook = agent_for(recipe) if recipe.playbook and todo else (None, None)
            if playbook is not None:
                playbook.flush()
            writer.sync()
        final = [latest.get(item.key) for item in items]
        missing = [item.line for item, entry in zip(items, final, strict=True)
                   if entry is None or entry.status == RESUMING]
        assert not missing, f"inputs without a record: lines {missing[:5]}"
        if writer.written or not journal.canonical:
            rewrite_in_order(target, [entry for entry in final if entry is not None])
    holds = Counter(entry.status for entry in final if entry is not None)
    return BatchReport(len(items), len(items) - len(todo), writer.written, written["error"],
                       written["malformed"], time.monotonic() - started,
                       dict(sorted(written.items())), paused=holds["paused"],
                       retried=sum(1 for w in todo if w.attempt > 1 and w.resume is None),
                       resumed=sum(1 for w in todo if w.resume is not None),
                       holds=dict(sorted(holds.items())))


def _plan(out: Path, items: list[InputLine], latest: dict[str, Entry], retry_errors: bool,
          approvals: BatchApprovals | None) -> list[Work]:
    """The work of this batch, in input order (see the module's docstring)."""
    todo: list[Work] = []
    for item in items:
        entry = latest.get(item.key)
        if entry is None:
            todo.append(Work(item))
        elif retry_errors and (entry.status not in NOT_RETRIED or entry.status == RESUMING):
            todo.append(Work(item, entry.attempt + 1))  # an interrupted resume is an error
        elif entry.status == "paused" and (approvals is not None or retry_errors):
            snapshot = load(out, entry).get("snapshot")
            pending = _pending_calls(snapshot)
            if not isinstance(snapshot, dict) or pending is None:
                if retry_errors:  # no usable snapshot (an older batch's record): start over
                    todo.append(Work(item, entry.attempt + 1))
                continue
            answers = approvals.answers(item.line, pending) if approvals else None
            if answers is not None:  # bound to this record's run and calls (signed ones too)
                todo.append(Work(item, entry.attempt + 1,
                                 Resumption(snapshot, bind_to_snapshot(snapshot, answers))))
    return todo


def _pending_calls(snapshot: object) -> list[dict[str, Any]] | None:
    """The calls a paused record's snapshot would run once answered, or None if it has no
    readable list. Decisions are matched against these, not the record's ``pending`` (a copy
    for people to read), so a decision that quotes arguments binds to what will run."""
    pending = snapshot.get("pending") if isinstance(snapshot, dict) else None
    if isinstance(pending, list) and all(
            isinstance(call, dict) and isinstance(call.get("call_id"), str) for call in pending):
        return pending
    return None


def _settle_interrupted_resumes(items: list[InputLine], latest: dict[str, Entry],
                                writer: JournalWriter) -> None:
    """An input whose latest entry says ``resuming`` was being resumed when a batch died:
    record an error for it (never resume its snapshot a second time)."""
    for item in items:
        entry = latest.get(item.key)
        if entry is not None and entry.status == RESUMING:
            found = writer.add(error_record(item, INTERRUPTED_RESUME, attempt=entry.attempt),
                               item)
            if found is not None:
                latest[item.key] = found


async def _run_local(recipe: BatchRecipe, todo: list[Work], concurrency: int,
                     accept: Accept, start: Start) -> None:
    """``concurrency`` runners taking the next piece of work in order until none is left."""
    agent, _ = agent_for(recipe)
    queue = iter(todo)

    async def runner() -> None:
        for work in queue:
            start(work)
            accept(await run_input(agent, recipe, work))

    await asyncio.gather(*(runner() for _ in range(max(1, concurrency))))


def _run_ray(recipe: BatchRecipe, todo: list[Work], accept: Accept, start: Start,
             *, address: str | None, workers: int | None, chunk_size: int, concurrency: int,
             max_retries: int) -> None:
    with ray_session(address, workers, option="--ray", subject="batch") as ray:
        task = ray.remote(max_retries=max_retries)(run_chunk)
        # a resume is never retried by Ray: its worker may have run the approved calls
        once = ray.remote(max_retries=0)(run_chunk)
        size = max(1, chunk_size)
        fresh = [work for work in todo if work.resume is None]
        resumes = [work for work in todo if work.resume is not None]
        chunks = [part[i:i + size] for part in (fresh, resumes)
                  for i in range(0, len(part), size)]
        cpus = ray.cluster_resources().get("CPU", 1)
        window = 2 * max(1, int(cpus))
        pending = iter(chunks)
        in_flight: dict[Any, list[Work]] = {}
        while True:
            while len(in_flight) < window:
                chunk = next(pending, None)
                if chunk is None:
                    break
                for work in chunk:
                    start(work)
                runner = once if chunk[0].resume is not None else task
                in_flight[runner.remote(recipe, chunk, concurrency)] = chunk
            if not in_flight:
                break
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            chunk = in_flight.pop(ready[0])
            try:
                records: list[dict[str, Any]] = ray.get(ready[0])
            except ray.exceptions.RayError as exc:  # retries exhausted: record, do not lose
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                records = [error_record(work.item, f"Ray task failed after up to "
                                        f"{max_retries} retries: {type(exc).__name__}: "
                                        f"{reason}", attempt=work.attempt)
                           for work in chunk]
            for record in records:
                accept(record)


@contextmanager
def _progress_bar(total: int, already: int, enabled: bool) -> Iterator[Progress]:
    """A rich progress bar on stderr; a no-op when not on a terminal."""
    if not enabled:
        yield lambda advance: None
        return
    from rich.console import Console
    from rich.progress import Progress as Bar

    with Bar(console=Console(stderr=True)) as bar:  # stdout stays the caller's
        task = bar.add_task("batch", total=total, completed=already)
        yield lambda advance: bar.advance(task, advance)
