"""The "depot" suite: the four kinds of lesson again, in a wholesaler's tools, written after the
playbook was frozen (at 9336225) to measure it on a domain it was never tuned on.

It keeps the kinds of ``rail`` and changes every surface a rule could have been fitted to:

- ``stock``: the obvious tool, ``inventory_live``, fails at once with a connection error (not a
  timeout); ``warehouse_ledger`` has the same count. Lesson: an unreliable primary tool and
  its working alternative.
- ``supplier``: ``product_catalog`` looks like the place to ask who supplies an item or how
  long it takes to arrive, but answers ``null`` for those fields; ``purchasing_records`` has
  them. Lesson: a first-tried database that is empty for some kinds of question.
- ``freight``: ``freight_quote`` takes the destination as a two-letter country code, which its
  description does not say (its error does), and the task names the country. Lesson: an
  argument format learned from a failed call, one no date or digit rule can rewrite.
- ``invoice``: ``open_invoice`` needs a customer number, which ``customer_lookup`` gives inside
  a JSON record for a company's name. Lesson: an id to look up before the detail call.

A ``web_search`` knows nothing about any of it ("No results found."). All names and figures are
made up so that no model can answer from memory.
"""

from __future__ import annotations

import json

INSTRUCTIONS = (
    "You are a wholesaler's back-office assistant. Stock, suppliers, freight rates and "
    "invoices are internal records that change daily, so you do not know them: look them up "
    "with the tools, and if a tool fails or has nothing, try another way. Answer with the "
    "exact value a tool returned."
)
AGENT_NAME = "depot_assistant"
#: kind -> its primary tool, which fails on every call (SC-005 is measured on this kind)
PRIMARY_DOWN = {"stock": "inventory_live"}
#: The fewest iterations a task of each kind allows: the tool calls it needs, then the answer.
FEWEST_ITERATIONS = {"stock": 2, "supplier": 2, "freight": 2, "invoice": 3}

#: item -> units on hand
STOCK = {
    "halden torque wrench": 318, "pelkin cable reel": 42, "ostrova pallet jack": 7,
    "marrow drill press": 19, "quillan safety goggles": 1260, "brenner hose clamp": 5400,
    "tavish shelf bracket": 233, "corwen ladder": 61, "ulster grit sander": 88,
}
#: item -> (supplier, lead time in days)
PURCHASING = {
    "vessel caulk gun": ("Arnfeld Tools", 12), "hadley work light": ("Lumen & Rook", 9),
    "prisk floor scraper": ("Dovecote Supply", 21), "ember heat gun": ("Karsk Industrial", 16),
    "tollin pipe cutter": ("Arnfeld Tools", 5), "garrow tile saw": ("Weylan Bros", 34),
    "fenby staple gun": ("Lumen & Rook", 7), "oakhurst mitre box": ("Dovecote Supply", 27),
    "lindqvist chisel set": ("Karsk Industrial", 11),
}
#: two-letter country code -> (country, rate in EUR per kg)
FREIGHT = {
    "NO": ("Norway", 3.84), "PT": ("Portugal", 2.17), "FI": ("Finland", 3.52),
    "IE": ("Ireland", 2.66), "GR": ("Greece", 2.95), "CZ": ("Czechia", 1.73),
    "DK": ("Denmark", 2.41), "HU": ("Hungary", 1.98), "SE": ("Sweden", 3.17),
}
#: company -> (customer number, amount due in EUR)
CUSTOMERS = {
    "Brightwell Foods": ("C-20931", 4821.5), "Moravec Builders": ("C-31877", 1290.75),
    "Saltmarsh Marine": ("C-44102", 760.2), "Quenby Hotels": ("C-18264", 9315.0),
    "Ardith Farms": ("C-52790", 2208.4), "Voss & Kell": ("C-60315", 388.95),
    "Harlow Printworks": ("C-27458", 5102.6), "Ingleby Dairy": ("C-39961", 1744.3),
    "Redfern Glass": ("C-71136", 6630.0),
}
_SUPPLY_FIELDS = ("suppl", "vendor", "lead", "deliver", "arriv", "source", "purchas", "order")


def _item(name: str, known: dict[str, object]) -> str | None:
    query = " ".join(name.lower().replace("the ", " ").split())
    for item in known:
        if query and (item in query or query in item):
            return item
    return None


def inventory_live(item: str) -> str:
    """Live stock level of an item across all warehouses.

    Args:
        item: The item's name.
    """
    raise ConnectionError("inventory service unreachable: 503 Service Unavailable")


def warehouse_ledger(item: str) -> str:
    """The warehouse ledger's record of an item: units on hand, bin and last count date.

    Args:
        item: The item's name.
    """
    found = _item(item, STOCK)
    if found is None:
        return "No records found."
    return json.dumps({"item": found, "units_on_hand": STOCK[found], "bin": "B-14",
                       "last_counted": "2026-11-02"})


def product_catalog(item: str, field: str) -> str:
    """The product catalog: one field of an item (description, weight, supplier, price...).

    Args:
        item: The item's name.
        field: Which field to read.
    """
    found = _item(item, {**STOCK, **PURCHASING})
    if found is None or any(word in field.lower() for word in _SUPPLY_FIELDS):
        return "null"
    return json.dumps({"item": found, field: "see the item's data sheet"})


def purchasing_records(item: str) -> str:
    """Purchasing records of an item.

    Args:
        item: The item's name.
    """
    found = _item(item, PURCHASING)
    if found is None:
        return "null"
    supplier, days = PURCHASING[found]
    return json.dumps({"item": found, "supplier": supplier, "lead_time_days": days})


def freight_quote(destination: str, weight_kg: float) -> str:
    """Freight rate to a destination for a shipment's weight.

    Args:
        destination: Where the shipment goes.
        weight_kg: The shipment's weight in kilograms.
    """
    code = destination.strip()
    if code.upper() not in FREIGHT or len(code) != 2:
        raise ValueError(f"unknown destination {destination!r}: give the two-letter country "
                         "code, e.g. 'FR'")
    country, rate = FREIGHT[code.upper()]
    return json.dumps({"destination": country, "rate_eur_per_kg": rate,
                       "total_eur": round(rate * float(weight_kg), 2)})


def customer_lookup(company: str) -> str:
    """Find a customer's record by company name.

    Args:
        company: The company's name.
    """
    query = company.lower().strip()
    for name, (number, _) in CUSTOMERS.items():
        if query and (name.lower() in query or query in name.lower()):
            return json.dumps({"company": name, "customer_no": number, "segment": "trade"})
    return "No records found."


def open_invoice(customer_no: str) -> str:
    """The open invoice of a customer: amount due and due date.

    Args:
        customer_no: The customer.
    """
    for number, due in CUSTOMERS.values():
        if customer_no.strip().upper() == number:
            return json.dumps({"customer_no": number, "amount_due_eur": due,
                               "due_date": "2026-12-15"})
    raise LookupError(f"no customer {customer_no!r}")


def web_search(query: str) -> str:
    """Search the public web for general knowledge.

    Args:
        query: What to search for.
    """
    return "No results found."


#: Every tool here is a lookup that changes nothing (ToolPolicy.read_only).
READ_ONLY = True
TOOLS = [inventory_live, warehouse_ledger, product_catalog, purchasing_records, freight_quote,
         customer_lookup, open_invoice, web_search]
