"""Which lessons each test task is shown, judged by the generator: offline, no model.

    .venv/bin/python bench/learning_gen/shown.py --seeds 0-39             # the summary
    .venv/bin/python bench/learning_gen/shown.py --seeds 500 --show       # every task's advice
    .venv/bin/python bench/learning_gen/shown.py --seeds 0-39 --gives-up 0.5  # probes too

A scripted newcomer (:func:`newcomer_reply`) runs each train task through a real
:class:`toolcycle.Agent` and :func:`toolcycle.playbook.learn`, as a small model that knew no
lesson would at best: the naive first call (which misses), then the task's oracle calls, then
the answer read from the last result. The playbook learns from those runs, and each test task
is then shown what :meth:`~toolcycle.playbook.Playbook.instructions_for` chooses for it.

A lesson shown to a task is *its own* when one of the lesson's tools belongs to the task's
kind (each kind of a suite has its own tools; the web search shared by all belongs to none),
and *another kind's* otherwise. Retrieval by words alone shows a lesson to every task that
shares any of its words ("room" in a hotel suite), and a small model follows what it is shown:
on the dev seed 500 (1.5B, JSON) a lesson "Call guest_archive(room), then answer" learned from
nightly-rate tasks was shown to all four test tasks, and two of them then called the wrong
tool. This tool measures that precision (and the recall: test tasks shown a lesson of their
own) over many seeds in seconds, so a change to applicability is judged on suites nobody
read, before any model runs. The runs here are idealized, so the lessons differ from a model's
(no wrong-argument detours); the model runs of measure.py remain the measurement of learning.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: learning_gen itself

from learning_gen import KINDS, GeneratedSuite, Task, generate
from learning_gen.oracle import read_answer
from toolcycle import Agent, Message
from toolcycle.messages import TextPart, ToolResult
from toolcycle.models.base import ModelSettings
from toolcycle.playbook import Playbook, learn
from toolcycle.playbook.learning import LearningTask
from toolcycle.testing import ScriptedModel, call

FOUR = ("unreliable", "empty_source", "arg_format", "id_first")


def newcomer_reply(tasks: dict[str, Task], gives_up: float = 0.0
                   ) -> Callable[[list[Message], ModelSettings], Message]:
    """A reply for any task of ``tasks`` (found by its prompt): the naive call, the oracle
    calls, then the answer the results hold. A share ``gives_up`` of the tasks (chosen by
    their prompt, the same on every run) answer after the naive call instead, as a small
    model often does when it finds nothing: a failed run, which the playbook probes, so the
    lessons probes find are measured too."""

    def reply(messages: list[Message], settings: ModelSettings) -> Message:
        prompt = next(m.text for m in messages if m.role == "user")
        task = next(t for p, t in tasks.items() if p in prompt)
        results = [p.content for m in messages for p in m.parts if isinstance(p, ToolResult)]
        quits = zlib.crc32(task.prompt.encode()) % 1000 < gives_up * 1000
        steps = [task.naive] if quits else [task.naive, *task.oracle]
        if len(results) < len(steps):
            step = steps[len(results)]
            return Message("assistant", [call(step.tool, dict(step.args))])
        answers = [a for r in results if (a := read_answer(task, str(r))) is not None]
        return Message("assistant", [TextPart(f"The answer is {answers[-1]}." if answers
                                              else "No tool had it.")])

    return reply


def kind_tools(suite: GeneratedSuite) -> dict[str, set[str]]:
    """Each kind's own tools (a tool two kinds share belongs to both)."""
    return {part.kind: {t.name for t in part.tools} for part in suite.parts}


async def seed_shown(seed: int, kinds: tuple[str, ...], train: int, test: int,
                     options: dict[str, Any], gives_up: float = 0.0) -> list[dict[str, Any]]:
    """Per test task: its kind, and the kind of each lesson it is shown."""
    suite = generate(seed, train=train, test=test, kinds=kinds)
    by_prompt = {t.prompt: t for t in suite.tasks.values()}
    own = kind_tools(suite)
    with tempfile.TemporaryDirectory() as folder:
        pb = Playbook(Path(folder) / "playbook.db", **options)
        agent = Agent(ScriptedModel(newcomer_reply(by_prompt, gives_up)), suite.instructions,
                      list(suite.tools), name=suite.agent_name, playbook=pb)
        train_cases = [c for c in suite.dataset.cases if c.metadata["split"] == "train"]
        await learn([LearningTask(c.name, str(c.inputs), c.expected_output, c.kind)
                     for c in train_cases], agent,
                    lambda task, output: str(task.expected) in str(output),
                    playbook=pb, session="shown", progress=False)
        pb.flush()
        names = [t.name for t in suite.tools]
        rows = []
        for case in suite.dataset.cases:
            if case.metadata["split"] != "test":
                continue
            text, ids = pb.instructions_for(str(case.inputs), suite.agent_name, names)
            strategies = {s.id: s for s in pb.strategies()}
            shown = []
            for sid in ids:
                tools = set(strategies[sid].tools)
                lesson_kinds = sorted(k for k, ts in own.items() if tools & ts)
                shown.append({"id": sid, "kinds": lesson_kinds,
                              "own": case.kind in lesson_kinds})
            rows.append({"seed": seed, "case": case.name, "kind": case.kind,
                         "prompt": str(case.inputs), "shown": shown, "advice": text,
                         "strategies": len(strategies)})
        pb.close()
    return rows


def seeds_of(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        out += list(range(int(low), int(high or low) + 1))
    return out


def summary(rows: list[dict[str, Any]]) -> str:
    """Precision: lessons shown that are the task's own kind's; recall: tasks shown one."""
    lines = []
    for kind in [*dict.fromkeys(r["kind"] for r in rows), "all"]:
        mine = [r for r in rows if kind in ("all", r["kind"])]
        shown = [s for r in mine for s in r["shown"]]
        own = sum(s["own"] for s in shown)
        helped = sum(any(s["own"] for s in r["shown"]) for r in mine)
        foreign = sum(any(not s["own"] for s in r["shown"]) for r in mine)
        lines.append(f"{kind:14s} tasks {len(mine):3d}  lessons shown {len(shown):4d}  "
                     f"own {own / max(1, len(shown)):5.1%}  tasks shown their own "
                     f"{helped / max(1, len(mine)):5.1%}  tasks shown another kind's "
                     f"{foreign / max(1, len(mine)):5.1%}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="0-19")
    parser.add_argument("--kinds", default=",".join(FOUR), help="comma-separated, or 'all'")
    parser.add_argument("--train", type=int, default=2)
    parser.add_argument("--test", type=int, default=2)
    parser.add_argument("--gives-up", type=float, default=0.0,
                        help="share of train tasks the newcomer answers after its naive call "
                             "(failed runs, which the playbook probes)")
    parser.add_argument("--show", action="store_true", help="print each task's advice")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args()
    kinds = tuple(KINDS) if args.kinds == "all" else tuple(args.kinds.split(","))
    rows: list[dict[str, Any]] = []
    for seed in seeds_of(args.seeds):
        rows += asyncio.run(seed_shown(seed, kinds, args.train, args.test, {}, args.gives_up))
    if args.show:
        for r in rows:
            marks = " ".join(("own" if s["own"] else "OTHER:" + "/".join(s["kinds"]))
                             for s in r["shown"])
            print(f"== {r['case']} [{r['kind']}] {r['prompt']}\n   shown: {marks or '-'}\n"
                  + "\n".join("   | " + line for line in r["advice"].splitlines()))
    if args.json:
        args.json.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    print(summary(rows))


if __name__ == "__main__":
    main()
