"""Extract a typed company report from a memo: a helper tool, a business rule and reflection.

    python examples/structured_report.py                                  # scripted model
    python examples/structured_report.py --model local:qwen2.5-coder-1.5b # a real local model
    python examples/structured_report.py --model openai:gpt-4o-mini --trace

What it shows:
- ``output=Output(CompanyReport, ...)``: the model answers by calling the ``final_report`` tool,
  whose parameters are the pydantic model's JSON Schema; ``result.output`` is a
  ``CompanyReport``.
- a helper tool (``convert_to_eur``) the model calls before it can fill in the report;
- business-rule validators that read the run context (the memo is the run's ``deps``): a
  rejected report goes back to the model with the reasons and starts the next attempt;
- reflection: each ``final_report`` call returns a preview of the report as it will be filed;
  the model may correct it, then calls ``submit``.

Without ``--model`` a scripted model plays the part (deterministic, no downloads): its first
report gives the revenue in dollars, so the business rule rejects it and the second attempt
passes. Exit status: 0 when a report was accepted, 1 when the run failed, 2 when the agent
could not be built (e.g. the model's extra is not installed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from toolcycle import (
    Agent,
    AgentError,
    ConfigurationError,
    Limits,
    Message,
    Output,
    RunContext,
    RunResult,
    ValidationFailed,
    tool,
)
from toolcycle.models.base import Model, ModelSettings
from toolcycle.models.scripted import ScriptedModel, call

MEMO = """\
Quarterly memo, Northwind Traders (fiscal year 2024).
Northwind closed 2024 with revenue of 12,400,000 USD, up from 10.1 million the year before.
Headcount grew to 84 employees. The board flags two risks: dependence on a single shipping
partner in Rotterdam, and exposure to the dollar since most costs are in euros."""

#: Fixed rates keep the example deterministic; a real tool would ask a rates service.
EUR_PER_UNIT = {"EUR": 1.0, "USD": 0.92, "GBP": 1.17, "CHF": 1.05}


class CompanyReport(BaseModel):
    """A company's key figures, taken from a memo."""

    company: str = Field(description="the company's name")
    fiscal_year: int = Field(description="the fiscal year the figures are for")
    revenue_eur: int = Field(description="yearly revenue in euros, converted if needed")
    employees: int = Field(ge=1, description="headcount at the end of the year")
    risks: list[str] = Field(description="the risks the memo names, one short phrase each")


@tool
def convert_to_eur(amount: float, currency: str) -> dict[str, Any]:
    """Convert an amount of money to euros at today's fixed rate.

    Args:
        amount: The amount in the source currency, e.g. 12400000.
        currency: The ISO code of the source currency: USD, GBP, CHF or EUR.
    """
    code = currency.strip().upper()
    if code not in EUR_PER_UNIT:
        raise ValueError(f"unknown currency {currency!r}; known: {', '.join(EUR_PER_UNIT)}")
    return {"eur": round(amount * EUR_PER_UNIT[code]), "rate": EUR_PER_UNIT[code]}


# -- business rules: validators receive the typed report and the run context ----------------


def figures_match_the_memo(report: CompanyReport, ctx: RunContext[str]) -> None:
    """The year and the headcount must appear in the memo (``ctx.deps``)."""
    memo = ctx.deps
    if str(report.fiscal_year) not in memo:
        raise ValidationFailed(f"fiscal_year {report.fiscal_year} does not appear in the memo")
    if not re.search(rf"\b{report.employees}\b", memo):
        raise ValidationFailed(f"employees={report.employees} does not appear in the memo")


def revenue_is_in_euros(report: CompanyReport, ctx: RunContext[str]) -> None:
    """A figure copied from a memo in another currency is the classic extraction mistake."""
    amounts = [int(a.replace(",", "")) for a in re.findall(r"\d{1,3}(?:,\d{3})+", ctx.deps)]
    if report.revenue_eur in amounts and "EUR" not in ctx.deps:
        raise ValidationFailed(
            f"revenue_eur={report.revenue_eur} is the memo's figure in its own currency; "
            "convert it with convert_to_eur and use the result"
        )


def preview(report: CompanyReport, ctx: RunContext[str]) -> str:
    """Reflection: show the report as it will be filed, so the model can check it."""
    risks = "\n".join(f"  - {r}" for r in report.risks) or "  (none)"
    return (
        f"REPORT PREVIEW\n{report.company} · fiscal year {report.fiscal_year}\n"
        f"revenue: {report.revenue_eur:,} EUR · employees: {report.employees}\n"
        f"risks:\n{risks}"
    )


INSTRUCTIONS = """\
You extract a company report from a memo.
1. Find the yearly revenue and its currency. If it is not in euros, call convert_to_eur.
2. Call final_report with the company, the fiscal year, the revenue in euros (from
   convert_to_eur), the number of employees and the risks.
3. Read the preview. If something is wrong, call final_report again with the fix.
4. When the preview is right, call submit."""


def build_agent(model: Model | str) -> Agent[str, CompanyReport]:
    output = Output(
        CompanyReport,
        name="final_report",
        validators=[figures_match_the_memo, revenue_is_in_euros],
        reflect=preview,
    )
    # tool_choice="required": a text reply is never the report, so ask every turn for a tool
    # call (small local models otherwise answer in prose and spend attempts on it).
    return Agent(model, INSTRUCTIONS, [convert_to_eur], name="report_extractor",
                 output=output, deps_type=str, limits=Limits(max_iterations=6, max_attempts=3),
                 model_settings=ModelSettings(tool_choice="required"))


def scripted_model() -> ScriptedModel:
    """A stand-in model: converts, reports the dollar figure by mistake, then fixes it."""
    report = {"company": "Northwind Traders", "fiscal_year": 2024, "employees": 84,
              "risks": ["single shipping partner in Rotterdam", "dollar exposure"]}

    def after_conversion(messages: Sequence[Message], settings: ModelSettings) -> Any:
        converted = next(r for m in reversed(messages) for r in m.results
                         if r.name == "convert_to_eur")
        eur = json.loads(converted.content)["eur"]
        return call("final_report", {**report, "revenue_eur": eur})

    return ScriptedModel([
        call("convert_to_eur", {"amount": 12_400_000, "currency": "USD"}),
        call("final_report", {**report, "revenue_eur": 12_400_000}),  # the dollar figure
        call("submit"),  # rejected by revenue_is_in_euros: attempt 2 starts
        after_conversion,  # the converted figure, previewed
        call("submit"),
    ])


async def extract(model: Model | str, memo: str = MEMO) -> RunResult[CompanyReport]:
    return await build_agent(model).run(f"Memo:\n{memo}", deps=memo)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a model string (default: the scripted model)")
    parser.add_argument("--memo", help="a text file to read instead of the built-in memo")
    parser.add_argument("--trace", action="store_true", help="print the run's trace")
    args = parser.parse_args(argv)
    memo = MEMO if args.memo is None else Path(args.memo).read_text(encoding="utf-8")
    model: Model | str = args.model or scripted_model()
    try:
        result = asyncio.run(extract(model, memo))
    except ConfigurationError as error:  # e.g. a model string whose extra is not installed
        print(error, file=sys.stderr)
        return 2
    except AgentError as error:
        print(f"no report: {error}")
        if args.trace and error.result is not None:
            print(error.result.trace.render())
        return 1
    if args.trace:
        print(result.trace.render())
    report = result.output
    assert report is not None
    print(report.model_dump_json(indent=2))
    for attempt in result.trace.attempts:
        status = "accepted" if attempt.success else f"rejected by {attempt.validator}"
        detail = "" if attempt.success else ": " + "; ".join(attempt.errors)
        print(f"attempt {attempt.attempt}: {status}{detail}")
    u = result.usage
    print(f"{result.iterations} model requests · {u.tool_calls} tool calls · "
          f"{u.input_tokens} input / {u.output_tokens} output tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
