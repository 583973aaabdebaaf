"""The "hotel" suite: the four kinds of lesson in a hotel front desk's tools, written on
2026-12-02 (at 93d8851, after respelled calls and legend reshapes, before any run on it) to
measure the playbook on a seventh domain it was not tuned on.

It keeps the kinds of ``rail``, ``depot``, ``clinic`` and ``helpdesk`` and changes the
surfaces they share:

- ``stay``: the obvious tool, ``reservations_api``, refuses every call with a revoked token
  (a 401: neither a timeout, a quota, a lost connection, a certificate nor a service that says
  it is down); ``guest_ledger`` has every in-house guest's room, nights and balance, and names
  its parameter ``name`` where ``reservations_api`` says ``guest``. Lesson: an unreliable
  primary tool and its alternative.
- ``housekeeping``: ``room_info`` looks like the place to ask whether a room is clean, but
  answers a null page (``{"results": null, "count": 0}``) for it; ``housekeeping_log`` has
  the status, who cleaned the room last and the minibar. Lesson: a first-tried database that
  is empty for some kinds of question.
- ``table``: ``table_finder`` takes the time on the 24-hour clock (``19:30``), which its
  description does not say (its error does), and the task says "7:30 pm". Lesson: an
  argument format learned from a failed call, a time where earlier suites had dates, codes
  and durations.
- ``bill``: ``folio`` needs a folio id; ``guest_folios`` lists a guest's folios, one per
  outlet (room, restaurant, spa, bar, laundry), and the one of the outlet asked about must be
  picked. Lesson: an id to look up before the detail call.

A ``concierge_search`` over the concierge's notes finds nothing for any of it
(``{"results": [], "total": 0}``). All names and figures are made up so that no model can
answer from memory.
"""

from __future__ import annotations

import json
import re

INSTRUCTIONS = (
    "You are a hotel front-desk assistant. Reservations, housekeeping, restaurant tables and "
    "guest bills are internal records that change by the hour, so you do not know them: look "
    "them up with the tools, and if a tool fails or has nothing, try another way. Answer with "
    "the exact value a tool returned."
)
AGENT_NAME = "hotel_desk"
#: kind -> its primary tool, which fails on every call (SC-005 is measured on this kind)
PRIMARY_DOWN = {"stay": "reservations_api"}
#: The fewest iterations a task of each kind allows: the tool calls it needs, then the answer.
FEWEST_ITERATIONS = {"stay": 2, "housekeeping": 2, "table": 2, "bill": 3}

#: in-house guest -> (room, nights booked, balance due in EUR)
GUESTS = {
    "henrietta vasquez": ("1207", 4, "318.50"), "kwame asante": ("508", 2, "0.00"),
    "ottilie brandt": ("311", 6, "1044.20"), "rajesh iyer": ("914", 3, "87.00"),
    "sofia marchetti": ("702", 5, "460.75"), "bjorn eklund": ("1110", 7, "1290.00"),
    "amara nwosu": ("416", 3, "152.30"), "lucien moreau": ("1003", 8, "2210.40"),
    "hana sato": ("605", 1, "64.90"),
}
#: room -> (housekeeping status, cleaned last by, minibar)
ROOMS = {
    "221": ("inspected", "Marisol Tiwari", "restocked"),
    "347": ("dirty", "Pavel Horak", "pending"),
    "530": ("in progress", "Grace Adeyemi", "restocked"),
    "618": ("clean", "Marisol Tiwari", "pending"),
    "809": ("out of order", "Tobias Lind", "not checked"),
    "1012": ("inspected", "Grace Adeyemi", "pending"),
    "234": ("dirty", "Tobias Lind", "restocked"),
    "455": ("clean", "Pavel Horak", "not checked"),
    "1126": ("inspected", "Nadia Rahman", "pending"),
}
#: room -> (bed, view, floor): what room_info does know
FACTS = {room: (("king", "twin", "queen")[i % 3], ("courtyard", "sea", "garden")[i % 3],
                int(room[:-2]))
         for i, room in enumerate(ROOMS)}
_HOUSEKEEPING_TOPICS = ("clean", "housekeep", "status", "ready", "minibar", "maid", "tidy",
                        "service", "cleaned", "inspect")
#: restaurant time (24-hour) -> {party size: (table, section)}
TABLES = {
    "18:00": {2: ("T04", "window"), 4: ("T12", "terrace"), 6: ("T21", "hall")},
    "18:30": {2: ("T02", "bar"), 4: ("T15", "hall"), 6: ("T23", "terrace")},
    "18:45": {2: ("T07", "terrace"), 4: ("T11", "window"), 6: ("T20", "hall")},
    "19:00": {2: ("T05", "window"), 4: ("T14", "hall"), 6: ("T22", "terrace")},
    "19:15": {2: ("T08", "hall"), 4: ("T16", "terrace"), 6: ("T24", "window")},
    "19:30": {2: ("T03", "terrace"), 4: ("T13", "bar"), 6: ("T25", "hall")},
    "20:00": {2: ("T09", "bar"), 4: ("T17", "window"), 6: ("T26", "terrace")},
    "20:30": {2: ("T06", "hall"), 4: ("T18", "terrace"), 6: ("T27", "window")},
    "21:00": {2: ("T01", "window"), 4: ("T19", "hall"), 6: ("T28", "bar")},
}
_CLOCK = re.compile(r"([01]\d|2[0-3]):[0-5]\d")
#: guest -> [(folio id, outlet, total in EUR)]
FOLIOS = {
    "mateo ferreira": [("FO-55120", "room", "642.00"), ("FO-55121", "spa", "212.40"),
                       ("FO-55122", "restaurant", "96.80")],
    "yasmin haddad": [("FO-55207", "restaurant", "154.30"), ("FO-55208", "bar", "61.50"),
                      ("FO-55209", "room", "489.00")],
    "piotr zielinski": [("FO-55311", "bar", "38.90"), ("FO-55312", "laundry", "27.60"),
                        ("FO-55313", "spa", "175.00")],
    "chiara rossi": [("FO-55416", "spa", "98.20"), ("FO-55417", "room", "1120.00"),
                     ("FO-55418", "restaurant", "233.70")],
    "emeka obi": [("FO-55502", "laundry", "44.10"), ("FO-55503", "restaurant", "128.40"),
                  ("FO-55504", "bar", "72.30")],
    "lena vogel": [("FO-55618", "room", "356.00"), ("FO-55619", "bar", "19.80"),
                   ("FO-55620", "laundry", "31.20")],
    "tariq aziz": [("FO-55733", "restaurant", "187.60"), ("FO-55734", "spa", "264.90"),
                   ("FO-55735", "room", "712.00")],
    "elif demir": [("FO-55841", "bar", "53.40"), ("FO-55842", "room", "298.00"),
                   ("FO-55843", "laundry", "22.70")],
    "noor khalil": [("FO-55956", "spa", "141.30"), ("FO-55957", "restaurant", "77.90"),
                    ("FO-55958", "bar", "45.60")],
}


def _find(name: str, known: dict[str, object]) -> str | None:
    """The one known name a query names whole (a query of one word that is a whole word of
    it, a surname, finds it too): no substring of a longer word."""
    words = re.findall(r"[a-z]+", name.lower())
    for key in known:
        key_words = key.split()
        if words and all(w in key_words for w in words):
            return key
    return None


def reservations_api(guest: str) -> str:
    """The reservations system: a guest's room, nights booked and balance.

    Args:
        guest: The guest's name.
    """
    raise PermissionError("401 Unauthorized: the API token for reservations.internal was "
                          "revoked")


def guest_ledger(name: str) -> str:
    """The front desk's ledger of in-house guests.

    Args:
        name: The guest's name.
    """
    found = _find(name, GUESTS)
    if found is None:
        return json.dumps({"results": [], "total": 0})
    room, nights, balance = GUESTS[found]
    return json.dumps({"guest": found.title(), "room": room, "nights": nights,
                       "balance_due_eur": balance})


def _room(room: str) -> str:
    return "".join(re.findall(r"\d", room))


def room_info(room: str, topic: str) -> str:
    """What the hotel records about one topic of a room (bed, view, floor, cleaning status,
    minibar...).

    Args:
        room: The room number.
        topic: What to look up.
    """
    number = _room(room)
    if number not in FACTS or any(word in topic.lower() for word in _HOUSEKEEPING_TOPICS):
        return json.dumps({"results": None, "count": 0})
    bed, view, floor = FACTS[number]
    return json.dumps({"results": [{"room": number, "bed": bed, "view": view,
                                    "floor": floor}], "count": 1})


def housekeeping_log(room: str) -> str:
    """The housekeeping log of a room.

    Args:
        room: The room number.
    """
    number = _room(room)
    if number not in ROOMS:
        return json.dumps({"results": None, "count": 0})
    status, cleaner, minibar = ROOMS[number]
    return json.dumps({"room": number, "status": status, "cleaned_by": cleaner,
                       "minibar": minibar, "logged": "today 10:40"})


def table_finder(time: str, party_size: int) -> str:
    """The restaurant's free table for a party at a time tonight.

    Args:
        time: When the party would sit down.
        party_size: How many people.
    """
    clock = str(time).strip()
    if not _CLOCK.fullmatch(clock):
        raise ValueError(f"invalid time {time!r}: expected HH:MM on the 24-hour clock")
    if clock not in TABLES:
        raise LookupError(f"the restaurant takes no sitting at {clock}: sittings are "
                          f"{', '.join(TABLES)}")
    size = next((s for s in sorted(TABLES[clock]) if s >= int(party_size)), None)
    if size is None:
        raise ValueError(f"no table seats {party_size}")
    table, section = TABLES[clock][size]
    return json.dumps({"time": clock, "party_size": int(party_size), "table": table,
                       "section": section})


def guest_folios(guest: str) -> str:
    """A guest's folios.

    Args:
        guest: The guest's name.
    """
    found = _find(guest, FOLIOS)
    if found is None:
        return "[]"
    return json.dumps([{"folio_id": fid, "outlet": outlet, "state": "open"}
                       for fid, outlet, _ in FOLIOS[found]])


def folio(folio_id: str) -> str:
    """One folio of charges: outlet, guest and total.

    Args:
        folio_id: The folio.
    """
    for guest, folios in FOLIOS.items():
        for fid, outlet, total in folios:
            if folio_id.strip().upper() == fid:
                return json.dumps({"folio_id": fid, "outlet": outlet, "guest": guest.title(),
                                   "total_eur": total})
    raise LookupError(f"unknown folio {folio_id!r}")


def concierge_search(query: str) -> str:
    """Search the concierge's notes.

    Args:
        query: What to search for.
    """
    return json.dumps({"results": [], "total": 0})


#: Every tool here is a lookup that changes nothing (ToolPolicy.read_only).
READ_ONLY = True
TOOLS = [reservations_api, guest_ledger, room_info, housekeeping_log, table_finder,
         guest_folios, folio, concierge_search]
