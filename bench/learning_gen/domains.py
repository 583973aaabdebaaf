"""The domains a generated learning suite is drawn in: nouns, figures and system-name words.

A domain gives the generator what it needs to dress each kind of lesson in one business's
words: a *thing* known by a code (a train service, a shipment, a meter), a *place* with
countable facilities, a *person* with a record behind an id, the figures each of them has,
and the words its systems are named with. The lessons themselves (kinds.py) know nothing of
any domain: that is the point, so that no rule of the playbook can be tuned to one suite's
words. Every name and figure is generated from a seed, so no model answers from memory.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    """One figure a record holds: how a task asks for it, the key a tool's result stores it
    under, and how its values are drawn (``low``..``high`` with ``decimals``, or ``pattern``:
    ``L`` a capital letter, ``#`` a digit, anything else as written)."""

    phrase: str
    key: str
    low: int = 1
    high: int = 99
    decimals: int = 0
    pattern: str = ""


@dataclass(frozen=True)
class Domain:
    """One business's vocabulary (see the module docstring)."""

    key: str
    role: str
    stems: tuple[str, ...]
    thing: str
    prefixes: tuple[str, ...]
    thing_figures: tuple[Figure, ...]
    place: str
    place_figures: tuple[Figure, ...]
    person: str
    record: str
    person_figures: tuple[Figure, ...]
    daily: Figure
    item: str
    item_figure: Figure


F = Figure
DOMAINS: tuple[Domain, ...] = (
    Domain("rail", "a rail operator", ("rail", "network", "transit", "ops"),
           "service", ("RX", "KL", "MB"),
           (F("delay in minutes", "delay_minutes", 2, 58), F("platform", "platform", 1, 14)),
           "station", (F("number of parking spaces", "parking_spaces", 20, 400),
                       F("number of bike racks", "bike_racks", 6, 90)),
           "passenger", "booking", (F("seat", "seat", pattern="L##"),
                                    F("coach", "coach", pattern="L")),
           F("standard fare in EUR", "fare_eur", 9, 80, 1),
           "ticket type", F("price in EUR", "price_eur", 3, 90, 2)),
    Domain("clinic", "an outpatient clinic", ("clinic", "care", "ward", "health"),
           "lab order", ("LO", "LB", "LX"),
           (F("result value", "value", 3, 140, 1), F("turnaround in hours", "turnaround_h", 2, 72)),
           "site", (F("number of treatment rooms", "treatment_rooms", 3, 40),
                    F("number of parking bays", "parking_bays", 10, 300)),
           "patient", "chart", (F("copay in EUR", "copay_eur", 5, 60, 2),
                                F("assigned physician code", "physician", pattern="DR-###")),
           F("occupancy in percent", "occupancy_pct", 40, 99),
           "medicine", F("unit price in EUR", "unit_price_eur", 1, 70, 2)),
    Domain("depot", "a tool wholesaler", ("depot", "stock", "warehouse", "supply"),
           "article", ("AR", "SK", "WT"),
           (F("units on hand", "units_on_hand", 3, 900), F("bin number", "bin", 100, 999)),
           "branch", (F("number of loading docks", "loading_docks", 2, 24),
                      F("floor space in square metres", "floor_m2", 400, 9000)),
           "customer", "account", (F("credit limit in EUR", "credit_limit_eur", 1000, 50000),
                                   F("open balance in EUR", "open_balance_eur", 10, 9000, 2)),
           F("units shipped", "units_shipped", 5, 700),
           "product", F("list price in EUR", "list_price_eur", 4, 400, 2)),
    Domain("hotel", "a hotel group", ("front", "stay", "guest", "house"),
           "room", ("RM", "ST", "DL"),
           (F("nightly rate in EUR", "rate_eur", 60, 420, 2), F("floor", "floor", 1, 19)),
           "property", (F("number of rooms", "rooms", 30, 600),
                        F("number of meeting halls", "meeting_halls", 1, 12)),
           "guest", "folio", (F("bill total in EUR", "bill_eur", 80, 3000, 2),
                              F("room number", "room_number", 100, 999)),
           F("rooms occupied", "rooms_occupied", 5, 500),
           "minibar item", F("price in EUR", "price_eur", 2, 30, 2)),
    Domain("port", "a container port", ("port", "harbour", "quay", "marine"),
           "vessel", ("VS", "MV", "CX"),
           (F("berth number", "berth", 1, 60), F("draught in metres", "draught_m", 6, 16, 1)),
           "terminal", (F("number of cranes", "cranes", 2, 30),
                        F("number of reefer plugs", "reefer_plugs", 40, 900)),
           "shipper", "consignment", (F("container count", "containers", 1, 400),
                                      F("customs status code", "customs_code", pattern="C#L")),
           F("containers moved", "containers_moved", 20, 2000),
           "handling service", F("charge in EUR", "charge_eur", 30, 900, 2)),
    Domain("campus", "a university", ("campus", "registry", "faculty", "student"),
           "course", ("CS", "MA", "BI"),
           (F("enrolled students", "enrolled", 8, 400), F("credit points", "credits", 2, 15)),
           "building", (F("number of lecture halls", "lecture_halls", 1, 20),
                        F("number of study seats", "study_seats", 40, 900)),
           "student", "enrolment", (F("grade average", "grade_avg", 1, 4, 1),
                                    F("advisor room", "advisor_room", pattern="L-###")),
           F("attendance count", "attendance", 5, 380),
           "fee", F("amount in EUR", "amount_eur", 10, 1500, 2)),
    Domain("utility", "an energy utility", ("grid", "meter", "energy", "supply"),
           "meter", ("MT", "EG", "PW"),
           (F("reading in kWh", "reading_kwh", 100, 99000), F("phase count", "phases", 1, 3)),
           "substation", (F("number of feeders", "feeders", 2, 40),
                          F("transformer count", "transformers", 1, 12)),
           "household", "contract", (F("monthly instalment in EUR", "instalment_eur", 20, 400, 2),
                                     F("tariff code", "tariff", pattern="T-L#")),
           F("consumption in kWh", "consumption_kwh", 1, 90),
           "connection service", F("fee in EUR", "fee_eur", 20, 800, 2)),
    Domain("telecom", "a mobile network operator", ("net", "line", "cell", "carrier"),
           "line", ("LN", "MS", "SIM"),
           (F("data used in MB", "data_mb", 100, 90000), F("roaming zone", "zone", 1, 9)),
           "cell site", (F("number of antennas", "antennas", 2, 36),
                         F("backup hours", "backup_hours", 2, 48)),
           "subscriber", "contract", (F("monthly fee in EUR", "monthly_fee_eur", 5, 90, 2),
                                      F("plan code", "plan", pattern="P-L##")),
           F("dropped calls", "dropped_calls", 0, 300),
           "add-on", F("price in EUR", "price_eur", 1, 40, 2)),
    Domain("library", "a city library", ("library", "catalog", "lending", "stacks"),
           "title", ("BK", "AV", "PR"),
           (F("copies available", "copies", 1, 30), F("shelf number", "shelf", 100, 999)),
           "branch library", (F("number of reading seats", "reading_seats", 10, 300),
                              F("number of public computers", "computers", 2, 60)),
           "member", "loan record", (F("fines owed in EUR", "fines_eur", 1, 60, 2),
                                     F("locker code", "locker", pattern="L##")),
           F("loans issued", "loans", 3, 400),
           "service", F("fee in EUR", "fee_eur", 1, 25, 2)),
    Domain("airline", "a regional airline", ("flight", "air", "crew", "ops"),
           "flight", ("AV", "QF", "ZR"),
           (F("gate number", "gate", 1, 60), F("fuel uplift in tonnes", "fuel_t", 2, 40, 1)),
           "airport", (F("number of check-in desks", "checkin_desks", 4, 120),
                       F("number of stands", "stands", 3, 80)),
           "traveller", "reservation", (F("seat", "seat", pattern="##L"),
                                        F("baggage allowance in kg", "baggage_kg", 7, 46)),
           F("passengers boarded", "boarded", 20, 330),
           "fare class", F("price in EUR", "price_eur", 40, 900, 2)),
)


def domain_named(key: str) -> Domain:
    """The domain with this key (a ``KeyError`` naming the known ones otherwise)."""
    for domain in DOMAINS:
        if domain.key == key:
            return domain
    raise KeyError(f"no domain {key!r}; known: {', '.join(d.key for d in DOMAINS)}")
