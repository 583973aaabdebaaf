"""Grounding's re-ask where nothing was looked up: the turn after the rejection must call a
tool (issue 68). Measured on the first-hour agents with the 1.5B: told its figure had no
source, it wrote the same invented answer again in every such re-ask ("The late fee for Tom
Reed is 10 EUR.", twice, no call). Through the real loop and the JSON text protocol, with a
scripted inner text model that does what the 1.5B did."""

from __future__ import annotations

import pytest

from toolcycle import Agent
from toolcycle.models.scripted import ScriptedModel
from toolcycle.models.text.protocol import JsonToolsModel
from toolcycle.run.grounding import LOOK_TURNS
from toolcycle.testing import call

FEES = {"M-5603": 1.75}


def find_member(name: str) -> str:
    """Look up a library member's number by their full name."""
    return {"tom reed": "M-5603"}[name.lower()]


def late_fee(member_number: str) -> float:
    """The late fee in EUR a member owes today."""
    return FEES[member_number]


INVENTED = '{"answer": "The late fee for Tom Reed is 10 EUR."}'
LOOKED_UP = [
    '{"name": "find_member", "arguments": {"name": "Tom Reed"}}',
    '{"name": "late_fee", "arguments": {"member_number": "M-5603"}}',
    '{"answer": "Tom Reed owes 1.75 EUR."}']


def _run(script: list[str], grounding: bool = True) -> tuple[object, ScriptedModel]:
    inner = ScriptedModel(script)
    agent = Agent(JsonToolsModel(inner), "You are the library assistant.",
                  [find_member, late_fee], grounding=grounding)
    return agent.run_sync("How much does Tom Reed owe in late fees?"), inner


def test_the_re_ask_after_an_answer_with_nothing_looked_up_must_call() -> None:
    """The model repeats its answer once more (as the 1.5B did); the turn must call, so the
    repeat is refused by the protocol and the model looks the figure up."""
    result, inner = _run([INVENTED, INVENTED, *LOOKED_UP])
    assert [c.name for c in result.tool_calls] == ["find_member", "late_fee"]
    assert (result.status, result.output) == ("success", "Tom Reed owes 1.75 EUR.")
    assert "Call one of the tools now." in inner.requests[1].last_message.text
    assert "Call one of the tools now." not in inner.requests[-1].last_message.text


def test_after_a_failed_call_too_the_re_ask_must_call() -> None:
    """A call that failed gave nothing to answer from (the 1.5B: ``KeyError: 'Tromso'``,
    then "The wind in Tromso is currently 10 km/h.", twice)."""
    failed = '{"name": "late_fee", "arguments": {"member_number": "Tom Reed"}}'
    result, inner = _run([failed, INVENTED, INVENTED, *LOOKED_UP])
    assert result.status == "success" and result.output == "Tom Reed owes 1.75 EUR."
    # (the turn after the failure names the tool that gives the member number,
    # toolcycle/run/producer_first.py; the answer written anyway is re-asked, and must call)
    assert "Call the tool find_member now." in inner.requests[1].last_message.text
    assert "Call one of the tools now." in inner.requests[3].last_message.text


def test_with_a_tool_result_in_hand_the_re_ask_stays_free() -> None:
    """Something was looked up: the model may answer from it, so no call is forced, and an
    answer that still asserts what no source holds says so in its status."""
    result, inner = _run([LOOKED_UP[0], INVENTED, INVENTED])
    assert not any("Call one of the tools now." in r.last_message.text for r in inner.requests)
    assert result.status == "ungrounded"


def test_without_grounding_nothing_is_forced() -> None:
    result, inner = _run([INVENTED], grounding=False)
    assert result.status == "success" and len(inner.requests) == 1


BEDS = {"Oak Ward": 17, "Rose Ward": 21}


def beds(ward: str) -> int:
    """The number of beds of a hospital ward."""
    return BEDS[ward]


def add(numbers: list[float]) -> float:
    """Add a list of numbers."""
    return round(sum(numbers), 2)


def _beds(script: list[object]) -> object:
    agent = Agent(ScriptedModel(script), tools=[beds, add], grounding=True)
    return agent.run_sync("How many beds do Oak Ward and Rose Ward have together?")


SUMMED = [call("beds", {"ward": "Oak Ward"}), call("beds", {"ward": "Rose Ward"}),
          call("add", {"numbers": [17, 21]}), "They have 38 beds together."]


def test_a_tool_result_over_invented_figures_is_no_source() -> None:
    """Seen on the 1.5B (held-out first-hour agent "ward", seed 68): it called only ``add``
    with two counts it made up and answered their sum; the sum was in a tool result, so the
    run said ``success``. The re-ask now names the call, and the model looks the figures up."""
    result = _beds([call("add", {"numbers": [20, 22]}), call("add", {"numbers": [20, 22]}),
                    "They have 42 beds together.", *SUMMED])  # (made again: refused once)
    first = result.trace.attempts[0]
    assert first.validator == "grounding"
    assert "'42'" in first.errors[0]
    assert first.errors[1].startswith("`add` was given 20, 22, which no tool result")
    assert (result.status, result.output) == ("success", "They have 38 beds together.")


def test_an_answer_from_figures_added_up_from_nowhere_is_ungrounded() -> None:
    result = _beds([call("add", {"numbers": [20, 22]}), "They have 42 beds together.",
                    "Still 42 beds."])
    assert (result.status, result.output) == ("ungrounded", "Still 42 beds.")


def test_a_tool_result_over_looked_up_figures_is_a_source() -> None:
    result = _beds(SUMMED)
    assert result.status == "success" and result.attempts == 1


def to_grams(ingredient: str, amount: float, unit: str) -> float:
    """Convert an amount of an ingredient in cups to grams."""
    return round(amount * 227.0, 2)


def top_recipes(limit: int) -> list[str]:
    """The best-rated recipes, best first."""
    return ["banana bread", "pancakes", "tomato soup"][:limit]


def test_a_single_digit_measure_from_nowhere_is_no_source() -> None:
    """Seen on the 0.5B (first-hour dev agent "recipes"): asked for the banana bread's
    butter in grams, it called ``to_grams(amount=1, unit="cup")`` without reading the
    recipe and answered the 227 g it got, a ``success``. A single digit is exempt as a count,
    but a parameter typed ``number`` takes a measure, which no counting gives."""
    agent = Agent(ScriptedModel([
        call("to_grams", {"ingredient": "butter", "amount": 1, "unit": "cup"}),
        "227 grams.", "227 grams."]), tools=[to_grams], grounding=True)
    result = agent.run_sync("How much butter in grams does the banana bread need?")
    assert result.trace.attempts[0].validator == "grounding"
    assert result.status == "ungrounded"


def test_a_single_digit_count_passed_on_stays_exempt() -> None:
    """``limit: int`` takes a count: a 3 from nowhere is still the kind of figure a model
    may pick or count, and the result it got is a source."""
    agent = Agent(ScriptedModel([call("top_recipes", {"limit": 3}),
                                 "The best is banana bread."]),
                  tools=[top_recipes], grounding=True)
    result = agent.run_sync("Which recipe is rated best?")
    assert (result.status, result.attempts) == ("success", 1)


def test_a_single_digit_measure_the_request_gave_grounds_the_call() -> None:
    agent = Agent(ScriptedModel([
        call("to_grams", {"ingredient": "butter", "amount": 1, "unit": "cup"}),
        "227 grams."]), tools=[to_grams], grounding=True)
    result = agent.run_sync("How many grams is 1 cup of butter?")
    assert (result.status, result.attempts) == ("success", 1)


def test_figures_from_the_request_ground_a_call() -> None:
    agent = Agent(ScriptedModel([call("add", {"numbers": [17.50, 21]}), "38.5 in all."]),
                  tools=[add], grounding=True)
    result = agent.run_sync("What is 17.5 plus 21?")
    assert result.status == "success" and result.attempts == 1


def find_product(name: str) -> str:
    """Find a product by its name and return its SKU."""
    return {"yoga mat": "SKU-3310"}[name.lower()]


def warehouse(sku: str) -> str:
    """The warehouse a product (by SKU) is stocked in."""
    return {"SKU-3310": "Leeds"}[sku]


def _yoga(script: list[object]) -> object:
    agent = Agent(ScriptedModel(script), tools=[find_product, warehouse], grounding=True)
    return agent.run_sync("In which warehouse is the yoga mat stocked?")


GAVE_UP = [call("find_product", {"name": "YOGA-MAT"}), "The yoga mat is not in stock."]


def test_an_answer_after_every_call_failed_is_asked_again_and_must_call() -> None:
    """Seen on the 1.5B (first-hour dev set, shop): ``find_product`` failed on ``YOGA-MAT``
    and it answered "The yoga mat is not in stock.": nothing to check, and a ``success``."""
    result = _yoga([*GAVE_UP, call("find_product", {"name": "yoga mat"}),
                    call("warehouse", {"sku": "SKU-3310"}), "In Leeds."])
    assert result.trace.attempts[0].errors[0].startswith(
        "every tool call of this run failed or found nothing")
    assert (result.status, result.output) == ("success", "In Leeds.")


def test_an_answer_that_rests_on_failed_calls_only_is_ungrounded() -> None:
    result = _yoga([*GAVE_UP, call("find_product", {"name": "Yoga-Mat"}),
                    "I could not find the yoga mat."])
    assert (result.status, result.output) == ("ungrounded", "I could not find the yoga mat.")


def search(query: str) -> list[str]:
    """Search the web."""
    return []


@pytest.mark.parametrize(("failed", "status"), [(True, "ungrounded"), (False, "success")])
def test_after_a_failed_call_an_empty_result_is_nothing_found(failed: bool, status: str) -> None:
    """Seen on the 1.5B (issue 69, a generated rail suite): a booking lookup failed on the
    id's format, a web search returned ``[]``, and "The booking number is not recognized"
    was a ``success``. Without a failed call, an empty result is an answer."""
    first = [call("find_product", {"name": "YOGA-MAT"})] if failed else []
    script = [*first, call("search", {"query": "yoga mat"}), "No such product.",
              "No such product."]
    agent = Agent(ScriptedModel(script), tools=[find_product, warehouse, search],
                  grounding=True)
    result = agent.run_sync("In which warehouse is the yoga mat stocked?")
    assert (result.status, result.output) == (status, "No such product.")


def test_one_call_that_worked_is_something_to_answer_from() -> None:
    """Not "nothing found": the lookup worked. Its id was never used, so the re-ask names
    the tool that takes it (toolcycle/run/unused_handle.py); the status is not changed."""
    result = _yoga([call("find_product", {"name": "YOGA-MAT"}),
                    call("find_product", {"name": "yoga mat"}), "It is in stock.",
                    "It is in stock."])
    first = result.trace.attempts[0]
    assert (first.code, first.errors) == ("UNUSED_RESULTS", [
        "`find_product` gave 'SKU-3310', which no call has used since: `warehouse` takes "
        "`sku`; call it with 'SKU-3310', then answer from its result"])
    assert result.status == "success" and result.attempts == 2


def test_the_re_ask_keeps_calling_while_every_call_fails_then_is_free() -> None:
    """Forced once, the 1.5B called the detail tool with the name, read that ``find_member``
    gives the id, and wrote its invented answer again (dev set, shop, at 1e33ffd)."""
    failed = '{"name": "late_fee", "arguments": {"member_number": "Tom Reed"}}'
    result, inner = _run([INVENTED, failed, INVENTED, *LOOKED_UP])
    # (the failure names the tool that gives the member number: the turn must call that one)
    assert "Call the tool find_member now." in inner.requests[2].last_message.text
    assert result.status == "success" and result.output == "Tom Reed owes 1.75 EUR."


def test_the_forced_turns_are_bounded() -> None:
    failed = '{"name": "late_fee", "arguments": {"member_number": "Tom Reed"}}'
    # (after the failure, the turn names the tool that gives the member number instead,
    # toolcycle/run/producer_first.py: one of the forced turns)
    result, _ = _run([INVENTED, failed, failed, failed, INVENTED])
    forced = [s.tool_choice for s in result.trace.steps if s.tool_choice is not None]
    assert forced == ["required", "find_member"] + ["required"] * (LOOK_TURNS - 2)
    assert (result.status, result.output) == ("ungrounded", "The late fee for Tom Reed is 10 EUR.")


def train_id(name: str) -> str:
    """The id of a train by its name."""
    return "TR-195"


def train_load(train: str) -> dict[str, float]:
    """The load of a train (by id), in tonnes."""
    return {"load_t": 479.2}


def test_the_digits_of_an_id_are_no_figure_to_add() -> None:
    """Seen on the 1.5B (first-hour held-out agents): asked for two loads together, it added
    one load and the digits of the other train's id (``add([479.2, 195])`` from ``TR-195``);
    the id in a result vouched for 195, and the sum was a ``success``."""
    agent = Agent(ScriptedModel([call("train_id", {"name": "Gull"}),
                                 call("train_load", {"train": "TR-195"}),
                                 call("add", {"numbers": [479.2, 195]}), "674.2 t.",
                                 "674.2 t.", "674.2 t."]),
                  tools=[train_id, train_load, add], grounding=True)
    result = agent.run_sync("What do the trains Gull and Maren carry together, in tonnes?")
    assert result.trace.attempts[0].validator == "grounding"
    assert "'674.2'" in result.trace.attempts[0].errors[0]
    assert not result.succeeded and result.output == "674.2 t."


@pytest.mark.parametrize("empty", ["[]", "{}", "null", "None", ' "" '])
def test_an_empty_value_for_an_answer_is_asked_again_and_then_ungrounded(empty: str) -> None:
    """The 1.5B copied an empty tool result as its answer ("[]", held-out argument-format
    tasks, issue 69), and the run was a ``success``."""
    agent = Agent(ScriptedModel([call("search", {"query": "yoga mat"}), empty, empty]),
                  tools=[find_product, warehouse, search], grounding=True)
    result = agent.run_sync("In which warehouse is the yoga mat stocked?")
    assert result.trace.attempts[0].errors[0].startswith("your answer is an empty value")
    assert result.status == "ungrounded"


def test_an_answer_in_words_after_the_re_ask_is_judged_as_any_answer() -> None:
    agent = Agent(ScriptedModel([call("find_product", {"name": "yoga mat"}),
                                 call("warehouse", {"sku": "SKU-3310"}), "[]", "In Leeds."]),
                  tools=[find_product, warehouse], grounding=True)
    result = agent.run_sync("In which warehouse is the yoga mat stocked?")
    assert (result.status, result.output) == ("success", "In Leeds.")
