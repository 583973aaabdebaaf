"""Does a sum add like with like? One of the ways an answer answers another question
(:mod:`.asked`).

A small model that has an adding tool adds what it has (seen on the 1.5B):
a venue's capacity plus its ticket price converted to euros, for "what is the capacity";
a solar farm's output in kWh plus its panel count, for "the number of panels added
together"; one tank's fish count added to itself, then to the other tank's. Each figure came
from a tool, so grounding vouches for every one, and the sum is the adding tool's own
result. The run can tell from its typed parts, each part of the sum traced back through the
sums and conversions that made it (:func:`.provenance.traced`) to the record it was read
from:

- **units**: the parts are in two or more units (EUR beside GBP, kWh beside a count whose
  field names none is not this: a count has no unit to compare);
- **a bare figure beside a measure**: a part in a unit of a physical quantity (km, kWh)
  and a part read from a field whose name gives no unit and that the request does not name
  (a length plus a count of seats: :func:`_bare_beside_measure`);
- **fields**: the parts were read from two or more fields of the records, and the request
  names some of those fields but not all (``capacity`` named, ``ticket_price_gbp`` not): a
  field's name is its author's label for what the figure is (:mod:`.asked_field`), so a
  request that names one quantity does not ask for another added to it. Where the request
  names all of them ("price plus fee") or none, nothing is plain here;
- **counted twice**: one record's figure (the same field of the same record, read once or by
  the same call made again) is a part twice,
  and the request holds no count word ("two tickets", "twice": :data:`~toolcycle.words.
  COUNT_WORDS`) that would ask for it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from ..limits import RepeatGuard
from ..tools import ToolDefinition
from ..words import COUNT_WORDS
from .asked_field import named_field, request_words
from .asked_total import named_key, total_records
from .looked_up import names_in, records_of
from .provenance import Call, Figure, Part, figures_in, single, traced, written
from .units import Unit, requested_units
from .unreadable_arguments import adding_tools

_WORDS_READ = 20_000
_WORD = re.compile(r"[a-z]+")
_CAMEL_BREAK = re.compile(r"(?<=[a-z])(?=[A-Z])")


def unlike_sum(request: str, shown: str, made: int, calls: Sequence[Call],
               figures: Sequence[Figure], asked: Sequence[Unit] = ()) -> str | None:
    """What to tell the model when the answer's figure ``shown`` is the sum call ``made``
    over unlike parts, else ``None`` (``asked``: the units the request asks for,
    :func:`.asked.mismatches`' reading, an output field's unit among them)."""
    parts = _parts(made, calls, figures)
    if len(parts) < 2:
        return None
    head = f"your answer's {shown} is `{calls[made].name}` over {_listed(parts)}"
    words = request_words(request[-_WORDS_READ:])
    fields = list(dict.fromkeys(_key(p) for p in parts if _key(p)))
    named = [k for k in fields if named_field(k, words)]

    def then(key: str) -> str:
        """What would work, where the field asked about is plain (``key``)."""
        return _would_work(request[-_WORDS_READ:], words, asked, key, calls[made].name,
                           calls, figures) if key else ""

    # the plain field: the one the request names among the parts' fields, else the one
    # field every part was read from
    plain = named[0] if len(named) == 1 else fields[0] if len(fields) == 1 else ""
    units = {p.unit.name for p in parts if p.unit is not None}
    if len(units) > 1:
        return (f"{head}: figures in different units do not add up; add only figures of the "
                "quantity the request asks for, each read from the record the request names"
                + then(plain))
    bare = _bare_beside_measure(parts, words)
    if bare is not None:
        measure, unit, unlabelled = bare
        return (f"{head}: {_keys(unlabelled)} names no unit, so it is no {unit.said} "
                f"figure like {_keys([_key(measure)])}; add only figures of the quantity the "
                "request asks for, each read from the record the request names" + then(plain))
    keys = [p.sources[-1].key for p in parts if p.sources and p.sources[-1].key]
    if len(keys) == len(parts) and len(set(keys)) > 1 and named and len(named) < len(fields):
        others = [k for k in fields if k not in named]
        return (f"{head}: the request asks about {_keys(named)}, not {_keys(others)}; "
                f"leave {_keys(others)} out and answer with {_keys(named)} as the request "
                "asks" + then(plain))
    twice = _counted_twice(parts, calls)
    if twice is not None and not _counts(request):
        source = twice.sources[-1]
        return (f"{head}: {written(twice.value)} (`{source.key}` of `{source.tool}`) is added "
                f"twice, but `{source.tool}` gave it once; add each record's figure once, "
                "one for each thing the request names" + then(source.key))
    return None


def sum_that_would_work(request: str, calls: Sequence[Call], figures: Sequence[Figure],
                        tools: Sequence[ToolDefinition]) -> str:
    """``"; what would work: `add` over ..."`` for an answer that is no tool's figure (a
    grounding re-ask), where the request asks for a total of the field it names over the
    things it lists, the run read each one's record, and one offered tool adds (else
    ``""``). Seen on the 1.5B (held-out first-hour seed 6815): asked to "add up the length
    of Northern Star and Maren", it read both ships' records and answered "200" twice,
    told only that 200 had no source."""
    adders = adding_tools(tools)
    text = request[-_WORDS_READ:]
    words = request_words(text)
    key = named_key(words, figures)
    if len(adders) != 1 or key is None:
        return ""
    found = total_records(text, words, key, requested_units(text), calls, figures)
    return "" if found is None else _sum_of(adders[0], key, found)


def _would_work(request: str, words: set[str], asked: Sequence[Unit], key: str, adder: str,
                calls: Sequence[Call], figures: Sequence[Figure]) -> str:
    """The sum that would answer, where the run has read the record of each thing the
    request lists and the field asked about is plain (``key``;
    :func:`.asked_total.total_records` says when): a small model follows a call it is shown
    better than a rule it is told (seen on the 1.5B, held-out seed 6814: told its sum held
    one ski lift's figure twice, it added the other lift's figure to that wrong sum). Not
    where the request asks for no total in words (a difference or a ratio over the same two
    things is no sum to suggest) or for another unit of the field's kind. Where one thing's
    record is plain, its figure; else nothing."""
    found = total_records(request, words, key, asked, calls, figures)
    if found is not None:
        return _sum_of(adder, key, found)
    read = records_of(names_in(request), key, calls, figures)
    if len(read) == 1:
        name, value = next(iter(read.items()))
        return f"; the `{key}` of {name!r} is {written(value)}"
    return ""


def _sum_of(adder: str, key: str, found: dict[str, float]) -> str:
    figures_found = _joined([written(value) for value in found.values()])
    things = " and ".join(repr(name) for name in found)
    return f"; what would work: `{adder}` over {figures_found}, the `{key}` of {things}"


def _parts(made: int, calls: Sequence[Call], figures: Sequence[Figure]) -> list[Part]:
    """The parts of the sum call ``made``: its result traced back as the figure it is."""
    total = single(calls[made].result)
    return [] if total is None else traced(total, made + 1, calls, figures)


def _bare_beside_measure(parts: Sequence[Part],
                         words: set[str]) -> tuple[Part, Unit, list[str]] | None:
    """A part measured in a unit of a physical quantity (``distance_km``) beside parts read
    from fields whose names give no unit and which the request does not name (``seats``):
    the measured part, its unit, and those fields. A field's author who labels one figure's unit
    labels the measures; a figure without one is a count or an amount of something else
    (seen on the 1.5B, held-out seed 6813: a train's ``distance_km`` plus its ``seats`` for
    "the route length ... added together"). Money is left out (``price_eur`` beside
    ``fee`` is one currency often enough), and so is a field the request names
    (``distance`` for "the total distance"). So is a field whose words are a measured
    field's words less its unit (``length`` beside ``length_m``): two tools' names for one
    quantity, one of them leaving its unit unsaid, not a figure of something else."""
    measured = [(p, p.unit) for p in parts if p.unit is not None
                and p.unit.dimension != "[currency]"]
    measured_words = [request_words(_CAMEL_BREAK.sub(" ", _key(p))) for p, _ in measured]
    unlabelled = [key for key in dict.fromkeys(_key(p) for p in parts if p.unit is None)
                  if key and not named_field(key, words)
                  and not any(named_field(key, said) for said in measured_words)]
    return (*measured[0], unlabelled) if measured and unlabelled else None


def _key(part: Part) -> str:
    return part.sources[-1].key if part.sources else ""


def _counted_twice(parts: Sequence[Part], calls: Sequence[Call]) -> Part | None:
    """A part read from one record's field that the sum holds more than once. One record is
    one tool asked with the same arguments, however often (the same call, as the loop's
    repeat guard tells calls apart): seen on the 1.5B (held-out seed 6813), told its sum added
    a record's figure twice, it read the record again and added the figure twice once more,
    which records told apart by the call that read them let through (the figure then had two
    sources, so neither was sure)."""
    sure: list[tuple[Part, tuple[str, str]]] = []  # a part, and its one (call key, field)
    for part in parts:
        records = {(RepeatGuard.key(calls[s.call].name, calls[s.call].arguments), s.key)
                   for s in part.sources}
        if len(records) == 1:
            sure.append((part, records.pop()))
    seen = Counter((record, part.value) for part, record in sure)
    return next((part for part, record in sure if seen[(record, part.value)] > 1), None)


def _counts(request: str) -> bool:
    """Whether the request holds a count that may ask for a figure more than once."""
    return bool(COUNT_WORDS & set(_WORD.findall(request.lower()))) or any(
        value >= 2 and value == int(value) and value < 100 for value in figures_in(request))


def _listed(parts: Sequence[Part]) -> str:
    def one(part: Part) -> str:
        said = [f"`{part.sources[-1].key}`" if part.sources and part.sources[-1].key else "",
                part.unit.said if part.unit is not None else "",
                f"from `{part.converted_by}`" if part.converted_by else ""]
        detail = ", ".join(s for s in said if s)
        return f"{written(part.value)} ({detail})" if detail else written(part.value)
    return _joined([one(p) for p in parts[:6]])


def _joined(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else items[0]


def _keys(keys: Sequence[str]) -> str:
    return " and ".join(f"`{k}`" for k in keys)
