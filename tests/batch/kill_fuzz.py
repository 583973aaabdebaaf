"""Batches killed at random points and resumed: nothing finished is lost or done twice.

Each round draws, from its seed alone, an inputs file (plain words, words whose model is down
until the round says otherwise, words whose run pauses for approval, malformed lines), then
runs batches on one output: some killed with SIGKILL after a random delay, in between plain
reruns, ``--retry-errors`` and ``--resume`` with every pending call approved, and at the end
reruns until every input has its final record. A batch is a real subprocess: a fork of this
process calling ``run_batch`` (fast), or every fourth one ``toolcycle batch`` itself.

Invariants, checked per round:
- no finished record lost: a record on disk at a kill is in the final file unchanged, unless a
  later attempt superseded it (a failed one retried, a paused one resumed);
- none done twice: an input whose success was on disk at a kill never runs its tool again, and
  an approved call runs at most once per approval (``erased X`` at most once per resume the
  batch began: one more than the resumes a kill interrupted);
- every input eventually has exactly one record, in input order, and every run is a success
  (a malformed line excepted);
- no process left behind: the killed batch's process group is gone.

``python -m tests.batch.kill_fuzz --rounds 200`` (``make fuzz``); tests/batch/test_kill_fuzz.py
runs a few rounds in ``make test``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolcycle.batch import BatchApprovals, BatchRecipe, read_records, run_batch

from . import approval_tools

ROOT = Path(__file__).resolve().parents[2]
MODEL = "python:tests.batch.approval_tools:model"
TOOLS = "tests.batch.approval_tools"


@dataclass
class Round:
    """One seed's batch: its folder, inputs, and what the checks found."""

    seed: int
    folder: Path
    words: list[str | None]  # None: a malformed line
    rng: random.Random
    kills: int = 0
    commands: int = 0
    interrupted: Counter[str] = field(default_factory=Counter)
    #: at each kill: the records on disk (by key), the side effects the killed batch made
    #: (words it ran) and those so far, and its concurrency
    at_kills: list[tuple[dict[str, dict[str, Any]], set[str], Counter[str], int]] = field(
        default_factory=list)
    violations: list[str] = field(default_factory=list)

    @property
    def out(self) -> Path:
        return self.folder / "out.jsonl"

    def effects(self) -> Counter[str]:
        path = self.folder / "effects.log"
        return Counter(path.read_text().splitlines()) if path.exists() else Counter()


def draw(seed: int, folder: Path) -> Round:
    rng = random.Random(seed)
    words: list[str | None] = []
    for n in range(rng.randint(8, 24)):
        kind = rng.choices(["w", "flaky-", "erase-", None], [6, 2, 2, 1])[0]
        words.append(None if kind is None else f"{kind}{n}")
    lines = [json.dumps(word) if word is not None else rng.choice(
        ["[" * 5000 + "]" * 5000, '{"input": ', '{"no": "input"}', "42"]) for word in words]
    (folder / "in.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Round(seed, folder, words, rng)


def _environment(state: Round) -> dict[str, str]:
    return {"BATCH_TEST_EFFECTS": str(state.folder / "effects.log"),
            "BATCH_TEST_FLAKY": str(state.folder / "model-up"),
            "BATCH_TEST_SLOW": f"{state.rng.choice([0.001, 0.005, 0.015]):.3f}"}


def _start(state: Round, retry: bool, approve: bool, concurrency: int) -> int:
    """Start one batch; its pid (a process group of its own)."""
    env = _environment(state)
    if state.rng.random() < 0.25:  # the real command
        command = [sys.executable, "-m", "toolcycle", "batch", str(state.folder / "spec.json"),
                   "--tools", TOOLS, "--model", MODEL, "--inputs",
                   str(state.folder / "in.jsonl"), "--out", str(state.out), "--no-trace",
                   "--concurrency", str(concurrency)]
        command += ["--retry-errors"] * retry
        if approve and state.out.exists():
            command += ["--resume", "--approve", "all"]
        return subprocess.Popen(command, cwd=ROOT, env={**os.environ, **env},
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True).pid
    pid = os.fork()
    if pid == 0:  # the child: one batch through the API, then out without cleanup
        code = 1
        try:
            os.setsid()
            os.environ.update(env)
            recipe = BatchRecipe(json.dumps(approval_tools.SPEC), ".json", (TOOLS,),
                                 model=MODEL, cwd=str(ROOT))
            run_batch(recipe, state.folder / "in.jsonl", state.out, concurrency=concurrency,
                      retry_errors=retry,
                      approvals=BatchApprovals.from_options(["all"], []) if approve else None)
            code = 0
        except BaseException as exc:  # reported by the exit status
            print(f"batch failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        finally:
            os._exit(code)
    return pid


def _wait(pid: int) -> int:
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _group_alive(pid: int) -> list[int]:
    """Processes still in the process group ``pid`` led."""
    left = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[2]) == pid and fields[0] != "Z":
                left.append(int(entry.name))
    return left


#: When a batch is killed: after some seconds, once the output gained some lines, or a moment
#: after a resume began (its ``resuming`` entry is on disk).
Trigger = tuple[str, float]


def _count(state: Round) -> tuple[int, int]:
    """Lines and ``resuming`` entries in the output now."""
    data = state.out.read_bytes() if state.out.exists() else b""
    return data.count(b"\n"), data.count(b'"status": "resuming"')


def _kill_when(state: Round, pid: int, trigger: Trigger, concurrency: int,
               before: Counter[str]) -> None:
    """Kill the batch when ``trigger`` fires (unless it ends first), then look at what it
    left on disk."""
    kind, value = trigger
    started = time.monotonic()
    lines, resuming = _count(state)
    fired: float | None = started if kind == "time" else None
    while fired is None or time.monotonic() - fired < (value if kind != "records" else 0):
        if fired is None:
            now_lines, now_resuming = _count(state)
            if (kind == "records" and now_lines - lines >= value) or (
                    kind == "resuming" and now_resuming > resuming):
                fired = time.monotonic()
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.waitstatus_to_exitcode(status) != 0:
                state.violations.append("a batch exited with "
                                        f"{os.waitstatus_to_exitcode(status)}")
            return
        time.sleep(0.002)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    _wait(pid)
    state.kills += 1
    left = _group_alive(pid)
    if left:
        state.violations.append(f"processes left behind by the killed batch: {left}")
    on_disk = _on_disk(state)  # what the dead batch left: nothing changes it any more
    for key, record in on_disk.items():
        if record["status"] == "resuming":
            state.interrupted[key] += 1
    effects = state.effects()
    state.at_kills.append((on_disk, {w for w in effects if effects[w] > before[w]}, effects,
                           concurrency))


def _on_disk(state: Round) -> dict[str, dict[str, Any]]:
    if not state.out.exists():
        return {}
    return {record["key"]: record for record in read_records(state.out)}


def _command(state: Round, retry: bool, approve: bool, kill: Trigger | None) -> None:
    state.commands += 1
    concurrency = state.rng.randint(1, 6)
    before = state.effects()
    pid = _start(state, retry, approve, concurrency)
    if kill is not None:
        _kill_when(state, pid, kill, concurrency, before)
        return
    code = _wait(pid)
    if code != 0:
        state.violations.append(f"a batch exited with {code}")


def play(seed: int, folder: Path) -> Round:
    state = draw(seed, folder)
    (folder / "spec.json").write_text(json.dumps(approval_tools.SPEC), encoding="utf-8")
    rng = state.rng
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.3:
            (folder / "model-up").touch()
        retry, approve = rng.random() < 0.5, rng.random() < 0.7
        trigger = rng.choice([("time", rng.uniform(0.0, 0.6)), ("records", rng.randint(1, 8)),
                              ("resuming", rng.choice([0.0, 0.01, 0.05]))])
        _command(state, retry, approve, kill=trigger)
        if rng.random() < 0.3:
            _command(state, rng.random() < 0.5, rng.random() < 0.5, kill=None)
    (folder / "model-up").touch()
    for _ in range(6):  # until every input is done: retried, resumed (and resumed again)
        _command(state, True, True, kill=None)
        records = read_records(state.out) if state.out.exists() else []
        if all(r["status"] in ("success", "malformed") for r in records) \
                and len(records) == len(state.words):
            break
    check(state)
    return state


def check(state: Round) -> None:
    if not state.out.exists():
        state.violations.append("no output file")
        return
    found = [json.loads(line) for line in state.out.read_text().splitlines()]
    bad = state.violations
    if [r["line"] for r in found] != list(range(1, len(state.words) + 1)):
        bad.append(f"final file lines {[r['line'] for r in found]}")
    final = {r["key"]: r for r in found}
    for record, word in zip(found, state.words, strict=False):
        wanted = "malformed" if word is None else "success"
        if record["status"] != wanted:
            bad.append(f"line {record['line']}: final status {record['status']}")
    effects = state.effects()
    for on_disk, ran, at_kill, concurrency in state.at_kills:
        by_word = {state.words[r["line"] - 1]: r for r in on_disk.values()}
        again = [w for w in ran if not w.startswith("erased ") and effects[w] > at_kill[w]
                 and by_word.get(w, {}).get("status") != "success"]
        if len(again) > concurrency:  # only the runs in flight at the kill may run again
            bad.append(f"{len(again)} inputs ran again after a kill at concurrency "
                       f"{concurrency}: {sorted(again)[:5]}")
        for key, record in on_disk.items():
            now = final.get(key)
            superseded = now is not None and now["attempt"] > record["attempt"]
            if record["status"] in ("success", "malformed") and now != record:
                bad.append(f"line {record['line']}: finished record lost or changed")
            elif (now is None or (now != record and not superseded)) \
                    and record["status"] != "resuming":
                bad.append(f"line {record['line']}: {record['status']} record lost")
            word = state.words[record["line"] - 1]
            if record["status"] == "success" and word is not None \
                    and effects[word] != at_kill[word]:
                bad.append(f"line {record['line']}: ran again after its success was on disk")
    for record, word in zip(found, state.words, strict=False):
        if word is not None and word.startswith("erase-"):
            allowed = 1 + state.interrupted[record["key"]]
            if effects[f"erased {word}"] > allowed:
                bad.append(f"line {record['line']}: approved call ran "
                           f"{effects[f'erased {word}']} times for {allowed} approvals")


def campaign(rounds: int, first_seed: int) -> tuple[int, int, int, list[str]]:
    """(rounds, kills, batches, violations) over seeds ``first_seed`` onwards."""
    kills = commands = 0
    violations: list[str] = []
    for seed in range(first_seed, first_seed + rounds):
        with tempfile.TemporaryDirectory(prefix=f"batch-fuzz-{seed}-") as folder:
            state = play(seed, Path(folder))
        kills += state.kills
        commands += state.commands
        violations += [f"seed {seed}: {v}" for v in state.violations]
    return rounds, kills, commands, violations


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rounds, kills, commands, violations = campaign(args.rounds, args.seed)
    for line in violations[:50]:
        print(line)
    print(f"batch kill fuzz: {rounds} rounds, {commands} batches, {kills} killed, "
          f"{len(violations)} violations")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
