"""The "helpdesk" suite: the four kinds of lesson in an IT helpdesk's tools, written on
2026-12-01 (after ``applicability.picked_words``, before any run on it) to measure the
playbook on a sixth domain it was not tuned on.

It keeps the kinds of ``rail``, ``depot`` and ``clinic`` and changes the surfaces they share:

- ``status``: the obvious tool, ``monitor_api``, fails every call with an expired TLS
  certificate (neither a timeout, a quota, a lost connection nor a service that says it is
  down); ``status_page`` has every
  system's state, 30-day uptime and open incidents, and names its parameter ``system`` where
  ``monitor_api`` says ``service``. Lesson: an unreliable primary tool and its alternative.
- ``owner``: ``asset_register`` looks like the place to ask who holds an asset, but answers
  an empty envelope (``{"status": "ok", "data": {"items": []}}``) for it; ``assignment_log``
  has the holder and their department. Lesson: a first-tried database that is empty for some
  kinds of question.
- ``sla``: ``sla_target`` takes the priority as a P-code (``P2``), which its description does
  not say (its error does, with the scale), and the task says "high-priority". Lesson: an
  argument format learned from a failed call.
- ``device``: ``device_details`` needs a device id; ``user_devices`` lists an employee's
  devices, several of them, and the one of the type asked about must be picked. Lesson: an id
  to look up before the detail call.

A ``kb_search`` over the knowledge base's articles finds nothing for any of it
(``{"articles": [], "total": 0}``). All names and figures are made up so that no model can
answer from memory.
"""

from __future__ import annotations

import json

INSTRUCTIONS = (
    "You are an IT helpdesk assistant. Service status, assets, response targets and devices "
    "are internal records that change daily, so you do not know them: look them up with the "
    "tools, and if a tool fails or has nothing, try another way. Answer with the exact value "
    "a tool returned."
)
AGENT_NAME = "it_helpdesk"
#: kind -> its primary tool, which fails on every call (SC-005 is measured on this kind)
PRIMARY_DOWN = {"status": "monitor_api"}
#: The fewest iterations a task of each kind allows: the tool calls it needs, then the answer.
FEWEST_ITERATIONS = {"status": 2, "owner": 2, "sla": 2, "device": 3}

#: system -> (state, 30-day uptime in %, open incidents)
SYSTEMS = {
    "vpn gateway": ("degraded", 99.2, 2), "email": ("operational", 99.97, 0),
    "wiki": ("maintenance", 97.5, 1), "payroll portal": ("operational", 99.91, 0),
    "print server": ("degraded", 98.4, 3), "git server": ("operational", 99.88, 1),
    "file share": ("maintenance", 96.3, 4), "video conferencing": ("degraded", 98.9, 5),
    "crm": ("operational", 99.6, 0),
}
#: asset tag -> (holder, department, model, location)
ASSETS = {
    "AT-40211": ("Maria Oyelaran", "Finance", "Kestrel 14", "Floor 3"),
    "AT-40388": ("Rafael Duarte", "Legal", "Kestrel 16", "Floor 5"),
    "AT-41002": ("Ines Kowalczyk", "Marketing", "Heron 13", "Floor 2"),
    "AT-41157": ("Oskar Lund", "Engineering", "Kestrel 14", "Floor 4"),
    "AT-41420": ("Yuki Hamada", "Sales", "Heron 15", "Floor 1"),
    "AT-41693": ("Dmitri Volkov", "Procurement", "Kestrel 16", "Floor 6"),
    "AT-42015": ("Aisha Bello", "Research", "Heron 13", "Floor 7"),
    "AT-42240": ("Tomas Halvorsen", "Facilities", "Kestrel 14", "Floor 1"),
    "AT-42518": ("Leila Farouk", "Compliance", "Heron 15", "Floor 5"),
}
_HOLDER_FIELDS = ("assign", "owner", "holder", "user", "department", "who", "person",
                  "employee", "team", "custod")
#: team -> response target in minutes for P1 .. P4
SLA = {
    "network": (15, 60, 240, 960), "desktop": (30, 120, 480, 1440),
    "security": (10, 45, 180, 720), "database": (20, 90, 360, 1200),
    "identity": (25, 75, 300, 1080), "telephony": (35, 150, 600, 1920),
}
PRIORITIES = {"critical": "P1", "high": "P2", "medium": "P3", "low": "P4"}
#: employee -> [(device id, type, model, OS version)]
DEVICES = {
    "maria oyelaran": [("DV-7031", "laptop", "Kestrel 14", "14.2"),
                       ("DV-7032", "phone", "Lark 9", "17.1")],
    "rafael duarte": [("DV-7140", "tablet", "Wren Tab 11", "16.4"),
                      ("DV-7141", "laptop", "Kestrel 16", "13.6")],
    "ines kowalczyk": [("DV-7255", "phone", "Lark 8", "16.7"),
                       ("DV-7256", "laptop", "Heron 13", "14.0")],
    "oskar lund": [("DV-7310", "laptop", "Kestrel 14", "13.9"),
                   ("DV-7311", "tablet", "Wren Tab 10", "15.8")],
    "yuki hamada": [("DV-7422", "phone", "Lark 9", "17.3"),
                    ("DV-7423", "tablet", "Wren Tab 11", "16.1")],
    "dmitri volkov": [("DV-7508", "laptop", "Heron 15", "14.1"),
                      ("DV-7509", "phone", "Lark 7", "15.2")],
    "aisha bello": [("DV-7611", "tablet", "Wren Tab 12", "16.9"),
                    ("DV-7612", "phone", "Lark 8", "16.5")],
    "tomas halvorsen": [("DV-7720", "laptop", "Kestrel 16", "13.4"),
                        ("DV-7721", "phone", "Lark 9", "17.0")],
    "leila farouk": [("DV-7833", "phone", "Lark 7", "15.9"),
                     ("DV-7834", "laptop", "Heron 13", "14.3")],
}


def _find(name: str, known: dict[str, object]) -> str | None:
    query = " ".join(name.lower().replace("the ", "").replace(" service", "").split())
    for key in known:
        if query and (key in query or query in key):
            return key
    return None


def monitor_api(service: str) -> str:
    """The monitoring API: a service's live state, uptime and open incidents.

    Args:
        service: The service's name.
    """
    raise RuntimeError("TLS handshake failed: certificate verify failed: certificate has "
                       "expired (monitor.internal:8443)")


def status_page(system: str) -> str:
    """The status page: every internal system's state, uptime and incidents.

    Args:
        system: The system's name.
    """
    found = _find(system, SYSTEMS)
    if found is None:
        return json.dumps({"status": "ok", "data": {"items": []}})
    state, uptime, incidents = SYSTEMS[found]
    return json.dumps({"system": found, "state": state, "uptime_30d_pct": uptime,
                       "open_incidents": incidents})


def asset_register(asset_tag: str, field: str) -> str:
    """The asset register: what it records about one field of an asset (model, location,
    purchase date, holder...).

    Args:
        asset_tag: The asset's tag, like AT-40000.
        field: What to look up.
    """
    record = ASSETS.get(asset_tag.strip().upper())
    if record is None or any(word in field.lower() for word in _HOLDER_FIELDS):
        return json.dumps({"status": "ok", "data": {"items": []}})
    _, _, model, location = record
    return json.dumps({"status": "ok", "data": {"items": [
        {"asset_tag": asset_tag.strip().upper(), "model": model, "location": location}]}})


def assignment_log(asset_tag: str) -> str:
    """The assignment log of an asset.

    Args:
        asset_tag: The asset's tag.
    """
    record = ASSETS.get(asset_tag.strip().upper())
    if record is None:
        return json.dumps({"status": "ok", "data": {"items": []}})
    holder, department, _, _ = record
    return json.dumps({"asset_tag": asset_tag.strip().upper(), "assigned_to": holder,
                       "department": department, "since": "2025-09-01"})


def sla_target(priority: str, team: str) -> str:
    """The response-time target for a ticket of one priority handled by one team.

    Args:
        priority: The ticket's priority.
        team: The team handling it (network, desktop, security, ...).
    """
    name = next((t for t in SLA if t in team.lower()), None)
    if name is None:
        raise KeyError(f"no team {team!r}")
    code = priority.strip().upper()
    if code not in {"P1", "P2", "P3", "P4"}:
        raise ValueError(f"unknown priority {priority!r}: give a P-code, P1 (critical), "
                         "P2 (high), P3 (medium) or P4 (low)")
    return json.dumps({"team": name, "priority": code,
                       "response_minutes": SLA[name][int(code[1]) - 1]})


def user_devices(employee: str) -> str:
    """The devices issued to an employee.

    Args:
        employee: The employee's name.
    """
    found = _find(employee, DEVICES)
    if found is None:
        return "[]"
    return json.dumps([{"device_id": did, "type": kind, "status": "active"}
                       for did, kind, _, _ in DEVICES[found]])


def device_details(device_id: str) -> str:
    """The details of a device: model, operating system version, warranty.

    Args:
        device_id: The device.
    """
    for devices in DEVICES.values():
        for did, kind, model, os_version in devices:
            if device_id.strip().upper() == did:
                return json.dumps({"device_id": did, "type": kind, "model": model,
                                   "os_version": os_version, "warranty_until": "2027-06-30"})
    raise LookupError(f"unknown device {device_id!r}")


def kb_search(query: str) -> str:
    """Search the helpdesk knowledge base's articles.

    Args:
        query: What to search for.
    """
    return json.dumps({"articles": [], "total": 0})


#: Every tool here is a lookup that changes nothing (ToolPolicy.read_only).
READ_ONLY = True
TOOLS = [monitor_api, status_page, asset_register, assignment_log, sla_target, user_devices,
         device_details, kb_search]
