"""First-hour agents, development set, part 2 (see dev_a.py for how they were written)."""

from __future__ import annotations

from pydantic import BaseModel

from .suite import FirstHourAgent, Question

# --- 7. fleet maintenance (structured output) ------------------------------------------

_VEHICLES = {"KX-21-LM": "V-88", "BD-07-QT": "V-91", "ZR-55-AC": "V-97"}
_SERVICES = {"V-88": [{"date": "2026-03-02", "km": 48210, "cost_eur": 310.0},
                      {"date": "2026-09-14", "km": 61975, "cost_eur": 455.8}],
             "V-91": [{"date": "2026-05-20", "km": 120400, "cost_eur": 989.9}],
             "V-97": [{"date": "2026-01-11", "km": 15020, "cost_eur": 120.0},
                      {"date": "2026-06-30", "km": 27840, "cost_eur": 210.5},
                      {"date": "2026-11-03", "km": 39905, "cost_eur": 198.25}]}


def vehicle_id(plate: str) -> str:
    """Find the vehicle id for a licence plate."""
    return _VEHICLES[plate.upper().replace(" ", "-")]


def service_history(vehicle: str) -> list[dict[str, object]]:
    """All services of a vehicle (by vehicle id): date, odometer in km, cost in EUR."""
    return _SERVICES[vehicle]


def km_to_miles(km: float) -> float:
    """Kilometres to miles."""
    return round(km / 1.609344, 1)


class FleetAnswer(BaseModel):
    vehicle_id: str
    value: float


FLEET = FirstHourAgent(
    "fleet", "fleet maintenance",
    "You keep track of our vans' maintenance. Use the tools to look things up.",
    [vehicle_id, service_history, km_to_miles],
    [Question("last_km_miles", "What was the odometer of van KX-21-LM at its last service, "
              "in miles?", km_to_miles(61975),
              ("vehicle_id", "service_history", "km_to_miles"), field="value"),
     Question("cost_bd", "How much did the service of van BD-07-QT cost in EUR?", 989.9,
              ("vehicle_id", "service_history"), field="value"),
     Question("services_zr", "How many times was van ZR-55-AC serviced?", 3,
              ("vehicle_id", "service_history"), field="value")],
    output=FleetAnswer)


# --- 8. hotel bookings -----------------------------------------------------------------

_GUESTS = {"helen park": "G-3301", "omar haddad": "G-3318", "lea roux": "G-3342"}
_BOOKINGS = {"G-3301": {"room": 214, "nights": 3, "rate_usd": 149.0},
             "G-3318": {"room": 508, "nights": 5, "rate_usd": 212.0},
             "G-3342": {"room": 117, "nights": 2, "rate_usd": 98.5}}
_USD_EUR = 0.92


def find_guest(name: str) -> str:
    """Return the guest id for a guest's name."""
    return _GUESTS[name.lower()]


def booking(guest_id: str) -> dict[str, object]:
    """A guest's booking: room number, nights, nightly rate in USD and total in USD."""
    b = _BOOKINGS[guest_id]
    return {**b, "total_usd": round(b["nights"] * b["rate_usd"], 2)}  # type: ignore[operator]


def usd_to_eur(amount: float) -> float:
    """Convert US dollars to euros at today's rate."""
    return round(amount * _USD_EUR, 2)


HOTEL = FirstHourAgent(
    "hotel", "hotel bookings",
    "You are the front desk assistant. Answer from the booking system using the tools.",
    [find_guest, booking, usd_to_eur],
    [Question("omar_eur", "What does Omar Haddad's stay cost in euros?", usd_to_eur(5 * 212.0),
              ("find_guest", "booking", "usd_to_eur")),
     Question("helen_room", "Which room is Helen Park in?", 214, ("find_guest", "booking")),
     Question("lea_total", "What is the total for Lea Roux's stay in USD?", 197.0,
              ("find_guest", "booking"))])


# --- 9. school grades ------------------------------------------------------------------

_STUDENTS = {"lina meyer": "ST-9", "paul okafor": "ST-14", "sara costa": "ST-23"}
_GRADES = {("ST-9", "math"): [14, 17, 15, 18], ("ST-9", "history"): [12, 13],
           ("ST-14", "math"): [9, 11, 12], ("ST-14", "history"): [16, 15, 17],
           ("ST-23", "math"): [19, 18], ("ST-23", "history"): [11, 14, 10]}


def student_id(name: str) -> str:
    """Look a student up by name, returns the student id."""
    return _STUDENTS[name.lower()]


def grades(student: str, subject: str) -> list[int]:
    """A student's grades (out of 20) in a subject: math or history."""
    return _GRADES[(student, subject.lower())]


def average(values: list[float]) -> float:
    """The average of a list of numbers."""
    return round(sum(values) / len(values), 2)


SCHOOL = FirstHourAgent(
    "school", "school grades",
    "You answer teachers' questions about grades. Use the tools.",
    [student_id, grades, average],
    [Question("lina_math", "What is Lina Meyer's average grade in math?",
              average([14, 17, 15, 18]), ("student_id", "grades", "average")),
     Question("paul_history", "What is Paul Okafor's average in history?",
              average([16, 15, 17]), ("student_id", "grades", "average")),
     Question("sara_best", "What is Sara Costa's best math grade?", 19,
              ("student_id", "grades"))])


# --- 10. fitness club (one-string-field output) ----------------------------------------

_CLUB = {"nina holm": 301, "raj patel": 302, "eva lind": 303}
_RUNS = {301: [5.2, 10.0, 7.5], 302: [21.1, 3.0], 303: [12.4, 8.8, 6.1, 4.0]}


def member_number(name: str) -> int:
    """The club membership number of a person."""
    return _CLUB[name.lower()]


def runs_this_week(member: int) -> list[float]:
    """Distances in km of a member's runs this week."""
    return _RUNS[member]


def total_km(distances: list[float]) -> float:
    """Total distance of a list of runs in km."""
    return round(sum(distances), 2)


def km_to_mi(km: float) -> float:
    """Convert kilometres to miles."""
    return round(km * 0.621371, 2)


class Reply(BaseModel):
    answer: str


FITNESS = FirstHourAgent(
    "fitness", "fitness club",
    "You are the running club's coach bot. Use the tools for every figure.",
    [member_number, runs_this_week, total_km, km_to_mi],
    [Question("nina_total", "How many km did Nina Holm run this week?",
              total_km([5.2, 10.0, 7.5]), ("member_number", "runs_this_week", "total_km")),
     Question("raj_miles", "How far did Raj Patel run this week in total, in miles?",
              km_to_mi(total_km([21.1, 3.0])),
              ("member_number", "runs_this_week", "total_km", "km_to_mi")),
     Question("eva_longest", "What was Eva Lind's longest run this week in km?", 12.4,
              ("member_number", "runs_this_week"))],
    output=Reply)


# --- 11. energy meters -----------------------------------------------------------------

_METERS = {"12 harbour street": "M-5501", "4 mill lane": "M-5502", "88 king road": "M-5519"}
_USAGE = {"M-5501": {"2026-10": 312.4, "2026-11": 355.0},
          "M-5502": {"2026-10": 198.0, "2026-11": 240.6},
          "M-5519": {"2026-10": 510.2, "2026-11": 498.8}}


def find_meter(address: str) -> str:
    """The electricity meter id at an address."""
    return _METERS[address.lower()]


def monthly_usage(meter_id: str, month: str) -> float:
    """kWh used by a meter in a month (YYYY-MM)."""
    return _USAGE[meter_id][month]


def energy_cost(kwh: float) -> float:
    """What an amount of energy in kWh costs in EUR at the current tariff."""
    return round(kwh * 0.287, 2)


ENERGY = FirstHourAgent(
    "energy", "energy meters",
    "You help customers understand their electricity use. Use the tools.",
    [find_meter, monthly_usage, energy_cost],
    [Question("harbour_nov", "How many kWh were used at 12 Harbour Street in November 2026?",
              355.0, ("find_meter", "monthly_usage")),
     Question("mill_cost", "What did the electricity at 4 Mill Lane cost in October 2026?",
              energy_cost(198.0), ("find_meter", "monthly_usage", "energy_cost")),
     Question("king_cost", "How much did 88 King Road pay for electricity in November 2026?",
              energy_cost(498.8), ("find_meter", "monthly_usage", "energy_cost"))])


# --- 12. bank accounts and currencies (structured output) ------------------------------

_ACCOUNTS = {"clara vogel": "DE44-0001", "marc dubois": "FR76-0002", "yuki sato": "JP12-0003"}
_BALANCES = {"DE44-0001": (2450.75, "EUR"), "FR76-0002": (980.0, "EUR"),
             "JP12-0003": (365000.0, "JPY")}
_RATES = {("EUR", "USD"): 1.08, ("JPY", "EUR"): 0.0061, ("EUR", "GBP"): 0.85,
          ("JPY", "USD"): 0.0066}


def find_account(owner: str) -> str:
    """Find the account number of an account owner."""
    return _ACCOUNTS[owner.lower()]


def balance(account: str) -> dict[str, object]:
    """The balance of an account and its currency."""
    amount, currency = _BALANCES[account]
    return {"amount": amount, "currency": currency}


def convert_currency(amount: float, from_currency: str, to_currency: str) -> float:
    """Convert money between currencies (EUR, USD, GBP, JPY)."""
    rate = _RATES.get((from_currency.upper(), to_currency.upper()))
    if rate is None:
        raise ValueError(f"no rate from {from_currency} to {to_currency}")
    return round(amount * rate, 2)


class Money(BaseModel):
    amount: float
    currency: str


BANK = FirstHourAgent(
    "bank", "bank accounts",
    "You are a banking assistant. Look accounts up and convert currencies with the tools.",
    [find_account, balance, convert_currency],
    [Question("clara_usd", "What is Clara Vogel's balance in US dollars?",
              convert_currency(2450.75, "EUR", "USD"),
              ("find_account", "balance", "convert_currency"), field="amount"),
     Question("yuki_eur", "How much is Yuki Sato's balance in euros?",
              convert_currency(365000.0, "JPY", "EUR"),
              ("find_account", "balance", "convert_currency"), field="amount"),
     Question("marc_balance", "What is the balance of Marc Dubois's account?", 980.0,
              ("find_account", "balance"), field="amount")],
    output=Money)


AGENTS = (FLEET, HOTEL, SCHOOL, FITNESS, ENERGY, BANK)
