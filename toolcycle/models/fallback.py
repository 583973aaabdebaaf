"""``FallbackModel([primary, secondary, ...])``: when a model fails, the next one answers.

Each model keeps its own retries (:mod:`toolcycle.models.retry`): the next model is asked only
once a model has raised a :class:`~toolcycle.errors.ModelError` after them (a 429 that stayed
a 429, a 5xx, a dead connection). The conversation is the neutral message list, which every
adapter converts to its own wire, so an OpenAI model's tool calls continue on Anthropic and the
other way round. Every request starts again with the primary: a fallback covers an outage of
one request, it is not a switch for the rest of the run.

Never a fallback: cancellation (``CancelledError`` is no ``ModelError``), a configuration
error, or a tool's failure (tools fail into observations, never into the model's request).
``fall_back_on`` narrows or widens what counts (exception types or a predicate).

A model that failed still counts in the reply's usage: its request, and what it had been
served before failing (:mod:`toolcycle.models.paid`).

Streaming falls back only before the first streamed item: once a model's deltas have reached
the caller, switching would show two answers in one, so a later failure propagates.

The answering model's name is on each reply (``Message.model_name``) and so on each trace step
(``Step.model``), shown by ``toolcycle trace show`` and the HTML viewer.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence

from ..errors import ConfigurationError, ModelError
from ..messages import Message, Usage
from ..pricing import Price
from . import resolve_model
from .base import Model, ModelSettings, OutputMode, StreamItem, usage_of
from .paid import paid_before, paying

_log = logging.getLogger(__name__)

FallbackRule = tuple[type[BaseException], ...] | Callable[[BaseException], bool]


class FallbackModel(Model):
    """Ask ``models`` in order for each request until one answers (see the module docstring).

    Models are :class:`Model` objects or model strings. When every model fails, the last
    model's error is raised, with a note naming each earlier failure.
    """

    system = "fallback"

    def __init__(self, models: Sequence[Model | str], *,
                 fall_back_on: FallbackRule = (ModelError,), name: str | None = None) -> None:
        problems: list[str] = []
        resolved: list[Model] = []
        if isinstance(models, str | Model) or not isinstance(models, Sequence):
            problems.append("models must be a list of models or model strings")
            models = ()
        for item in models:
            try:
                if not isinstance(item, Model | str):
                    raise ValueError(f"not a model: {type(item).__name__}")
                resolved.append(resolve_model(item))
            except (ValueError, ImportError) as exc:
                problems.append(f"models[{len(resolved)}]: {exc}")
        if not problems and len(resolved) < 2:
            problems.append("a FallbackModel needs at least two models")
        if not (callable(fall_back_on) and not isinstance(fall_back_on, tuple)) and not (
                isinstance(fall_back_on, tuple) and all(
                    isinstance(t, type) and issubclass(t, BaseException) for t in fall_back_on)):
            problems.append("fall_back_on must be a tuple of exception types or a predicate")
        if problems:
            raise ConfigurationError(problems, subject="FallbackModel")
        self.models = tuple(resolved)
        self.fall_back_on = fall_back_on
        self.name = name or " | ".join(m.name for m in resolved)

    def context_tokens(self) -> int | None:
        """Any of the models may serve a request: the smallest window known among them."""
        windows = [w for w in (m.context_tokens() for m in self.models) if w is not None]
        return min(windows) if windows else self.context_window

    def output_modes(self) -> tuple[OutputMode, ...]:
        """The modes every model takes, in the first model's order (any may answer)."""
        first, *rest = (m.output_modes() for m in self.models)
        shared = tuple(mode for mode in first if all(mode in other for other in rest))
        return shared or ("tool",)

    def pricing(self, answered_by: str | None = None) -> Price | None:
        """The price of the model that answered (named by the reply's ``model_name``), or
        this model's own ``price`` when given. A request that failed on every model has no
        answering model: its tokens (nearly always none, which cost nothing) are unknown.
        What a model that failed had been served is priced with the reply that followed."""
        if self.price is not None:
            return self.price
        for model in self.models:
            if model.name == answered_by:
                return model.pricing(answered_by)
        return None

    def unpriced(self) -> tuple[str, ...]:
        """Any of the models may answer: each must be priced."""
        if self.price is not None:
            return ()
        return tuple(name for model in self.models for name in model.unpriced())

    def _falls_back(self, exc: BaseException) -> bool:
        rule = self.fall_back_on
        if isinstance(rule, tuple):
            return isinstance(exc, rule)
        return bool(rule(exc))

    async def request(self, messages: Sequence[Message], settings: ModelSettings) -> Message:
        failures: list[tuple[Model, BaseException]] = []
        spent = Usage()  # what the models that failed had paid (toolcycle.models.paid)
        with paying(spent, []):
            for index, model in enumerate(self.models):
                try:
                    reply = await model.request(messages, settings)
                except Exception as exc:
                    if index == len(self.models) - 1 or not self._falls_back(exc):
                        _add_notes(exc, failures)
                        raise
                    _log.warning("model %s failed (%s); falling back to %s", model.name, exc,
                                 self.models[index + 1].name)
                    failures.append((model, exc))
                    spent.add(paid_before(exc).usage)
                    continue
                if reply.model_name is None:
                    reply.model_name = model.name
                return _with_spent(reply, spent)
        raise AssertionError("unreachable: the last model's failure is raised")

    async def stream(self, messages: Sequence[Message], settings: ModelSettings,
                     ) -> AsyncIterator[StreamItem]:
        failures: list[tuple[Model, BaseException]] = []
        spent = Usage()
        with paying(spent, []):
            for index, model in enumerate(self.models):
                started = False
                try:
                    async for item in model.stream(messages, settings):
                        started = True
                        if item.kind == "response":
                            if item.message.model_name is None:
                                item.message.model_name = model.name
                            _with_spent(item.message, spent)
                        yield item
                    return
                except Exception as exc:
                    if started or index == len(self.models) - 1 or not self._falls_back(exc):
                        _add_notes(exc, failures)
                        raise
                    _log.warning("model %s failed before streaming (%s); falling back to %s",
                                 model.name, exc, self.models[index + 1].name)
                    failures.append((model, exc))
                    spent.add(paid_before(exc).usage)

    def load(self) -> None:
        """Only the first model: the others are asked when it fails, and may never be."""
        self.models[0].load()

    async def aclose(self) -> None:
        for model in self.models:
            await model.aclose()

    def __repr__(self) -> str:
        return f"FallbackModel({[m.name for m in self.models]!r})"


def _with_spent(reply: Message, spent: Usage) -> Message:
    """``reply`` with what the models that failed before it had paid added to its usage: a
    failed request counts, as in the loop, and a text protocol's reply served before its
    failure cost tokens."""
    if spent.requests:
        usage = usage_of(reply).copy()
        usage.add(spent)
        reply.usage = usage
    return reply


def _add_notes(exc: BaseException, failures: list[tuple[Model, BaseException]]) -> None:
    for model, earlier in failures:
        exc.add_note(f"model {model.name} failed first: {earlier}")
