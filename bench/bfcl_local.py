"""BFCL single-turn tool-calling accuracy of the shipped local models, toolcycle vs. raw paths.

Side by side, on the same entries of each category (the first ``--entries`` of each), with the
same GGUF and greedy decoding:

- toolcycle's text protocols: ``json`` (JsonToolsModel), ``json+grammar`` (constrained) and
  ``react`` (ReActModel), each the adapter's first reply to the question; ``json+parallel``
  and ``json+grammar+parallel`` set ``parallel_tool_calls``, which lets one reply hold a list
  of calls (the default protocol asks for one call per reply); ``+select`` offers only the
  tools :class:`~toolcycle.tool_selection.ToolSelection` keeps for the question;
  ``json+lazy+parallel+select`` lets the model decide freely and writes its calls under the
  grammar (``constrained="lazy"``);
- ``llama-cpp fc``: llama-cpp-python's own function-calling chat handler in process
  (``chat_format="chatml-function-calling"``, ``tool_choice="auto"``);
- ``server+openai``: ``python -m llama_cpp.server --chat_format chatml-function-calling`` on
  127.0.0.1 with the official ``openai`` SDK (started here, stopped by PID).

Graded by BFCL's own AST checker (``bfcl_eval``, installed by ``make test``); ``irrelevance``
is right when no function is called. Names are mapped back to BFCL's with toolcycle's BFCL
importer (tests/conformance reads the same data). Prints accuracy per category, tokens and
seconds per call, with the overall accuracy's 95 % Wilson interval and, with ``--log``, each arm
paired against the first by question (exact sign test): the intervals and tests of
``toolcycle.evals``, so these figures are computed as users' eval reports compute theirs. (The
arms are model adapters and raw llama.cpp paths, not agents, so they are not run as
``Experiment``s.) CPU-heavy: run it under ``nice``.

    nice -n 10 .venv/bin/python bench/bfcl_local.py --model qwen2.5-coder-0.5b --entries 100
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import socket
import subprocess
import sys
import time
import types
import urllib.request
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Literal

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from toolcycle.evals.stats import sign_test, wilson
from toolcycle.messages import Message, TextPart, ToolCall
from toolcycle.models.base import Model, ModelSettings, ToolDefinition
from toolcycle.models.local.llama import DEFAULT_SEED, LlamaChatModel, load_llama
from toolcycle.models.local.packs import pack_path
from toolcycle.models.text.hermes import HermesToolsModel
from toolcycle.models.text.protocol import JsonToolsModel
from toolcycle.models.text.react import ReActModel
from toolcycle.spec.formats.bfcl import import_functions
from toolcycle.tool_selection import ToolSelection

PROTOCOLS = ("json", "hermes", "react")
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance")
DATA = Path(str(resources.files("bfcl_eval") / "data"))
MAX_TOKENS = 256
#: A raw arm's question that runs longer is stopped and counted as a miss (llama.cpp's
#: function-calling handler spent minutes on a few questions: 170 s on parallel_multiple_36,
#: over 4 minutes on irrelevance_8 through the server); typical questions take 1-5 s.
DEADLINE_S = 60.0


def _checker() -> Callable[..., dict[str, Any]]:
    """BFCL's AST checker. Its model-config module pulls in every provider SDK and
    tree-sitter; the checker only reads ``underscore_to_dot`` from it, so a one-entry table
    stands in (names are mapped back to BFCL's here already)."""
    @dataclass
    class Config:
        underscore_to_dot: bool = False

    config = types.ModuleType("bfcl_eval.constants.model_config")
    config.MODEL_CONFIG_MAPPING = {"toolcycle": Config()}  # type: ignore[attr-defined]
    sys.modules.setdefault("bfcl_eval.constants.model_config", config)
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    return ast_checker  # type: ignore[no-any-return]


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@dataclass
class Case:
    category: str
    entry: dict[str, Any]
    answer: list[Any] | None
    tools: tuple[ToolDefinition, ...]
    to_bfcl: dict[str, str]


def spread_indices(size: int, count: int) -> list[int]:
    """``count`` indices spread evenly over a file of ``size`` entries: the middle of each of
    ``count`` equal slices, ``floor((2i + 1) * size / (2 * count))`` for ``i`` in
    ``0..count-1`` (every index when ``count >= size``). Nothing is skipped for any reason:
    which entries are graded follows from the file's length alone, fixed before any run."""
    if count >= size:
        return list(range(size))
    return [(2 * i + 1) * size // (2 * count) for i in range(count)]


def spread_order(count: int) -> list[int]:
    """Positions ``0..count-1`` in bit-reversed (van der Corput) order: 0, the middle, the
    quarters, ... so that every prefix of a run in this order is itself spread over the whole
    file (a run stopped after K entries of each category has not graded only the file's
    start, which earlier configurations were tuned on)."""
    bits = max(1, (count - 1).bit_length())
    slots = sorted(range(1 << bits), key=lambda k: int(f"{k:0{bits}b}"[::-1], 2))
    return [k for k in slots if k < count]


def spread_selection(count: int, categories: tuple[str, ...] = CATEGORIES
                     ) -> dict[str, dict[str, Any]]:
    """Per category: the file's size, the spread indices and their BFCL ids."""
    chosen: dict[str, dict[str, Any]] = {}
    for category in categories:
        items = _jsonl(DATA / f"BFCL_v4_{category}.json")
        indices = spread_indices(len(items), count)
        chosen[category] = {"size": len(items), "indices": indices,
                            "ids": [items[i]["id"] for i in indices],
                            "run_order": [items[indices[k]]["id"] for k in spread_order(
                                len(indices))],
                            "in_first_100": sum(i < 100 for i in indices)}
    return chosen


def pilot_indices(count: int, graded: int, categories: tuple[str, ...] = CATEGORIES
                  ) -> dict[str, list[int]]:
    """``count`` indices per category for choosing a configuration: spread evenly (the same
    formula) over the entries that are neither in the first 100 (tuned on before) nor in the
    ``graded``-entry spread selection, so a pilot never sees a graded question."""
    chosen: dict[str, list[int]] = {}
    for category, picked in spread_selection(graded, categories).items():
        outside = [i for i in range(100, picked["size"]) if i not in set(picked["indices"])]
        chosen[category] = [outside[j] for j in spread_indices(len(outside), count)]
    return chosen


def round_robin(selected: list[Case]) -> list[Case]:
    """The first entry of every category, then the second of each, ...: a run stopped at
    any point has run the same number of entries (give or take one) in every category."""
    by_category: dict[str, list[Case]] = defaultdict(list)
    for case in selected:
        by_category[case.category].append(case)
    longest = max((len(v) for v in by_category.values()), default=0)
    return [cs[k] for k in range(longest) for cs in by_category.values() if k < len(cs)]


def cases(entries: int, categories: tuple[str, ...] = CATEGORIES, start: int = 0,
          indices: dict[str, list[int]] | None = None) -> list[Case]:
    """``entries`` entries of each category from the ``start``-th, or, with ``indices``, the
    entries at those indices of each category's file (``--spread``), in that order."""
    out = []
    for category in categories:
        every = _jsonl(DATA / f"BFCL_v4_{category}.json")
        items = (every[start:start + entries] if indices is None
                 else [every[i] for i in indices[category]])
        answers = {} if category.endswith("irrelevance") else {
            a["id"]: a["ground_truth"]
            for a in _jsonl(DATA / "possible_answer" / f"BFCL_v4_{category}.json")}
        for entry in items:
            functions, _ = import_functions(entry["function"])
            tools = tuple(ToolDefinition(f.spec.name, f.spec.description, f.spec.parameters)
                          for f in functions)
            out.append(Case(category, entry, answers.get(entry["id"]), tools,
                            {f.spec.name: f.bfcl_name for f in functions}))
    return out


def question(case: Case) -> list[dict[str, str]]:
    return [{"role": m["role"], "content": m["content"]} for m in case.entry["question"][0]]


@dataclass
class Outcome:
    calls: list[dict[str, Any]]
    tokens: int
    seconds: float
    raw: str = ""
    #: With ``+further``: the calls of the first reply alone, which is the same arm's reply
    #: without further calls (greedy decoding: the same first request), graded beside it so
    #: one run pairs the two on every entry (logged as ``first_right``).
    first_calls: list[dict[str, Any]] | None = None
    #: Requests made to the inner model (2 where the further calls were asked for).
    requests: int = 1
    #: Replies the model was asked again after (``Message.asked_again``: with ``+invented``,
    #: the calls given values no source gives; logged so a run can be paired on them).
    asked_again: int = 0
    #: With ``+furtherN``: how many of ``calls`` there were after each further-calls round,
    #: so one run grades the arm with 1, 2, ... N rounds (greedy decoding: the arm with fewer
    #: rounds makes the same first requests; logged as ``right_by_round``).
    round_calls: list[int] | None = None


# -- the arms ---------------------------------------------------------------------------------


def toolcycle_arm(model: Model, parallel: bool = False,
                  selection: ToolSelection | None = None) -> Callable[[Case], Outcome]:
    written: list[str] = []  # what the inner model wrote for this case (for --show)
    rounds: list[int] = []  # the calls after each further-calls round (``with_further``)
    if isinstance(model, JsonToolsModel) and model.further_rounds > 1:
        from toolcycle.models.text import further
        merge = further.with_further

        def counting(*args: Any, **kwargs: Any) -> Message:
            merged = merge(*args, **kwargs)
            rounds.append(len(merged.tool_calls))
            return merged
        further.with_further = counting  # bench-only: count the calls after each round
    cut: list[bool] = []  # whether each of those replies stopped at the token limit
    if isinstance(model, JsonToolsModel | ReActModel):
        inner, ask = model.inner, model.inner.request

        async def recording(messages: Any, settings: ModelSettings) -> Message:
            reply = await ask(messages, settings)
            written.append(reply.text)
            cut.append(reply.finish_reason == "length")
            return reply
        inner.request = recording  # type: ignore[method-assign]

    def run(case: Case) -> Outcome:
        written.clear()
        cut.clear()
        rounds.clear()
        messages = [Message(m["role"], [TextPart(m["content"])])  # type: ignore[arg-type]
                    for m in question(case)]
        tools = case.tools if selection is None else selection.select(
            "\n".join(m["content"] for m in question(case) if m["role"] == "user"), case.tools)
        settings = ModelSettings(tools=tools, temperature=0.0, seed=DEFAULT_SEED,
                                 parallel_tool_calls=parallel or None,
                                 max_tokens=MAX_TOKENS)
        started = time.perf_counter()
        reply = asyncio.run(model.request(messages, settings))
        seconds = time.perf_counter() - started
        calls = [{case.to_bfcl.get(c.name, c.name): c.arguments or {}} for c in reply.tool_calls]
        first = None
        if isinstance(model, JsonToolsModel) and model.further_calls and written:
            first = [{case.to_bfcl.get(c.name, c.name): c.arguments or {}} for c in
                     model.parse_reply(written[0], tools, "first", truncated=cut[0])
                     if isinstance(c, ToolCall)]
        usage = reply.usage
        return Outcome(calls, usage.output_tokens if usage else 0, seconds,
                       " / ".join(written)[:600], first, max(1, len(written)),
                       len(reply.asked_again),
                       list(rounds) if isinstance(model, JsonToolsModel)
                       and model.further_rounds > 1 else None)
    return run


def toolcycle_arm_named(arm: str, chat: Model) -> Callable[[Case], Outcome]:
    """The toolcycle arm an arm name spells: ``json``, ``hermes`` (the model's own format,
    :class:`HermesToolsModel`) or ``react``, then any of ``+grammar``
    (every reply under the grammar), ``+lazy`` (the grammar only once a free reply called a
    tool), ``+parallel`` (list replies), ``+select`` (tool selection), ``+further`` (a list
    that leaves request values out is asked for the further calls:
    ``JsonToolsModel(further_calls=True)``; ``+furtherN``: at most N rounds of them instead
    of the library's ``FURTHER_ROUNDS``), ``+invented`` (the question about invented
    values), ``+args`` (the tool list says what each argument means: ``argument_notes``),
    ``+noargs`` (it does not)."""
    protocol, *features = arm.split("+")
    further_rounds = next((int(f.removeprefix("further")) for f in features
                           if f.startswith("further") and f[7:].isdigit()), None)
    features = ["further" if f.startswith("further") else f for f in features]
    unknown = set(features) - {"grammar", "lazy", "parallel", "select", "further", "invented",
                               "args", "noargs"}
    if unknown or protocol not in PROTOCOLS or {"grammar", "lazy"} <= set(features):
        raise SystemExit(f"unknown arm {arm!r}")
    constrained: bool | Literal["lazy"] = "lazy" if "lazy" in features else "grammar" in features
    model: Model = (JsonToolsModel(chat, constrained=constrained,
                                   further_calls="further" in features,
                                   invented_values="invented" in features) if protocol == "json"
                    else HermesToolsModel(chat, constrained=constrained,
                                          further_calls="further" in features,
                                          invented_values="invented" in features)
                    if protocol == "hermes"
                    else ReActModel(chat))
    if isinstance(model, JsonToolsModel) and further_rounds is not None:
        model.further_rounds = further_rounds
    if isinstance(model, JsonToolsModel) and not isinstance(model, HermesToolsModel) and {
            "args", "noargs"} & set(features):
        model.argument_notes = "args" in features
    return toolcycle_arm(model, parallel="parallel" in features,
                         selection=ToolSelection() if "select" in features else None)


def _openai_tools(case: Case) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.parameters}} for t in case.tools]


def _calls_of(case: Case, tool_calls: list[Any] | None) -> list[dict[str, Any]]:
    calls = []
    for call in tool_calls or []:
        function = call["function"] if isinstance(call, dict) else call.function
        name = function["name"] if isinstance(function, dict) else function.name
        raw = function["arguments"] if isinstance(function, dict) else function.arguments
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            arguments = {"<unparsed>": raw}
        calls.append({case.to_bfcl.get(name, name): arguments})
    return calls


def _llama_fc_worker(path: str, threads: int, conn: Any) -> None:
    """The in-process handler, in a child process: a question that runs past the deadline
    cannot be interrupted inside llama.cpp (an exception raised in a logits processor is
    swallowed by the C callback), so the parent kills this process and starts another."""
    import llama_cpp

    llama = llama_cpp.Llama(model_path=path, n_ctx=4096, n_threads=threads, seed=DEFAULT_SEED,
                            chat_format="chatml-function-calling", verbose=False)
    conn.send("ready")
    while True:
        request = conn.recv()
        if request is None:
            return
        messages, tools = request
        conn.send(llama.create_chat_completion(
            messages=messages, tools=tools, tool_choice="auto", temperature=0.0,
            max_tokens=MAX_TOKENS, seed=DEFAULT_SEED))


def llama_fc_arm(path: Path, threads: int) -> tuple[Callable[[Case], Outcome],
                                                     Callable[[], None]]:
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    worker: list[Any] = []  # [process, connection] while one runs

    def start() -> None:
        parent, child = context.Pipe()
        process = context.Process(target=_llama_fc_worker, args=(str(path), threads, child),
                                  daemon=True)
        process.start()
        if parent.recv() != "ready":
            raise RuntimeError("llama-cpp worker did not start")
        worker[:] = [process, parent]

    def stop() -> None:
        if worker:
            process, connection = worker
            process.kill()
            process.join()
            connection.close()
            worker.clear()

    start()

    def run(case: Case) -> Outcome:
        connection = worker[1]
        started = time.perf_counter()
        connection.send((question(case), _openai_tools(case)))
        if not connection.poll(DEADLINE_S):
            seconds = time.perf_counter() - started
            stop()
            start()
            return Outcome([], 0, seconds, f"timed out ({DEADLINE_S:.0f} s), worker restarted")
        response = connection.recv()
        seconds = time.perf_counter() - started
        message = response["choices"][0]["message"]
        tokens = (response.get("usage") or {}).get("completion_tokens", 0)
        return Outcome(_calls_of(case, message.get("tool_calls")), tokens, seconds,
                       str(message.get("content") or "")[:300])
    return run, stop


def server_arm(path: Path, threads: int) -> tuple[Callable[[Case], Outcome], Callable[[], None]]:
    from openai import APITimeoutError, OpenAI

    log = open(os.devnull, "w")  # noqa: SIM115 - closed with the server
    server: subprocess.Popen[bytes] | None = None
    client: OpenAI | None = None

    def start() -> None:
        nonlocal server, client
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        server = subprocess.Popen(
            [sys.executable, "-m", "llama_cpp.server", "--model", str(path), "--host",
             "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", str(threads),
             "--chat_format", "chatml-function-calling"], stdout=log, stderr=log)
        base = f"http://127.0.0.1:{port}/v1"
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{base}/models", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        client = OpenAI(base_url=base, api_key="none", max_retries=0, timeout=DEADLINE_S)

    def halt() -> None:
        if server is not None:
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()

    start()

    def run(case: Case) -> Outcome:
        started = time.perf_counter()
        assert client is not None
        try:
            response = client.chat.completions.create(
                model="local", messages=question(case),  # type: ignore[arg-type]
                tools=_openai_tools(case), tool_choice="auto",  # type: ignore[arg-type]
                temperature=0.0, max_tokens=MAX_TOKENS, seed=DEFAULT_SEED)
        except APITimeoutError:  # the server is still generating: restart it, count a miss
            seconds = time.perf_counter() - started
            halt()
            start()
            return Outcome([], 0, seconds, f"timed out ({DEADLINE_S:.0f} s), server restarted")
        except Exception:  # an HTTP 500 from the handler counts as a miss
            return Outcome([], 0, time.perf_counter() - started)
        seconds = time.perf_counter() - started
        tokens = response.usage.completion_tokens if response.usage else 0
        return Outcome(_calls_of(case, response.choices[0].message.tool_calls), tokens, seconds)

    def stop() -> None:
        halt()
        log.close()
    return run, stop


# -- grading and the table --------------------------------------------------------------------


def verdict(checker: Callable[..., dict[str, Any]], case: Case, outcome: Outcome) -> str:
    """``""`` when the reply is right, else why not (BFCL's checker's error, in its words)."""
    if outcome.raw.startswith("timed out"):  # no reply at all: wrong in every category
        return outcome.raw
    if case.category.endswith("irrelevance"):  # BFCL's live_irrelevance is graded the same
        return "called a function" if outcome.calls else ""
    if not outcome.calls:
        return "no call"
    try:
        from bfcl_eval.constants.enums import Language

        result = checker(case.entry["function"], outcome.calls, case.answer, Language.PYTHON,
                         case.category, "toolcycle")
    except (KeyError, TypeError, AttributeError) as exc:  # too malformed for the checker
        return f"checker crashed: {exc!r}"
    return "" if result["valid"] else f"{result.get('error_type')}: {result.get('error')}"


def done_right(log: Path, model: str) -> dict[tuple[str, str], bool]:
    """(arm, BFCL id) -> right, from the --log (this run's lines and any resumed ones)."""
    if not log.exists():
        return {}
    return {(r["arm"], r["id"]): bool(r["right"]) for r in _jsonl(log)
            if r.get("model", model) == model}


def _paired_tests(arms: list[str], selected: list[Case],
                  right: dict[tuple[str, str], bool]) -> None:
    """Each arm against the first, paired by question: the exact sign test over the questions
    one got right and the other wrong (McNemar's exact test, toolcycle.evals.stats)."""
    if len(arms) < 2 or not right:
        return
    first = arms[0]
    print(f"\npaired against {first} (questions right in one arm only; exact sign test):")
    for arm in arms[1:]:
        ids = [c.entry["id"] for c in selected
               if (first, c.entry["id"]) in right and (arm, c.entry["id"]) in right]
        better = sum(right[(arm, i)] and not right[(first, i)] for i in ids)
        worse = sum(right[(first, i)] and not right[(arm, i)] for i in ids)
        print(f"- {arm}: {better} better, {worse} worse of {len(ids)}, "
              f"p={sign_test(better, worse):.3g}")


def main() -> None:
    global DEADLINE_S
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="qwen2.5-coder-0.5b", help="a pack name")
    parser.add_argument("--entries", type=int, default=100, help="entries per category")
    parser.add_argument("--arms", default="json,json+grammar,react,llama-cpp fc,server+openai")
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads, every arm")
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    parser.add_argument("--ids", help="only these entries (comma-separated BFCL ids): to look "
                        "again at questions a run timed out on, say")
    parser.add_argument("--start", type=int, default=0,
                        help="skip this many entries of each category: choose a configuration "
                        "on entries the graded run (--start 0) does not use")
    parser.add_argument("--spread", type=int, metavar="N",
                        help="N entries of each category at evenly spaced indices over the "
                        "whole file (spread_indices), each category's in spread_order and "
                        "the categories round-robin, so a run stopped early is balanced "
                        "and still spread; replaces --entries/--start")
    parser.add_argument("--selection", type=Path,
                        help="with --spread: the committed file of the chosen ids; written "
                        "(then exit) when absent, checked against the formula when present")
    parser.add_argument("--pilot", type=int, metavar="N",
                        help="N entries per category outside the first 100 and outside the "
                        "--spread selection (pilot_indices): for choosing a configuration")
    parser.add_argument("--log", type=Path,
                        help="append one JSON line per case and arm as it is graded, so a run "
                        "stopped early still has its figures")
    parser.add_argument("--deadline", type=float, default=DEADLINE_S,
                        help="seconds a raw arm may spend on one question (then a miss)")
    parser.add_argument("--resume", action="store_true",
                        help="take the (arm, entry) results already in --log (same model) "
                        "instead of running them again: a stopped run goes on where it ended")
    parser.add_argument("--show", action="store_true",
                        help="print every miss: reply, parsed calls, ground truth, checker error")
    args = parser.parse_args()
    DEADLINE_S = args.deadline
    if args.spread and args.selection:
        chosen = spread_selection(args.spread, tuple(args.categories.split(",")))
        if not args.selection.exists():
            args.selection.parent.mkdir(parents=True, exist_ok=True)
            args.selection.write_text(json.dumps(
                {"formula": "floor((2i + 1) * size / (2 * N)), i = 0..N-1",
                 "run_order": "positions 0..N-1 in bit-reversed (van der Corput) order, "
                 "categories round-robin", "N": args.spread,
                 "bfcl_eval": importlib.metadata.version("bfcl-eval"),
                 "categories": chosen}, indent=1) + "\n", encoding="utf-8")
            print(f"wrote {args.selection}; commit it, then run")
            return
        fixed = json.loads(args.selection.read_text(encoding="utf-8"))["categories"]
        if any(fixed[c]["ids"] != chosen[c]["ids"] or fixed[c]["run_order"] != chosen[c][
                "run_order"] for c in chosen):
            raise SystemExit(f"{args.selection} does not match the --spread formula on these "
                             "data files: the selection was fixed before the run")
    checker = _checker()
    path = pack_path(args.model)
    chat = LlamaChatModel(path, name=args.model, n_threads=args.threads)
    load_llama(path, n_threads=args.threads)
    arms: dict[str, Callable[[Case], Outcome]] = {}
    stops: list[Callable[[], None]] = []
    wanted = args.arms.split(",")
    for arm in wanted:
        if arm.split("+")[0] in PROTOCOLS:
            arms[arm] = toolcycle_arm_named(arm, chat)
    if "llama-cpp fc" in wanted:
        run, stop = llama_fc_arm(path, args.threads)
        arms["llama-cpp fc"] = run
        stops.append(stop)
    if "server+openai" in wanted:
        run, stop = server_arm(path, args.threads)
        arms["server+openai"] = run
        stops.append(stop)
    categories = tuple(args.categories.split(","))
    if args.spread and args.pilot:
        selected = round_robin(cases(0, categories, indices=pilot_indices(
            args.pilot, args.spread, categories)))
        described = (f"{args.pilot} pilot entries per category (outside the first 100 and "
                     f"the {args.spread}-entry spread selection)")
    elif args.spread:
        chosen = spread_selection(args.spread, categories)
        selected = round_robin(cases(0, categories, indices={
            c: [v["indices"][k] for k in spread_order(len(v["indices"]))]
            for c, v in chosen.items()}))
        described = f"{args.spread} entries per category spread evenly over each file"
    else:
        selected = cases(args.entries, categories, args.start)
        described = f"{args.entries} entries per category (from entry {args.start} of each file)"
    if args.ids:
        selected = [c for c in selected if c.entry["id"] in args.ids.split(",")]
    done: dict[tuple[str, str], dict[str, Any]] = {}
    if args.resume and args.log and args.log.exists():
        for record in _jsonl(args.log):
            if record.get("model", args.model) == args.model:
                done[(record["arm"], record["id"])] = record
    log = open(args.log, "a") if args.log else None  # noqa: SIM115 - closed below
    right: dict[tuple[str, str], int] = defaultdict(int)
    tokens: dict[str, int] = defaultdict(int)
    seconds: dict[str, float] = defaultdict(float)
    try:
        for number, case in enumerate(selected, 1):
            for arm, run_case in arms.items():
                earlier = done.get((arm, case.entry["id"]))
                if earlier is not None:
                    right[(arm, case.category)] += bool(earlier["right"])
                    tokens[arm] += earlier["tokens"]
                    seconds[arm] += earlier["seconds"]
                    continue
                outcome = run_case(case)
                miss = verdict(checker, case, outcome)
                right[(arm, case.category)] += not miss
                if miss and args.show:
                    print(f"\n--- {arm} {case.entry['id']}: {miss}\n  reply: {outcome.raw}\n"
                          f"  calls: {json.dumps(outcome.calls)}\n"
                          f"  truth: {json.dumps(case.answer)}", file=sys.stderr)
                tokens[arm] += outcome.tokens
                seconds[arm] += outcome.seconds
                if log is not None:
                    log.write(json.dumps({
                        "model": args.model, "arm": arm, "id": case.entry["id"],
                        "category": case.category, "right": not miss, "miss": miss,
                        "timed_out": outcome.raw.startswith("timed out"),
                        "tokens": outcome.tokens, "seconds": round(outcome.seconds, 3),
                        "requests": outcome.requests, "asked_again": outcome.asked_again,
                        **({} if outcome.first_calls is None else {"first_right": not verdict(
                            checker, case, Outcome(outcome.first_calls, 0, 0.0))}),
                        **({} if outcome.round_calls is None else {"right_by_round": [
                            not verdict(checker, case, Outcome(outcome.calls[:n], 0, 0.0))
                            for n in outcome.round_calls]}),
                        "calls": outcome.calls}) + "\n")
                    log.flush()
            print(f"\r{number}/{len(selected)}", end="", file=sys.stderr, flush=True)
    finally:
        for stop in stops:
            stop()
        if log is not None:
            log.close()
    print(file=sys.stderr)
    counts = {c: sum(1 for x in selected if x.category == c) for c in categories}
    print(f"model {args.model}, {described}\n")
    print("| arm | " + " | ".join(categories) + " | overall [95 % Wilson] | tokens/call | "
          "s/call |")
    print("|---" * (len(categories) + 4) + "|")
    for arm in arms:
        cells = [f"{100 * right[(arm, c)] / counts[c]:.0f}%" for c in categories]
        overall = wilson(sum(right[(arm, c)] for c in categories), len(selected))
        print(f"| {arm} | " + " | ".join(cells) + f" | {100 * overall.mean:.0f}% "
              f"[{100 * overall.low:.0f}, {100 * overall.high:.0f}] | "
              f"{tokens[arm] / len(selected):.0f} | {seconds[arm] / len(selected):.1f} |")
    _paired_tests(list(arms), selected, done_right(args.log, args.model) if args.log else {})


if __name__ == "__main__":
    main()
