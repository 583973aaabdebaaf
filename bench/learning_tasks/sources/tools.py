"""The "sources" suite: the right one of several look-alike record systems per kind of question.

A company keeps its records in four internal systems with opaque code names and identical
tools; nothing but experience says which system holds what:

- helix:  employees  -> phone extension   (kind ``extension``)
- atlas:  customers  -> balance due       (kind ``balance``)
- nimbus: suppliers  -> lead time in days (kind ``lead_time``)
- vertex: products   -> units in stock    (kind ``stock``)

A system asked about a name it does not hold answers "No record found." (an empty result to
the reflector); a hit returns a small JSON record with the asked field among others. A public
``web_search`` is offered too and knows nothing private ("No results."). Each question needs
exactly one lookup in the right system, so a learned playbook can only help by saying which
system to use for which kind of question: the tools' descriptions do not tell. The names are
made up so that no model can answer from memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

#: What both arms are told (tuned on the train split only: a version saying "as soon as a
#: system returns the record, answer" made the 1.5B model answer "No record found." after the
#: first empty lookup).
INSTRUCTIONS = (
    "You are a company assistant. Company data lives in several internal record systems; you "
    "cannot know it. Look it up with the tools: if a system has no record, try another "
    "system, until one returns the record. Then answer with the exact value from that record."
)
AGENT_NAME = "records_assistant"
#: The fewest iterations a task of each kind allows: one lookup in the right system, then the
#: answer (bench/learning_report.py iteration_floor).
FEWEST_ITERATIONS = {"balance": 2, "extension": 2, "lead_time": 2, "stock": 2}
EMPTY = "No record found."

#: system -> name -> record (the first field is the name; the asked field is one of the rest)
RECORDS: dict[str, dict[str, dict[str, Any]]] = {
    "helix": {  # employees
        "Orla Venbridge": {"phone_extension": 4417, "desk": "North wing", "team": "billing"},
        "Tamsin Quarrell": {"phone_extension": 3052, "desk": "East wing", "team": "payroll"},
        "Idris Falconet": {"phone_extension": 5128, "desk": "West wing", "team": "logistics"},
        "Bettany Soule": {"phone_extension": 2764, "desk": "South wing", "team": "legal"},
        "Casimir Drewitt": {"phone_extension": 6391, "desk": "North wing", "team": "support"},
        "Yusra Halloway": {"phone_extension": 7245, "desk": "Annex", "team": "marketing"},
        "Fenwick Alderly": {"phone_extension": 3986, "desk": "East wing", "team": "security"},
        "Marisol Tenby": {"phone_extension": 5573, "desk": "Annex", "team": "research"},
        "Hollis Prentiss": {"phone_extension": 8120, "desk": "West wing", "team": "facilities"},
        "Gwendolyn Ashcombe": {"phone_extension": 4839, "desk": "South wing", "team": "sales"},
    },
    "atlas": {  # customers
        "Brackenridge Dental": {"balance_due": 2716.4, "currency": "EUR", "region": "north"},
        "Osterley Bakeries": {"balance_due": 845.9, "currency": "EUR", "region": "south"},
        "Pemberton Kilns": {"balance_due": 12380.0, "currency": "EUR", "region": "east"},
        "Wychwood Florists": {"balance_due": 391.25, "currency": "EUR", "region": "west"},
        "Carraway Opticians": {"balance_due": 5604.75, "currency": "EUR", "region": "north"},
        "Dunleith Joinery": {"balance_due": 1958.6, "currency": "EUR", "region": "east"},
        "Halvergate Vets": {"balance_due": 3472.15, "currency": "EUR", "region": "south"},
        "Stoneleigh Print": {"balance_due": 689.3, "currency": "EUR", "region": "west"},
        "Marchbank Cafes": {"balance_due": 9215.8, "currency": "EUR", "region": "north"},
        "Ravensworth Tiles": {"balance_due": 1507.45, "currency": "EUR", "region": "east"},
    },
    "nimbus": {  # suppliers
        "Corrigan Fasteners": {"lead_time_days": 17, "country": "Portugal", "rating": "A"},
        "Ellesmere Polymers": {"lead_time_days": 41, "country": "Poland", "rating": "B"},
        "Garside Packaging": {"lead_time_days": 9, "country": "Spain", "rating": "A"},
        "Kettering Alloys": {"lead_time_days": 28, "country": "Austria", "rating": "C"},
        "Loxley Adhesives": {"lead_time_days": 12, "country": "Belgium", "rating": "B"},
        "Penhallow Timber": {"lead_time_days": 35, "country": "Latvia", "rating": "A"},
        "Quenby Castings": {"lead_time_days": 23, "country": "Czechia", "rating": "B"},
        "Tarrant Fabrics": {"lead_time_days": 14, "country": "Italy", "rating": "A"},
        "Winstanley Glass": {"lead_time_days": 52, "country": "Slovenia", "rating": "C"},
        "Ambleside Resins": {"lead_time_days": 19, "country": "Denmark", "rating": "B"},
    },
    "vertex": {  # products
        "Tidewell kettle": {"units_in_stock": 342, "unit_price": 39.5, "warehouse": "Leeds"},
        "Quillon stapler": {"units_in_stock": 1185, "unit_price": 8.25, "warehouse": "Derby"},
        "Marrowby reading lamp": {"units_in_stock": 76, "unit_price": 54.0, "warehouse": "Hull"},
        "Fennick tote bag": {"units_in_stock": 2093, "unit_price": 12.9, "warehouse": "Leeds"},
        "Harlow filing cabinet": {"units_in_stock": 58, "unit_price": 189.0, "warehouse": "Hull"},
        "Brisbow swivel chair": {"units_in_stock": 431, "unit_price": 149.0, "warehouse": "York"},
        "Calloway whiteboard": {"units_in_stock": 267, "unit_price": 64.5, "warehouse": "York"},
        "Dunmere paper shredder": {"units_in_stock": 94, "unit_price": 119.0, "warehouse": "Derby"},
        "Esker label printer": {"units_in_stock": 613, "unit_price": 87.5, "warehouse": "Leeds"},
        "Gorsley monitor stand": {"units_in_stock": 158, "unit_price": 29.9, "warehouse": "Hull"},
    },
}


def lookup(system: str, name: str) -> str:
    """A record of ``system`` whose name the query contains or is part of, as JSON."""
    query = " ".join(name.lower().split())
    if len(query) >= 3:
        for known, fields in RECORDS[system].items():
            if known.lower() in query or query in known.lower():
                return json.dumps({"name": known, **fields})
    return EMPTY


def _system(code: str) -> Callable[[str], str]:
    """The tool of one system: the same look-up and description for every system, bar the name."""

    def tool(name: str) -> str:
        return lookup(code, name)

    tool.__name__ = code
    tool.__qualname__ = code
    tool.__doc__ = f"""Look up a name in the {code.capitalize()} records system.

        Args:
            name: The name to look up.
        """
    return tool


def web_search(query: str) -> str:
    """Search the public web for general knowledge.

    Args:
        query: What to search for.
    """
    return "No results."


SYSTEMS = sorted(RECORDS)
#: Every tool here is a lookup that changes nothing (ToolPolicy.read_only: a learned routine
#: may run it for the model; bench/learning.py load_suite).
READ_ONLY = True
TOOLS = [*(_system(code) for code in SYSTEMS), web_search]
