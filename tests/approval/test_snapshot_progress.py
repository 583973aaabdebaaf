"""A paused run keeps its output-mode fallback and its compacted history across a resume.

A run that fell back from the output tool to a prompted answer, or that compacted its history
into a summary, and then paused for an approval, goes on in another interpreter where it was:
in the mode it fell back to (not its first mode again, which the model already failed), and
sending the same compacted view (not summarising the summarised turns a second time). A
version-1 snapshot, written before these were kept, still resumes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from toolcycle import SnapshotError
from toolcycle.approval import ApprovalRequest
from toolcycle.run.snapshot import canonical

#: Agents defined identically here and in the child interpreter (a snapshot is resumed only
#: by the agent that made it: same name, model, tools and output).
AGENTS = textwrap.dedent('''
    import json
    from pydantic import BaseModel
    from toolcycle import Agent, Limits, tool
    from toolcycle.testing import ScriptedModel, call

    WINDOW = 2000


    class City(BaseModel):
        name: str
        population: int


    @tool(requires_approval=True)
    def census(city: str) -> int:
        """The census population of a city.

        Args:
            city: The city.
        """
        return 709000


    def surveyor(script: list) -> Agent:
        """Structured output on a model that takes the output tool, then prompted JSON."""
        model = ScriptedModel(script, modes=("tool", "prompted"))
        return Agent(model, tools=[census], output=City, name="surveyor")


    def read_page(page: int) -> str:
        """Read one page of the archive."""
        head = "The vault code is 4711. " if page == 1 else f"Page {page} has no code. "
        return head + "lorem ipsum " * 300


    @tool(requires_approval=True)
    def open_vault(code: int) -> str:
        """Open the vault.

        Args:
            code: The vault's code.
        """
        return "opened"


    class Archivist:
        """Reads `pages` pages, asks to open the vault with the code, then answers. Asked
        for a summary (the compaction prompt), it keeps the code if the transcript holds it."""

        def __init__(self, pages: int, opened: bool = False) -> None:
            self.pages, self.read, self.opened = pages, 0, opened
            self.sent: list = []
            self.summaries = 0

        def __call__(self, messages, settings):
            text = " ".join(m.text + "".join(r.content for r in m.results) for m in messages)
            if messages[0].text.startswith("You compact"):
                self.summaries += 1
                return "Pages read. " + ("The vault code is 4711." if "4711" in text else "")
            self.sent.append(text)
            if self.read < self.pages:
                self.read += 1
                return call("read_page", {"page": self.read})
            if not self.opened:
                self.opened = True
                return call("open_vault", {"code": 4711})
            return "The vault is open." if "opened" in text else "Not yet."


    def archivist_agent(archivist: Archivist) -> Agent:
        return Agent(ScriptedModel(archivist, context_window=WINDOW), "Be exact.",
                     tools=[read_page, open_vault], name="archivist",
                     limits=Limits(max_iterations=20, max_context_tokens=WINDOW))
''')


@pytest.fixture
def agents(tmp_path: Path) -> dict[str, Any]:
    (tmp_path / "progress_agents.py").write_text(AGENTS)
    namespace: dict[str, Any] = {}
    exec(compile(AGENTS, str(tmp_path / "progress_agents.py"), "exec"), namespace)
    return namespace


def resume_elsewhere(tmp_path: Path, snapshot: dict[str, Any], body: str) -> dict[str, Any]:
    """Run ``body`` in a fresh interpreter with ``snapshot`` and the agents module at hand;
    ``body`` prints one JSON report, returned here."""
    path = tmp_path / "snapshot.json"
    path.write_text(json.dumps(snapshot))
    child = f"import json, sys\nsys.path.insert(0, {str(tmp_path)!r})\n" \
            f"from progress_agents import *\nsnapshot = open({str(path)!r}).read()\n" \
            + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def test_a_run_resumed_after_a_mode_fallback_answers_in_the_mode_it_fell_back_to(
        tmp_path: Path, agents: dict[str, Any]) -> None:
    call = agents["call"]
    paused = agents["surveyor"](["It is Oslo.", call("census", {"city": "Oslo"})]).run_sync(
        "Which city is this, and how many live there?")
    assert paused.status == "paused"
    assert paused.trace.mode_fallbacks == [{"attempt": 1, "from": "tool", "to": "prompted"}]
    assert paused.snapshot["version"] == 1  # (2 is a paused team's)
    assert paused.snapshot["modes"] == {"chain": ["tool", "prompted"], "index": 1,
                                        "told": ["prompted"]}
    call_id = paused.pending_approvals[0].call_id
    report = resume_elsewhere(tmp_path, paused.snapshot, f'''
        agent = surveyor([json.dumps({{"name": "Oslo", "population": 709000}})])
        result = agent.resume_sync(snapshot, {{{call_id!r}: True}})
        first = agent.model.requests[0]
        print(json.dumps({{"output": result.output.model_dump(),
                          "fallbacks": result.trace.mode_fallbacks,
                          "offered": [t.name for t in first.settings.tools],
                          "requests": len(agent.model.requests)}}))
    ''')
    assert report["output"] == {"name": "Oslo", "population": 709000}
    # Still prompted: no output tool offered, the JSON text is the answer, no fallback again.
    assert "final_result" not in report["offered"] and report["requests"] == 1
    assert report["fallbacks"] == [{"attempt": 1, "from": "tool", "to": "prompted"}]


def test_a_run_resumed_after_compaction_sends_the_same_view_without_a_new_summary(
        tmp_path: Path, agents: dict[str, Any]) -> None:
    archivist = agents["Archivist"](pages=8)
    paused = agents["archivist_agent"](archivist).run_sync(
        "Read pages 1 to 8, then open the vault with its code.")
    assert paused.status == "paused", paused.trace.render()
    compactions = paused.trace.compactions
    assert archivist.summaries >= 1 and compactions
    kept = paused.snapshot["compaction"]
    assert "4711" in kept["summary"] and kept["view_from"] > 2
    call_id = paused.pending_approvals[0].call_id
    report = resume_elsewhere(tmp_path, paused.snapshot, f'''
        archivist = Archivist(pages=0, opened=True)
        result = archivist_agent(archivist).resume_sync(snapshot, {{{call_id!r}: True}})
        print(json.dumps({{"output": result.output, "summaries": archivist.summaries,
                          "sent": archivist.sent, "compactions": result.trace.compactions}}))
    ''')
    assert report["output"] == "The vault is open."
    assert report["summaries"] == 0  # the view came with the snapshot: nothing summarised again
    assert report["compactions"] == compactions
    # The request after the resume is the compacted view: the summary, not the eight pages.
    assert "Pages read. The vault code is 4711." in report["sent"][0]
    assert report["sent"][0].count("lorem ipsum") < 8 * 300


def test_a_version_1_snapshot_still_resumes(tmp_path: Path) -> None:
    """Written by the release before modes and compaction were kept (the janitor agent of
    test_snapshot.py, paused at its ``delete`` call)."""
    from .test_snapshot import _agent_module

    old = json.loads((Path(__file__).parent / "fixtures" / "snapshot-v1.json").read_text())
    assert old["version"] == 1 and "modes" not in old and "compaction" not in old
    counter = tmp_path / "calls.txt"
    agent = _agent_module(tmp_path)["make_agent"](counter, ["all done"])
    request = replace(ApprovalRequest.from_dict(old["pending"][0]), run_id=old["run_id"])
    result = agent.resume_sync(old, [request.approve()])
    assert result.status == "success" and result.output == "all done"
    assert counter.read_text().splitlines() == ["delete /a"]


@pytest.mark.parametrize(("key", "value", "problem"), [
    ("modes", {"chain": ["tool", "psychic"], "index": 0, "told": []}, "modes.chain"),
    ("modes", {"chain": ["tool", "prompted"], "index": 2, "told": []}, "modes.index"),
    ("modes", "prompted", "modes: must be an object or null"),
    ("compaction", {"prefix": "x", "view_from": 0, "prefix_chars": 0, "replaced_chars": 0,
                    "summary": "", "summary_upto": 0, "unpaid": {}}, "compaction.prefix"),
    ("compaction", {"prefix": [], "view_from": 999, "prefix_chars": -1, "replaced_chars": 0,
                    "summary": 3, "summary_upto": 0, "unpaid": {}}, "compaction.view_from"),
])
def test_damaged_progress_is_refused_with_a_typed_error(
        agents: dict[str, Any], key: str, value: Any, problem: str) -> None:
    call = agents["call"]
    agent = agents["surveyor"](["It is Oslo.", call("census", {"city": "Oslo"})])
    paused = agent.run_sync("Which city?")
    damaged = {k: v for k, v in paused.snapshot.items() if k != "integrity"} | {key: value}
    import hashlib

    damaged["integrity"] = {"algorithm": "sha256",
                            "digest": hashlib.sha256(canonical(damaged)).hexdigest()}
    with pytest.raises(SnapshotError) as caught:
        agent.resume_sync(damaged, {paused.pending_approvals[0].call_id: True})
    assert any(problem in p for p in caught.value.problems), caught.value.problems
