"""Dates and times as tools write them: what a value the model wrote means, how to write it in
a tool's format, and the format a tool's error states.

Why a module of its own, outside the playbook: two parts of the library need the same readings.
The run's recovery after a tool error (:mod:`toolcycle.run.recovery`) tells the model its value
written in the format the error spells out ("expected YYYY/MM/DD": ``2026/09/23``), and the
playbook's lessons (:mod:`toolcycle.playbook.formats`, :mod:`toolcycle.playbook.reshape`) learn
and apply a tool's format from examples and errors. Both may only write what is certain: a
numeric date is read in another order only where every order agrees (a day above 12), a bare
time only where the task says it with its "pm" or "am".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, datetime, time

#: Date formats a tool may want (as an example shows them) and the model may write.
#: Numeric ones come in both orders; the order is settled by the example, the error's own
#: pattern ("DD.MM.YYYY") or the value, never guessed.
NUMERIC = (*(f"{a}{s}{b}{s}%Y" for s in ("", ".", "/", "-")
             for a, b in (("%d", "%m"), ("%m", "%d"))),
           "%Y-%m-%d", "%Y/%m/%d", "%Y.%m.%d", "%Y%m%d")
_NAMED_MONTH = ("%d %B %Y", "%B %d %Y", "%B %d, %Y", "%d %b %Y", "%b %d %Y", "%b %d, %Y",
                "%d. %B %Y", "%A %d %B %Y", "%A, %d %B %Y", "%A, %B %d, %Y")
_ORDINAL = re.compile(r"(?<=\d)(st|nd|rd|th)\b", re.I)
_MONTH = "|".join(sorted({date(2026, m, 1).strftime(f) for m in range(1, 13)
                          for f in ("%B", "%b")}, key=len, reverse=True))
_DAY_AND_MONTH = re.compile(
    rf"(?i)\b(?:(?:{_MONTH})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b|"
    rf"\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH})\b)")
#: 24-hour clock formats a tool may want, and the "pm" a model may write after a time.
CLOCKS = ("%H:%M", "%H.%M", "%H:%M:%S")
#: Clock formats without a separator: "1930" is as likely a year or a code, so an example
#: written so is a clock only beside a value that certainly means a time (:func:`time_format`).
BARE_CLOCKS = ("%H%M", "%H%M%S")
_MERIDIEM = re.compile(r"\s*(?<![A-Za-z])([ap])\.?\s?m\b\.?", re.I)
#: A time a task says with its "pm" or "am": "6 pm", "7:30 p.m.", "9pm".
_SAID_TIME = re.compile(r"(?<![\d:.])\d{1,2}(?:[:.]\d{2})?\s*[ap]\.?\s?m\b\.?", re.I)
#: A format an error spells out: "DD.MM.YYYY", "YYYY-MM-DD", "HH:MM", "hh:mm:ss", and the
#: same without separators ("YYYYMMDD", "HHMM", Java's "yyyyMMdd").
_PART = r"(?:YYYY|yyyy|MM|mm|DD|dd|HH|hh|SS|ss)"
_SPELLED = re.compile(rf"(?<![A-Za-z])({_PART}(?:([./:-]?){_PART})(?:\2{_PART})?)(?![A-Za-z])")
_PARTS = re.compile(_PART)
#: An ISO 8601 *date* (not a duration, a time or a timestamp: those are left alone).
_ISO_DATE = re.compile(r"\bISO(?:[ -]?8601)?(?: calendar)? dates?\b|"
                       r"\bdates? \(?(?:in )?ISO[ -]?8601\b"
                       r"(?! *(?:durations?|times?|timestamps?|date-?times?)\b)", re.I)
#: A ``strptime`` pattern an error quotes: "time data '7 pm' does not match format '%H:%M'".
_STRPTIME = re.compile(r"%[YmdHMS](?:[./: -]?%[YmdHMS]){1,2}")
_DATE_PARTS = {"YYYY": "%Y", "MM": "%m", "DD": "%d"}
_CLOCK_PARTS = {"HH": "%H", "MM": "%M", "SS": "%S"}


def date_format(example: str, error_class: str = "") -> str | None:
    """The one date format that writes ``example`` exactly, or None (not a date, or day and
    month could be either way round and the error does not say which)."""
    fits = writings(example)
    if len(fits) > 1:
        order = stated_order(error_class)
        fits = [f for f in fits if order is None or day_first(f) is order]
    return fits[0] if len(fits) == 1 else None


def writings(text: str) -> list[str]:
    """The numeric date formats that write ``text`` exactly ("05.01.2026": two orders)."""
    if len(text) > 10 or sum(ch.isdigit() for ch in text) != 8:  # every one writes 8 digits
        return []
    return [f for f in NUMERIC if (d := parse_date(text, f)) is not None and d.strftime(f) == text]


def names_date(text: str, day: date) -> bool:
    """Whether ``text`` may name ``day``: a numeric writing of it in any order (padded or
    not), or its day and its month's name ("16 May 2026", "May 16th", "the 16th of May").
    Loose on purpose: it guards what must not leak (a task's own date written the tool's
    way), so it errs toward yes."""
    low = _ORDINAL.sub("", text.lower())
    words = {str(int(w)) if w.isdigit() else w for w in re.findall(r"[a-z]+|\d+", low)}
    month = {day.strftime("%B").lower(), day.strftime("%b").lower()}
    if str(day.day) in words and month & words:
        return True
    return any(parse_date(run.strip("./-"), f) == day for run in re.findall(r"[\d./-]+", low)
               for f in NUMERIC)


def unmistakable(example: str, prompt: str) -> str:
    """``example``, a numeric date whose day and month could be read either way round
    ("05.01.2026"), written as a date of the same format whose day is above 12 ("17.01.2026"),
    where the task it came from settles the order: of the two readings, ``prompt`` names one
    (:func:`names_date`: "on 5 January 2026"). Every other value is returned as it is.

    Why: an example is shown so that another task writes its own date the same way, and a
    reader of "05.01.2026" (a small model, or :func:`date_format` itself) cannot tell which
    number is the day: a later task may write 1 August as 08.01.2026 and be refused, or worse,
    answered for 8 January. The value the run passed was the task's own date; the one shown
    to other tasks only has to show the format, and one whose day cannot be a month does.
    """
    fits = writings(example)
    meant = [f for f in fits if (d := parse_date(example, f)) is not None
             and names_date(prompt, d)]
    if len(fits) < 2 or len(meant) != 1:
        return example
    day = parse_date(example, meant[0])
    if day is None or day.day > 12:
        return example
    return day.replace(day=day.day + 12).strftime(meant[0])


def example_dates(value: str) -> set[date]:
    """Every date ``value`` may mean as a numeric date (both orders where both fit)."""
    return {d for f in writings(value) if (d := parse_date(value, f)) is not None}


def as_the_task_names(value: str, fmt: str, prompt: str) -> tuple[date, str] | None:
    """Where ``value`` read in ``fmt`` is a date ``prompt`` does not name and exactly one other
    reading of it is one the prompt names: the date as read, and that named date written in
    ``fmt``; else None. "11/08/2026" beside ``%m/%d/%Y`` for a task that says "11 August
    2026" is 8 November, and the task's date is "08/11/2026".

    Why: a tool that takes either order silently answers for the wrong day (an empty
    result, a wrong figure) when a small model writes the date the other way round; the
    task says which date was meant."""
    text = value.strip()
    as_read = parse_date(text, fmt)
    if as_read is None or names_date(prompt, as_read):
        return None
    named = {d for d in example_dates(text) if d != as_read and names_date(prompt, d)}
    return (as_read, named.pop().strftime(fmt)) if len(named) == 1 else None


def read_date(text: str, target: str) -> date | None:
    """The date ``text`` means: in the target format itself (unpadded: "3.11.2026" for
    ``%d.%m.%Y``), with a month named, or numeric in any other form where every reading
    agrees (the year first, or a day above 12). The tool's order says nothing of the model's:
    "11/3/2026" beside ``DD.MM.YYYY`` may well be November, so it is left alone."""
    plain = _ORDINAL.sub("", " ".join(text.split()))
    for fmt in (target, *_NAMED_MONTH):
        found = parse_date(plain, fmt)
        if found is not None:
            return found
    readings = {d for f in NUMERIC if (d := parse_date(plain, f)) is not None}
    return readings.pop() if len(readings) == 1 else None


def time_format(example: str, value: str = "", prompt: str = "") -> str | None:
    """The 24-hour clock format that writes ``example`` exactly ("19:00": ``%H:%M``), or
    None. A separator-less one ("1930": ``%H%M``) only where ``value`` (the rejected value
    to write in it) certainly means a time (:func:`clock_readings`): digits alone are as
    likely a year or a code, and the pair of an accepted and a rejected value settles it."""
    bare = [f for f in BARE_CLOCKS if value and clock_readings(value, prompt)]
    for fmt in (*CLOCKS, *bare):
        try:
            if datetime.strptime(example, fmt).strftime(fmt) == example:
                return fmt
        except ValueError:
            continue
    return None


def read_time(text: str) -> time | None:
    """The time ``text`` means where it says so: on a 12-hour clock with its "pm" or "am"
    ("7:30 pm", "7 p.m.", "7.30PM"), or on the 24-hour clock in another writing ("19.30").
    A bare "7:30" might be morning or evening: see :func:`clock_readings`."""
    plain = _MERIDIEM.sub(lambda m: " " + m.group(1).upper() + "M", text.strip())
    plain = " ".join(plain.replace(".", ":").split())
    for fmt in ("%I:%M %p", "%I %p", "%H:%M"):
        try:
            read = datetime.strptime(plain, fmt)
        except ValueError:
            continue
        if fmt == "%H:%M" and read.hour < 13:  # 24-hour only where no 12-hour reading fits
            return None
        return read.time()
    return None


def clock_readings(text: str, prompt: str) -> set[time]:
    """What ``text`` may mean on a clock: its own reading (:func:`read_time`), else each
    time the task's ``prompt`` says with its "pm" or "am" that a bare ``text`` ("6:00", "6")
    writes without it (two: not certain; none: nothing certain).

    Why: shown "Pass time like "19:00"", a small model copies the shape and drops what it
    does not see in it: "at 6 pm" becomes "6:00", which a 24-hour tool reads as morning, and
    the run answers from the wrong hour. The task's own "pm" says which hour was meant."""
    own = read_time(text)
    bare = re.fullmatch(r"(\d{1,2})(?:[:.](\d{2}))?", text.strip())
    if own is not None or bare is None:
        return {own} if own is not None else set()
    hour, minute = int(bare[1]), int(bare[2] or 0)
    return {at for said in _SAID_TIME.findall(prompt) if (at := read_time(said)) is not None
            and at.hour % 12 == hour % 12 and at.minute == minute}


def parse_date(text: str, fmt: str) -> date | None:
    """``text`` read as a date in ``fmt``, or None."""
    try:
        return datetime.strptime(text, fmt).date()
    except ValueError:
        return None


def day_first(fmt: str) -> bool:
    """Whether a numeric date format puts the day before the month."""
    return fmt.find("%d") < fmt.find("%m")


def stated_order(error_class: str) -> bool | None:
    """Whether the error's own pattern puts the day first (``DD.MM.YYYY``: True,
    ``MM/DD/YYYY``: False), or None where it shows none."""
    upper = error_class.upper()
    day, month = upper.find("DD"), upper.find("MM")
    return None if day < 0 or month < 0 else day < month


def stated_formats(error: str) -> list[str]:
    """The date and time formats ``error`` spells out, as ``strftime`` patterns:
    "expected DD.MM.YYYY" gives ``%d.%m.%Y``, "HH:MM on the 24-hour clock" ``%H:%M``, "an
    ISO 8601 date" ``%Y-%m-%d``. A spelling that is no whole date (year, month and day once
    each) nor a 24-hour time (hours and minutes, perhaps seconds) names none. A ``strptime``
    pattern the error quotes counts too: Python's own "does not match format '%d.%m.%Y'" is
    what a tool that parses its argument with ``datetime.strptime`` raises."""
    found: list[str] = []
    for match in _SPELLED.finditer(error):
        parts = [p.upper() for p in _PARTS.findall(match[1])]
        fmt = _date_pattern(parts, match[2]) or _clock_pattern(parts, match[2])
        if fmt is not None and fmt not in found:
            found.append(fmt)
    for match in _STRPTIME.finditer(error):
        fmt = match[0]
        codes = sorted(re.findall(r"%(\w)", fmt))
        if codes in (["Y", "d", "m"], ["H", "M"], ["H", "M", "S"]) and fmt not in found:
            found.append(fmt)
    if _ISO_DATE.search(error) and "%Y-%m-%d" not in found:
        found.append("%Y-%m-%d")
    return found


def _date_pattern(parts: list[str], separator: str) -> str | None:
    if sorted(parts) != ["DD", "MM", "YYYY"] or separator == ":":
        return None
    return separator.join(_DATE_PARTS[p] for p in parts)


def _clock_pattern(parts: list[str], separator: str) -> str | None:
    if parts not in (["HH", "MM"], ["HH", "MM", "SS"]) or separator not in ("", ":", "."):
        return None
    return separator.join(_CLOCK_PARTS[p] for p in parts)


def in_stated_format(value: str, error: str, prompt: str = "") -> str | None:
    """``value`` written in the one format ``error`` spells out, where what ``value`` means is
    certain (:func:`read_date`, :func:`clock_readings` with the task's ``prompt``) and the
    writing differs from it; else None.

    Why: a small model that reads "expected HH:MM on the 24-hour clock" after passing
    "7:30 pm" may give up rather than rewrite the value; a lesson learned only from runs that
    got past the error then carries no example, and later runs make the same call. The
    error said the format all along."""
    formats = stated_formats(error)
    if len(formats) != 1:
        return None
    fmt, text = formats[0], value.strip()
    if "%Y" in fmt:
        return rewritten_date(text, fmt)
    readings = clock_readings(text, prompt)
    written = readings.pop().strftime(fmt) if len(readings) == 1 else None
    return written if written is not None and written != text else None


def rewritten_date(text: str, fmt: str) -> str | None:
    """``text``, a date whose meaning is certain (:func:`read_date`), written in ``fmt``,
    where that differs from how it is written; else None."""
    when = read_date(text, fmt)
    written = when.strftime(fmt) if when is not None else None
    return written if written is not None and written != text else None


#: A numeric date as an error may write one: digits, perhaps with separators ("20260105",
#: "2026/01/05", "05.01.2026").
_DATE_RUN = re.compile(r"(?<![\w./-])\d[\d./-]{6,8}\d(?![\w/-])")


def example_format(error: str, besides: Iterable[str] = ()) -> str | None:
    """The one date format the numeric dates in ``error`` are written in, where each settles
    it (:func:`date_format`: the year first, a day above 12, or the order the error spells);
    ``besides``: values that are the call's own, not the tool's example. None where no date
    is written, where one could be read either way round ("01/05/2026"), or where two
    formats are."""
    own = {b.strip() for b in besides}
    found = {fmt for run in _DATE_RUN.findall(error)
             if run not in own and (fmt := date_format(run, error)) is not None}
    return found.pop() if len(found) == 1 else None


def example_readings(error: str, besides: Iterable[str] = ()) -> list[str]:
    """Every date format the numeric dates in ``error`` may be written in: the one
    :func:`example_format` finds, or, where its examples could be read either way round
    ("dates look like 01/05/2026") and the error says no order, both orders; ``besides``:
    values that are the call's own. Empty where no date is written or two formats are.

    Why: an example alone cannot say which of "01/05" is the day; a probe that asks the tool
    with each reading (:mod:`toolcycle.playbook.probe`) can, by which one answers."""
    settled = example_format(error, besides)
    if settled is not None:
        return [settled]
    own = {b.strip() for b in besides}
    order = stated_order(error)
    found = {fmt for run in _DATE_RUN.findall(error) if run not in own
             for fmt in writings(run) if order is None or day_first(fmt) is order}
    separators = {re.sub(r"%[Ymd]", "", fmt) for fmt in found}
    return sorted(found) if len(found) == 2 and len(separators) == 1 else []


def in_example_readings(value: str, error: str, besides: Iterable[str] = ()) -> list[str]:
    """``value``, a date whose meaning is certain (:func:`read_date`), written in each format
    the error's example may be in (:func:`example_readings`) where that differs from how it
    is written, once each: one writing where the example settles the format, two where it
    could be read either way round."""
    text = value.strip()
    written = (rewritten_date(text, fmt) for fmt in example_readings(error, besides))
    return list(dict.fromkeys(w for w in written if w is not None))


def in_example_format(value: str, error: str, besides: Iterable[str] = ()) -> str | None:
    """``value``, a date whose meaning is certain (:func:`read_date`), written in the format
    of the example ``error`` gives (:func:`example_format`), where that differs from how it
    is written; else None.

    Why: "invalid date '2026-09-23': dates look like 20260923" says the format by example
    only; a small model shown it tends to pass its own writing again. Where the example
    settles the format, the rewriting is certain."""
    fmt = example_format(error, besides)
    return None if fmt is None else rewritten_date(value.strip(), fmt)


def names_a_date(text: str) -> bool:
    """Whether ``text`` names a day: a numeric date, or a month's name beside a day's
    number ("March 4, 2026", "the 4th of March"; names as ``strftime`` writes them, English
    in the C locale, as :func:`names_date` reads them)."""
    return bool(dates_in(text)) or _DAY_AND_MONTH.search(text) is not None


def dates_in(text: str) -> set[date]:
    """Every date the numeric dates written in ``text`` may mean (both readings of one written
    either way round): "2026-11-27" in a tool's result is 27 November 2026."""
    return {day for run in set(_DATE_RUN.findall(text)) for day in example_dates(run)}


#: A day named with its month and year: "March 4, 2026", "4 March 2026", "the 4th of March,
#: 2026" (month names as ``strftime`` writes them, English in the C locale).
_NAMED_DAY = re.compile(
    rf"(?i)\b(?:(?P<m1>{_MONTH})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y1>\d{{4}})"
    rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>{_MONTH})\.?,?\s+(?P<y2>\d{{4}}))\b")
_MONTH_NUMBERS = {date(2026, m, 1).strftime(f).lower(): m for m in range(1, 13)
                  for f in ("%B", "%b")}
#: The most of a text read for the days it names (a task, not a document).
_READ_TEXT = 4000


def days_named(text: str) -> set[date]:
    """The days ``text`` names with their year: a month's name beside a day and a year
    ("March 4, 2026", "the 4th of March 2026"), or a numeric date that reads one way only
    ("2026-03-04", "17.03.2026"). A day named without its year is none (its year is a guess)."""
    named: set[date] = set()
    for match in _NAMED_DAY.finditer(text[:_READ_TEXT]):
        month, day, year = ((match["m1"], match["d1"], match["y1"]) if match["m1"]
                            else (match["m2"], match["d2"], match["y2"]))
        try:
            named.add(date(int(year), _MONTH_NUMBERS[month.lower()], int(day)))
        except ValueError:  # "February 30, 2026" names no day
            continue
    for run in set(_DATE_RUN.findall(text[:_READ_TEXT])):
        if len(readings := example_dates(run)) == 1:
            named |= readings
    return named


def the_day_as(example: str, task: str, error_class: str = "") -> str | None:
    """The one day ``task`` names (:func:`days_named`) written in the format of ``example``, a
    numeric date that one format writes (:func:`date_format`; an error's "expected DD.MM.YYYY"
    settles the order); None where ``example`` is no such date, or the task names no day or
    several.

    Why: an example of a tool's date format is a value some earlier task passed, and a small
    model shown "Pass day like "13.11.2026"" for a question about January 11 passes 13.11.2026
    (the 1.5B did, and answered "not found"): the example shows the format with another
    task's day. The task's own day in that format shows the format and leaks nothing."""
    fmt = date_format(example, error_class)
    if fmt is None:
        return None
    days = days_named(task)
    return days.pop().strftime(fmt) if len(days) == 1 else None
