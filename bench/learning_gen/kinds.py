"""The four kinds of lesson issue 69's held-out suite judges, each in any domain's words.

- ``unreliable``: the obvious tool fails on every call (a transient-sounding timeout, 503 or
  rate limit, or a permanent revoked token, expired certificate or retired endpoint); a
  plainly described archive has the same figures.
- ``empty_source``: the tool whose description names the figure finds nothing for it (one of
  several shapes of nothing); a vaguely described register holds it.
- ``arg_format``: a tool accepts a date only as YYYYMMDD, DD.MM.YYYY, MM/DD/YYYY or
  YYYY/MM/DD, or a number only with its prefix; its description does not say, its error does.
- ``id_first``: a detail tool needs a reference that only a lookup by name gives (the lookup
  stores it under the detail parameter's own name in some suites, under ``id`` in others).

Each builder takes a :class:`~.making.Maker` and how many tasks to make, and returns the
kind's tools and tasks (:class:`~.making.KindPart`). Phrasings are drawn per task.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from .making import Call, KindPart, Maker, Task, as_json, slug

_TRANSIENT = (
    (TimeoutError, "{tool} timed out after 5.0 s"),
    (ConnectionError, "503 Service Unavailable: the upstream is overloaded, try again later"),
    (RuntimeError, "429 Too Many Requests: rate limit exceeded, retry later"),
)
_PERMANENT = (
    (PermissionError, "401 Unauthorized: the API token was revoked"),
    (ConnectionError, "TLS handshake failed: certificate verify failed: certificate has expired"),
    (RuntimeError, "410 Gone: this endpoint was decommissioned"),
)
_EMPTY = ('[]', '{"results": [], "count": 0}', 'No results.',
          '{"status": "ok", "data": {"items": []}}', '{"matches": null, "total": 0}')


def unreliable(make: Maker, count: int) -> KindPart:
    d = make.domain
    transient = make.rng.random() < 0.5
    error_type, message = make.pick(_TRANSIENT if transient else _PERMANENT)
    param = make.pick((slug(d.thing), f"{slug(d.thing)}_code", "code"))
    primary = make.tool_name(("live", "realtime", "feed", "now", "api"))
    archive = make.tool_name(("history", "archive", "records", "ledger", "log"))
    records: dict[str, dict[str, Any]] = {}

    def live(**args: Any) -> str:
        raise error_type(message.format(tool=primary))

    def recorded(**args: Any) -> str:
        code = "".join(str(args.get(param, "")).upper().split())
        return as_json(records[code]) if code in records else "[]"

    figures = ", ".join(f.phrase for f in d.thing_figures)
    tools = [make.tool(primary, f"Live {d.thing} data: {figures}.",
                       {param: f"The {d.thing} code."}, live),
             make.tool(archive, f"Recorded data of a {d.thing}.",
                       {param: f"The {d.thing} code."}, recorded)]
    tasks = []
    for i in range(count):
        code = make.code(d.prefixes)
        values = {f.key: make.figure(f) for f in d.thing_figures}
        records[code] = {param: code, **{k: v[0] for k, v in values.items()}}
        figure = d.thing_figures[i % len(d.thing_figures)]
        prompt = make.pick((
            "What is the {p} of {t} {c}?", "Tell me the current {p} for {t} {c}.",
            "{t_cap} {c}: what is its {p}?", "I need the {p} of the {t} with code {c}.",
        )).format(p=figure.phrase, t=d.thing, t_cap=d.thing.capitalize(), c=code)
        tasks.append(Task("unreliable", prompt, values[figure.key][1],
                          (Call(archive, {param: code}),), figure.key,
                          Call(primary, {param: code}), "error"))
    return KindPart("unreliable", tools, tasks, 2,
                    "transient" if transient else "permanent")


def empty_source(make: Maker, count: int) -> KindPart:
    d = make.domain
    nothing = make.pick(_EMPTY)
    param = make.pick((slug(d.place), "name", f"{slug(d.place)}_name"))
    info = make.tool_name(("info", "directory", "overview", "profile"))
    register = make.tool_name(("register", "inventory", "assets", "facilities"))
    places: dict[str, dict[str, Any]] = {}

    def known(args: dict[str, Any]) -> str | None:
        asked = " ".join(str(args.get(param, "")).lower().split())
        return next((p for p in places if asked and (p.lower() in asked or asked in p.lower())),
                    None)

    def overview(**args: Any) -> str:
        place = known(args)
        topic = str(args.get("topic", "")).lower()
        if place is None or any(w in topic for f in d.place_figures
                                for w in f.phrase.split() if len(w) > 3 and w != "number"):
            return nothing
        return as_json({param: place, "opening_hours": "06:00-22:00"})

    def assets(**args: Any) -> str:
        place = known(args)
        return as_json(places[place]) if place else nothing

    figures = ", ".join(f.phrase.removeprefix("number of ") for f in d.place_figures)
    tools = [make.tool(info, f"Information about a {d.place} on a topic ({figures}, opening "
                       "hours, ...).", {param: f"The {d.place} name.", "topic": "What to look up."},
                       overview),
             make.tool(register, f"The {d.place} register.", {param: f"The {d.place} name."},
                       assets)]
    tasks = []
    for i in range(count):
        place = make.place()
        values = {f.key: make.figure(f) for f in d.place_figures}
        places[place] = {param: place, **{k: v[0] for k, v in values.items()}}
        figure = d.place_figures[i % len(d.place_figures)]
        prompt = make.pick((
            "What is the {p} at the {pl} {n}?", "How many {q} does {n} {pl} have?",
            "Give me the {p} of {n} ({pl}).", "{n} {pl}: what is its {p}?",
        )).format(p=figure.phrase, q=figure.phrase.removeprefix("number of "), pl=d.place,
                  n=place)
        topic = figure.phrase.removeprefix("number of ")
        tasks.append(Task("empty_source", prompt, values[figure.key][1],
                          (Call(register, {param: place}),), figure.key,
                          Call(info, {param: place, "topic": topic}), "empty"))
    return KindPart("empty_source", tools, tasks, 2, nothing)


_DATE_FORMATS = {"YYYYMMDD": "%Y%m%d", "DD.MM.YYYY": "%d.%m.%Y", "MM/DD/YYYY": "%m/%d/%Y",
                 "YYYY/MM/DD": "%Y/%m/%d"}
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")


def arg_format(make: Maker, count: int) -> KindPart:
    """A date format or an id prefix, chosen by the seed (dates three times in four)."""
    return (_prefixed if make.rng.random() < 0.25 else _dated)(make, count)


def _dated(make: Maker, count: int) -> KindPart:
    d = make.domain
    label = make.pick(tuple(_DATE_FORMATS))
    pattern = _DATE_FORMATS[label]
    by_example = make.rng.random() < 0.5
    param = make.pick((slug(d.thing), "code"))
    date_param = make.pick(("date", "day", "on_date"))
    name = make.tool_name(("daily", "day_stats", "daybook", "daily_report"))
    values: dict[tuple[str, str], Any] = {}

    def daily(**args: Any) -> str:
        day = str(args.get(date_param, "")).strip()
        try:
            parsed = dt.datetime.strptime(day, pattern).date()
        except ValueError:
            example = dt.date(2026, 1, 5).strftime(pattern)
            raise ValueError(f"invalid {date_param} {day!r}: " + (
                f"dates look like {example}" if by_example else f"expected {label}")) from None
        key = ("".join(str(args.get(param, "")).upper().split()), parsed.isoformat())
        if key not in values:
            return "[]"
        return as_json({param: key[0], date_param: day, d.daily.key: values[key]})

    tools = [make.tool(name, f"The {d.daily.phrase} of a {d.thing} on a given day.",
                       {param: f"The {d.thing} code.", date_param: "The day."}, daily)]
    tasks = []
    for _ in range(count):
        code = make.code(d.prefixes)
        day = dt.date(2026, make.rng.randrange(1, 13), make.rng.randrange(1, 29))
        value, expected = make.figure(d.daily)
        values[(code, day.isoformat())] = value
        said = make.pick(("{d} {m} {y}", "{m} {d}, {y}", "the {d}{th} of {m} {y}")).format(
            d=day.day, m=_MONTHS[day.month - 1], y=day.year,
            th="st" if day.day in (1, 21) else "nd" if day.day in (2, 22)
            else "rd" if day.day in (3, 23) else "th")
        prompt = make.pick((
            "What was the {p} of {t} {c} on {s}?", "On {s}, what was the {p} for {t} {c}?",
            "Give me {t} {c}'s {p} on {s}.",
        )).format(p=d.daily.phrase, t=d.thing, c=code, s=said)
        tasks.append(Task("arg_format", prompt, expected,
                          (Call(name, {param: code, date_param: day.strftime(pattern)}),),
                          d.daily.key, Call(name, {param: code, date_param: day.isoformat()}),
                          "error"))
    return KindPart("arg_format", tools, tasks, 2, f"date {label}")


def _prefixed(make: Maker, count: int) -> KindPart:
    d = make.domain
    prefix = "".join(w[0] for w in d.record.split()).upper() + make.pick(("", "N", "X")) + "-"
    param = make.pick((f"{slug(d.record)}_no", f"{slug(d.record)}_number", "number"))
    name = make.tool_name(("entries", "journal", "book", "register_entry"))
    values: dict[str, Any] = {}

    def entry(**args: Any) -> str:
        number = "".join(str(args.get(param, "")).upper().split())
        if not number.startswith(prefix):
            raise ValueError(f"unknown {d.record} number {number!r} "
                             f"(numbers look like {prefix}00000)")
        return as_json({param: number, d.daily.key: values[number]}) if number in values else "[]"

    tools = [make.tool(name, f"A {d.record} entry by its number: the {d.daily.phrase}.",
                       {param: f"The {d.record} number."}, entry)]
    tasks = []
    for _ in range(count):
        digits = make.code(("",), digits=5)
        value, expected = make.figure(d.daily)
        values[prefix + digits] = value
        prompt = make.pick((
            "What {p} is on {r} number {n}?", "{r_cap} {n}: what {p} does it show?",
            "Look up {r} {n} and tell me its {p}.",
        )).format(p=d.daily.phrase, r=d.record, r_cap=d.record.capitalize(), n=digits)
        tasks.append(Task("arg_format", prompt, expected, (Call(name, {param: prefix + digits}),),
                          d.daily.key, Call(name, {param: digits}), "error"))
    return KindPart("arg_format", tools, tasks, 2, f"prefix {prefix}")


def id_first(make: Maker, count: int) -> KindPart:
    d = make.domain
    ref = make.pick((f"{slug(d.record)}_ref", f"{slug(d.record)}_id", "reference"))
    stored_as = ref if make.rng.random() < 0.67 else "id"
    who = make.pick((slug(d.person), "name", f"{slug(d.person)}_name"))
    find = make.tool_name(("find", "search", "lookup", "locate"))
    detail = make.tool_name(("detail", "record", "file", "card"))
    refs: dict[str, str] = {}
    details: dict[str, dict[str, Any]] = {}

    def finder(**args: Any) -> str:
        asked = " ".join(str(args.get(who, "")).lower().split())
        hits = [p for p in refs if asked and asked in p.lower()]
        return as_json({stored_as: refs[hits[0]], "name": hits[0]}) if len(hits) == 1 else "[]"

    def detailed(**args: Any) -> str:
        key = str(args.get(ref, "")).strip().upper()
        if key not in details:
            raise LookupError(f"unknown {d.record} reference {args.get(ref, '')!r}")
        return as_json(details[key])

    figures = ", ".join(f.phrase for f in d.person_figures)
    tools = [make.tool(find, f"Find a {d.person}'s {d.record} reference by name.",
                       {who: f"The {d.person}'s name."}, finder),
             make.tool(detail, f"The details of a {d.record}: {figures}.",
                       {ref: f"The {d.record} reference."}, detailed)]
    tasks = []
    for i in range(count):
        person = make.person()
        code = make.code(tuple(p + "-" for p in d.prefixes), digits=5)
        values = {f.key: make.figure(f) for f in d.person_figures}
        refs[person] = code
        details[code] = {ref: code, **{k: v[0] for k, v in values.items()}}
        figure = d.person_figures[i % len(d.person_figures)]
        prompt = make.pick((
            "What is the {p} on {n}'s {r}?", "Which {p} does {n} have?",
            "Tell me the {p} for the {pe} {n}.", "{n} asks about their {r}: what is the {p}?",
        )).format(p=figure.phrase, n=person, r=d.record, pe=d.person)
        tasks.append(Task("id_first", prompt, values[figure.key][1],
                          (Call(find, {who: person}), Call(detail, {ref: code})), figure.key,
                          Call(detail, {ref: person}), "error"))
    return KindPart("id_first", tools, tasks, 3, f"stored as {stored_as}")
