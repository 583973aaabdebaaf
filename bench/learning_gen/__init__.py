"""Seeded learning suites in many domains: tools, data and tasks for each kind of lesson.

    from learning_gen import generate           # with bench/ on sys.path
    suite = generate(7)                         # one domain, six kinds, train and test tasks
    suite.dataset                               # a toolcycle.evals Dataset (kind/split/domain/seed)
    suite.tools                                 # plain lookups as toolcycle Tools, read-only
    suite.grade(case, output)                   # the exact answer the data holds, found?

Why generated: a playbook rule tuned to one hand-written suite works there and nowhere else.
A seed picks the domain (domains.py: ten businesses' words), every name, code and figure,
the tool and argument names, the phrasing of each task and the variant of each lesson (how a
tool fails, which shape of nothing, which date format, where a lookup stores its id, which
unit, how long a page is). The lessons (kinds.py, kinds_more.py) are written once, domain-free.

Each :class:`~.making.Task` carries its oracle (the calls that reach the answer) and its naive
first call (the call a newcomer makes first, and how it misses), which the tests run: every
task is solvable, and the naive call misses where its kind says it should.
bench/learning_gen/measure.py measures learning on generated suites with toolcycle.evals.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from toolcycle import Tool
from toolcycle.evals import Case, Dataset
from toolcycle.evals.evaluators import Evaluator, Observed, Score

from .domains import DOMAINS, Domain, domain_named
from .kinds import arg_format, empty_source, id_first, unreliable
from .kinds_more import paging, unit
from .making import Call, KindPart, Maker, Task, as_json

#: kind -> its builder; the first four are issue 69's held-out kinds.
KINDS: dict[str, Callable[[Maker, int], KindPart]] = {
    "unreliable": unreliable, "empty_source": empty_source, "arg_format": arg_format,
    "id_first": id_first, "unit": unit, "paging": paging,
}
_INSTRUCTIONS = (
    "You are {role}'s assistant. Its records are internal and change daily, so you do not "
    "know them: look them up with the tools, and if a tool fails or has nothing, try another "
    "way. Answer with the exact value a tool returned.",
    "You help the staff of {role}. Answer from the tools only; the data is private. When a "
    "tool errors or returns nothing, try another approach. Reply with the exact figure.",
    "Assistant for {role}. Never guess: every figure must come from a tool call. If a call "
    "fails or comes back empty, try a different way. Give the exact value in your answer.",
)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class GeneratedSuite:
    """One seed's suite: its domain, tools, instructions and tasks (as a Dataset too)."""

    seed: int
    domain: Domain
    agent_name: str
    instructions: str
    tools: tuple[Tool[Any], ...]
    parts: tuple[KindPart, ...]
    dataset: Dataset
    tasks: dict[str, Task]

    def task(self, case: Case) -> Task:
        """The generated task behind a case of :attr:`dataset`."""
        return self.tasks[case.name]

    def tool(self, name: str) -> Tool[Any]:
        return next(t for t in self.tools if t.name == name)

    def fewest_iterations(self) -> dict[str, int]:
        return {part.kind: part.fewest for part in self.parts}

    @staticmethod
    def grade(expected: str, output: Any) -> bool:
        """The exact answer the data holds is in the output: a number equal to it (commas
        as thousands separators dropped), else the text, case aside."""
        text = output if isinstance(output, str) else as_json(output)
        if _NUMBER.fullmatch(expected):
            return any(float(n) == float(expected)
                       for n in _NUMBER.findall(text.replace(",", "")))
        return expected.lower() in text.lower()


class ExactAnswer(Evaluator):
    """The case's expected answer is in the output (:meth:`GeneratedSuite.grade`). Reads the
    output alone, so the playbook's offline learning is graded by it too."""

    name = "answer"

    def check(self, case: Case, run: Observed) -> Score | None:
        if case.expected_output is None:
            return None
        passed = GeneratedSuite.grade(str(case.expected_output), run.output)
        return self.score(float(passed), passed, "the answer" if passed else
                          f"no {case.expected_output!r} in the output")


def _named(seed: int, parts: tuple[KindPart, ...]) -> list[tuple[str, Task]]:
    return [(f"s{seed}-{part.kind}-{i:02d}", task)
            for part in parts for i, task in enumerate(part.tasks, start=1)]


def generate(seed: int, *, train: int = 3, test: int = 2, kinds: tuple[str, ...] | None = None,
             domain: str | None = None, read_only: bool = True) -> GeneratedSuite:
    """The suite of ``seed``: ``train`` + ``test`` tasks of each kind (every kind unless
    ``kinds`` names some), in a domain the seed picks (or ``domain``). ``read_only=False``
    declares no tool read-only (what a user who never heard of it writes)."""
    unknown = [k for k in kinds or () if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown kinds {unknown}; known: {', '.join(KINDS)}")
    rng = random.Random(f"learning-gen:{seed}")
    chosen = domain_named(domain) if domain else DOMAINS[rng.randrange(len(DOMAINS))]
    make = Maker(rng, chosen, read_only)
    parts = tuple(KINDS[kind](make, train + test) for kind in kinds or tuple(KINDS))
    web = make.pick(("web_search", "internet_search", "public_search"))
    tools = [make.tool(web, "Search the public web.", {"query": "What to search for."},
                       lambda **_: "[]")]
    for part in parts:
        tools += part.tools
    rng.shuffle(tools)
    cases = []
    named = _named(seed, parts)
    for name, task in named:
        index = int(name.rsplit("-", 1)[1])
        cases.append(Case(name, task.prompt, task.expected, metadata={
            "kind": task.kind, "split": "train" if index <= train else "test",
            "domain": chosen.key, "seed": seed}))
    return GeneratedSuite(seed, chosen, f"{chosen.key}_assistant",
                          make.pick(_INSTRUCTIONS).format(role=chosen.role), tuple(tools),
                          parts, Dataset(tuple(cases), f"learning-gen-{seed}"), dict(named))


__all__ = ["DOMAINS", "KINDS", "Call", "ExactAnswer", "GeneratedSuite", "KindPart", "Task",
           "generate"]
