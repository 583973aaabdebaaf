"""A paused run as a resume reads it: its checked snapshot, and those of the team members whose
runs paused inside it.

A team pauses as one (docs/teams.md): a member's call that waits for a person pauses the
member's run, the call that runs the member stays open (no answer yet, none made up), and the
run that made that call pauses too, up to the run you started. Its snapshot holds each paused
member's snapshot under the call that runs it (``members``), so one snapshot resumes the whole
team: :class:`PausedRun` is that tree once checked, with the person's answers bound to the run
each belongs to before anything runs (:func:`toolcycle.run.answers.bind_team`). Resuming the
parent's turn then resumes each member's run where it paused, instead of starting a new one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..approval import ApprovalRequest, Decision


@dataclass(slots=True, eq=False)
class PausedRun:
    """One paused run of a team (or a single agent's): checked, not yet resumed."""

    #: The snapshot, checked (``toolcycle.run.snapshot.open_snapshot``).
    data: dict[str, Any]
    #: The run's own calls waiting for a person (bound to its run id).
    pending: list[ApprovalRequest]
    #: The members whose runs paused inside this one, by the call that runs each.
    members: dict[str, PausedRun]
    #: The snapshot carries an HMAC (its agent has a ``snapshot_key``).
    signed: bool
    #: The person's answers to ``pending``, once bound.
    decisions: dict[str, Decision] = field(default_factory=dict)

    @property
    def run_id(self) -> str:
        return str(self.data["run_id"])

    def walk(self) -> Iterator[PausedRun]:
        """This run, then its members' runs, depth first in call order."""
        yield self
        for member in self.members.values():
            yield from member.walk()
