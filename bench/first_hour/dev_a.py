"""First-hour agents, development set, part 1: written from README.md and docs/local-model.md
the way a newcomer writes them (plain functions with a docstring, a dict for data, an
instruction line), not tuned to any model. Expected answers are computed by calling the same
tools in the right chain, so they are exactly what the tools give.
"""

from __future__ import annotations

from pydantic import BaseModel

from .suite import FirstHourAgent, Question

# --- 1. shop inventory -----------------------------------------------------------------

_PRODUCTS = {"blue kettle": "SKU-1001", "desk lamp": "SKU-2044", "yoga mat": "SKU-3310"}
_STOCK = {"SKU-1001": {"units": 37, "warehouse": "Leeds"},
          "SKU-2044": {"units": 112, "warehouse": "Bristol"},
          "SKU-3310": {"units": 8, "warehouse": "Leeds"}}
_PRICES = {"SKU-1001": 24.99, "SKU-2044": 18.5, "SKU-3310": 31.0}


def find_product(name: str) -> str:
    """Find a product by its name and return its SKU."""
    sku = _PRODUCTS.get(name.lower())
    if sku is None:
        raise LookupError(f"no product called {name}")
    return sku


def stock_level(sku: str) -> dict[str, object]:
    """How many units of a product (by SKU) are in stock, and in which warehouse."""
    return _STOCK[sku]


def stock_value(sku: str) -> float:
    """Value in EUR of all units in stock of a product (by SKU)."""
    return round(_STOCK[sku]["units"] * _PRICES[sku], 2)  # type: ignore[operator]


SHOP = FirstHourAgent(
    "shop", "shop inventory",
    "You help the shop staff with the inventory. Use the tools to answer.",
    [find_product, stock_level, stock_value],
    [Question("units", "How many Desk Lamps do we have in stock?", 112,
              ("find_product", "stock_level")),
     Question("value", "What is the stock of the blue kettle worth in EUR?",
              stock_value("SKU-1001"), ("find_product", "stock_value")),
     Question("warehouse", "In which warehouse is the yoga mat stocked?", "Leeds",
              ("find_product", "stock_level"))])


# --- 2. weather stations ---------------------------------------------------------------

_STATIONS = {"bergen": "WS-17", "tromso": "WS-42", "oslo": "WS-03"}
_READINGS = {"WS-17": {"temp_c": 7.4, "wind_kmh": 31.0, "rain_mm": 12.2},
             "WS-42": {"temp_c": -3.5, "wind_kmh": 18.0, "rain_mm": 0.4},
             "WS-03": {"temp_c": 2.1, "wind_kmh": 9.5, "rain_mm": 3.0}}


def find_station(city: str) -> str:
    """Return the weather station id for a city."""
    return _STATIONS[city.lower().replace("ø", "o")]


def latest_reading(station_id: str) -> dict[str, float]:
    """The latest reading of a weather station: temperature in C, wind in km/h, rain in mm."""
    return _READINGS[station_id]


def celsius_to_fahrenheit(celsius: float) -> float:
    """Convert a temperature from Celsius to Fahrenheit."""
    return round(celsius * 9 / 5 + 32, 2)


def kmh_to_knots(kmh: float) -> float:
    """Convert a speed from km/h to knots."""
    return round(kmh / 1.852, 2)


WEATHER = FirstHourAgent(
    "weather", "weather stations",
    "You report the weather from our stations. Always use the tools.",
    [find_station, latest_reading, celsius_to_fahrenheit, kmh_to_knots],
    [Question("bergen_f", "What is the temperature in Bergen in Fahrenheit?",
              celsius_to_fahrenheit(7.4),
              ("find_station", "latest_reading", "celsius_to_fahrenheit")),
     Question("tromso_wind", "How strong is the wind in Tromso, in knots?", kmh_to_knots(18.0),
              ("find_station", "latest_reading", "kmh_to_knots")),
     Question("oslo_rain", "How much rain did the Oslo station measure?", 3.0,
              ("find_station", "latest_reading"))])


# --- 3. library loans ------------------------------------------------------------------

_MEMBERS = {"maria lopez": 5521, "tom reed": 5603, "aiko tanaka": 5710}
_LOANS = {5521: [{"title": "Dune", "due": "2026-12-09"},
                 {"title": "Emma", "due": "2026-12-02"},
                 {"title": "Ubik", "due": "2026-12-20"}],
          5603: [{"title": "Beloved", "due": "2026-11-28"}],
          5710: [{"title": "Kokoro", "due": "2026-12-15"},
                 {"title": "Solaris", "due": "2026-12-01"}]}
_FINE_PER_DAY = 0.25


def find_member(name: str) -> int:
    """Look up a library member's number by their full name."""
    return _MEMBERS[name.lower()]


def loans(member_number: int) -> list[dict[str, str]]:
    """The books a member has on loan, with due dates."""
    return _LOANS[member_number]


def late_fee(member_number: int, today: str = "2026-12-05") -> float:
    """The late fee in EUR a member owes today for overdue books."""
    from datetime import date

    day = date.fromisoformat(today)
    late = sum(max(0, (day - date.fromisoformat(loan["due"])).days)
               for loan in _LOANS[member_number])
    return round(late * _FINE_PER_DAY, 2)


LIBRARY = FirstHourAgent(
    "library", "library loans",
    "You are the library assistant. Look members up and answer about their loans.",
    [find_member, loans, late_fee],
    [Question("count", "How many books does Maria Lopez have on loan?", 3,
              ("find_member", "loans")),
     Question("fee", "How much does Tom Reed owe in late fees?", late_fee(5603),
              ("find_member", "late_fee")),
     Question("first_due", "Which of Aiko Tanaka's books is due first?", "Solaris",
              ("find_member", "loans"))])


# --- 4. flights (structured output) ----------------------------------------------------

_AIRPORTS = {"lisbon": "LIS", "madrid": "MAD", "porto": "OPO", "paris": "CDG"}
_FLIGHTS = {("LIS", "MAD"): [{"flight": "TP1026", "minutes": 75},
                             {"flight": "IB3101", "minutes": 80}],
            ("OPO", "CDG"): [{"flight": "TP438", "minutes": 130}],
            ("LIS", "CDG"): [{"flight": "AF1025", "minutes": 145},
                             {"flight": "TP432", "minutes": 150}]}


def airport_code(city: str) -> str:
    """The IATA airport code of a city."""
    return _AIRPORTS[city.lower()]


def flights_between(origin: str, destination: str) -> list[dict[str, object]]:
    """Direct flights between two airports (IATA codes), with their duration in minutes."""
    return _FLIGHTS.get((origin.upper(), destination.upper()), [])


def minutes_to_hours(minutes: float) -> float:
    """Convert minutes to hours."""
    return round(minutes / 60, 2)


class FlightAnswer(BaseModel):
    flight: str
    hours: float


FLIGHTS = FirstHourAgent(
    "flights", "flights",
    "You answer questions about direct flights. Use the tools; durations in hours.",
    [airport_code, flights_between, minutes_to_hours],
    [Question("porto_paris", "How long is the direct flight from Porto to Paris?",
              minutes_to_hours(130), ("airport_code", "airport_code", "flights_between",
                                      "minutes_to_hours"), field="hours"),
     Question("lis_mad_flight", "Which flight from Lisbon to Madrid is the shortest?",
              "TP1026", ("airport_code", "airport_code", "flights_between"), field="flight"),
     Question("lis_cdg_hours", "How many hours does the shortest flight from Lisbon to Paris "
              "take?", minutes_to_hours(145),
              ("airport_code", "airport_code", "flights_between", "minutes_to_hours"),
              field="hours")],
    output=FlightAnswer)


# --- 5. recipes and unit conversion (structured output) --------------------------------

_RECIPES = {"pancakes": "R7", "banana bread": "R12", "tomato soup": "R31"}
_INGREDIENTS = {"R7": {"flour": (1.5, "cup"), "milk": (1.25, "cup"), "sugar": (2, "tbsp")},
                "R12": {"flour": (2, "cup"), "butter": (0.5, "cup"), "bananas": (3, "piece")},
                "R31": {"tomatoes": (800, "g"), "stock": (2, "cup"), "olive oil": (3, "tbsp")}}
_GRAMS = {("flour", "cup"): 125.0, ("milk", "cup"): 240.0, ("sugar", "tbsp"): 12.5,
          ("butter", "cup"): 227.0, ("stock", "cup"): 240.0, ("olive oil", "tbsp"): 13.5}


def find_recipe(name: str) -> str:
    """Find a recipe id by the recipe's name."""
    return _RECIPES[name.lower()]


def ingredients(recipe_id: str) -> dict[str, dict[str, object]]:
    """The ingredients of a recipe with amount and unit."""
    return {k: {"amount": a, "unit": u} for k, (a, u) in _INGREDIENTS[recipe_id].items()}


def to_grams(ingredient: str, amount: float, unit: str) -> float:
    """Convert an amount of an ingredient in cups or tbsp to grams."""
    per = _GRAMS.get((ingredient.lower(), unit.lower().rstrip("s")))
    if per is None:
        raise ValueError(f"don't know how many grams a {unit} of {ingredient} is")
    return round(amount * per, 2)


class Amount(BaseModel):
    ingredient: str
    grams: float


RECIPES = FirstHourAgent(
    "recipes", "recipes and unit conversion",
    "You help cooks. Find the recipe, read its ingredients and convert amounts to grams.",
    [find_recipe, ingredients, to_grams],
    [Question("pancake_flour", "How many grams of flour go into the pancakes?",
              to_grams("flour", 1.5, "cup"), ("find_recipe", "ingredients", "to_grams"),
              field="grams"),
     Question("bread_butter", "How much butter in grams does the banana bread need?",
              to_grams("butter", 0.5, "cup"), ("find_recipe", "ingredients", "to_grams"),
              field="grams"),
     Question("soup_oil", "How many grams of olive oil are in the tomato soup?",
              to_grams("olive oil", 3, "tbsp"), ("find_recipe", "ingredients", "to_grams"),
              field="grams")],
    output=Amount)


# --- 6. payroll ------------------------------------------------------------------------

_EMPLOYEES = {"ana silva": "E-204", "jonas berg": "E-311", "priya nair": "E-118"}
_PAYSLIPS = {("E-204", "2026-10"): 3120.0, ("E-204", "2026-11"): 3245.5,
             ("E-311", "2026-10"): 2780.0, ("E-311", "2026-11"): 2780.0,
             ("E-118", "2026-10"): 4410.25, ("E-118", "2026-11"): 4502.75}


def find_employee(name: str) -> str:
    """Get an employee's id from their name."""
    return _EMPLOYEES[name.lower()]


def gross_pay(employee_id: str, month: str) -> float:
    """Gross pay in EUR of an employee for a month written YYYY-MM."""
    return _PAYSLIPS[(employee_id, month)]


def add(numbers: list[float]) -> float:
    """Add numbers up."""
    return round(sum(numbers), 2)


PAYROLL = FirstHourAgent(
    "payroll", "payroll",
    "You answer payroll questions with the tools. Months are written YYYY-MM.",
    [find_employee, gross_pay, add],
    [Question("ana_nov", "What was Ana Silva's gross pay in November 2026?", 3245.5,
              ("find_employee", "gross_pay")),
     Question("priya_total", "How much gross pay did Priya Nair get in October and November "
              "2026 together?", add([4410.25, 4502.75]),
              ("find_employee", "gross_pay", "gross_pay", "add")),
     Question("jonas_oct", "What was the gross pay of Jonas Berg for October 2026?", 2780.0,
              ("find_employee", "gross_pay"))])


AGENTS = (SHOP, WEATHER, LIBRARY, FLIGHTS, RECIPES, PAYROLL)
