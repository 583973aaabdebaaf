"""Build the two small example databases of the multi-database agent.

``crm.sqlite`` holds registered customers; ``sales.sqlite`` holds products and orders,
including orders from guest checkouts whose buyers never registered. A question about a guest
therefore has no answer in the CRM: the agent must see the empty result and try sales.

    python examples/multi_db/build_databases.py [directory]   # default: examples/multi_db/data
"""

from __future__ import annotations

import sqlite3
import sys
from contextlib import closing
from pathlib import Path

CUSTOMERS = [
    (1, "Ana Ribeiro", "ana.ribeiro@example.com", "Lisbon", "gold"),
    (2, "Bruno Costa", "bruno.costa@example.com", "Porto", "silver"),
    (3, "Chloe Martin", "chloe.martin@example.com", "Lyon", "gold"),
    (4, "Daniel Weber", "daniel.weber@example.com", "Berlin", "bronze"),
]

PRODUCTS = [
    ("LMP-01", "Aurora desk lamp", 49.90),
    ("CHR-02", "Ergo office chair", 229.00),
    ("MUG-03", "Stoneware mug", 12.50),
    ("KBD-04", "Mechanical keyboard", 119.00),
]

ORDERS = [
    (1001, "ana.ribeiro@example.com", "CHR-02", 1, "2026-09-02"),
    (1002, "bruno.costa@example.com", "MUG-03", 4, "2026-09-05"),
    (1003, "sam.okafor@example.com", "LMP-01", 3, "2026-09-11"),  # guest checkout
    (1004, "chloe.martin@example.com", "KBD-04", 1, "2026-10-01"),
    (1005, "ana.ribeiro@example.com", "MUG-03", 2, "2026-10-03"),
]


def build(directory: str | Path) -> dict[str, Path]:
    """Create (or recreate) both databases in ``directory``; returns name -> path."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    crm, sales = folder / "crm.sqlite", folder / "sales.sqlite"
    for path in (crm, sales):
        path.unlink(missing_ok=True)
    with closing(sqlite3.connect(crm)) as conn, conn:
        conn.execute(
            "CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "email TEXT NOT NULL UNIQUE, city TEXT, tier TEXT)"
        )
        conn.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?)", CUSTOMERS)
    with closing(sqlite3.connect(sales)) as conn, conn:
        conn.execute(
            "CREATE TABLE products (sku TEXT PRIMARY KEY, name TEXT NOT NULL, price_eur REAL)"
        )
        conn.execute(
            "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_email TEXT NOT NULL, "
            "sku TEXT NOT NULL REFERENCES products(sku), quantity INTEGER, ordered_at TEXT)"
        )
        conn.executemany("INSERT INTO products VALUES (?, ?, ?)", PRODUCTS)
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?)", ORDERS)
    return {"crm": crm, "sales": sales}


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "data"
    for name, path in build(target).items():
        print(f"{name}: {path}")
