"""Read-only SQL tools on real SQLite files: queries work, every kind of write is refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import ModuleType

import pytest

from toolcycle.rag import ReadOnlyViolation, SQLiteDatabase, sql_tools


@pytest.fixture
def databases(tmp_path: Path, multi_db: ModuleType) -> dict[str, Path]:
    paths: dict[str, Path] = multi_db.build(tmp_path)
    return paths


@pytest.fixture
def sales(databases: dict[str, Path]) -> SQLiteDatabase:
    return SQLiteDatabase(databases["sales"], description="products and orders", max_rows=3)


def test_parameterized_select(sales: SQLiteDatabase) -> None:
    result = sales.query(
        "SELECT o.quantity, p.name FROM orders o JOIN products p ON p.sku = o.sku "
        "WHERE o.customer_email = ?",
        ["sam.okafor@example.com"],
    )
    assert result.columns == ["quantity", "name"]
    assert result.rows == [[3, "Aurora desk lamp"]]
    named = sales.query("SELECT price_eur FROM products WHERE sku = :sku", {"sku": "MUG-03"})
    assert named.rows == [[12.5]]


def test_rows_are_capped_and_flagged(sales: SQLiteDatabase) -> None:
    result = sales.query("SELECT id FROM orders ORDER BY id")
    assert len(result.rows) == 3 and result.truncated
    assert sales.query("SELECT id FROM orders WHERE id = 1001").truncated is False


def test_schema_introspection(sales: SQLiteDatabase) -> None:
    schema = sales.schema()
    assert "CREATE TABLE orders" in schema and "CREATE TABLE products" in schema
    info = sales.query("PRAGMA table_info(products)")
    assert [row[1] for row in info.rows] == ["sku", "name", "price_eur"]


#: Every write or escape attempt and what the refusal names (tests/security/test_sql.py runs
#: them again with the resource guards in place).
WRITE_ATTEMPTS: list[tuple[str, str]] = [
    ("INSERT INTO orders VALUES (9, 'x@example.com', 'MUG-03', 1, '2026-01-01')", "INSERT"),
    ("UPDATE products SET price_eur = 0", "UPDATE"),
    ("DELETE FROM orders", "DELETE"),
    ("WITH t AS (SELECT 1) DELETE FROM orders", "DELETE"),
    ("DROP TABLE orders", "DELETE sqlite_master"),
    ("CREATE TABLE x (a)", "INSERT sqlite_master"),
    ("ATTACH DATABASE 'other.sqlite' AS other", "ATTACH"),
    ("VACUUM INTO 'copy.sqlite'", "ATTACH"),
    ("PRAGMA query_only = 0", "PRAGMA query_only"),
    ("PRAGMA journal_mode = DELETE", "PRAGMA journal_mode"),
    ("BEGIN", "TRANSACTION"),
    # found by trying to break it: each of these is refused, and stays refused
    ("VACUUM", "ATTACH"),
    ("PRAGMA writable_schema = 1", "PRAGMA writable_schema"),
    ("PRAGMA main.user_version = 5", "PRAGMA user_version"),
    ("PRAGMA wal_checkpoint(TRUNCATE)", "PRAGMA wal_checkpoint"),
    ("PRAGMA table_info(orders); PRAGMA query_only = 0", "one SQL statement"),
    ("SELECT load_extension('/tmp/evil.so')", "load_extension()"),
    ("SELECT hex(FTS3_TOKENIZER('simple'))", "fts3_tokenizer()"),  # leaks a C pointer
    ("SELECT fts3_tokenizer('simple', x'4141414141414141')", "fts3_tokenizer()"),
    ("CREATE TEMP TABLE scratch (a)", "INSERT sqlite_temp_master"),
    ("CREATE TEMP TRIGGER t AFTER INSERT ON orders BEGIN SELECT 1; END",
     "CREATE_TEMP_TRIGGER"),
    ("CREATE VIRTUAL TABLE temp.f USING fts5(a)", "INSERT sqlite_master"),
    ("SAVEPOINT s", "SAVEPOINT"),
    ("ANALYZE", "INSERT sqlite_master"),
    ("REINDEX", "REINDEX"),
    ("REPLACE INTO products VALUES ('X', 'y', 1)", "INSERT products"),
    ("/* a comment first */ DELETE FROM orders", "DELETE orders"),
    ("EXPLAIN DELETE FROM orders", "DELETE orders"),
    ("ATTACH ':memory:' AS scratch", "ATTACH"),
]


@pytest.mark.parametrize(("sql", "refused"), WRITE_ATTEMPTS)
def test_writes_are_refused_with_a_clear_error(
    sales: SQLiteDatabase, databases: dict[str, Path], sql: str, refused: str
) -> None:
    with pytest.raises(ReadOnlyViolation, match=r"read-only|one SQL statement") as info:
        sales.query(sql)
    assert refused in str(info.value)
    with sqlite3.connect(databases["sales"]) as conn:  # nothing changed
        assert conn.execute("SELECT count(*) FROM orders").fetchone()[0] == 5
        assert conn.execute("SELECT sum(price_eur) FROM products").fetchone()[0] == 410.4
    assert not (databases["sales"].parent / "copy.sqlite").exists()


def test_vacuum_into_writes_no_copy(sales: SQLiteDatabase, tmp_path: Path) -> None:
    """``VACUUM INTO`` works on read-only files in SQLite; here it is refused (as an ATTACH)."""
    for target in (tmp_path / "copy.sqlite", f"file:{tmp_path / 'copy2.sqlite'}"):
        with pytest.raises(ReadOnlyViolation, match="ATTACH"):
            sales.query(f"VACUUM main INTO '{target}'")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crm.sqlite", "sales.sqlite"]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT randomblob(500000000)",
        "SELECT length(zeroblob(900000000))",
        "SELECT replace(hex(zeroblob(400000)), '0', 'ab')",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5000) "
        "SELECT group_concat(printf('%.*c', 1000, 'x')) FROM c",
    ],
)
def test_huge_values_are_refused_before_they_take_the_memory(
    sales: SQLiteDatabase, sql: str
) -> None:
    with pytest.raises(ValueError, match="larger than 1000000 bytes"):
        sales.query(sql)
    # printf past the limit is refused before it runs (SQLite looped for seconds, then NULL)
    with pytest.raises(ValueError, match="larger than 1000000 bytes"):
        sales.query("SELECT printf('%.*c', 200000000, 'x')")
    assert sales.query("SELECT length(printf('%.*c', 900000, 'x'))").rows == [[900000]]


def test_the_value_cap_is_configurable_and_validated(databases: dict[str, Path]) -> None:
    small = SQLiteDatabase(databases["sales"], max_value_bytes=1000)
    assert small.query("SELECT sku FROM products WHERE sku = 'MUG-03'").rows == [["MUG-03"]]
    assert small.query("SELECT length(zeroblob(1000))").rows == [[1000]]
    with pytest.raises(ValueError, match="larger than 1000 bytes"):
        small.query("SELECT length(zeroblob(1001))")
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="max_value_bytes"):
            SQLiteDatabase(databases["sales"], max_value_bytes=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("sql", ["SELECT 1; SELECT 2", "SELECT 1; DELETE FROM orders", ""])
def test_multiple_or_no_statements_are_refused(sales: SQLiteDatabase, sql: str) -> None:
    with pytest.raises(ReadOnlyViolation, match=r"one SQL statement|empty"):
        sales.query(sql)


def test_runaway_query_is_interrupted(databases: dict[str, Path]) -> None:
    db = SQLiteDatabase(databases["crm"], timeout=0.2)
    with pytest.raises(TimeoutError):
        db.query("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                 "SELECT count(*) FROM c")


def test_one_tool_per_database(databases: dict[str, Path]) -> None:
    tools = sql_tools(databases)
    assert [t.name for t in tools] == ["query_crm", "query_sales"]
    assert "CREATE TABLE customers" in tools[0].spec.description
    assert "CREATE TABLE products" in tools[1].spec.description
    with pytest.raises(ValueError, match="share the name"):
        sql_tools([databases["crm"], databases["crm"]])
    with pytest.raises(ValueError, match="tool name"):
        SQLiteDatabase(databases["crm"], name="bad name")
    with pytest.raises(FileNotFoundError):
        SQLiteDatabase(databases["crm"].parent / "missing.sqlite")


def test_tool_result_says_when_no_rows_matched(databases: dict[str, Path]) -> None:
    [crm, _] = sql_tools(databases)
    assert crm.function is not None
    empty = crm.function(sql="SELECT * FROM customers WHERE email = ?",
                         params=["sam.okafor@example.com"])
    assert empty["row_count"] == 0 and "no rows matched" in empty["note"]
    found = crm.function(sql="SELECT name FROM customers WHERE city = 'Porto'")
    assert found["rows"] == [["Bruno Costa"]] and "note" not in found


def test_concurrent_queries_on_one_database(databases: dict[str, Path]) -> None:
    """Tools run in a thread pool and a turn may query one database several times at once:
    each query has its own read-only connection, so threads never share one."""
    from concurrent.futures import ThreadPoolExecutor

    db = SQLiteDatabase(databases["sales"])
    skus = [row[0] for row in db.query("SELECT sku FROM products ORDER BY sku").rows]

    def price(sku: str) -> list[list[object]]:
        return db.query("SELECT sku, price_eur FROM products WHERE sku = ?", [sku]).rows

    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(price, skus * 25))
    assert [a[0][0] for a in answers] == skus * 25
    assert len({str(a) for a in answers}) == len(skus)
