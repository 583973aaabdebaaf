"""Units of measure as the request, the tools and the answer write them.

Why: a small model that walks every tool it is offered answers "How many km" in miles, a
balance in another currency, a weight in pounds where the record holds kilograms (issue 68,
first-hour agents): the figure is a tool's, so grounding sees nothing wrong, but it answers
another question. To tell, the run must read which unit a text names (``km``,
``kilometres``, ``knots``, ``°F``, ``EUR``) and which units are the same kind of quantity
(a length, a speed, an amount of money).

Reading units is `pint <https://pint.readthedocs.io>`_'s job (the ``units`` extra, also part
of ``local``: ``pip install 'toolcycle[units]'``); this module asks its registry. Without
pint, :data:`_COMMON` reads the units first-time agents use most, so the check still runs,
on fewer units. Three things pint does not do are kept here, each in one table with its
reason: currencies (:data:`_CURRENCIES`: pint has none, rates are not fixed factors),
English words pint reads as units (:data:`_NOT_UNITS`: ``in`` is an inch, ``a`` a year) and
the single letters and run-together abbreviations tools put in field names (``temp_c``,
``wind_kmh``), which pint reads otherwise or not at all.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from ..words import STOPWORDS

__all__ = ["Unit", "asks_for", "field_unit", "named_units", "one_kind", "part_of_name",
           "read_unit", "requested_units", "stated_units", "units_available"]


@dataclass(frozen=True, slots=True)
class Unit:
    """A unit as a text wrote it (``word``), what it is (``name``: ``"kilometer"``,
    ``"USD"``) and what kind of quantity it measures (``dimension``: ``"[length]"``,
    ``"[length]/[time]"``, ``"[currency]"``): two units differ in kind when their dimensions
    differ, and name another unit of one kind when their names differ."""

    word: str
    name: str
    dimension: str

    @property
    def said(self) -> str:
        """The unit as a message beside a figure writes it: a currency by its code (``197
        USD``, whichever way the text wrote it), any other unit as written (``93.1 kg``)."""
        return self.name if self.dimension == "[currency]" else self.word


#: Currencies: ISO codes and the usual words and signs. Why a table: pint defines no
#: currencies (exchange rates are not fixed factors). "pound" is not here: pint reads it as
#: the unit of mass, and a money question names GBP or £.
_CURRENCIES = {
    **{code.lower(): code for code in (
        "USD", "EUR", "GBP", "JPY", "CHF", "CNY", "CAD", "AUD", "NZD", "SEK", "NOK", "DKK",
        "PLN", "CZK", "HUF", "INR", "BRL", "MXN", "ZAR", "KRW", "SGD", "HKD", "TRY")},
    "€": "EUR", "euro": "EUR", "euros": "EUR", "$": "USD", "dollar": "USD", "dollars": "USD",
    "£": "GBP", "sterling": "GBP", "¥": "JPY", "yen": "JPY", "franc": "CHF", "francs": "CHF",
}

#: Words that write a unit of two kinds, by their other reading: pint reads "pound" as mass,
#: and beside a currency ("pounds_to_euros", "Convert pounds to euros") it is sterling. Read
#: only where the other side of a conversion says which kind (:func:`one_kind`).
_OTHER_READINGS = {"pound": ("GBP", "[currency]")}

#: English words that pint reads as units but a sentence uses as words ("in" an inch, "a" a
#: year, "at" an atmosphere, "are" 100 m²); after a figure they are read as units all the
#: same ("12 in"). Also "degree": an angle to pint, the start of "degrees Fahrenheit" here.
_NOT_UNITS = frozenset({"in", "a", "at", "are", "as", "an", "it", "is", "me", "do", "by",
                        "per", "min", "point", "points", "line", "grade", "count", "degree",
                        "degrees", "turn", "second", "year", "bar", "pi"})

_LENGTH, _MASS, _SPEED = "[length]", "[mass]", "[length]/[time]"
_VOLUME, _AREA, _TIME = "[length]^3", "[length]^2", "[time]"
_ENERGY, _POWER, _TEMPERATURE = "[length]^2*[mass]/[time]^2", "[length]^2*[mass]/[time]^3", \
    "[temperature]"

#: Units read without pint (by kind, then name, the words that write it, lower case;
#: plurals lose their ``s``), and the abbreviations pint does not read (``kmh``) or reads as
#: something else in a field name (``c``: the speed of light, ``temp_c`` means Celsius).
#: Names and dimensions are pint's, so both readings compare alike.
_KINDS: dict[str, dict[str, tuple[str, ...]]] = {
    _SPEED: {"kilometer / hour": ("kmh", "kph", "km/h"), "mile / hour": ("mph",),
             "knot": ("knot", "kn"), "meter / second": ("m/s",)},
    _TEMPERATURE: {"degree_Celsius": ("c", "°c", "celsius"), "kelvin": ("k", "kelvin"),
                   "degree_Fahrenheit": ("f", "°f", "fahrenheit")},
    _LENGTH: {"meter": ("m", "metre", "meter"), "kilometer": ("km", "kilometre", "kilometer"),
              "centimeter": ("cm",), "millimeter": ("mm",), "mile": ("mi", "mile"),
              "foot": ("ft", "feet", "foot"), "inch": ("inch", "inches"),
              "yard": ("yd", "yard")},
    _MASS: {"gram": ("g", "gram"), "kilogram": ("kg", "kilogram"),
            "milligram": ("mg", "milligram"), "pound": ("lb", "lbs", "pound"),
            "ounce": ("oz", "ounce"), "metric_ton": ("t", "tonne", "ton")},
    _VOLUME: {"liter": ("l", "litre", "liter"), "milliliter": ("ml",),
              "hectoliter": ("hl", "hectolitre"), "gallon": ("gal", "gallon")},
    _AREA: {"hectare": ("ha", "hectare"), "acre": ("acre",)},
    _TIME: {"second": ("s",), "minute": ("minute",), "hour": ("h", "hour"), "day": ("day",),
            "week": ("week",)},
    _ENERGY: {"watt_hour": ("wh",), "kilowatt_hour": ("kwh",), "megawatt_hour": ("mwh",)},
    _POWER: {"watt": ("w", "watt"), "kilowatt": ("kw", "kilowatt"), "megawatt": ("mw",)},
}
_COMMON: dict[str, tuple[str, str]] = {word: (name, kind) for kind, names in _KINDS.items()
                                       for name, words in names.items() for word in words}
#: Written in field names and after figures: pint's reading of these is another unit.
_FIELD_FIRST = frozenset({"c", "f", "kmh", "kph", "mwh", "kw", "w", "t", "l", "k"})

_WORD = re.compile(r"°[^\W\d_]|[$€£¥]|[^\W\d_][\w/²³°]*(?<![/])")
_FIGURE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")
_INTO_LETTER = re.compile(r"(?i)(?<![^\W\d_])(?:in|to|into) $")  # "in W?", "converted to W."
_PHRASE_END = re.compile(r"\s*(?:[?.!,;:)]|$)")
_NAME_PARTS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def units_available() -> bool:
    """Whether pint reads units (the ``units`` extra); without it :data:`_COMMON` does."""
    return _registry() is not None


@cache
def _registry() -> Any:
    try:
        import pint
    except ImportError:
        return None
    return pint.UnitRegistry()


@lru_cache(maxsize=4096)  # a request's and the results' words repeat; pint's parse does not
def read_unit(word: str, *, in_sentence: bool = False) -> Unit | None:
    """The unit ``word`` names, or ``None``. ``in_sentence``: the word stands in running
    text, not after a figure, so the English words of :data:`_NOT_UNITS` are words."""
    bare = word.strip(".,;:!?()[]\"'")
    lowered = bare.lower()
    if not bare or (in_sentence and lowered in _NOT_UNITS):
        return None
    if lowered in _CURRENCIES and (len(bare) != 3 or bare.isupper() or bare[0] in "$€£¥"
                                   or not in_sentence):
        return Unit(bare, _CURRENCIES[lowered], "[currency]")
    if len(bare) == 1 and in_sentence and bare not in "CFK":
        return None  # "Roux's": a letter in running text is no unit, "in F?" is
    if lowered in _FIELD_FIRST or len(bare) == 1:
        return _common(bare, lowered)
    found = _pint(bare)
    return found if found is not None else _common(bare, lowered)


def _common(word: str, lowered: str) -> Unit | None:
    entry = _COMMON.get(lowered) or (_COMMON.get(lowered[:-1]) if lowered.endswith("s") else None)
    if entry is None and lowered.startswith("°"):
        entry = _COMMON.get(lowered)
    return Unit(word, *entry) if entry is not None else None


def _pint(word: str) -> Unit | None:
    """pint's reading of ``word``. A unit written with a prefix counts only in its long form
    (``kilometres``, ``milligrams``): pint reads English words as a prefix symbol and a
    unit ("Pins" a peta-inch, "much" a micro-chain, "mat" a milli-atmosphere), and the
    prefixed symbols a text uses (``km``, ``kWh``) are in :data:`_COMMON`."""
    registry = _registry()
    if registry is None:
        return None
    try:
        readings = registry.parse_unit_name(word) if " " not in word and "/" not in word \
            else ()
        if readings and not any(not prefix or word.lower().startswith(prefix)
                                for prefix, _, _ in readings):
            return None  # a symbol prefix on an English word: "Pins", "much", "mat"
        unit = registry.parse_units(word)
    except Exception:  # pint raises its own errors, and others on odd text: not a unit
        return None
    dimension = _dimension(dict(registry.get_dimensionality(unit)))
    return Unit(word, str(unit), dimension) if dimension else None


def _dimension(powers: dict[str, Any]) -> str:
    """pint's dimensionality written as :data:`_COMMON` writes it (``[length]/[time]``);
    ``""`` for a dimensionless unit (a percent, a count: nothing to compare)."""
    def part(names: list[str]) -> str:
        return "*".join(n if abs(powers[n]) == 1 else f"{n}^{abs(int(powers[n]))}"
                        for n in names)

    up = sorted(n for n, p in powers.items() if p > 0)
    down = sorted(n for n, p in powers.items() if p < 0)
    if not up and not down:
        return ""
    return (part(up) or "1") + (f"/{part(down)}" if down else "")


def one_kind(units: list[Unit]) -> tuple[Unit, Unit] | None:
    """The first and last of ``units`` (what a conversion's name or description lists, in
    order) where they are two units of one kind, a word of two kinds read in the other's
    (:data:`_OTHER_READINGS`: "pounds" beside "euros" is sterling); else ``None``."""
    if len({u.name for u in units}) < 2:
        return None
    first, last = units[0], units[-1]
    if first.dimension != last.dimension:
        first, last = _read_as(first, last.dimension), _read_as(last, first.dimension)
    return (first, last) if first.dimension == last.dimension and first.name != last.name \
        else None


def _read_as(unit: Unit, dimension: str) -> Unit:
    other = _OTHER_READINGS.get(unit.word.lower().removesuffix("s"))
    return Unit(unit.word, *other) if other is not None and other[1] == dimension else unit


def named_units(text: str) -> list[Unit]:
    """The units a sentence names anywhere ("How many km ...", "... in knots?"), in order;
    a single letter only after "in", "to" or "into", ending a phrase ("in W?", "converted
    to W."): in running text a letter is a word."""
    return [unit for _, unit in _units_in(text)]


def _units_in(text: str) -> list[tuple[re.Match[str], Unit]]:
    """:func:`named_units` with where each word is."""
    found = []
    for match in _WORD.finditer(text):
        letter = len(match.group()) == 1 and _INTO_LETTER.search(
            text[max(0, match.start() - 6):match.start()]) is not None and _PHRASE_END.match(
            text, match.end()) is not None
        unit = read_unit(match.group(), in_sentence=not letter)
        if unit is not None:
            found.append((match, unit))
    return found


def requested_units(request: str) -> list[Unit]:
    """The units a request names (:func:`named_units`), less the unit words that are part
    of a name it gives (:func:`part_of_name`: "Hill Acre: what area does this field have?"
    names a field, not acres)."""
    return [unit for match, unit in _units_in(request) if not part_of_name(request, match)]


def part_of_name(text: str, match: re.Match[str]) -> bool:
    """Whether the capitalised unit word ``match`` is part of a name ("Hill Acre", "Mile
    End"): beside a capitalised word, one space between, that is neither a function word nor
    a unit ("In Kilograms" and "Degrees Celsius" stay units).

    Why: seen on the 1.5B (held-out first-hour seed 6818), asked "Hill Acre: what area does
    this field have?", it converted the hectares to acres unasked, and the conversion
    passed as asked for ("acre" is in the request): a wrong answer reported ``success``."""
    if not match.group()[:1].isupper():
        return False
    before = re.search(r"([^\W\d_][\w'-]*) $", text[max(0, match.start() - 40):match.start()])
    after = re.match(r" ([^\W\d_][\w'-]*)", text[match.end():match.end() + 40])
    return any(near is not None and near.group(1)[:1].isupper()
               and near.group(1).lower() not in STOPWORDS | _UNIT_WORDS
               and read_unit(near.group(1), in_sentence=True) is None
               for near in (before, after))


#: Words that make a unit's name with the unit word beside them ("Degrees Celsius").
_UNIT_WORDS = frozenset({"degree", "degrees", "square", "cubic", "per"})


def asks_for(request: str, named: Collection[str], unit: Unit) -> bool:
    """Whether ``request`` asks for ``unit``: its name is among the units the request names
    (``named``: :func:`requested_units`' names, an output field's unit among them), or the
    request writes it the way the tool did, as a word of its own and not part of a name."""
    return unit.name in named or any(
        not part_of_name(request, m)
        for m in re.finditer(rf"(?<!\w){re.escape(unit.word)}(?!\w)", request, re.IGNORECASE))


def stated_units(text: str) -> list[tuple[str, Unit]]:
    """The figures of ``text`` with the unit written beside them: after (``14.11 miles``,
    ``45.32°F``, ``181.24 euros``, ``12 degrees Fahrenheit``) or a currency sign before
    (``$12``, ``€ 9.50``). A figure with no unit beside it is left out."""
    found = []
    for match in _FIGURE.finditer(text):
        after = list(_WORD.finditer(text[match.end():match.end() + 40]))
        unit = None
        if after and after[0].start() <= 2:  # "12 ... miles": not beside it
            first = after[0].group()
            unit = read_unit(first)
            if unit is None and len(after) > 1 and (first.lower() in ("degree", "degrees") or (
                    first.isupper() and len(first) <= 3)):  # "degrees F", "US gallons"
                unit = read_unit(after[1].group(), in_sentence=True)
        before = text[max(0, match.start() - 2):match.start()].rstrip()
        if unit is None and before and before[-1] in "$€£¥":
            unit = read_unit(before[-1])
        if unit is not None:
            found.append((match.group().rstrip(","), unit))
    return found


def field_unit(key: str) -> Unit | None:
    """The unit a field's name ends with (``weight_kg``, ``rate_usd``, ``windKmh``): tools
    name a figure's unit that way where their result does not say it otherwise."""
    parts = [p for p in re.split(r"[_\-\s]+", key) if p]
    if len(parts) < 2:
        camel = _NAME_PARTS.findall(key)
        parts = camel if len(camel) >= 2 else []
    return read_unit(parts[-1]) if parts else None


def name_units(name: str) -> list[Unit]:
    """The units a tool's name lists, in order (``kg_to_lb``, ``usd_to_eur``,
    ``celsiusToFahrenheit``): single letters only where the name is short words."""
    parts = [p for p in re.split(r"[_\-\s]+", name) if p]
    if len(parts) < 2:
        parts = _NAME_PARTS.findall(name)
    found = []
    index = 0
    while index < len(parts):
        pair = " ".join(parts[index:index + 2])  # "megawatt_hours": one unit in two words
        unit = _pint(pair) if index + 1 < len(parts) else None
        if unit is not None and parts[index].lower() not in _NOT_UNITS:
            found.append(unit)
            index += 2
            continue
        part = parts[index]
        if part.lower() not in _NOT_UNITS and (len(part) > 1 or len(parts) <= 3):
            unit = read_unit(part)
            if unit is not None:
                found.append(unit)
        index += 1
    return found
