"""The held-out first-hour agents: the dev set's recipe, drawn by a seed in other domains.

Defaults are decided on the development set (dev_a.py, dev_b.py) and reported on these, so a
mechanism that only fits the agents it was looked at on shows up. The recipe is the one the
dev agents follow: a lookup tool (name -> id), a detail tool (id -> a record of figures with
units and a person's name), a conversion tool, sometimes an ``add`` tool; three questions of
four kinds (a figure, a converted figure, a name, a sum over two entities); plain text, a
one-string-field output or a two-field pydantic output. Domains, entity and people names,
figures, tool and parameter names, docstrings and the instruction line are all drawn by the
seed, from pools the dev set does not use.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, create_model

from toolcycle import Tool

from .suite import FirstHourAgent, Question


@dataclass(frozen=True)
class Figure:
    key: str          # the record's key
    label: str        # how a question names it
    unit: str
    low: float
    high: float
    decimals: int


@dataclass(frozen=True)
class Conversion:
    figure: str       # the Figure.key it converts
    to_unit: str
    factor: float
    names: tuple[str, ...]


@dataclass(frozen=True)
class Domain:
    entity: str
    id_prefix: str
    names: tuple[str, ...]
    figures: tuple[Figure, Figure]
    role: str         # the person a record names: "captain"
    conversion: Conversion


DOMAINS = (
    Domain("ship", "SH", ("Northern Star", "Gull", "Maren", "Sea Fox", "Albatross"),
           (Figure("cargo_tonnes", "cargo load", "tonnes", 120, 950, 1),
            Figure("length_m", "length", "metres", 40, 210, 1)),
           "captain", Conversion("cargo_tonnes", "pounds", 2204.62,
                                 ("tonnes_to_pounds", "convert_tonnes_to_lb"))),
    Domain("exhibit", "EX", ("Bronze Horse", "Silk Atlas", "Moon Clock", "Amber Room Model"),
           (Figure("weight_kg", "weight", "kg", 3, 480, 1),
            Figure("insured_value_eur", "insured value", "EUR", 5000, 90000, 0)),
           "curator", Conversion("weight_kg", "pounds", 2.20462,
                                 ("kg_to_lb", "kilograms_to_pounds"))),
    Domain("medicine", "MED", ("Calmex", "Ibrafen", "Dorvatol", "Zentrix", "Lumora"),
           (Figure("stock_mg", "stock", "mg", 1500, 48000, 0),
            Figure("price_eur", "price per pack", "EUR", 2, 60, 2)),
           "pharmacist", Conversion("stock_mg", "grams", 0.001,
                                    ("mg_to_g", "milligrams_to_grams"))),
    Domain("train", "TR", ("Coastal Express", "Valley Line", "Night Owl", "Ridge Runner"),
           (Figure("distance_km", "route length", "km", 80, 900, 1),
            Figure("seats", "number of seats", "seats", 120, 620, 0)),
           "driver", Conversion("distance_km", "miles", 0.621371,
                                ("km_to_miles", "kilometres_to_miles"))),
    Domain("field", "FD", ("Hill Acre", "Long Meadow", "Brook Plot", "Stony Field"),
           (Figure("harvest_kg", "harvest", "kg", 900, 12000, 0),
            Figure("area_ha", "area", "hectares", 1, 40, 2)),
           "farmer", Conversion("area_ha", "acres", 2.47105,
                                ("hectares_to_acres", "ha_to_acres"))),
    Domain("venue", "VN", ("Blue Hall", "Old Mill Stage", "Riverside Arena", "Glasshouse"),
           (Figure("capacity", "capacity", "people", 150, 9000, 0),
            Figure("ticket_price_gbp", "ticket price", "GBP", 8, 95, 2)),
           "manager", Conversion("ticket_price_gbp", "EUR", 1.17,
                                 ("gbp_to_eur", "pounds_to_euros"))),
    Domain("bike", "BK", ("Red Comet", "City Glider", "Trail Fox", "Grey Mule"),
           (Figure("distance_km", "distance ridden", "km", 40, 2600, 1),
            Figure("battery_wh", "battery size", "Wh", 250, 750, 0)),
           "mechanic", Conversion("distance_km", "miles", 0.621371,
                                  ("km_to_miles", "convert_km_miles"))),
    Domain("ward", "WD", ("Rose Ward", "Oak Ward", "Cedar Ward", "Willow Ward"),
           (Figure("beds", "number of beds", "beds", 10, 60, 0),
            Figure("temperature_c", "room temperature", "C", 18, 24, 1)),
           "head nurse", Conversion("temperature_c", "F", 1.8,
                                    ("celsius_to_f", "c_to_fahrenheit"))),
    Domain("solar farm", "SF", ("Sunfield One", "Dune Array", "Mesa Panels", "Lark Park"),
           (Figure("output_mwh", "output this month", "MWh", 100, 4000, 1),
            Figure("panels", "number of panels", "panels", 800, 25000, 0)),
           "operator", Conversion("output_mwh", "kWh", 1000.0,
                                  ("mwh_to_kwh", "megawatt_hours_to_kwh"))),
    Domain("aquarium tank", "AQ", ("Reef Tank", "Kelp Tank", "Shark Tank", "Jelly Tank"),
           (Figure("volume_l", "volume", "litres", 800, 60000, 0),
            Figure("fish", "number of fish", "fish", 12, 400, 0)),
           "keeper", Conversion("volume_l", "US gallons", 0.264172,
                                ("litres_to_gallons", "l_to_gal"))),
    Domain("vineyard", "VY", ("Clos Bellet", "Vigna Alta", "Stone Terrace", "Les Pins"),
           (Figure("yield_hl", "yield", "hectolitres", 20, 900, 1),
            Figure("area_ha", "planted area", "hectares", 2, 70, 1)),
           "winemaker", Conversion("yield_hl", "litres", 100.0,
                                   ("hl_to_litres", "hectolitres_to_litres"))),
    Domain("server rack", "RK", ("Rack Amber", "Rack Birch", "Rack Cobalt", "Rack Delta"),
           (Figure("power_kw", "power draw", "kW", 3, 28, 2),
            Figure("servers", "number of servers", "servers", 6, 42, 0)),
           "technician", Conversion("power_kw", "W", 1000.0, ("kw_to_watts", "kilowatts_to_w"))),
    Domain("ski lift", "SL", ("Eagle Chair", "Summit Gondola", "Pine T-Bar", "Glacier Quad"),
           (Figure("length_m", "length", "metres", 300, 3200, 0),
            Figure("riders_per_hour", "riders per hour", "riders", 600, 3600, 0)),
           "lift operator", Conversion("length_m", "feet", 3.28084,
                                       ("metres_to_feet", "m_to_ft"))),
)

#: The seed of the held-out set the issue's figure is reported on. Seed 68 was run and its
#: failures read (2026-12-05, first session), so it is development data now; so is 6801
#: (second session's held-out set, whose wrong answers the third session read and fixed
#: toward). 6802 was fixed by the third session and 4 of its 12 agents run, their wrong answers
#: read (docs/benchmarks.md): development data too. 6803 was fixed on 2026-12-06 (session
#: 31), run whole on that session's code, and one wrong answer of it read (h05's sum of
#: capacities): development data too. 6804 was fixed on 2026-12-06 (session 32), committed
#: before any run on it, run whole on 5d8c173, and its wrong answers reported `success` read:
#: development data too. 6805 was fixed on 2026-12-06 (session 33), committed before any
#: run on it, run whole on 2a03900, and its wrong answers read: development data too. 6806
#: was fixed by session 33 at 07:03 UTC, committed before any run on it, run whole on
#: b639300, and the traces of its eight wrong `success`es read by session 34, which made
#: fixes from them (5385e67) and replayed them: development data too. 6807 was fixed by
#: session 34 at 08:51 UTC, committed before any run on it, run whole on cb32692 (25 of 36
#: right), and its three wrong `success`es read and fixed toward (f7c4710): development data
#: too. 6808 was fixed by session 34 at 10:15 UTC, run whole on b4a2868 by session 35 (29 of
#: 36 right, no wrong answer said `success`), and the checks replayed over its traces (no
#: trace of it read, no code changed from it); session 36 then read the traces of its four
#: wrong sums and made a21eef5 from one (a list nested once too deep): development data too.
#: 6809 was fixed by session 35 at 12:25 UTC (a start on 6459089 stopped after 2 agents), run
#: whole on 16380ae by session 36 (28 of 36 right, no wrong answer said `success`), and three
#: of its traces read (a right conversion left `ungrounded`; h12's two failures, one of
#: calls wrapped in their own arguments, fixed in 21b7325): development data too. 6810 was
#: fixed by session 36 at 16:20 UTC, before any run on it; session 38 ran it whole on
#: 78437ac and on the code after the refusal of calls over figures from nowhere, and read
#: traces of both: development data too; session 38 also read 6809's two wrong sums'
#: traces, from which that refusal was made. 6811 was fixed by session 38 at 21:05 UTC,
#: before any run on it, and run whole on ca7e298 (27 of 36 right, no wrong `success`;
#: nothing read beyond the summary). 6812 was fixed by session 38 at 23:00 UTC, before any
#: run on it, and run whole on 820e842 by session 39 (27 of 36 right, no wrong `success`;
#: nothing read beyond the summary). 6813 was fixed by session 39 at 01:47 UTC on
#: 2026-12-07, before any run on it, and run whole on 66596b3 by session 40 (24 of 36 right,
#: 2 wrong `success`, whose traces were read, one mended in 799732a): development data now.
#: 6814 was fixed by session 40 at 04:31 UTC, before any run on it, and run whole on f40b6de
#: by session 41 (25 of 36 right, 1 wrong `success`, mended in 54c6da3; its failures' traces
#: were read): development data now. 6815 was fixed by session 41 at 06:52 UTC (2026-12-07),
#: before any run on it.
REPORT_SEED = 6815

PEOPLE = ("Ingrid Falk", "Tomasz Nowak", "Amara Diallo", "Luis Ortega", "Hana Kovac",
          "Pieter de Vries", "Chloe Martin", "Ravi Menon", "Sofia Rossi", "Kwame Mensah",
          "Elin Strand", "Mateo Cruz", "Noor Aziz", "Felix Braun", "Grace Obi")

_LOOKUP_NAMES = ("find_{e}", "lookup_{e}", "get_{e}_id", "{e}_id_by_name")
_DETAIL_NAMES = ("{e}_details", "get_{e}", "{e}_info", "read_{e}")
_LOOKUP_DOCS = ("Find a {E} by its name and return its id.",
                "Look up the id of a {E} from its name.",
                "Return the {E} id for a {E} name.")
_DETAIL_DOCS = ("Details of a {E} by id: {fields}, and its {role}.",
                "Get the record of a {E} (by id) with {fields} and the {role}.")
_INSTRUCTIONS = ("You answer questions about our {E}s. Use the tools.",
                 "You are an assistant for the {E} records. Always use the tools to answer.",
                 "Help staff with questions about {E}s. Look things up with the tools.",
                 "Answer using the tools. Never guess.")

_FIGURE_WORDS = ("What is the {label} of the {E} {name}?",
                 "Tell me the {label} of {name}.",
                 "{name}: what {label} does this {E} have?")
_CONVERTED_WORDS = ("What is the {label} of the {E} {name} in {to}?",
                    "Give me the {label} of {name} converted to {to}.",
                    "How much is the {label} of {name}, in {to}?")
_NAME_WORDS = ("Who is the {role} of the {E} {name}?",
               "Which {role} is responsible for {name}?",
               "Name the {role} of {name}.")
_SUM_WORDS = ("What is the {label} of {name} and {other} added together?",
              "What is the combined {label} of the {E} {name} and the {E} {other}?",
              "Add up the {label} of {name} and {other}.")


def heldout_agents(seed: int = 68, count: int = 12) -> tuple[FirstHourAgent, ...]:
    """``count`` agents drawn by ``seed`` (same seed, same agents)."""
    rng = random.Random(seed)
    domains = rng.sample(DOMAINS, k=min(count, len(DOMAINS)))
    return tuple(_agent(rng, domain, index) for index, domain in enumerate(domains, start=1))


def _agent(rng: random.Random, domain: Domain, index: int) -> FirstHourAgent:
    ent = domain.entity.replace(" ", "_")
    title = domain.entity
    names = rng.sample(domain.names, k=3)
    people = rng.sample(PEOPLE, k=3)
    ids = {name: f"{domain.id_prefix}-{rng.randint(100, 999)}" for name in names}
    records = {ids[name]: {**{f.key: _draw(rng, f) for f in domain.figures},
                           domain.role.replace(" ", "_"): person}
               for name, person in zip(names, people, strict=True)}
    lookup_name = rng.choice(_LOOKUP_NAMES).format(e=ent)
    detail_name = rng.choice(_DETAIL_NAMES).format(e=ent)
    conv = domain.conversion
    convert_name = rng.choice(conv.names)
    arg = rng.choice(("name", f"{ent}_name"))
    id_arg = rng.choice((f"{ent}_id", "id"))

    def lookup(**kwargs: Any) -> str:
        wanted = str(kwargs[arg]).strip().lower()
        for name, found in ids.items():
            if name.lower() == wanted:
                return found
        raise LookupError(f"no {title} named {kwargs[arg]!r}")

    def detail(**kwargs: Any) -> dict[str, Any]:
        key = str(kwargs[id_arg]).strip().upper()
        if key not in records:
            raise LookupError(f"no {title} with id {kwargs[id_arg]!r}")
        return dict(records[key])

    def convert(value: float) -> float:
        return round(value * conv.factor + (32 if conv.to_unit == "F" else 0), 2)

    figure_of = {f.key: f for f in domain.figures}
    converted = figure_of[conv.figure]
    fields = ", ".join(f"{f.label} ({f.unit})" for f in domain.figures)
    tools: list[Tool[Any]] = [
        _tool(lookup_name, rng.choice(_LOOKUP_DOCS).format(E=title), {arg: "string"}, lookup),
        _tool(detail_name, rng.choice(_DETAIL_DOCS).format(E=title, fields=fields,
                                                           role=domain.role),
              {id_arg: "string"}, detail),
        _tool(convert_name, f"Convert a value in {converted.unit} to {conv.to_unit}.",
              {"value": "number"}, convert)]
    kinds = rng.sample(("figure", "converted", "name", "sum"), k=3)
    style = rng.choice(("text", "text", "one_field", "two_fields"))
    if style == "two_fields" and "name" in kinds:
        kinds[kinds.index("name")] = next(k for k in ("figure", "converted", "sum")
                                          if k not in kinds)
    if "sum" in kinds:
        tools.append(_tool("add", "Add a list of numbers.", {"numbers": "array"},
                           lambda numbers: round(sum(float(n) for n in numbers), 2)))
    questions = []
    for number, kind in enumerate(kinds):
        name = names[number]
        record = records[ids[name]]
        figure = domain.figures[rng.randrange(2)]
        chain = (lookup_name, detail_name)
        if kind == "figure":
            q = Question(kind, rng.choice(_FIGURE_WORDS).format(
                label=figure.label, E=title, name=name, unit=figure.unit),
                record[figure.key], chain)
        elif kind == "converted":
            q = Question(kind, rng.choice(_CONVERTED_WORDS).format(
                label=converted.label, E=title, name=name, to=conv.to_unit),
                convert(float(record[conv.figure])), (*chain, convert_name))
        elif kind == "name":
            role = domain.role.replace(" ", "_")
            q = Question(kind, rng.choice(_NAME_WORDS).format(role=domain.role, E=title,
                                                              name=name),
                         str(record[role]), chain)
        else:
            other = names[(number + 1) % 3]
            total = round(record[figure.key] + records[ids[other]][figure.key], 2)
            q = Question(kind, rng.choice(_SUM_WORDS).format(
                label=figure.label, E=title, name=name, other=other), total,
                         (lookup_name, detail_name, lookup_name, detail_name, "add"))
        questions.append(q)
    output: type[BaseModel] | None = None
    if style == "one_field":
        output = create_model("Answer", answer=(str, ...))
    elif style == "two_fields":
        output = create_model("Result", **{ent: (str, ...), "value": (float, ...)})  # type: ignore[call-overload]
        questions = [Question(q.name, q.text, q.expected, q.chain, field="value")
                     for q in questions]
    return FirstHourAgent(
        f"h{index:02d}-{ent}", domain.entity,
        rng.choice(_INSTRUCTIONS).format(E=title), tools, questions, output,
        extra={"style": style})


def _draw(rng: random.Random, figure: Figure) -> float | int:
    value = rng.uniform(figure.low, figure.high)
    return int(value) if figure.decimals == 0 else round(value, figure.decimals)


def _tool(name: str, description: str, params: dict[str, str],
          fn: Callable[..., Any]) -> Tool[Any]:
    properties: dict[str, Any] = {
        key: ({"type": "array", "items": {"type": "number"}} if kind == "array"
              else {"type": kind}) for key, kind in params.items()}
    schema = {"type": "object", "properties": properties, "required": list(params)}
    return Tool.from_schema(name, description, schema, fn)
