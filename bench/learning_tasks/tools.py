"""The tools and data behind the learning benchmark's tasks.

Four kinds of question, each answered by chaining two specific tools, among seven tools in all:

- stock price of a company:          find_ticker(company) -> get_quote(ticker)
- temperature where an employee works: staff_directory(name) -> weather(city)
- value of a country's currency:      country_info(country) -> exchange_rate(currency)
- where an order's parcel is:          order_lookup(order_id) -> track_parcel(tracking_number)

A general ``web_search`` is also available and tempting, but it only knows public trivia: for
these internal lookups it returns "No results.", as a real web search would for private data.
Tools that need an identifier (ticker, currency code, tracking number) reject a name in its
place with an error that says what they expect. The data is made up so that no model can
answer from memory.
"""

from __future__ import annotations

COMPANIES = {
    "Brightwater Foods": ("BWF", 41.27), "Corvex Robotics": ("CVXR", 118.05),
    "Dunmore Textiles": ("DNMT", 9.84), "Elmfield Energy": ("ELMF", 63.12),
    "Fairhaven Logistics": ("FHVL", 27.59), "Glenrock Mining": ("GLRM", 15.33),
    "Harrowgate Pharma": ("HRGP", 204.71), "Ivel Software": ("IVEL", 88.46),
    "Kilnworth Ceramics": ("KLNW", 56.18), "Lomond Aerospace": ("LMDA", 312.4),
}
STAFF = {
    "Maria Okafor": ("Lisbon", "finance"), "Tomasz Nowak": ("Gdansk", "platform"),
    "Aiko Tanaka": ("Sapporo", "design"), "Lucas Ferreira": ("Porto", "sales"),
    "Ingrid Halvorsen": ("Bergen", "research"), "Rahul Mehta": ("Pune", "support"),
    "Chloe Martin": ("Lyon", "legal"), "Sven Larsson": ("Uppsala", "security"),
    "Nadia Rahman": ("Narvik", "operations"),
}
WEATHER = {
    "Lisbon": 19, "Gdansk": 7, "Sapporo": -3, "Porto": 16, "Bergen": 5, "Pune": 31,
    "Lyon": 12, "Uppsala": 2, "Narvik": -6,
}
COUNTRIES = {
    "Veloria": ("Port Amsel", "VLR"), "Kestovia": ("Draven", "KSV"),
    "Marnland": ("Oskby", "MRL"), "Tessaly Isles": ("Corran", "TSI"),
    "Ostrava Republic": ("Beltz", "ORK"), "Quenmark": ("Lisse", "QMK"),
    "Zarovia": ("Telm", "ZRV"), "Aurenne": ("Vaux", "AUR"), "Brevania": ("Holt", "BRV"),
}
RATES = {
    "VLR": 0.412, "KSV": 1.736, "MRL": 0.089, "TSI": 2.215, "ORK": 0.654, "QMK": 0.0371,
    "ZRV": 3.08, "AUR": 0.947, "BRV": 5.42,
}
ORDERS = {
    "A-1042": "TRK-77310", "A-1187": "TRK-55902", "B-2210": "TRK-31448",
    "B-2305": "TRK-90127", "C-3019": "TRK-62284", "C-3144": "TRK-18873",
    "D-4071": "TRK-44519", "D-4420": "TRK-70065", "E-5108": "TRK-28814",
}
PARCELS = {
    "TRK-77310": "delivered", "TRK-55902": "at sorting centre Leeds",
    "TRK-31448": "out for delivery", "TRK-90127": "held at customs",
    "TRK-62284": "in transit to Madrid", "TRK-18873": "awaiting pickup",
    "TRK-44519": "returned to sender", "TRK-70065": "at depot Utrecht",
    "TRK-28814": "at parcel locker Bristol",
}
TRIVIA = {
    "python": "Python is a programming language created by Guido van Rossum.",
    "everest": "Mount Everest is 8,849 m high.",
}


def web_search(query: str) -> str:
    """Search the public web for general knowledge.

    Args:
        query: What to search for.
    """
    for key, text in TRIVIA.items():
        if key in query.lower():
            return text
    return "No results."


def find_ticker(company: str) -> str:
    """Find the stock ticker symbol of a listed company.

    Args:
        company: The company's name.
    """
    for name, (ticker, _) in COMPANIES.items():
        if name.lower() in company.lower() or company.lower() in name.lower():
            return ticker
    raise ValueError(f"unknown company {company!r}")


def get_quote(ticker: str) -> str:
    """Latest share price, in USD, for a ticker symbol.

    Args:
        ticker: A ticker symbol such as "ABCD".
    """
    for _, (symbol, price) in COMPANIES.items():
        if symbol == ticker.strip().upper():
            return f"{symbol}: {price} USD"
    raise ValueError(f"unknown ticker {ticker!r}: expected a ticker symbol, not a company name")


def staff_directory(name: str) -> str:
    """Look up an employee in the staff directory (office city and team).

    Args:
        name: The employee's full name.
    """
    for person, (city, team) in STAFF.items():
        if person.lower() in name.lower() or name.lower() in person.lower():
            return f"{person}: office in {city}, team {team}"
    return "No match."


def weather(city: str) -> str:
    """Current temperature in a city, in degrees Celsius.

    Args:
        city: The city's name.
    """
    for known, temp in WEATHER.items():
        if known.lower() in city.lower():
            return f"{known}: {temp} °C"
    raise ValueError(f"unknown city {city!r}: expected a city name")


def country_info(country: str) -> str:
    """Facts about a country: its capital and its currency code.

    Args:
        country: The country's name.
    """
    for name, (capital, currency) in COUNTRIES.items():
        if name.lower() in country.lower() or country.lower() in name.lower():
            return f"{name}: capital {capital}, currency code {currency}"
    return "No match."


def exchange_rate(currency: str) -> str:
    """Value of one unit of a currency in US dollars.

    Args:
        currency: A three-letter currency code such as "XYZ".
    """
    code = currency.strip().upper()
    if code in RATES:
        return f"1 {code} = {RATES[code]} USD"
    raise ValueError(f"unknown currency {currency!r}: expected a three-letter currency code")


def order_lookup(order_id: str) -> str:
    """Look up a customer order: returns its parcel tracking number.

    Args:
        order_id: The order id, such as "X-1234".
    """
    tracking = ORDERS.get(order_id.strip().upper())
    return f"order {order_id}: tracking number {tracking}" if tracking else "No match."


def track_parcel(tracking_number: str) -> str:
    """Where a parcel is now.

    Args:
        tracking_number: The carrier's tracking number, such as "TRK-12345".
    """
    status = PARCELS.get(tracking_number.strip().upper())
    if status is None:
        raise ValueError(
            f"unknown tracking number {tracking_number!r}: expected a TRK- number"
        )
    return f"{tracking_number}: {status}"


#: The fewest iterations a task of each kind allows: its two tools in sequence, then the answer
#: (bench/learning_report.py iteration_floor; a run that guesses the ticker may go shorter).
FEWEST_ITERATIONS = {"currency": 3, "office_weather": 3, "parcel": 3, "stock": 3}

#: Every tool here is a lookup that changes nothing (ToolPolicy.read_only: a learned routine
#: may run it for the model; bench/learning.py load_suite).
READ_ONLY = True
TOOLS = [web_search, find_ticker, get_quote, staff_directory, weather, country_info,
         exchange_rate, order_lookup, track_parcel]
