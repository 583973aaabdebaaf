"""Untrusted text made safe to print on a terminal.

Model output, tool output, prompts, agent and tool names, spec content and playbook advice are
untrusted (DESIGN.md §4). Printed verbatim, a tool result such as a fetched web page can write
the clipboard (OSC 52), retitle the window (OSC 0/2), clear the screen, hide text (SGR 8) or
reverse the visible order of a line (bidi overrides) while a developer reads a trace. So every
CLI print site and :meth:`~toolcycle.tracing.trace.Trace.render` pass such text through
:func:`terminal_safe`: each C0 control except newline and tab, DEL, each C1 control and each
bidi or line-separator code point is replaced by a visible ``\\xNN`` / ``\\uNNNN`` escape, so
nothing reaches the terminal that it would interpret, and a reader still sees that something
was there. Colour is irrelevant: this runs with and without ``--no-color``.

:func:`json_safe` does the same for JSON text printed with ``ensure_ascii=False`` (which escapes
C0 but leaves C1 and bidi characters raw): it writes them as JSON ``\\uNNNN`` escapes, so the
document still parses to the same data.

Rich markup in untrusted text is a separate matter: the CLI prints such text only inside
``rich.text.Text`` objects (never as a markup string), so ``[bold]`` or an unbalanced ``[/x]``
shows literally instead of styling or raising ``MarkupError``.
"""

from __future__ import annotations

_BIDI_AND_SEPARATORS = (
    0x061C,  # ARABIC LETTER MARK
    0x200E, 0x200F,  # LRM, RLM
    *range(0x202A, 0x202F),  # LRE, RLE, PDF, LRO, RLO
    *range(0x2066, 0x206A),  # LRI, RLI, FSI, PDI
    0x2028, 0x2029,  # LINE / PARAGRAPH SEPARATOR
)

#: Code points a terminal may act on: C0 (newline and tab are kept), DEL and C1.
_CONTROLS = (*(c for c in range(0x20) if c not in (0x09, 0x0A)), 0x7F, *range(0x80, 0xA0))

_TERMINAL_TABLE: dict[int, str] = {
    **{c: f"\\x{c:02x}" for c in _CONTROLS},
    **{c: f"\\u{c:04x}" for c in _BIDI_AND_SEPARATORS},
}

#: JSON already escapes C0; C1, DEL and bidi characters become JSON escapes (same data).
_JSON_TABLE: dict[int, str] = {
    c: f"\\u{c:04x}" for c in (0x7F, *range(0x80, 0xA0), *_BIDI_AND_SEPARATORS)
}


def terminal_safe(text: object) -> str:
    """``str(text)`` with every terminal control, C1 and bidi code point shown as an escape."""
    return str(text).translate(_TERMINAL_TABLE)


def json_safe(text: str) -> str:
    """JSON text with C1, DEL and bidi characters written as ``\\uNNNN`` escapes.

    Only valid for JSON produced by :func:`json.dumps` (those characters can occur only inside
    its strings, where the escape means the same character).
    """
    return text.translate(_JSON_TABLE)
