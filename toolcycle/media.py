"""Images, documents and audio in a conversation: :class:`MediaPart`.

A user message may carry media beside its text (``Message.user("What is this?",
MediaPart.from_file("chart.png"))``). Each cloud adapter sends it in its provider's own form
(OpenAI chat ``image_url`` / ``file`` / ``input_audio``, Responses ``input_image`` /
``input_file``, Anthropic ``image`` / ``document`` blocks, Gemini ``inline_data``); a model
that cannot take a kind (the local text models, the text protocols; audio on Anthropic)
refuses the request with :class:`UnsupportedMedia`, which names the kind and the model,
instead of silently dropping what the user asked about.

The bytes never reach a trace or a log: :meth:`MediaPart.describe` (media type, size and a
SHA-256 digest) stands for them there, so a screenshot of a secret or a 20 MB PDF is neither
inlined nor leaked, while two runs over the same file can still be told to share it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ._media_part import MAX_MEDIA_BYTES, MEDIA_TYPES, MediaError, MediaKind, MediaPart
from .errors import ToolcycleError
from .messages import Message

__all__ = ["MAX_MEDIA_BYTES", "MEDIA_TYPES", "MediaError", "MediaKind", "MediaPart",
           "UnsupportedMedia", "media_in", "refuse_media"]


class UnsupportedMedia(ToolcycleError, ValueError):
    """The model cannot take a kind of media that is in the conversation."""


def media_in(messages: Iterable[Message]) -> list[MediaPart]:
    """Every media part of ``messages``, in order."""
    return [p for m in messages for p in m.parts if isinstance(p, MediaPart)]


def refuse_media(messages: Sequence[Message], model: str,
                 accepted: frozenset[MediaKind] = frozenset()) -> None:
    """Raise :class:`UnsupportedMedia` if ``messages`` hold a kind of media ``model`` cannot
    take (``accepted``: the kinds it can)."""
    refused = sorted({p.media_kind for p in media_in(messages)} - accepted)
    if refused:
        takes = ", ".join(sorted(accepted)) or "only text"
        raise UnsupportedMedia(
            f"model {model!r} cannot take {' or '.join(refused)} input (it takes {takes}); "
            f"use a model that does (OpenAI, Anthropic, Gemini) or leave the "
            f"{' and '.join(refused)} out")
