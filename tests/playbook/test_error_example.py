"""The example an error gives stays in the pitfall's advice (reflector.shown_error): masking
every quoted value turned depot's "give the two-letter country code, e.g. 'FR'" into "e.g. …",
the one part that showed the format."""

from __future__ import annotations

from toolcycle.playbook.reflector import normalise_error, reflect, shown_error

from .conftest import make_trace

FREIGHT_ERROR = ("unknown destination 'Portugal': give the two-letter country code, "
                 "e.g. 'FR'")


def test_the_example_an_error_gives_is_kept_and_the_calls_value_masked() -> None:
    args = {"destination": "Portugal", "weight_kg": 45}
    prompt = "What is the freight charge for a 45 kg shipment to Portugal?"
    assert shown_error(FREIGHT_ERROR, args, prompt) == (
        "unknown destination …: give the two-letter country code, e.g. 'FR'")
    # the class, which identifies the pitfall across tasks, masks both
    assert normalise_error(FREIGHT_ERROR) == (
        "unknown destination …: give the two-letter country code, e.g. …")
    # what the call or the task supplied stays masked, in part or whole
    assert shown_error("no item 'corwen ladder'", {"item": "the Corwen ladder"}) == "no item …"
    assert shown_error("unknown 'ACME'", {}, "Price of acme?") == "unknown …"
    # markup, long text and numbers are never kept
    assert shown_error("bad '<b>x</b>' want 'YYYY-MM-DD' in 5 s", {}) == (
        "bad … want 'YYYY-MM-DD' in … s")
    assert shown_error("bad '" + "x" * 40 + "'", {}) == "bad …"
    assert shown_error("a \ue000 b 'FR'", {}) == "a  b 'FR'"  # no stand-in smuggled in


def test_a_pitfall_learned_from_such_an_error_shows_its_example() -> None:
    trace = make_trace("What is the freight charge for 45 kg to Portugal?", [[(
        "freight_quote", {"destination": "Portugal", "weight_kg": 45}, None, FREIGHT_ERROR)]],
        status="error")
    [pitfall] = [i for i in reflect(trace, success=False, domain="depot")
                 if i.kind == "pitfall"]
    # the example is also the repair (evidence._stated_example): no earlier tool gives a code
    assert pitfall.advice == (
        "freight_quote fails with: unknown destination …: give the two-letter country code, "
        "e.g. 'FR'. Pass destination like \"FR\".")
    assert pitfall.detail == ("unknown destination …: give the two-letter country code, e.g. …"
                              "|argument::destination:AA")
