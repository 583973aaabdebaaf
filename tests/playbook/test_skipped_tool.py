"""A sequence is not shown to a task that asks what a tool it tells to skip is described to
give (toolcycle/playbook/applicability.py: asks_what_a_skipped_tool_gives).

Why: on a generated depot suite (held-out seed 1043, ReAct, e1523ea) a sequence learned from
"units on hand" tasks ("Call warehouse_ledger(article_code), then answer. Do not use
warehouse_daily_report ...") met "Give me article AR1255's units shipped on the 27th of July
2026" through "article" and "units"; told not to call the one tool described to give units
shipped on a day, the 1.5B took 14 turns and was wrong, where without a playbook it was
right in 3. The suite below is another domain's.
"""

from __future__ import annotations

from toolcycle.playbook import Playbook, Strategy
from toolcycle.playbook.applicability import asks_what_a_skipped_tool_gives, description_words

DESCRIPTIONS = {
    "shelf_archive": "Recorded holdings of a title.",
    "shelf_live": "Live holdings of a title: copies on the shelf, branch.",
    "loans_daily": "The loans issued of a title on a given day.",
    "web_search": "Search the public web.",
}
TOOLS = sorted(DESCRIPTIONS)
ON_SHELF = Strategy(
    id="s-shelf", domain="library", kind="sequence", tools=["shelf_archive"],
    advice="Call shelf_archive(title), then answer. Do not use loans_daily, shelf_live, "
           "web_search for this kind of task.",
    applies_when=["copies", "shelf", "title"], support=2, helpful=2, heads=["title"],
    skips=["loans_daily", "shelf_live", "web_search"])


def _playbook() -> Playbook:
    pb = Playbook(":memory:", learn=False)
    pb.store.put([ON_SHELF])
    pb.describe_tools("library", DESCRIPTIONS)
    return pb


def test_a_task_asking_what_a_skipped_tool_gives_is_not_told_to_skip_it() -> None:
    _, shown = _playbook().instructions_for(
        "How many loans were issued for title AV3814 on 3 May 2026?", "library", TOOLS)
    assert shown == []


def test_a_task_of_the_sequences_own_kind_is_still_shown_it() -> None:
    """"shelf" and "copies" are in the skipped live tool's description too, but the
    sequence's own tasks said them: they are its kind's words, not another kind's."""
    _, shown = _playbook().instructions_for(
        "How many copies of title AV3814 are on the shelf?", "library", TOOLS)
    assert shown == ["s-shelf"]


def test_a_word_one_of_its_tasks_said_counts_as_its_own() -> None:
    words = description_words(DESCRIPTIONS)
    task = "Which branch holds title AV3814?"
    assert asks_what_a_skipped_tool_gives(task, ON_SHELF, words)  # "branch": the live tool's
    said = Strategy(**{**ON_SHELF.to_dict(), "word_support": {"branch": 1}})
    assert not asks_what_a_skipped_tool_gives(task, said, words)


def test_without_descriptions_or_skipped_tools_nothing_is_withheld() -> None:
    task = "How many loans were issued for title AV3814 on 3 May 2026?"
    assert not asks_what_a_skipped_tool_gives(task, ON_SHELF, {})
    bare = Strategy(**{**ON_SHELF.to_dict(), "skips": []})
    assert not asks_what_a_skipped_tool_gives(task, bare, description_words(DESCRIPTIONS))
