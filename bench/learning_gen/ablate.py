"""One Playbook setting changed on a seed already measured: the frozen arm again, nothing else.

    nice -n 10 .venv/bin/python bench/learning_gen/ablate.py --seed 500 --protocol react \\
        --label g4-dc1596a --guide 0 --threads 1 --out bench/runs/2026-12-05/learn26
    ... ablate.py --seed 1016 --label h578f0f0 --routines ...   # -> playbook-routines.jsonl

Reads the seed's learned playbook (``OUT/LABEL/PROTOCOL/seed-N/playbook.db``, copied, so the
measurement's own stays as it was) and runs its test split with ``Playbook(copy, learn=False,
guide=G)``, logging the runs to ``playbook-guideG.jsonl`` beside the measurement's
``playbook.jsonl`` (the same record format, so ``measure.py report --b-log`` compares it with
the baseline).

Why only the frozen arm: a setting that changes only what a run is shown or offered (the
guide; routines, with their stand-ins and head starts, made from the lessons already learned)
is a question about the test runs; the lessons stay the ones the default learned, so the two
arms differ in the one setting. (Routines on while learning too may learn other lessons: this
measures the test-time part only.) A test task the setting does not change (its prompt is the same
with either value: the guide shows nothing to a task that meets a lesson) is not run again;
its record is copied from ``playbook.jsonl`` and marked ``"copied": true``: the local model
at temperature 0 with the pack's fixed seed gives a same prompt the same reply.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench/: learning_gen itself

from learning_gen import ExactAnswer, generate
from learning_gen.measure import model_string, seed_dir
from toolcycle import Agent
from toolcycle.evals import Experiment
from toolcycle.evals.dataset import Dataset
from toolcycle.playbook import Playbook

KINDS = "unreliable,empty_source,arg_format,id_first"


def _copy_db(source: Path) -> Path:
    """A copy of a live SQLite playbook (its WAL holds rows not yet in the main file)."""
    target = Path(tempfile.mkdtemp()) / "playbook.db"
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{source}{suffix}").exists():
            shutil.copy(f"{source}{suffix}", f"{target}{suffix}")
    return target


async def main(args: argparse.Namespace) -> None:
    from toolcycle.models import resolve_model

    if args.threads:
        from toolcycle.models.local import llama

        llama.default_threads = lambda: int(args.threads)
    suite = generate(args.seed, train=args.train, test=args.test, read_only=True,
                     kinds=tuple(args.kinds.split(",")))
    folder = seed_dir(args.out, args.label, args.protocol, args.seed)
    measured = {json.loads(line)["case"]: json.loads(line) for line in
                (folder / "playbook.jsonl").read_text(encoding="utf-8").splitlines()[1:]
                if line.strip()}
    default = Playbook(_copy_db(folder / "playbook.db"), learn=False)
    setting: dict[str, Any] = {} if args.guide is None else {"guide": args.guide}
    if args.routines:
        setting["routines"] = True
    changed = Playbook(_copy_db(folder / "playbook.db"), learn=False, **setting)
    tools = [t.name for t in suite.tools]
    _, test_set = suite.dataset.split(0.5, seed=0)
    # routines change the tools a run is offered and may make its first call: every task
    differs = [c for c in test_set.cases if args.routines
               or default.instructions_for(str(c.inputs), suite.agent_name, tools)
               != changed.instructions_for(str(c.inputs), suite.agent_name, tools)]
    name = "playbook-" + "-".join(f"{k}{'' if v is True else v}" for k, v in setting.items())
    log = folder / f"{name}.jsonl"
    header = {"format": "toolcycle.evals/1", "experiment": f"gen{args.seed}-{args.protocol}:"
              f"{name}", "evaluators": ["answer"], "identity": ""}
    copied = [{**measured[c.name], "copied": True} for c in test_set.cases
              if c not in differs and c.name in measured]
    print(f"seed {args.seed}: {len(differs)} of {len(test_set.cases)} test tasks run again "
          f"with {setting}: {[c.name for c in differs]}", flush=True)
    if args.dry_run:
        return
    model = resolve_model(model_string(args.protocol))
    agent = Agent(model, suite.instructions, list(suite.tools), name=suite.agent_name,
                  playbook=changed)
    runs = Path(tempfile.mkdtemp()) / "runs.jsonl"
    rerun: list[dict[str, Any]] = []
    if differs:
        await Experiment(agent, Dataset(tuple(differs), suite.dataset.name), [ExactAnswer()],
                         name=header["experiment"], log=runs, concurrency=1,
                         progress=False).run()
        rerun = [json.loads(line) for line in
                 runs.read_text(encoding="utf-8").splitlines()[1:] if line.strip()]
    log.write_text("\n".join(json.dumps(r) for r in [header, *copied, *rerun]) + "\n",
                   encoding="utf-8")
    for r in rerun:
        print(r["case"], r["scores"][0]["passed"], r["iterations"], str(r["output"])[:120],
              flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--protocol", choices=("json", "react"), default="json")
    parser.add_argument("--label", required=True)
    parser.add_argument("--guide", type=int, default=None, help="Playbook(guide=N)")
    parser.add_argument("--routines", action="store_true", help="Playbook(routines=True)")
    parser.add_argument("--train", type=int, default=2)
    parser.add_argument("--test", type=int, default=1)
    parser.add_argument("--kinds", default=KINDS)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--dry-run", action="store_true", help="only say which tasks differ")
    parsed = parser.parse_args()
    if parsed.guide is None and not parsed.routines:
        parser.error("name the setting to change: --guide N and/or --routines")
    asyncio.run(main(parsed))
