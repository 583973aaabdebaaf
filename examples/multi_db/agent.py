"""An agent that answers from two SQLite databases, read-only, trying the other when one is empty.

The CRM knows registered customers; guest checkouts exist only in sales. Asked about a guest,
the agent typically queries the CRM first, sees no rows, and turns to the sales database.

    python examples/multi_db/agent.py                     # local:qwen2.5-coder-1.5b
    python examples/multi_db/agent.py openai:gpt-4o-mini  # any model string
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_databases import build

from toolcycle import Agent, Limits
from toolcycle.models.base import Model
from toolcycle.rag import SQLiteDatabase, sql_tools

QUESTION = "What did sam.okafor@example.com order, how many, and on what date?"

INSTRUCTIONS = (
    "You answer questions about customers, products and orders from two read-only SQLite "
    "databases: crm (registered customers) and sales (products and all orders, guest "
    "checkouts included). Never guess: call query_crm or query_sales with SQL first, passing "
    "values in `params`. If a query returns no rows, query the other database. Once a query "
    "has returned the rows the question asks about, answer briefly with the facts they hold."
)


def build_agent(model: Model | str, directory: str | Path) -> Agent[Any, str]:
    """The agent over freshly built example databases in ``directory``."""
    paths = build(directory)
    databases = [
        SQLiteDatabase(paths["crm"], name="crm", description="registered customers"),
        SQLiteDatabase(paths["sales"], name="sales", description="products and all orders"),
    ]
    return Agent(model, INSTRUCTIONS, sql_tools(databases), name="multi_db",
                 limits=Limits(max_iterations=5, on_limit="final_answer"))


def main() -> None:
    model = sys.argv[1] if len(sys.argv) > 1 else "local:qwen2.5-coder-1.5b"
    with tempfile.TemporaryDirectory() as folder:
        agent = build_agent(model, folder)
        result = agent.run_sync(QUESTION)
    print(result.trace.render(max_chars=300))
    print(f"\nanswer: {result.output}")


if __name__ == "__main__":
    main()
