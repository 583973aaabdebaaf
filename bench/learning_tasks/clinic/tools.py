"""The "clinic" suite: the four kinds of lesson in an outpatient clinic's tools, written on
2026-12-01 to measure the playbook, untuned, on a fifth domain: first run at cefe474, before
any change made from its runs (writing it showed one defect, mended before any run: its empty
page, ``{"matches": [], "count": 0}``, was no empty result to the reflector; bc0c1b0).

It keeps the kinds of ``rail`` and ``depot`` and changes the surfaces both share:

- ``slot``: the obvious tool, ``schedule_api``, refuses every call with a quota error (a 429:
  neither a timeout nor a service that is down); ``rota_board`` has every clinician's next
  free slot, and names its parameter ``clinician`` where ``schedule_api`` says ``doctor``.
  Lesson: an unreliable primary tool and its working alternative.
- ``cover``: ``patient_file`` looks like the place to ask about a patient's insurance, but
  answers an empty page (``{"matches": [], "count": 0}``) for it; ``billing_account`` has the
  insurer and the co-pay. Lesson: a first-tried database that is empty for some kinds of
  question.
- ``fee``: ``visit_fee`` takes the visit's length as an ISO 8601 duration (``PT30M``), which
  its description does not say (its error does), and the task says "30-minute". Lesson: an
  argument format learned from a failed call, one no date or digit rule writes.
- ``lab``: ``lab_result`` needs an order id; ``lab_orders`` lists a patient's orders, several
  of them, and the one for the test asked about must be picked. Lesson: an id to look up
  before the detail call.

A ``web_search`` knows nothing about any of it (``{"hits": []}``). All names and figures are
made up so that no model can answer from memory.
"""

from __future__ import annotations

import json
import re

INSTRUCTIONS = (
    "You are an outpatient clinic's front-desk assistant. Schedules, insurance, fees and lab "
    "results are internal records that change daily, so you do not know them: look them up "
    "with the tools, and if a tool fails or has nothing, try another way. Answer with the "
    "exact value a tool returned."
)
AGENT_NAME = "clinic_desk"
#: kind -> its primary tool, which fails on every call (SC-005 is measured on this kind)
PRIMARY_DOWN = {"slot": "schedule_api"}
#: The fewest iterations a task of each kind allows: the tool calls it needs, then the answer.
FEWEST_ITERATIONS = {"slot": 2, "cover": 2, "fee": 2, "lab": 3}

#: clinician -> next free slot
SLOTS = {
    "dr. okafor": "2026-12-03 09:40", "dr. lindgren": "2026-12-04 14:10",
    "dr. varga": "2026-12-02 11:20", "dr. haddad": "2026-12-07 08:30",
    "dr. moreau": "2026-12-05 16:00", "dr. tanaka": "2026-12-03 13:50",
    "dr. abernethy": "2026-12-09 10:15", "dr. castillo": "2026-12-02 15:45",
    "dr. nyberg": "2026-12-08 12:05",
}
#: patient -> (insurer, co-pay in EUR)
BILLING = {
    "ada marsh": ("Verdant Mutual", 15), "tobias renn": ("Halcyon Health", 25),
    "priya sethi": ("Verdant Mutual", 10), "jonas ekdahl": ("Corvid Assurance", 30),
    "mireille fontaine": ("Halcyon Health", 20), "kwame asante": ("Orrin Care", 12),
    "lucia bertolini": ("Corvid Assurance", 35), "hamish doyle": ("Orrin Care", 18),
    "sana qureshi": ("Verdant Mutual", 22),
}
#: visit type -> fee in EUR per started 15 minutes
FEES = {"consultation": 38.5, "follow-up": 24.0, "physiotherapy": 31.25, "vaccination": 12.0,
        "dermatology": 44.0, "nutrition": 27.5}
#: patient -> [(order id, test, result)]
LABS = {
    "ada marsh": [("LO-5521", "HbA1c", "6.1 %"), ("LO-5522", "lipid panel", "LDL 3.2 mmol/L")],
    "tobias renn": [("LO-6104", "ferritin", "48 ug/L"), ("LO-6105", "TSH", "2.7 mIU/L")],
    "priya sethi": [("LO-7310", "vitamin D", "41 nmol/L"), ("LO-7311", "HbA1c", "5.4 %")],
    "jonas ekdahl": [("LO-4418", "TSH", "1.9 mIU/L"), ("LO-4419", "CRP", "3 mg/L")],
    "mireille fontaine": [("LO-8830", "CRP", "12 mg/L"), ("LO-8831", "ferritin", "95 ug/L")],
    "kwame asante": [("LO-2207", "lipid panel", "LDL 2.6 mmol/L"), ("LO-2208", "TSH",
                                                                     "3.4 mIU/L")],
    "lucia bertolini": [("LO-9142", "vitamin D", "63 nmol/L"), ("LO-9143", "CRP", "1 mg/L")],
    "hamish doyle": [("LO-3355", "ferritin", "22 ug/L"), ("LO-3356", "HbA1c", "7.0 %")],
    "sana qureshi": [("LO-1190", "TSH", "0.8 mIU/L"), ("LO-1191", "vitamin D", "29 nmol/L")],
}
_INSURANCE_TOPICS = ("insur", "cover", "pay", "plan", "polic", "billing", "provider", "company")


def _find(name: str, known: dict[str, object]) -> str | None:
    query = " ".join(name.lower().replace("doctor ", "dr. ").replace("dr ", "dr. ").split())
    for key in known:
        if query and (key in query or query in key or key.split()[-1] in query.split()):
            return key
    return None


def schedule_api(doctor: str) -> str:
    """The clinic's scheduling service: a clinician's next free appointment slot.

    Args:
        doctor: The clinician's name.
    """
    raise PermissionError("quota exceeded for this API key: 429 Too Many Requests")


def rota_board(clinician: str) -> str:
    """The rota board: a clinician's shifts and the next slot open for booking.

    Args:
        clinician: The clinician's name.
    """
    found = _find(clinician, SLOTS)
    if found is None:
        return "[]"
    return json.dumps({"clinician": found.title(), "shift": "day",
                       "next_open_slot": SLOTS[found]})


def patient_file(patient: str, topic: str) -> str:
    """A patient's file: what it says about one topic (allergies, insurance, history...).

    Args:
        patient: The patient's name.
        topic: What to look up in the file.
    """
    found = _find(patient, {**BILLING, **LABS})
    if found is None or any(word in topic.lower() for word in _INSURANCE_TOPICS):
        return json.dumps({"matches": [], "count": 0})
    return json.dumps({"matches": [{"topic": topic, "note": "no entries this year"}],
                       "count": 1})


def billing_account(patient: str) -> str:
    """A patient's billing account.

    Args:
        patient: The patient's name.
    """
    found = _find(patient, BILLING)
    if found is None:
        return json.dumps({"matches": [], "count": 0})
    insurer, copay = BILLING[found]
    return json.dumps({"patient": found.title(), "insurer": insurer, "copay_eur": copay,
                       "balance_eur": 0})


_DURATION = re.compile(r"PT(\d+)M")


def visit_fee(visit_type: str, length: str) -> str:
    """The fee for a visit of one type and length.

    Args:
        visit_type: The kind of visit (consultation, follow-up, ...).
        length: How long the visit lasts.
    """
    kind = next((k for k in FEES if k in visit_type.lower() or visit_type.lower() in k), None)
    if kind is None:
        raise KeyError(f"no visit type {visit_type!r}")
    match = _DURATION.fullmatch(length.strip())
    if match is None:
        raise ValueError(f"invalid length {length!r}: use an ISO 8601 duration like 'PT45M'")
    minutes = int(match.group(1))
    units = -(-minutes // 15)
    return json.dumps({"visit_type": kind, "minutes": minutes,
                       "fee_eur": round(units * FEES[kind], 2)})


def lab_orders(patient: str) -> str:
    """A patient's lab orders.

    Args:
        patient: The patient's name.
    """
    found = _find(patient, LABS)
    if found is None:
        return "[]"
    return json.dumps([{"order_id": oid, "test": test, "status": "final"}
                       for oid, test, _ in LABS[found]])


def lab_result(order_id: str) -> str:
    """The result of a lab order.

    Args:
        order_id: The order.
    """
    for orders in LABS.values():
        for oid, test, value in orders:
            if order_id.strip().upper() == oid:
                return json.dumps({"order_id": oid, "test": test, "result": value})
    raise LookupError(f"unknown order {order_id!r}")


def web_search(query: str) -> str:
    """Search the public web.

    Args:
        query: What to search for.
    """
    return json.dumps({"hits": []})


#: Every tool here is a lookup that changes nothing (ToolPolicy.read_only).
READ_ONLY = True
TOOLS = [schedule_api, rota_board, patient_file, billing_account, visit_fee, lab_orders,
         lab_result, web_search]
