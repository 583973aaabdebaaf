"""Secret redaction: scrub API keys, bearer tokens and secret-named fields before storage.

Traces hold everything a model and its tools saw, and that regularly includes credentials a
tool echoed back or a user pasted into a prompt. A trace file outlives the run and gets shared
(``toolcycle trace html`` pages land in bug reports), so secrets are removed *before* anything is
written, not when it is displayed. Patterns are plain regular expressions so a team can add its
own token formats.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[REDACTED]"

#: Default secret formats. Each pattern matches the secret itself (a ``secret`` group, when
#: present, limits the replacement to that group so that e.g. ``Bearer`` stays readable).
DEFAULT_PATTERNS: tuple[str, ...] = (
    # Anthropic (sk-ant-...), OpenAI (sk-..., sk-proj-...) and look-alikes.
    r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}",
    # AWS access key ids (long-lived AKIA and temporary ASIA).
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    # GitHub tokens (classic and fine-grained).
    r"\bgh[pousr]_[A-Za-z0-9]{30,}\b",
    r"\bgithub_pat_[A-Za-z0-9_]{40,}\b",
    # Google API keys.
    r"\bAIza[0-9A-Za-z_\-]{35}\b",
    # Slack tokens.
    r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
    # HTTP bearer tokens: keep the scheme, drop the credential.
    r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9\-._~+/]+=*)",
    # JSON Web Tokens.
    r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
)

#: How a JSON key matched by DEFAULT_SECRET_KEYS ends in the serialized text (lower case).
_DEFAULT_KEY_HINTS = ('key"', 'secret"', 'password"', 'passwd"', 'token"', 'authorization"')

#: Literal prefixes (lower case) whose presence lets a default pattern run at all.
_HINTS: dict[str, tuple[str, ...]] = dict(
    zip(
        DEFAULT_PATTERNS,
        [("sk-",), ("akia", "asia"), ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), ("github_pat_",),
         ("aiza",), ("xox",), ("bearer",), ("eyj",)],
        strict=True,
    )
)

#: Mapping keys whose *values* are secrets whatever they look like (tool arguments, metadata).
DEFAULT_SECRET_KEYS = (
    r"(?i)^(?:.*[_\-])?(?:api[_\-]?key|secret|password|passwd|token|authorization)$"
)


class Redactor:
    """Replace secrets in strings and in nested JSON-like data.

    ``patterns`` replaces the defaults; ``extra_patterns`` adds to them. ``secret_keys`` is a
    regex over mapping keys whose string values are always redacted (``None`` disables it).
    """

    __slots__ = ("_key_hints", "_key_regex", "_passes")

    def __init__(
        self,
        patterns: Iterable[str] | None = None,
        *,
        extra_patterns: Iterable[str] = (),
        secret_keys: str | None = DEFAULT_SECRET_KEYS,
    ) -> None:
        chosen = list(DEFAULT_PATTERNS if patterns is None else patterns) + list(extra_patterns)
        # Python's regex engine scans a text slowly (~0.1 µs a character per pattern), and a
        # step is redacted on every iteration; so each default pattern runs only when a cheap
        # substring test on the lowered text finds its literal prefix.
        self._passes = [(re.compile(p), _HINTS.get(p)) for p in chosen]
        self._key_regex = re.compile(secret_keys) if secret_keys else None
        self._key_hints = _DEFAULT_KEY_HINTS if secret_keys == DEFAULT_SECRET_KEYS else None

    def text(self, value: str) -> str:
        """Return ``value`` with every secret replaced by ``[REDACTED]``."""
        lowered = value.lower()
        for regex, hints in self._passes:
            if hints is None or any(h in lowered for h in hints):
                value = regex.sub(_replacement, value)
        return value

    def dumps(self, value: Any) -> str:
        """Serialize ``value`` to JSON with secrets redacted (what the trace store writes).

        Patterns run on the finished JSON text, which is several times cheaper than on every
        string separately. Secret-named keys need the structure, so it is walked only when the
        text holds a key that could be one (with the default ``secret_keys``; always otherwise).
        """
        text = json.dumps(value, ensure_ascii=False, default=str)
        if self._key_regex is not None and (
            self._key_hints is None or any(h in text.lower() for h in self._key_hints)
        ):
            text = json.dumps(self._redact_keys(value), ensure_ascii=False, default=str)
        return self.text(text)

    def data(self, value: Any) -> Any:
        """Redact every string inside dicts, lists and tuples (a new structure is returned)."""
        return self._walk(value, strings=True)

    def _redact_keys(self, value: Any) -> Any:
        return self._walk(value, strings=False)

    def _walk(self, value: Any, strings: bool) -> Any:
        if isinstance(value, str):
            return self.text(value) if strings else value
        if isinstance(value, dict):
            return {
                key: REDACTED if self._is_secret(key, item) else self._walk(item, strings)
                for key, item in value.items()
            }
        if isinstance(value, list | tuple):
            return [self._walk(item, strings) for item in value]
        return value

    def _is_secret(self, key: object, item: object) -> bool:
        return (
            self._key_regex is not None
            and isinstance(key, str)
            and isinstance(item, str)
            and bool(item)
            and self._key_regex.match(key) is not None
        )


def _replacement(match: re.Match[str]) -> str:
    """Replace the whole match, or only its ``secret`` group when that group took part."""
    if "secret" in match.re.groupindex:
        return _replace_secret_group(match)
    return REDACTED


def _replace_secret_group(match: re.Match[str]) -> str:
    start, end = match.span("secret")
    whole_start = match.start()
    text = match.group(0)
    return text[: start - whole_start] + REDACTED + text[end - whole_start :]
