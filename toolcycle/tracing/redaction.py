"""Secret redaction: scrub API keys, bearer tokens and secret-named fields before storage.

Traces hold everything a model and its tools saw, and that regularly includes credentials a
tool echoed back or a user pasted into a prompt. A trace file outlives the run and gets shared
(``toolcycle trace html`` pages land in bug reports), so secrets are removed *before* anything is
written, not when it is displayed. Patterns are plain regular expressions so a team can add its
own token formats.

What is redacted (tests/security/test_redaction.py): the value, of any type, of a key named like
a secret in any naming style (``api_key``, ``apiKey``, ``x-api-key``, ``clientSecret``,
``refresh_token``, ...), also inside strings that hold JSON (tool results are stored as JSON
text); secret-named assignments in free text (``KEY=value``, ``password: x``, the raw text of
arguments that were not valid JSON); and values that look like secrets wherever they are
(provider keys, bearer and Basic credentials, JWTs, PEM private keys, passwords in URLs). A
secret with no recognisable name or shape (a bare random string) cannot be told from data.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

REDACTED = "[REDACTED]"

#: Default secret formats. Each pattern matches the secret itself (a ``secret`` group, when
#: present, limits the replacement to that group so that e.g. ``Bearer`` stays readable). They
#: run on the JSON text the store writes, where a quote inside a string reads ``\"``.
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
    # Stripe secret and restricted keys.
    r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}",
    # Hugging Face tokens.
    r"\bhf_[A-Za-z0-9]{30,}\b",
    # PEM private keys, the whole block (its newlines are ``\n`` escapes in JSON text).
    r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
    # HTTP Basic credentials (base64 with a digit or + / =, so "basic understanding" stays).
    r"(?i)\bbasic\s+(?P<secret>(?=[A-Za-z0-9+/]*[0-9+/])[A-Za-z0-9+/]{8,}={0,2})",
    # A password in a URL: scheme://user:password@host.
    r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s/:@\"'\\]+:(?P<secret>[^\s/@\"'\\]+)@",
    # A secret-named assignment in free text: KEY=value env dumps, query strings,
    # "password: x", a Python dict's repr and JSON too malformed to parse ({"api_key": "x",).
    # A quoted value is taken up to its quote, a bare one up to a separator; Bearer and Basic
    # credentials are left to their own patterns, which keep the scheme readable.
    # The name may be plural (``passwords=``); a ``name`` group lets the replacement keep token
    # counts (``max_tokens: 10``, ``tokens: 3``) that share the word.
    r"(?i)(?P<name>(?:api[_\-]?key|secret|passw(?:or)?d|passphrase|token|authorization"
    r"|credential|private[_\-]?key|access[_\-]?key)s?)(?:\\?[\"'])?\s*[:=]\s*(?:\\?[\"'])?"
    r"(?!(?:bearer|basic)\s)(?P<secret>(?<=[\"'])[^\"'\\]+|[^\s\"'\\,;&}\]]+)",
)

#: The words a secret-named key or assignment ends with (lower case), for the cheap pre-checks.
_KEY_WORDS = ("key", "secret", "password", "passwd", "passphrase", "token", "authorization",
              "auth", "bearer", "credential", "cookie")

#: Words that end a key naming a collection of what the word before says: the secrets in
#: ``credentials_list`` or ``passwordArray`` are still secrets.
_CONTAINER_WORDS = ("list", "array", "set", "map", "dict")

#: The text reversed, a ``:`` or ``=``, then quotes or spaces, then (a container word, then) a
#: secret word reversed, plural or not: the regex engine skips to the next operator in C, and
#: the words are tried only there.
_REVERSED_NAME = re.compile(
    "[:=][\\s\"'\\\\]{0,6}(?:(?:" + "|".join(w[::-1] for w in _CONTAINER_WORDS) + ")[_\\-]?)?"
    "s?(?:" + "|".join(re.escape(w[::-1]) for w in _KEY_WORDS) + ")"
)


def _names_a_secret(lowered: str) -> bool:
    """Whether a word that ends a secret name comes right before a ``:`` or ``=`` (quotes and
    spaces between allowed): a JSON key (``"api_key": ``, ``\\"accessToken\\": `` nested in a
    string), an assignment or a header line. ``"input_tokens": `` does not count.

    The gate of the key walk and of the assignment pattern: one search of the reversed text,
    much cheaper than a substring test per word and quoting style, or a pattern that tries
    every word at every character.
    """
    return _REVERSED_NAME.search(lowered[::-1]) is not None


#: Literal prefixes (lower case) whose presence lets a default pattern run at all.
_HINTS: dict[str, tuple[str, ...] | Callable[[str], bool]] = dict(
    zip(
        DEFAULT_PATTERNS,
        [("sk-",), ("akia", "asia"), ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), ("github_pat_",),
         ("aiza",), ("xox",), ("bearer",), ("eyj",), ("k_live_", "k_test_"), ("hf_",),
         ("private key-----",), ("basic",), ("://",), _names_a_secret],
        strict=True,
    )
)

#: Mapping keys whose *values* (of any type: a number, a list, a dict) are secrets whatever
#: they look like. Searched in the key, in the key lower-cased with every character but
#: letters and digits removed, and in its words without a plural ``s`` or a trailing container
#: word, so accessToken, access-tokens, ACCESS_TOKEN, x-api-key, apiKeys, client_secrets and
#: credentials_list all match; keys that count tokens (input_tokens, max_tokens, a number
#: under ``tokens``) do not.
DEFAULT_SECRET_KEYS = (
    r"(?i)(?:api_?key|secret|secret_?key|password|passwd|passphrase|token|authorization|auth"
    r"|bearer|private_?key|access_?key|credentials?|cookie)$"
)

_NOT_ALNUM = re.compile(r"[^a-z0-9]")

#: The words of a key in any naming style: ``clientSecrets``, ``API_KEYS``, ``x-api-key``.
_KEY_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

#: Words that, right before ``token(s)``, make the key a count of language-model tokens
#: (``max_tokens``, ``inputTokens``, ``cache_read_input_tokens``), not a credential.
_TOKEN_COUNT_WORDS = frozenset({
    "max", "min", "input", "output", "prompt", "completion", "total", "num", "n", "new",
    "cached", "cache", "reasoning", "budget", "used", "remaining", "thinking", "context",
})

#: Letters and digits before a name the assignment pattern matched (``max_`` in ``max_tokens``).
_NAME_PREFIX = re.compile(r"[A-Za-z0-9_\-]{1,40}$")


def _meaning_words(key: str) -> list[str]:
    """The key's words, lower case, with a trailing container word dropped (``credentials_list``
    means credentials)."""
    words = [word.lower() for word in _KEY_WORD.findall(key)]
    if len(words) > 1 and words[-1] in _CONTAINER_WORDS:
        words.pop()
    return words


def _counts_tokens(words: list[str], is_number: bool) -> bool:
    """Whether a key ending in ``token`` or ``tokens`` counts language-model tokens.

    A count word before it says so (``max_tokens``); so does a plain number under the plural
    (``{"tokens": 3}`` in a usage report), while ``{"tokens": {"github": ...}}`` holds secrets.
    """
    if not words or words[-1] not in ("token", "tokens"):
        return False
    if len(words) > 1 and words[-2] in _TOKEN_COUNT_WORDS:
        return True
    return words[-1] == "tokens" and is_number


class Redactor:
    """Replace secrets in strings and in nested JSON-like data.

    ``patterns`` replaces the defaults; ``extra_patterns`` adds to them. ``secret_keys`` is a
    regex searched in mapping keys (as written, and normalised as :data:`DEFAULT_SECRET_KEYS`
    says) whose values are always redacted whatever their type (``None`` disables it). Strings
    that hold a JSON object or array (tool results are stored as JSON text) are parsed and
    their keys checked the same way.
    """

    __slots__ = ("_gated", "_key_regex", "_passes")

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
        self._gated = secret_keys == DEFAULT_SECRET_KEYS

    def text(self, value: str) -> str:
        """Return ``value`` with every secret replaced by ``[REDACTED]``."""
        lowered = value.lower()
        for regex, hints in self._passes:
            if hints is None or (
                hints(lowered) if callable(hints) else any(h in lowered for h in hints)
            ):
                value = regex.sub(_replacement, value)
        return value

    def dumps(self, value: Any) -> str:
        """Serialize ``value`` to JSON with secrets redacted (what the trace store writes).

        Patterns run on the finished JSON text, which is several times cheaper than on every
        string separately. Secret-named keys need the structure, so it is walked only when the
        text holds a key that could be one (with the default ``secret_keys``; always otherwise).
        """
        text = json.dumps(value, ensure_ascii=False, default=str)
        if self._may_hold_secret_keys(text):
            text = json.dumps(self._redact_keys(value), ensure_ascii=False, default=str)
        return self.text(text)

    def data(self, value: Any) -> Any:
        """Redact every string inside dicts, lists and tuples (a new structure is returned)."""
        return self._walk(value, strings=True)

    def _may_hold_secret_keys(self, text: str) -> bool:
        if self._key_regex is None:
            return False
        return not self._gated or _names_a_secret(text.lower())

    def _redact_keys(self, value: Any) -> Any:
        return self._walk(value, strings=False)

    def _walk(self, value: Any, strings: bool) -> Any:
        if isinstance(value, str):
            value = self._nested_json(value, strings)
            return self.text(value) if strings else value
        if isinstance(value, dict):
            return {
                key: REDACTED if self._is_secret(key, item) else self._walk(item, strings)
                for key, item in value.items()
            }
        if isinstance(value, list | tuple):
            return [self._walk(item, strings) for item in value]
        return value

    def _nested_json(self, value: str, strings: bool) -> str:
        """A string holding a JSON object or array, with its secret-named keys redacted.

        Returned unchanged (same formatting) when it is not JSON or nothing in it is secret.
        """
        if value[:1] not in ("{", "[") and value.lstrip()[:1] not in ("{", "["):
            return value
        if not self._may_hold_secret_keys(value):
            return value
        try:
            parsed = json.loads(value)
        except ValueError:  # not JSON: the text patterns still see it
            return value
        redacted = self._walk(parsed, strings)
        if redacted == parsed:
            return value
        return json.dumps(redacted, ensure_ascii=False, default=str)

    def _is_secret(self, key: object, item: object) -> bool:
        """Whether the key means a secret, whatever its spelling: the regex is searched in the
        key as written, lower-cased without separators, and by its words with a plural or a
        container word dropped (``apiKeys``, ``client_secrets``, ``credentials_list``)."""
        regex = self._key_regex
        if regex is None or not isinstance(key, str) or item is None or item == "":
            return False
        words = _meaning_words(key)
        joined = "".join(words)
        forms = (key, _NOT_ALNUM.sub("", key.lower()), joined, joined.removesuffix("s"))
        if not any(regex.search(form) is not None for form in forms if form):
            return False
        is_number = isinstance(item, int | float) and not isinstance(item, bool)
        return not (self._gated and _counts_tokens(words, is_number))


def _replacement(match: re.Match[str]) -> str:
    """Replace the whole match, or only its ``secret`` group when that group took part.

    A match with a ``name`` group that names a token count (``max_tokens: 10``) is kept.
    """
    if "name" in match.re.groupindex and match.group("name") is not None:
        prefix = _NAME_PREFIX.search(match.string, max(0, match.start() - 40), match.start())
        name = (prefix.group(0) if prefix else "") + match.group("name")
        value = match.group("secret") or ""
        if _counts_tokens(_meaning_words(name), value.replace(".", "", 1).isdigit()):
            return match.group(0)
    if "secret" in match.re.groupindex:
        return _replace_secret_group(match)
    return REDACTED


def _replace_secret_group(match: re.Match[str]) -> str:
    start, end = match.span("secret")
    whole_start = match.start()
    text = match.group(0)
    return text[: start - whole_start] + REDACTED + text[end - whole_start :]
