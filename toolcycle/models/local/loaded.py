"""The weights a process has loaded, and the conversation each one's context holds.

One ``llama_cpp.Llama`` per (file, context size, threads) is shared by every request and
every agent of the process: loading costs a fraction of a second to seconds. A lock
serializes use, since a llama.cpp context is not thread-safe.

**Why a context is started afresh for each conversation.** llama.cpp keeps the tokens it last
evaluated and, on the next request, reuses the longest prefix the new prompt shares with them.
Within one conversation that halves the cost of later turns. Across conversations it makes a
reply depend on what ran before: a prompt evaluated in one batch and the same prompt evaluated
as a cached prefix plus a tail give slightly different logits, and a small greedy model flips
near-ties on them. Measured: a generated task whose answer was right when run alone was wrong
when run after three other tasks, with a fresh agent and playbook and only this shared model
between them (docs/playbook.md, "Held-out seeds"). With ``prefix_cache="conversation"`` (the
default) the context is reused only while a request continues the one before it (the same
messages, with more after them); any other request starts from an empty context, so a run
computes the same tokens whatever ran before it in the process. ``"shared"`` keeps llama.cpp's
own behaviour: the shared system prompt is not evaluated again, at the price of replies that
depend on run order.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ...logs import SETUP_LOG
from .control import ControlText

DEFAULT_SEED = 42

#: What a context reuses from the request before (see the module's docstring).
PrefixCache = Literal["conversation", "shared"]
PREFIX_CACHES: tuple[PrefixCache, ...] = ("conversation", "shared")

ChatPayload = list[dict[str, str]]


@dataclass(slots=True)
class LoadedModel:
    """A loaded ``llama_cpp.Llama``, its lock, and the conversation its context holds."""

    llama: Any
    lock: threading.Lock
    load_seconds: float
    #: Its vocabulary's control tokens, which no message text may become (:mod:`.control`).
    control: ControlText
    #: The messages of the last request evaluated here (read and written under ``lock``).
    last_request: ChatPayload = field(default_factory=list)

    def begin(self, payload: ChatPayload, prefix_cache: PrefixCache) -> None:
        """Get the context ready for ``payload``; call with ``lock`` held, before evaluating.

        Under ``"conversation"`` the context is emptied unless ``payload`` continues the last
        request: every message of that request, in order, followed by at least one more. A
        retry of the same request (a refused reply asked again) also starts afresh, as it
        would have if it had run first.
        """
        continues = (len(payload) > len(self.last_request) > 0
                     and payload[:len(self.last_request)] == self.last_request)
        if prefix_cache == "conversation" and not continues:
            self.llama.reset()
        self.last_request = [dict(m) for m in payload]


_LOADED: dict[tuple[str, int, int], LoadedModel] = {}
_LOADING = threading.Lock()
_SETUP = logging.getLogger(SETUP_LOG)


@atexit.register
def unload_all() -> None:
    """Free every loaded model (at exit, while the native library is still there to do it)."""
    with _LOADING:
        for entry in _LOADED.values():
            with entry.lock:
                entry.llama.close()
        _LOADED.clear()


def loaded(path: Path, n_ctx: int, n_threads: int) -> LoadedModel:
    """The process-wide loaded model for ``path`` (loaded on first use)."""
    key = (str(path), n_ctx, n_threads)
    with _LOADING:
        entry = _LOADED.get(key)
        if entry is None:
            try:
                import llama_cpp
            except ImportError as exc:
                raise ImportError(
                    "local models need llama-cpp-python: pip install 'toolcycle[local]'"
                ) from exc
            started = time.perf_counter()
            _SETUP.info("loading %s (%.1f GiB) into memory...", path.name, _gib(path))
            llama = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads,
                seed=DEFAULT_SEED,
                verbose=False,
            )
            load_seconds = time.perf_counter() - started
            entry = LoadedModel(llama, threading.Lock(), load_seconds,
                                ControlText.of_model(llama, path.name))
            _SETUP.info("loaded %s in %.1f s", path.name, entry.load_seconds)
            _LOADED[key] = entry
        return entry


def prefix_cache_option(written: str | None, text: str) -> PrefixCache:
    """A model string's ``prefix_cache=`` value (``"conversation"`` when absent)."""
    if written is None:
        return "conversation"
    value = written.strip().lower()
    for known in PREFIX_CACHES:
        if value == known:
            return known
    raise ValueError(f"prefix_cache={written!r} in {text!r}: use "
                     f"{' or '.join(PREFIX_CACHES)}")


def _gib(path: Path) -> float:
    try:
        return path.stat().st_size / 2**30
    except OSError:
        return 0.0


__all__: Sequence[str] = ("DEFAULT_SEED", "PREFIX_CACHES", "LoadedModel", "PrefixCache",
                          "loaded", "prefix_cache_option", "unload_all")
