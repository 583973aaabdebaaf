"""A pitfall learned without a repair from an error saying the service is down points away
from the tool ("Check the arguments" was the advice for a 503 on `depot`, JSON, at 94309cb:
no argument was wrong, and no earlier tool had returned anything to check them against)."""

from __future__ import annotations

import pytest

from toolcycle.playbook import Curator, open_store
from toolcycle.playbook.applicability import description_words
from toolcycle.playbook.reflector import reflect
from toolcycle.tracing.trace import Step, ToolCallRecord, Trace

from .conftest import make_trace


def _failed(error: str) -> Trace:
    call = ToolCallRecord(call_id="c1", name="inventory_live", args={"item": "wrench"},
                          iteration=1, error=error)
    return Trace(run_id="r", agent_name="depot", user_prompt="How many wrenches are in stock?",
                 steps=[Step(iteration=1, attempt=1, tool_calls=[call])],
                 termination={"reason": "completed", "action": "answered"})


@pytest.mark.parametrize(("error", "advice"), [
    ("Tool `inventory_live` failed: ConnectionError: inventory service unreachable: 503 "
     "Service Unavailable", "It is down: try another tool that can answer."),
    ("Tool `inventory_live` failed: RuntimeError: 502 Bad Gateway",
     "It is down: try another tool that can answer."),
    ("Tool `inventory_live` failed: OSError: Connection refused",
     "It is down: try another tool that can answer."),
    ("Tool `inventory_live` failed: LookupError: no item 'x'",
     "Check the arguments against what earlier tools returned."),
    # a quota or rate limit refuses every caller for now: no argument is wrong there either
    ("Tool `schedule_api` failed: PermissionError: quota exceeded for this API key: 429 Too "
     "Many Requests", "It refuses calls for now: try another tool that can answer."),
    ("Tool `x` failed: RuntimeError: rate limit reached, retry in 30 s",
     "It refuses calls for now: try another tool that can answer."),
    # an error that says nothing of what the call gave is the tool's, whatever its words
    # (`helpdesk`, held out: an expired certificate was learned as "Check the arguments")
    ("Tool `monitor_api` failed: RuntimeError: TLS handshake failed: certificate verify "
     "failed: certificate has expired (monitor.internal:8443)",
     "It names no argument: try another tool that can answer."),
    ("Tool `inventory_live` failed: KeyError: internal index corrupted",
     "It names no argument: try another tool that can answer."),
    # one that names a parameter, repeats a value or quotes one is about the arguments
    ("Tool `inventory_live` failed: ValueError: item must be a SKU",
     "Check the arguments against what earlier tools returned."),
    ("Tool `inventory_live` failed: LookupError: wrench is not stocked here",
     "Check the arguments against what earlier tools returned."),
])
def test_a_pitfall_without_a_repair_says_whether_the_service_is_down(error: str,
                                                                     advice: str) -> None:
    [pitfall] = [i for i in reflect(_failed(error), success=False, domain="depot") if i.tools]
    assert pitfall.advice.endswith(advice)



def test_a_failing_tools_pitfall_applies_to_what_the_tool_is_described_to_do() -> None:
    """The status tasks of `helpdesk` ("Is the VPN gateway working? What state is it in?",
    "30-day uptime of the email service?", "How many incidents are open on the wiki?") share
    no word: the pitfall of the monitor that failed them all applied to nothing and was shown
    to no test task. Each asks what the tool is described to give."""
    texts = {"monitor_api": "The monitoring API: a service's live state, uptime and open "
                            "incidents."}
    descriptions = description_words(texts)
    error = ("Tool `monitor_api` failed: RuntimeError: TLS handshake failed: certificate "
             "has expired")
    store, curator = open_store(":memory:"), Curator()
    for prompt, service in [("Is the VPN gateway working right now? What state is it in?",
                             "vpn gateway"),
                            ("What is the 30-day uptime of the email service?", "email"),
                            ("How many incidents are open on the wiki?", "wiki")]:
        trace = make_trace(prompt, [[("monitor_api", {"service": service}, None, error)]],
                           agent="helpdesk", status="error")
        curator.apply(store, reflect(trace, success=False, domain="helpdesk",
                                     descriptions=descriptions))
    [pitfall] = [s for s in store.strategies() if s.tools == ["monitor_api"]]
    assert {"state", "uptime", "incidents"} <= set(pitfall.applies_when)
    found = store.search("How many incidents are open for video conferencing?", "helpdesk",
                         ["monitor_api"])
    assert [s.id for s, _ in found] == [pitfall.id]
    # a task asking nothing the tool gives is not shown it
    assert store.search("Who holds asset AT-42015?", "helpdesk", ["monitor_api"]) == []
