"""The "rail" suite: four kinds of lesson a playbook should learn, in a rail operator's tools.

Each kind of question needs a lesson of a different shape (the kinds an independent held-out
suite judges the playbook on):

- ``delay``: the obvious tool, ``delay_feed``, is down (it times out); ``service_history``
  has the same figure. Lesson: an unreliable primary tool and its working alternative.
- ``facility``: ``station_info`` looks like the place to ask about a station's parking, bike
  racks or lockers, but returns ``[]`` for those topics; ``amenities_register`` has them.
  Lesson: a first-tried database that is empty for some kinds of question.
- ``fare``: ``fare_quote`` only accepts dates as ``DD.MM.YYYY``, which its description does not
  say (its error does). Lesson: an argument format learned from a failed call.
- ``seat``: ``booking_detail`` needs a booking reference, which ``find_booking`` gives for a
  passenger's name. Lesson: an id that must be looked up before the detail call.

A public ``web_search`` knows nothing about any of it (``[]``). All names and figures are made
up so that no model can answer from memory.
"""

from __future__ import annotations

import json
import re
import time

INSTRUCTIONS = (
    "You are a rail operator's assistant. Timetables, fares, bookings and station data are "
    "internal and change daily, so you do not know them: look them up with the tools, and if "
    "a tool fails or has nothing, try another way. Answer with the exact value a tool returned."
)
AGENT_NAME = "rail_assistant"
#: kind -> its primary tool, which fails on every call (SC-005 is measured on this kind)
PRIMARY_DOWN = {"delay": "delay_feed"}
#: The fewest iterations a task of each kind allows: the tool calls it needs, then the answer
#: (bench/learning_report.py iteration_floor: how far any playbook could cut).
FEWEST_ITERATIONS = {"delay": 2, "facility": 2, "fare": 2, "seat": 3}

#: service code -> (delay in minutes, platform, operator)
SERVICES = {
    "RX2041": (12, 4, "Rexline"), "RX1187": (7, 2, "Rexline"), "KL318": (23, 6, "Kestrel"),
    "KL512": (4, 1, "Kestrel"), "MB770": (31, 3, "Marbury"), "MB905": (9, 5, "Marbury"),
    "RX3320": (16, 7, "Rexline"), "KL644": (2, 2, "Kestrel"), "MB128": (44, 8, "Marbury"),
}
#: station -> parking spaces, bike racks, lockers, platforms
STATIONS = {
    "Ashmoor": (140, 36, 12, 4), "Kelby": (85, 20, 0, 2), "Wrenfield": (310, 64, 40, 8),
    "Dunhallow": (55, 18, 6, 3), "Brackwater": (220, 45, 24, 6), "Pellingham": (30, 12, 4, 2),
    "Ostenby": (175, 50, 16, 5), "Carrick Vale": (95, 28, 8, 3),
    "Thornbury Cross": (260, 72, 30, 7),
}
#: unordered station pair -> standard single fare in EUR
FARES = {
    frozenset({"Ashmoor", "Kelby"}): 23.5, frozenset({"Wrenfield", "Dunhallow"}): 41.2,
    frozenset({"Brackwater", "Pellingham"}): 17.8, frozenset({"Ostenby", "Ashmoor"}): 36.4,
    frozenset({"Kelby", "Carrick Vale"}): 12.9, frozenset({"Thornbury Cross", "Wrenfield"}): 58.3,
    frozenset({"Dunhallow", "Ostenby"}): 27.6, frozenset({"Pellingham", "Kelby"}): 19.4,
    frozenset({"Carrick Vale", "Brackwater"}): 33.1,
}
#: passenger -> (booking reference, coach, seat)
BOOKINGS = {
    "Orla Venbridge": ("BK-48213", "C", "C14"), "Tamsin Quarrell": ("BK-50377", "A", "A03"),
    "Idris Falconet": ("BK-61920", "F", "F22"), "Bettany Soule": ("BK-37754", "B", "B41"),
    "Casimir Drewitt": ("BK-72046", "D", "D08"), "Yusra Halloway": ("BK-29581", "E", "E17"),
    "Fenwick Alderly": ("BK-83412", "C", "C36"), "Marisol Tenby": ("BK-15609", "A", "A11"),
    "Hollis Prentiss": ("BK-94270", "G", "G05"),
}
_DATE = re.compile(r"\d{2}\.\d{2}\.\d{4}")
_AMENITY_TOPICS = ("park", "car", "bike", "bicycle", "cycle", "locker", "luggage", "storage")


def _station(name: str) -> str | None:
    query = " ".join(name.lower().replace("station", "").split())
    for known in STATIONS:
        if query and (known.lower() in query or query in known.lower()):
            return known
    return None


def delay_feed(service: str) -> str:
    """Live delay of a train service, in minutes.

    Args:
        service: The service code, e.g. RX2041.
    """
    time.sleep(0.2)  # it is slow as well as down
    raise TimeoutError("delay_feed timed out after 5.0 s")


def service_history(service: str) -> str:
    """Recorded running data of a train service: delay, platform and operator.

    Args:
        service: The service code.
    """
    code = re.sub(r"[^A-Z0-9]", "", service.upper())
    if code not in SERVICES:
        return "[]"
    delay, platform, operator = SERVICES[code]
    return json.dumps({"service": code, "delay_minutes": delay, "platform": platform,
                       "operator": operator})


def station_info(station: str, topic: str) -> str:
    """Information about a railway station on a topic (platforms, opening hours, parking...).

    Args:
        station: The station name.
        topic: What to look up.
    """
    known = _station(station)
    if known is None or any(word in topic.lower() for word in _AMENITY_TOPICS):
        return "[]"
    return json.dumps({"station": known, "platforms": STATIONS[known][3],
                       "ticket_office": "06:00-22:00"})


def amenities_register(station: str) -> str:
    """The register of station amenities.

    Args:
        station: The station name.
    """
    known = _station(station)
    if known is None:
        return "[]"
    parking, bikes, lockers, _ = STATIONS[known]
    return json.dumps({"station": known, "parking_spaces": parking, "bike_racks": bikes,
                       "lockers": lockers})


def fare_quote(origin: str, destination: str, date: str) -> str:
    """Standard single fare between two stations on a travel date, in EUR.

    Args:
        origin: Departure station.
        destination: Arrival station.
        date: The travel date.
    """
    if not _DATE.fullmatch(date.strip()):
        raise ValueError(f"invalid date {date!r}: expected DD.MM.YYYY")
    a, b = _station(origin), _station(destination)
    fare = FARES.get(frozenset({a, b})) if a and b else None
    if fare is None:
        return "[]"
    return json.dumps({"origin": a, "destination": b, "date": date.strip(), "fare_eur": fare})


def find_booking(passenger: str) -> str:
    """Find the booking reference of a passenger.

    Args:
        passenger: The passenger's full name.
    """
    query = passenger.lower().strip()
    for name, (ref, _, _) in BOOKINGS.items():
        if query and (name.lower() in query or query in name.lower()):
            return ref
    return "[]"


def booking_detail(booking_ref: str) -> str:
    """Seat, coach and status of a booking.

    Args:
        booking_ref: The booking.
    """
    for ref, coach, seat in BOOKINGS.values():
        if booking_ref.strip().upper() == ref:
            return json.dumps({"booking_ref": ref, "coach": coach, "seat": seat,
                               "status": "confirmed"})
    raise KeyError(f"unknown booking reference {booking_ref!r}")


def web_search(query: str) -> str:
    """Search the public web for general knowledge.

    Args:
        query: What to search for.
    """
    return "[]"


#: Every tool here is a lookup that changes nothing (ToolPolicy.read_only: a learned routine
#: may run it for the model; bench/learning.py load_suite).
READ_ONLY = True
TOOLS = [delay_feed, service_history, station_info, amenities_register, fare_quote,
         find_booking, booking_detail, web_search]
