"""The typed parts of a lesson: what the code acts on, kept beside the advice the model reads.

A pitfall's :class:`Repair` and error class, a sequence's first call (:class:`Argument`) and
the tools it says to skip: the lesson type that writes the advice fills them from the same
values (:meth:`~toolcycle.playbook.lesson.RunEvidence.pitfall`,
:func:`~toolcycle.playbook.sequence.advised`), the store keeps them as JSON, and the fallback,
the reshaped call, the first call and the routine's line read them. Nothing reads the advice
text back: a value holding a character the text's wording uses (a ``|`` in an error, a dot
in an argument's name, a parenthesis in an example) was read back as something else, or as
nothing, while the text was what the code read (issue 69). A stored part that is damaged
drops only itself (:func:`typed_parts`); playbooks written before the parts were stored get
them once, when a store opens them (:mod:`~toolcycle.playbook.legacy`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, cast, get_args

from .formats import value_shape

#: What repaired a failed call (see :class:`Repair`).
RepairKind = Literal["argument", "prerequisite", "alternative", "schema"]
_REPAIR_KINDS: frozenset[str] = frozenset(get_args(RepairKind))


@dataclass(frozen=True, slots=True)
class Rename:
    """The failed call's argument ``source`` is the other tool's parameter ``target``
    (:mod:`~toolcycle.playbook.carry`)."""

    source: str
    target: str

    def __str__(self) -> str:
        return f"{self.source}>{self.target}"

    @classmethod
    def of_repair(cls, repair: Repair | None) -> Rename | None:
        """The rename an alternative ``repair`` keeps; None for any other repair."""
        if repair is None or repair.kind != "alternative" or not repair.via:
            return None
        return repair.rename

    @classmethod
    def parse(cls, text: str) -> Rename | None:
        """``"doctor>clinician"`` (as :meth:`__str__` writes it) as a :class:`Rename`; None
        for anything else. For text from outside: the playbook keeps renames typed."""
        source, sep, target = text.partition(">")
        if not sep or not source or not target or ">" in target:
            return None
        return cls(source, target)


@dataclass(slots=True, frozen=True)
class Repair:
    """What the run did after a missed call that worked.

    ``argument``: the same tool succeeded with ``argument`` shaped like ``example``
    (``""``: as the task worded it, no example); ``prerequisite``: the retry's ``argument``
    came from the result of ``via`` (call it first); ``alternative``: another tool, ``via``,
    answered instead (``rename``: where it took the failed call's argument under another
    name, ``doctor`` as ``clinician``; ``argument`` and ``example``: where it took one value
    only in its own shape, a probe's finding: ``number`` like ``CX-77160``); ``schema``: no
    run showed a fix, but the loop refused
    the call's arguments and quoted the tool's schema: it takes ``via_args`` (required ones
    first) and nothing else.
    """

    kind: RepairKind
    tool: str
    via: str = ""
    argument: str = ""
    example: str = ""
    via_args: tuple[str, ...] = ()
    #: For an alternative that starts a chain: the calls after it that reached the answer,
    #: each as ``name(arg, ...)`` (``weather(city)`` after ``staff_directory``).
    then: tuple[str, ...] = ()
    #: For an alternative: the failed call's argument it took under another name.
    rename: Rename | None = None

    @property
    def signature(self) -> str:
        """What makes two repairs the same lesson (values vary, shapes and tools do not); a
        rename stands where the argument does (``alternative:rota_board:doctor>clinician:``,
        as stored before it was typed: ids stay the same)."""
        argument = str(self.rename) if self.rename is not None else self.argument
        return f"{self.kind}:{self.via}:{argument}:{value_shape(self.example)}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "tool": self.tool, "via": self.via,
                "argument": self.argument, "example": self.example,
                "via_args": list(self.via_args), "then": list(self.then),
                "rename": None if self.rename is None else [self.rename.source,
                                                             self.rename.target]}

    @classmethod
    def from_dict(cls, data: object) -> Repair | None:
        """A stored repair, or ``None`` when the stored value is not one (a hand-edited or
        damaged playbook loses the repair, not the lesson)."""
        if not isinstance(data, dict):
            return None
        kind, tool = data.get("kind"), data.get("tool")
        texts = [data.get(k, "") for k in ("via", "argument", "example")]
        lists = [data.get(k) or [] for k in ("via_args", "then")]
        renamed = data.get("rename")
        if (kind not in _REPAIR_KINDS or not isinstance(tool, str)
                or not all(isinstance(t, str) for t in texts)
                or not all(isinstance(v, list | tuple) and all(isinstance(i, str) for i in v)
                           for v in lists)
                or not (renamed is None or (isinstance(renamed, list | tuple)
                                            and len(renamed) == 2
                                            and all(isinstance(n, str) and n
                                                    for n in renamed)))):
            return None
        via, argument, example = (cast(str, t) for t in texts)
        return cls(cast(RepairKind, kind), tool, via, argument, example, tuple(lists[0]),
                   tuple(lists[1]), None if renamed is None else Rename(*renamed))


@dataclass(slots=True, frozen=True)
class Argument:
    """One argument of a sequence's first call as its advice names it: its ``name`` and, where
    the run had to shape the value itself, the format it passed (``example``)."""

    name: str
    example: str = ""

    def __str__(self) -> str:
        return f'{self.name} like "{self.example}"' if self.example else self.name

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "example": self.example}

    @classmethod
    def from_dict(cls, data: object) -> Argument | None:
        """A stored argument, or ``None`` when the stored value is not one."""
        if not isinstance(data, dict):
            return None
        name, example = data.get("name"), data.get("example", "")
        if not isinstance(name, str) or not name or not isinstance(example, str):
            return None
        return cls(name, example)


def pitfall_detail(error_class: str, repair: Repair | None) -> str:
    """A pitfall's :attr:`Insight.detail`: its error class, then ``|`` and its repair's
    signature when it has one. Part of its id (:func:`strategy_id`): compared, never read
    apart (the typed :attr:`Insight.error_class` and :attr:`Insight.repair` say those)."""
    return error_class + (f"|{repair.signature}" if repair is not None else "")


def plain(lesson: LessonParts) -> dict[str, Any]:
    """``lesson`` as JSON-ready data (its repair's tuples as lists, as stored)."""
    data = asdict(lesson)
    data["repair"] = None if lesson.repair is None else lesson.repair.to_dict()
    return data


def typed_parts(lesson: LessonParts) -> None:
    """Read ``lesson``'s typed parts as given (a stored row's JSON values, or a caller's
    ``Strategy(**data)``), each on its own: a damaged one (a hand-edited or corrupted row) is
    dropped, read as the lesson having none (no repair, no first call, no tools to skip),
    and the rest of the lesson stands."""
    repair: object = lesson.repair
    if not isinstance(repair, Repair):
        lesson.repair = Repair.from_dict(repair)
    error_class: object = lesson.error_class
    if not isinstance(error_class, str):
        lesson.error_class = ""
    given: object = lesson.first_args
    read = ([a if isinstance(a, Argument) else Argument.from_dict(a) for a in given]
            if isinstance(given, list | tuple) else [None])
    lesson.first_args = [a for a in read if a is not None] if None not in read else []
    skips: object = lesson.skips
    lesson.skips = (list(skips) if isinstance(skips, list | tuple)
                    and all(isinstance(t, str) and t for t in skips) else [])


@dataclass(slots=True, kw_only=True)
class LessonParts:
    """What the code acts on of a lesson (an :class:`Insight` or a :class:`Strategy`), typed
    beside the advice the model reads: written by the lesson type that writes the advice,
    from the same values, and never read back out of its text. Keyword-only. Playbooks
    written before they were stored get them once, when a store opens them
    (:mod:`~toolcycle.playbook.legacy`)."""

    #: For a pitfall: the class of the failure (:func:`~toolcycle.playbook.pitfall.
    #: normalise_error`, or a lesson's own mark such as ``found nothing``): what a fallback
    #: or a reshaped call tells its failure by (:mod:`~toolcycle.playbook.reshape`).
    error_class: str = ""
    #: For a pitfall: what its run showed fixes the failure (its advice says it to the
    #: model): what a fallback, a reshaped call or a first call acts on
    #: (:mod:`~toolcycle.playbook.offer`).
    repair: Repair | None = None
    #: For a sequence: the arguments of its first call, as its advice names them (its
    #: routine's line names them too).
    first_args: list[Argument] = field(default_factory=list)
    #: For a sequence: the tools its advice says not to use for this kind of task.
    skips: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        typed_parts(self)
