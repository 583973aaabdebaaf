"""Message text stays text: a local model's control tokens come only from its chat template.

llama-cpp-python renders the chat template and tokenizes the *whole* rendered prompt with
``special=True`` (``llama_chat_format.chat_formatter_to_chat_completion_handler``), so the
text of a control token inside a message (``<|im_end|>``, ``<|im_start|>``, ``<|endoftext|>``,
Qwen's ``<|fim_prefix|>``, Llama 3's ``<|eot_id|>``, Gemma's ``<start_of_turn>``...) becomes
that token. A tool result, a tool description, an MCP server's output, a retrieved chunk or
the user's text could then close its own turn and open a forged ``system`` or ``assistant``
turn that the model cannot tell from a real one. The principle held here: only the template's
own markers are control tokens; everything that came from a message is text.

How: every occurrence of a control token's text in a message is broken by a WORD JOINER
(U+2060) after its first character before the template sees it, so it reads the same to a
person and tokenizes as the text ``special=False`` would give, never as the token. The other
way, rendering the template around placeholders and tokenizing contents with
``special=False``, was not taken: templates transform content (``trim``, Qwen3's split on
``</think>``), so placeholders would change what a template renders, and the prompt would no
longer go through llama-cpp-python's own chat handler (stop words, response formats,
streaming chunks), which every request path shares today.

The token texts are read from the loaded model's vocabulary (the tokens whose attribute is
``CONTROL`` or ``UNKNOWN``: exactly those ``special=True`` parses and ``special=False`` does
not), never from a list of one family's markers. ``USER_DEFINED`` tokens (Qwen's
``<tool_call>``) are matched by llama.cpp whatever ``special`` says, like any other text: they
are left as they are. The template writes whole markers next to a message, so a control
token's text can only be formed inside one; a message ending in a piece of one
(``...<|im_``) is followed by a whole marker and stays text (tests/local/test_control_text.py).

Only what is sent to llama.cpp changes: the messages, and so the trace, keep what was written.

A model behind ``llama_cpp.server`` (or another server that renders a GGUF's template) is
exposed the same way on the server's side, and the OpenAI API does not say what its
vocabulary is. ``openai-compatible:...?control_tokens=<pack or .gguf>`` names the model's file
(:meth:`ControlText.of_gguf`), and the adapter then neutralises every string of the request
body's messages and tool definitions (:meth:`ControlText.neutralise_json`) before sending.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import ModelError
from ...messages import Message

#: Invisible characters that break a marker's text, first choice first: one no control token
#: of the vocabulary contains is used (a marker that contained it could be formed by the break).
SEPARATORS = ("\u2060", "\u200b", "\ufeff")
#: Keys whose string is media data (a data URL, base64), not text a template writes out.
MEDIA_KEYS = frozenset({"url", "image_url", "file_data", "data"})
#: What a one-character control token's text becomes, nothing can be inserted inside it (unless
#: a control token contains it: then the separator alone).
REPLACEMENT = "\ufffd"


@dataclass(frozen=True, slots=True)
class ControlText:
    """The control tokens' texts of one vocabulary, and how message text is kept clear of them."""

    texts: frozenset[str]
    separator: str = SEPARATORS[0]
    replacement: str = REPLACEMENT
    _pattern: re.Pattern[str] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of_texts(cls, texts: Iterable[str], model_name: str = "the model") -> ControlText:
        """From the control tokens' texts (empty ones are never matched, so left out)."""
        kept = frozenset(t for t in texts if t)
        separator = next((s for s in SEPARATORS if not any(s in t for t in kept)), None)
        if separator is None:
            raise ModelError(f"{model_name}: every separator character is inside one of its "
                             "control tokens; message text cannot be kept apart from them")
        replacement = REPLACEMENT if not any(REPLACEMENT in t for t in kept) else separator
        if not kept:
            return cls(kept, separator, replacement)
        # The longest first, so that a marker is broken as a whole, not a shorter one inside it.
        alternatives = sorted(kept, key=len, reverse=True)
        pattern = re.compile("|".join(re.escape(t) for t in alternatives))
        return cls(kept, separator, replacement, pattern)

    @classmethod
    def of_model(cls, llama: Any, model_name: str = "the model") -> ControlText:
        """From a loaded ``llama_cpp.Llama`` (``vocab_only=True`` is enough): its vocabulary's
        ``CONTROL`` and ``UNKNOWN`` tokens, as llama.cpp's tokenizer matches them (the raw
        token text). A text that is not UTF-8 cannot occur in a message's UTF-8 except inside
        one character, where it is no marker a template writes; it is left out."""
        from llama_cpp import llama_cpp as native

        vocab = native.llama_model_get_vocab(llama.model)
        wanted = native.LLAMA_TOKEN_ATTR_CONTROL | native.LLAMA_TOKEN_ATTR_UNKNOWN
        texts: list[str] = []
        for token in range(native.llama_vocab_n_tokens(vocab)):
            if native.llama_vocab_get_attr(vocab, token) & wanted:
                raw = native.llama_vocab_get_text(vocab, token) or b""
                try:
                    texts.append(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    continue
        return cls.of_texts(texts, model_name)

    @classmethod
    def of_gguf(cls, path: str | Path) -> ControlText:
        """From a GGUF file's vocabulary (read without its weights)."""
        from llama_cpp import Llama

        llama = Llama(model_path=str(path), vocab_only=True, verbose=False)
        try:
            return cls.of_model(llama, Path(path).name)
        finally:
            llama.close()

    def neutralise(self, text: str) -> str:
        """``text`` with no control token's text left in it; the same text when it had none.

        Each occurrence gets the separator after its first character. Breaking one may leave
        another that overlapped it whole (``<|a|>`` and ``|a|>``), so this repeats until none
        is left: each round breaks at least one occurrence the text had at the start, and an
        inserted character cannot form a new one (no control text contains it). A
        one-character marker, which nothing can be inserted into, becomes U+FFFD.
        """
        pattern = self._pattern
        if pattern is None:
            return text
        while pattern.search(text) is not None:
            text = pattern.sub(self._break, text)
        return text

    def _break(self, found: re.Match[str]) -> str:
        marker = found[0]
        if len(marker) == 1:
            return self.replacement
        return marker[0] + self.separator + marker[1:]

    def neutralise_json(self, value: Any) -> Any:
        """A JSON value (a request body's messages or tools) with every string neutralised,
        keys and media data (:data:`MEDIA_KEYS`) left as they are; ``value`` is not changed."""
        if isinstance(value, str):
            return self.neutralise(value)
        if isinstance(value, list):
            return [self.neutralise_json(item) for item in value]
        if isinstance(value, dict):
            return {key: item if key in MEDIA_KEYS and isinstance(item, str)
                    else self.neutralise_json(item) for key, item in value.items()}
        return value

    def chat_payload(self, messages: Sequence[Message]) -> list[dict[str, str]]:
        """The messages as ``create_chat_completion`` takes them, their text neutralised."""
        return [{"role": m.role, "content": self.neutralise(m.text)} for m in messages]
