"""The HTML trace viewer's tool calls: arguments, observation, approval, what a stand-in did
in place of the call (a playbook's routine, fallback or repair: its steps), and the run of an
agent called as a tool (``Agent.as_tool``), nested under its call with its own timeline.

Recorded values are escaped like everything else on the page (:func:`~.values.esc`).
"""

from __future__ import annotations

from collections.abc import Callable

from .html_approval import approval_badge
from .trace import Step, ToolCallRecord, Trace
from .values import (
    esc,
    format_ms,
    media_lines,
    money,
    recorded_cost,
    stand_in_text,
    tally,
    to_json,
)

#: How deep nested runs are drawn; a deeper one (a crafted file) is named, not drawn.
MAX_NESTING = 12


def call_block(call: ToolCallRecord, timeline: Callable[[Trace, int], str], depth: int = 0) -> str:
    failed = call.error is not None
    args = to_json(call.args) if call.args is not None else "?"
    kind = f' <span class="badge">{esc(call.kind)}</span>' if call.kind != "tool" else ""
    status = '<span class="badge error">error</span>' if failed else ""
    if call.approval is not None:
        status += approval_badge(call.approval)
    if isinstance(call.run, Trace):
        status += f'<span class="badge">agent {esc(call.run.agent_name)}</span>'
    if call.stand_in is not None:
        status += f'<span class="badge">stand-in {esc(call.stand_in.kind)}</span>'
    if failed:
        observation = (
            f'<div class="label err">Error</div><pre class="error">{esc(call.error or "")}</pre>'
        )
    else:
        observation = f'<div class="label">Observation</div><pre>{esc(call.result or "")}</pre>'
    observation += _sampling(call.sampling) + _stand_in(call.stand_in)
    if returned := media_lines(call.media):
        observation += (f'<div class="label">Media returned</div>'
                        f'<pre>{esc(chr(10).join(returned))}</pre>')
    return (
        f'<details class="call{" error" if failed else ""}" data-call-id="{esc(call.call_id)}">'
        f'<summary><span class="name">{esc(call.name)}</span>{kind}{status}'
        f'<span class="id">{esc(call.call_id)}</span>'
        f'<span class="dur">{esc(format_ms(call.duration_ms))}</span></summary>'
        '<div class="body"><div class="label">Arguments</div>'
        f"<pre>{esc(args)}</pre>{observation}{_member_run(call.run, timeline, depth)}"
        "</div></details>"
    )


def _sampling(sampled: object) -> str:
    """The model requests an MCP server asked for while the call waited (MCP sampling): model,
    tokens and the reply. A stored trace is read defensively (steps only)."""
    rows = []
    for step in sampled if isinstance(sampled, tuple | list) else ():
        if not isinstance(step, Step):
            continue
        usage = step.usage
        rows.append(f'<div class="label">Sampling by {esc(step.model or "?")} · tokens in '
                    f"{tally(usage.input_tokens)} / out {tally(usage.output_tokens)} · "
                    f"{esc(format_ms(step.model_ms))}</div><pre>{esc(step.thought)}</pre>")
    return "".join(rows)


def _stand_in(stand_in: object) -> str:
    """The calls a stand-in made for the model, one line each with its status and text (the
    observation above is its answer; :mod:`~toolcycle.tracing.stand_in`)."""
    if stand_in is None:
        return ""
    head, steps = stand_in_text(stand_in)
    shown = f'<pre class="stand-in">{esc(chr(10).join(steps))}</pre>' if steps else ""
    return f'<div class="label">{esc(head[:1].upper() + head[1:])}</div>{shown}'


def _member_run(run: object, timeline: Callable[[Trace, int], str], depth: int) -> str:
    """The nested run of the agent the call ran: its status, usage and timeline."""
    if not isinstance(run, Trace):
        return ""
    usage = run.usage
    head = (f'<div class="label">Run of agent {esc(run.agent_name)} · {esc(run.status)} · '
            f"{tally(usage.requests)} requests · tokens in {tally(usage.input_tokens)} / out "
            f"{tally(usage.output_tokens)} · cost {money(recorded_cost(usage.cost, None))}</div>")
    if depth >= MAX_NESTING:
        return head + '<div class="panel">(nested too deep to draw)</div>'
    return f'{head}<div class="member-run">{timeline(run, depth + 1)}</div>'
