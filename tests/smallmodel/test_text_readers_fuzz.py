"""Readers of text a model or a tool wrote, thrown random text: none raises, and what each
returns keeps its promise (the dates the task names, the value's own digits, an offered name).
The readers are reached from tool errors, results and prompts a stranger's tools and users
write, so they must hold on any text, not only on the examples their tests name."""

from __future__ import annotations

import calendar
import json
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from toolcycle._id_shape import in_example_shape
from toolcycle.datetimes import as_the_task_names, names_date, parse_date
from toolcycle.messages import nearest_tool_name

FORMATS = ("%m/%d/%Y", "%d/%m/%Y", "%d.%m.%Y", "%Y-%m-%d", "%Y%m%d")
_DATEISH = st.builds(lambda a, b, y, sep: f"{a:02d}{sep}{b:02d}{sep}{y}",
                     st.integers(0, 40), st.integers(0, 40), st.integers(1990, 2040),
                     st.sampled_from(["/", ".", "-", ""]))
_MONTHS = list(calendar.month_name)[1:]
_TASK = st.builds(lambda d, m, y, words: f"{words} on {d} {m} {y}?", st.integers(1, 31),
                  st.sampled_from(_MONTHS), st.integers(1990, 2040), st.text(max_size=40))


@settings(max_examples=300, deadline=None)
@given(st.one_of(_DATEISH, st.text(max_size=30)), st.sampled_from(FORMATS),
       st.one_of(_TASK, st.text(max_size=120)))
def test_a_date_read_as_the_task_names_it_is_one_the_task_names(value: str, fmt: str,
                                                                prompt: str) -> None:
    found = as_the_task_names(value, fmt, prompt)
    if found is None:
        return
    as_read, written = found
    named = parse_date(written, fmt)
    assert named is not None and named != as_read
    assert names_date(prompt, named) and not names_date(prompt, as_read)


_ID_ERROR = st.builds(lambda prefix, n, sep, words: f"{words} (numbers look like "
                      f"{prefix}{sep}{'0' * n})", st.text("ABCDEFGHXYZ", min_size=1, max_size=3),
                      st.integers(1, 8), st.sampled_from(["-", "_", "", "/"]),
                      st.text(max_size=60))


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text("0123456789", max_size=9), st.text(max_size=20)),
       st.one_of(_ID_ERROR, st.text(max_size=200)))
def test_an_id_written_in_an_examples_shape_keeps_its_own_digits(value: str, error: str) -> None:
    shaped = in_example_shape(value, error, [value])
    if shaped is None:
        return
    digits = "".join(re.findall(r"\d", value))
    assert "".join(re.findall(r"\d", shaped)) == digits and shaped != value.strip()


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.lists(st.text(min_size=1, max_size=40), max_size=12))
def test_the_nearest_name_is_an_offered_one_or_none(name: str, offered: list[str]) -> None:
    meant = nearest_tool_name(name, offered)
    assert meant is None or (meant in offered and meant != name)


_JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
              st.text(max_size=20)),
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(st.text(max_size=8), inner, max_size=5)),
    max_leaves=30)
#: Any tool result: JSON, plain text, or JSON nested past what the parser takes.
_RESULTS = st.one_of(_JSON.map(json.dumps), st.text(max_size=200),
                     st.integers(1, 5000).map(lambda n: "[" * n + "]" * n))


@settings(max_examples=300, deadline=None)
@given(_RESULTS)
def test_a_results_facts_are_read_from_any_text(content: str) -> None:
    """What the second look reads of a result (toolcycle/run/unused_results.py): any text,
    JSON nested past the parser included, gives figures and values, never an error."""
    from toolcycle.run.figures import FIGURE
    from toolcycle.run.unused_results import _facts

    figures, names = _facts(content)
    assert all(FIGURE.fullmatch(f) or _a_number(f) for f in figures)
    assert all(len(n) >= 3 for n in names)


def _a_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.text(max_size=200))
def test_a_field_is_named_only_by_words_the_request_holds(key: str, request: str) -> None:
    from toolcycle.run.asked_field import named_field, request_words

    words = request_words(request)
    if named_field(key, words):
        assert words  # a request without words names no field


@settings(max_examples=300, deadline=None)
@example([("add", [0, 0], "SUM"), ("add", [], '{"0":8.9885E307}'),
          ("add", [], '{"0":8.9885E307}')], "", set())  # two results past the largest float
@given(st.lists(st.tuples(st.sampled_from(["add", "read", "find"]),
                          st.lists(st.one_of(st.integers(-5, 5000), st.floats(
                              allow_nan=False, allow_infinity=False, width=32)), max_size=4),
                          st.one_of(st.just("SUM"), _JSON.map(json.dumps),
                                    st.text(max_size=80))),
                max_size=8),
       st.text(max_size=120), st.sets(st.floats(allow_nan=False, allow_infinity=False)))
def test_an_unfinished_sum_is_read_from_any_calls(
        calls: list[tuple[str, list[float], str]], request: str, answer: set[float]) -> None:
    """The unfinished-sum check (toolcycle/run/unfinished_sum.py) over random calls, results
    and answers: never an error, and what it says names the tool of the run's last sum."""
    from toolcycle.run.provenance import Call, added_up, figures_of
    from toolcycle.run.unfinished_sum import unfinished_sum

    made = [Call(name, {"numbers": numbers}, str(sum(numbers)) if result == "SUM" else result, "")
            for name, numbers, result in calls]  # ("SUM": a call that added its figures up)
    figures = [f for i, c in enumerate(made) for f in figures_of(c, i)]
    told = unfinished_sum(request, made, figures, answer)
    if told is not None:
        last = next(c for c in reversed(made) if added_up(c) is not None)
        assert told.startswith(f"you called `{last.name}` on ")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "kg_to_lb", "read"]),
                          st.lists(st.sampled_from([1, 2, 3, 4.5, 10, 333, 666]), max_size=4),
                          st.one_of(st.just("SUM"), st.just("TWICE"), _JSON.map(json.dumps),
                                    st.sampled_from(["2", "4", "6", "9", "666", "1332"]))),
                max_size=12),
       st.text(max_size=120))
def test_a_sum_is_traced_and_judged_over_any_calls(
        calls: list[tuple[str, list[float], str]], request: str) -> None:
    """A sum traced back through earlier sums and conversions (provenance.traced) and judged
    (toolcycle/run/unlike_sum.py) over random chains, sums of sums of one figure included:
    never an error, and the parts stay bounded however the chain doubles."""
    from toolcycle.run.provenance import Call, added_up, figures_of, traced
    from toolcycle.run.unlike_sum import unlike_sum

    def result(numbers: list[float], kind: str) -> str:
        return {"SUM": str(sum(numbers)), "TWICE": str(2 * sum(numbers))}.get(kind, kind)

    made = [Call(name, {"numbers": numbers} if name != "kg_to_lb" else {"value": numbers[0]}
                 if numbers else {}, result(numbers, kind), "") for name, numbers, kind in calls]
    figures = [f for i, c in enumerate(made) for f in figures_of(c, i)]
    for index, call in enumerate(made):
        for figure in figures:
            assert len(traced(figure.value, index + 1, made, figures)) <= 64
        if added_up(call) is not None:
            told = unlike_sum(request, "x", index, made, figures)
            assert told is None or told.startswith(f"your answer's x is `{call.name}` over ")


_NAME = st.from_regex(r"[A-Z][a-z]{2,8}( [A-Z][a-z]{2,8})?", fullmatch=True)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_NAME, st.one_of(st.from_regex(r"[A-Z]{2}-\d{3}", fullmatch=True),
                                           st.text(max_size=40))), max_size=6),
       st.text(max_size=200), st.text(max_size=120))
def test_what_was_looked_up_is_read_from_any_run(lookups: list[tuple[str, str]], request: str,
                                                 answer: str) -> None:
    """The looked-up checks (toolcycle/run/looked_up.py) over random requests, lookups and
    answers: never an error, and each message names a name the request gives."""
    from toolcycle.run.looked_up import listed, names_in, unread, unvisited
    from toolcycle.run.provenance import Call

    request = request + " " + " and ".join(name for name, _ in lookups)
    calls = [Call("find", {"name": name}, result, "") for name, result in lookups]
    names = names_in(request)
    listed(request, names)
    for message in [*unvisited(request, names, calls),
                    *unread(names, calls, answer, lambda giver: ["`read` takes `id`"])]:
        assert any(repr(name) in message for name in names)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), _NAME), st.one_of(st.text(max_size=400), st.builds(
    lambda a, b, words: f"{words} {a} and {b}?", _NAME, _NAME, st.text(max_size=40))))
def test_names_a_failed_lookup_is_told_are_names_the_request_gives(value: str,
                                                                   request: str) -> None:
    """What recovery tells a failed lookup by name (toolcycle/run/request_spelling.py): the
    request's own spelling, the whole name holding the value, or the several names the value
    holds, each written in the request, from any text."""
    from toolcycle.run.request_spelling import names_in_value, request_spelling, whole_name

    whole = whole_name(value, request)
    assert whole is None or whole in request
    assert all(name in request for name in names_in_value(value, request))
    spelled = request_spelling(value, request)
    assert spelled is None or spelled in request


@settings(max_examples=300, deadline=None)
@given(st.one_of(_JSON.map(json.dumps), st.text(max_size=300)))
def test_a_handle_is_read_from_any_result(content: str) -> None:
    """What grounding reads as an id a lookup gave (toolcycle/run/unused_handle.py): any
    result gives one token holding a digit, or nothing."""
    from toolcycle.run.unused_handle import handle_of

    handle = handle_of(content)
    assert handle is None or (handle.split() == [handle] and any(c.isdigit() for c in handle))


@settings(max_examples=300, deadline=None)
@given(_RESULTS,
       st.text(max_size=120), st.text(max_size=120))
def test_a_name_from_an_unasked_field_is_read_from_any_result(content: str, request: str,
                                                              answer: str) -> None:
    """The field check's reading of string values (toolcycle/run/asked_field.py) over any
    result, request and answer: never an error, at most one message."""
    from toolcycle.run.asked_field import unasked_values
    from toolcycle.run.provenance import Call, figures_of

    call = Call("read", {}, content, "")
    assert len(unasked_values(request, answer, [call], figures_of(call, 0))) <= 1


@settings(max_examples=300, deadline=None)
@given(_RESULTS,
       st.text(max_size=120), st.text(max_size=120))
def test_the_field_that_would_work_is_read_from_any_result(content: str, request: str,
                                                          answer: str) -> None:
    """Grounding's "the value of the field asked" hint (asked_field.field_that_would_work)
    over any result, request and answer: never an error; nothing, or one bounded line."""
    from toolcycle.run.asked_field import field_that_would_work
    from toolcycle.run.provenance import Call, figures_of

    call = Call("read", {}, content, "")
    hint = field_that_would_work(request, answer, [call], figures_of(call, 0))
    assert hint == "" or (hint.startswith("; what would work: `read` gave ")
                          and len(hint) < 400)  # (60 characters of a value, escaped)
