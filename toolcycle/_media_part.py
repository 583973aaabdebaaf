"""The media part of a message (:class:`MediaPart`), apart from :mod:`toolcycle.media` so the
neutral messages can hold one without importing the errors module (which imports them back).
See :mod:`toolcycle.media` for what media does in a run."""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from typing import Literal

MediaKind = Literal["image", "document", "audio"]

#: The media types toolcycle sends, by kind: the intersection providers document for inline
#: data. Anything else is refused where the part is made, not by a provider mid-run.
MEDIA_TYPES: dict[str, MediaKind] = {
    "image/png": "image", "image/jpeg": "image", "image/gif": "image", "image/webp": "image",
    "application/pdf": "document",
    "audio/wav": "audio", "audio/mpeg": "audio",
}

#: The largest part accepted (bytes): providers refuse inline data past about 20 MB.
MAX_MEDIA_BYTES = 20 * 1024 * 1024


class MediaError(ValueError):
    """A media part that cannot be made: unknown media type, empty or oversized data.

    A plain ``ValueError`` subclass: this module sits below :mod:`toolcycle.errors` (the
    messages import it), so it cannot take ``ToolcycleError`` as a base."""


@dataclass(frozen=True, slots=True)
class MediaPart:
    """An image, a document (PDF) or audio clip, as bytes and their media type."""

    data: bytes = field(repr=False)
    media_type: str
    #: A file name, sent where a provider wants one (a document's ``filename``).
    name: str | None = None
    kind: Literal["media"] = "media"

    def __post_init__(self) -> None:
        problems = []
        if not isinstance(self.data, bytes):
            problems.append(f"data must be bytes, got {type(self.data).__name__}")
        elif not self.data:
            problems.append("data is empty")
        elif len(self.data) > MAX_MEDIA_BYTES:
            problems.append(f"data is {len(self.data):,} bytes, over {MAX_MEDIA_BYTES:,}")
        if self.media_type not in MEDIA_TYPES:
            problems.append(f"media type {self.media_type!r} is not one of "
                            f"{', '.join(MEDIA_TYPES)}")
        if self.name is not None and not isinstance(self.name, str):
            problems.append(f"name must be a string, got {type(self.name).__name__}")
        if problems:
            raise MediaError("media part: " + "; ".join(problems))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], media_type: str | None = None
                  ) -> MediaPart:
        """Read a file; its media type is guessed from its extension unless given."""
        import mimetypes  # only here: a plain run loads no module it does not use

        name = os.path.basename(os.fspath(path))
        guessed = media_type or mimetypes.guess_type(name)[0]
        if guessed is None:
            raise MediaError(f"media part: cannot tell the media type of {name!r}; pass "
                             f"media_type=")
        with open(path, "rb") as file:
            return cls(file.read(), guessed, name)

    @property
    def media_kind(self) -> MediaKind:
        return MEDIA_TYPES[self.media_type]

    @property
    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    @property
    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.base64}"

    @property
    def digest(self) -> str:
        import hashlib  # only here: a plain run loads no module it does not use

        return hashlib.sha256(self.data).hexdigest()

    def describe(self) -> str:
        """What traces, logs and text show instead of the bytes."""
        return (f"[{self.media_kind}: {self.media_type}, {len(self.data):,} bytes, "
                f"sha256 {self.digest[:16]}]")

    def summary(self) -> dict[str, object]:
        """The part as trace data: no bytes."""
        summary: dict[str, object] = {"media_type": self.media_type, "bytes": len(self.data),
                                      "sha256": self.digest}
        if self.name is not None:
            summary["name"] = self.name
        return summary


