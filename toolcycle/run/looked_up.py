"""Were the things the request names looked up, and their records read? One of the ways an
answer answers another question (:mod:`.asked`).

A request names things ("the planted area of Les Pins and Clos Bellet"); a chain of calls
looks each up by name and reads the record its id points to. A small model stops short in
two ways the run can tell from its typed parts: a name listed beside one it looked up went
to no call at all (:func:`unvisited`), or a name was looked up and the id the lookup gave
went to no call, though an offered tool takes it (:func:`unread`). Where each was read,
:func:`records_of` says which figure of a field is whose, for a check's message to name the
figures a sum over the things named would add. The names are runs of
capitalised words (:func:`names_in`); a list is read by its signs and English list words
(:data:`_LIST_WORDS`: another language's lists are not seen, and the checks stay silent).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from .handles import handle_of
from .provenance import Call, Figure, strings
from .units import read_unit

#: Messages of one kind named to the model, at most.
_SHOWN = 3
#: Names whose records :func:`records_of` looks for, at most (a request is untrusted text).
_NAMES_READ = 12
_SPAN = re.compile(r"[A-Z][\w'’-]*(?:[ \t]+[A-Z][\w'’-]*)*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:\n])\s*$")
#: What joins two names in a list ("A and B", "A or B"; signs aside). Why words: a list's
#: names are things of one kind, so one looked up by name says the other is looked up so too;
#: the words are English, as the requests measured are (another language: no list is seen,
#: and the check stays silent).
_LIST_WORDS = frozenset({"", "and", "or", "vs", "vs.", "versus"})


def unvisited(request: str, names: Sequence[str], calls: Sequence[Call]) -> list[str]:
    """Things the request names side by side with one the run looked up by name, that went
    to no call and are in no result: the answer speaks of one where the request asks about
    both ("the planted area of Les Pins and Clos Bellet" answered with Les Pins' area)."""
    given = [(c.name, str(v)) for c in calls for v in strings(c.arguments)]
    seen = "\n".join([c.result for c in calls] + [c.description for c in calls]).lower()
    spans = list(names)
    looked = {span: tool for span in spans for tool, value in given
              if _same_thing(span, value)}
    found: list[str] = []
    for index, span in enumerate(spans):
        if span in looked or span.lower() in seen or any(
                span.lower() in value.lower() for _, value in given):
            continue
        kin = next((other for other in spans[:index] + spans[index + 1:]
                    if other in looked and _side_by_side(request, other, span)), None)
        if kin is not None:
            found.append(
                f"the request names {span!r}, which no tool was given and no tool result "
                f"holds; you looked {kin!r} up with `{looked[kin]}`: look {span!r} up the "
                "same way and answer about what the request names")
    return found


def unread(names: Sequence[str], calls: Sequence[Call], text: str,
           takes: Callable[[str], list[str]]) -> list[str]:
    """Things the request names that the run looked up by name, whose id went to no later
    call and is not in the answer, where an offered tool takes it: the record was never
    read. Asked only of an answer that gives a tool's figure (it answers from a record, so
    the other's is missing: "the combined stock of Calmex and Ibrafen" answered with
    Ibrafen's, after ``medicine_details`` was never given Calmex's id). An answer without one
    ("is Calmex listed?") may rightly rest on the lookup alone."""
    lowered = text.lower()
    messages: list[str] = []
    for call in calls:
        handle = handle_of(call.result)
        if handle is None or handle.lower() in lowered:
            continue
        name = next((span for span in names for value in strings(call.arguments)
                     if _same_thing(span, str(value))), None)
        if name is None or any(handle.lower() == str(v).strip().lower()  # (a second lookup
                               for other in calls if other is not call  # after its use too)
                               for v in strings(other.arguments)):
            continue
        if taking := takes(call.name):
            messages.append(
                f"you looked {name!r} up with `{call.name}`, which gave {handle!r}, and no call "
                f"has read its record since: {' and '.join(taking)}; call it with {handle!r} "
                "and answer about every thing the request names")
    return messages[:_SHOWN]


def records_of(names: Sequence[str], key: str, calls: Sequence[Call],
               figures: Sequence[Figure]) -> dict[str, float]:
    """The figure under ``key`` of each named thing's record, for the names whose record is
    plain: read by a call given the name itself, or given the handle a call given the name
    returned (a lookup's id); one figure, from one record no other name shares. A name read
    twice with two figures, or sharing its record with another name, is left out."""
    held: dict[int, set[float]] = {}
    for figure in figures:
        if figure.key == key:
            held.setdefault(figure.call, set()).add(figure.value)
    given = [[str(v) for v in strings(call.arguments)] for call in calls]
    taken = [{v.strip().lower() for v in values} for values in given]
    handles = [handle_of(call.result) for call in calls]
    found: dict[str, tuple[int, float]] = {}
    for name in names[:_NAMES_READ]:
        readers = set()
        for index, written in enumerate(given):
            if not any(_same_thing(name, value) for value in written):
                continue
            readers.add(index)
            handle = handles[index]
            if handle is not None:
                readers.update(later for later in range(index + 1, len(calls))
                               if handle.lower() in taken[later])
        values = {(at, v) for at in readers for v in held.get(at, ())}
        if len({v for _, v in values}) == 1:
            found[name] = min(values)
    shared = {at for at, _ in found.values() if sum(a == at for a, _ in found.values()) > 1}
    return {name: value for name, (at, value) in found.items() if at not in shared}


def listed(request: str, names: Sequence[str]) -> bool:
    """Whether the request lists two of its ``names`` side by side ("A and B", "the ward A
    and the ward B")."""
    return any(_side_by_side(request, a, b) for i, a in enumerate(names) for b in names[i + 1:])


def names_in(request: str) -> list[str]:
    """Runs of capitalised words: names ("Silk Atlas", "Tom Reed"), not units ("EUR") and
    not a single word opening a sentence ("What")."""
    found: dict[str, None] = {}
    for match in _SPAN.finditer(request):
        words = [w.removesuffix("'s").removesuffix("’s") for w in match.group().split()]
        start = _SENTENCE_START.search(request[:match.start()]) is not None
        if start and len(words) == 1:
            continue
        if start and len(words) > 1 and words[0].lower() in ("what", "which", "who", "how"):
            words = words[1:]
        if all(read_unit(w, in_sentence=True) for w in words):
            continue
        found[" ".join(words)] = None
    return list(found)


def _side_by_side(request: str, first: str, second: str) -> bool:
    """Whether two names are listed as things of one kind: a sign or a list word between
    them ("A and B", "A, B", "A & B"), or the same word before each ("the ward A and the
    ward B"). Not any short word: "12 Harbour Street in November" names a meter and a
    month."""
    a, b = request.find(first), request.find(second)
    if a < 0 or b < 0:
        return False
    left = first if a < b else second
    start, end = min(a, b) + len(left), max(a, b)
    between = request[start:end].strip(" ,;&/+")
    if between.lower() in _LIST_WORDS:
        return True
    before = [request[:i].split()[-1:] for i in (a, b)]
    return bool(before[0]) and before[0] == before[1] and before[0][0].islower()


def _same_thing(span: str, value: str) -> bool:
    value = value.strip().lower()
    return len(value) >= 3 and (value == span.lower() or value in span.lower().split()
                                or span.lower() in value)
