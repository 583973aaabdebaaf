"""An id a lookup gave that no call used (toolcycle/run/unused_handle.py): grounding's re-ask
says which tool takes it. Seen on the 1.5B (first-hour held-out agents): the lookup gave the
ship's id, and the model answered an invented length, or that the record was not available,
without the detail call; the lighthouses here are another domain's."""

from __future__ import annotations

from typing import Any

import pytest

from toolcycle import Agent, Limits
from toolcycle.run.unused_handle import handle_of
from toolcycle.testing import ScriptedModel, call


def find_lighthouse(name: str) -> str:
    """The lighthouse_id of a lighthouse, by its name."""
    return {"Cape Wrath Light": "LH-7"}[name]


def lighthouse(lighthouse_id: str) -> dict[str, Any]:
    """A lighthouse's record: its keeper and its height."""
    return {"keeper": "Ines Duarte", "height_m": 41}


def _run(script: list[Any], attempts: int = 3) -> Any:
    agent = Agent(ScriptedModel(script), tools=[find_lighthouse, lighthouse], grounding=True,
                  limits=Limits(max_attempts=attempts))
    return agent.run_sync("Who keeps the Cape Wrath Light?")


FOUND = call("find_lighthouse", {"name": "Cape Wrath Light"})
LINE = ("`find_lighthouse` gave 'LH-7', which no call has used since: `lighthouse` takes "
        "`lighthouse_id`; call it with 'LH-7', then answer from its result")


def test_a_supported_answer_after_an_unused_id_is_asked_again() -> None:
    result = _run([FOUND, "The keeper of LH-7 is not known.",
                   call("lighthouse", {"lighthouse_id": "LH-7"}), "Ines Duarte keeps it."])
    first = result.trace.attempts[0]
    assert (first.validator, first.code, first.errors) == ("grounding", "UNUSED_RESULTS", [LINE])
    assert (result.output, result.status) == ("Ines Duarte keeps it.", "success")


def test_beside_an_invented_figure_the_id_is_named() -> None:
    result = _run([FOUND, "It is 100 m tall.", "It is 100 m tall.", "It is 100 m tall."])
    first = result.trace.attempts[0]
    assert first.code == "UNGROUNDED" and first.errors[-1] == LINE


def test_nothing_is_said_once_the_id_was_used() -> None:
    result = _run([FOUND, call("lighthouse", {"lighthouse_id": "lh-7"}), "Ines Duarte."])
    assert result.attempts == 1 and result.status == "success"


def test_an_id_whose_only_call_failed_was_never_read() -> None:
    """Seen on the 0.5B (first-hour dev set, a payroll agent): the lookup gave the id, the
    detail call given it failed on another argument, and the model answered that the id does
    not exist: a ``success``. A call that failed read no record, so the id is still unused."""
    def roster(name: str) -> str:
        """The employee_id of an employee, by name."""
        return "E-311"

    def payslip(employee_id: str, month: str) -> float:
        """An employee's gross pay for a month (YYYY-MM)."""
        if len(month) != 7:
            raise KeyError((employee_id, month))
        return 3120.0

    line = ("`roster` gave 'E-311', which no call given it has succeeded since: `payslip` "
            "takes `employee_id`; call it with 'E-311', then answer from its result")
    missing = "The employee with ID E-311 did not exist in the database."
    script = [call("roster", {"name": "Jonas Berg"}),
              call("payslip", {"employee_id": "E-311", "month": "2026"}), missing, missing]
    agent = Agent(ScriptedModel(script), tools=[roster, payslip], grounding=True,
                  limits=Limits(max_attempts=2))
    result = agent.run_sync("What was the gross pay of Jonas Berg for October 2026?")
    first = result.trace.attempts[0]
    assert (first.validator, first.code, first.errors) == ("grounding", "UNUSED_RESULTS", [line])
    assert result.status == "ungrounded", result.trace.render()


def test_nothing_is_said_where_no_tool_takes_it() -> None:
    agent = Agent(ScriptedModel([FOUND, "Its id is LH-7."]), tools=[find_lighthouse],
                  grounding=True)
    result = agent.run_sync("What is the id of the Cape Wrath Light?")
    assert result.attempts == 1 and result.status == "success"


@pytest.mark.parametrize(("content", "handle"), [
    ("LH-7", "LH-7"), ('"LH-7"', "LH-7"), ('{"lighthouse_id": "LH-7"}', "LH-7"),
    ("Ines Duarte", None), ('{"keeper": "Ines", "height_m": 41}', None), ("41", None),
    ("lighthouse", None), ("3000.0", None), ("x" * 300, None), ("[]", None), ("", None),
])
def test_a_handle_is_one_token_holding_a_digit(content: str, handle: str | None) -> None:
    assert handle_of(content) == handle


# -- two things asked about: every id the lookup gave (an observatory, not the tanks seen) ----


def find_telescope(name: str) -> str:
    """The telescope_id of a telescope, by its name."""
    return {"Orion Scope": "TS-41", "Vega Scope": "TS-88"}[name]


def telescope_info(telescope_id: str) -> dict[str, Any]:
    """A telescope's record: its mirror diameter in cm and its site."""
    return {"TS-41": {"mirror_cm": 240.5, "site": "La Palma"},
            "TS-88": {"mirror_cm": 181.25, "site": "Calar Alto"}}[telescope_id]


def add(numbers: list[float]) -> float:
    """The sum of the numbers."""
    return sum(numbers)


TWO = "Add up the mirror diameter of Orion Scope and Vega Scope."
LOOKUPS = [call("find_telescope", {"name": "Orion Scope"}),
           call("find_telescope", {"name": "Vega Scope"})]


def _telescopes(script: list[Any]) -> Any:
    agent = Agent(ScriptedModel(script), tools=[find_telescope, telescope_info, add],
                  grounding=True)
    return agent.run_sync(TWO)


def test_a_sum_over_made_up_figures_does_not_hide_the_ids_left_unused() -> None:
    """Both ids looked up, then ``add`` over figures from nowhere (refused once, run when
    made again alone): its result read no record, so the chain is still where the lookups
    left it, and the re-ask names both ids and the tool that takes them."""
    made_up = call("add", {"numbers": [250, 300]})
    right = [call("telescope_info", {"telescope_id": "TS-41"}),
             call("telescope_info", {"telescope_id": "TS-88"}),
             call("add", {"numbers": [240.5, 181.25]}), "Together 421.75 cm."]
    result = _telescopes([*LOOKUPS, made_up, made_up, "Together 550 cm.", *right])
    first = result.trace.attempts[0]
    assert first.code == "UNGROUNDED", result.trace.render()
    assert first.errors[-1] == (
        "`find_telescope` gave 'TS-41' and 'TS-88', which no call has used since: "
        "`telescope_info` takes `telescope_id`; call it with each, then answer from their "
        "results")
    assert (result.output, result.status) == ("Together 421.75 cm.", "success")


def test_nothing_is_said_once_every_id_was_used() -> None:
    result = _telescopes([*LOOKUPS, call("telescope_info", {"telescope_id": "TS-41"}),
                          call("telescope_info", {"telescope_id": "TS-88"}),
                          call("add", {"numbers": [240.5, 181.25]}), "Together 421.75 cm."])
    assert result.attempts == 1 and result.status == "success", result.trace.render()
