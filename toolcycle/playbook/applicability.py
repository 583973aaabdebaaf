"""Where a lesson applies: the words of the tasks it was learned from.

A strategy is shown to a task whose words meet its ``applies_when``. Those words are the
tasks' content words without names (:func:`task_words`), the ones the tasks share
(:func:`applicability`), then those a task shares with what its tools are described to do
(:func:`described_words`), name the field its answer came from (:func:`answer_labels`) or
stand in the column of a list its run picked a row by (:func:`picked_words`); each
confirmation narrows them to what the new task shares (:func:`confirmed`). Retrieval itself
matches a task's full keywords (:func:`~toolcycle.words.keywords`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence

from ..words import LONGEST_STEMMED, TEMPLATE_WORDS, keywords, root, roots
from .evidence import arg_values
from .strategy import Insight, Strategy, index_terms

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
#: The parts of a key: snake_case, camelCase, kebab-case.
_KEY_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
#: Where the label before a value in text begins: after the previous field or sentence.
_LABEL_START = re.compile(r"[,;:.!?()\[\]{}\n|]")


def description_words(descriptions: Mapping[str, str]) -> dict[str, frozenset[str]]:
    """Per tool, the :func:`~toolcycle.words.root` of each content word of its
    description (worked out once per agent, when the agent is built:
    :meth:`~toolcycle.playbook.Playbook.describe_tools`)."""
    return {tool: frozenset(root(w) for w in keywords(text) if w not in TEMPLATE_WORDS)
            for tool, text in descriptions.items()}


def described_words(words: Sequence[str], tools: Sequence[str],
                    descriptions: Mapping[str, frozenset[str]]) -> list[str]:
    """The ``words`` (a task's) that the descriptions of ``tools`` contain (``descriptions``:
    :func:`description_words`): what the task asked that these tools provide.

    Why: the tasks of one kind are worded apart ("How warm is it at the office of Tomasz
    Nowak?", "Is it freezing where Nadia Rahman works? What's the temperature there?") and
    share no word, so a lesson learned from them has nothing to apply to and is not
    promoted; the tools describe what they are for ("Look up an employee in the staff
    directory (office city and team)", "Current temperature in a city"), and each task shares
    a word with that.
    """
    described: set[str] = set()
    for tool in tools:
        described.update(descriptions.get(tool, ()))
    return [w for w in words if root(w) in described]


def sequence_words(words: Sequence[str], tools: Sequence[str],
                   descriptions: Mapping[str, frozenset[str]] | None, result: str | None,
                   output: str, prompt: str, picks: Sequence[Pick] = ()) -> list[str]:
    """A sequence's :attr:`~toolcycle.playbook.strategy.Insight.tool_words`: the task's
    ``words`` its tools describe (:func:`described_words`), then those naming the field of
    the last ``result`` its answer (``output``) came from (:func:`answer_labels`), then, for
    each step that fed the next (``picks``), the words of the column its row was picked by
    (:func:`picked_words`)."""
    described = described_words(words, tools, descriptions) if descriptions else []
    labelled = roots(answer_labels(result, output, prompt)) if result else set()
    picked = [w for pick in picks for w in picked_words(*pick, prompt)]
    return by_root([*described, *(w for w in words if root(w) in labelled), *picked])


#: One step of a chain that fed the next: its result, the value fed from it, its arguments.
Pick = tuple[str, str, Mapping[str, object]]
#: How many words the column a row was picked by lends a lesson (the first rows' first).
MAX_PICKED_WORDS = 8
#: The longest result searched for a picked row, and the most rows of one list read.
_PICK_CHARS, _PICK_ROWS = 100_000, 200


def picked_words(result: str, value: str, args: Mapping[str, object], prompt: str
                 ) -> list[str]:
    """Where a step's JSON ``result`` is a list of records and the ``value`` fed to the next
    step came from the one record whose text field the ``prompt`` names (``"test": "TSH"``
    in "Tobias Renn's latest TSH value"), the words of that field in every record (``hba1c``,
    ``lipid``, ``panel``, ``ferritin``, ``tsh``): the lesson is how to pick any row of that
    list, so it applies to a task naming any of them. Nothing where the field is what the
    step was asked for (a name its ``args`` gave: that was looked up, not picked), where every
    record says the same there (it tells no row apart), or where no one record holds
    ``value``.

    Why: tasks of one kind that differ only in which row they pick ("latest TSH value",
    "Ferritin level", "LDL from the lipid panel") share no word with each other, with the
    tools' descriptions or with the answer's field, so a lesson keyed on their words applies
    to nothing, or only to the one row its task named; the names of every row it could
    pick are what any task of that kind will say.
    """
    pick = picked_row(result, value, args, prompt)
    if pick is None:
        return []
    rows, _, by = pick
    column = [str(r.get(by, "")) for r in rows]
    words = [w for text in column for w in keywords(text) if len(w) <= LONGEST_STEMMED]
    return by_root(words)[:MAX_PICKED_WORDS]


def picked_row(result: str, value: str, args: Mapping[str, object], prompt: str
               ) -> tuple[list[dict[str, object]], str, str] | None:
    """Where :func:`picked_words` finds a row picked by a word of the ``prompt``: the list's
    records, the field of the picked record that held ``value`` and the field the prompt
    named (``"folio_id"``, ``"outlet"``); else None. A routine takes a value out of such a
    list the same way (:class:`~toolcycle.playbook.routine.Feed`)."""
    if not value.strip():
        return None
    said = roots(keywords(prompt))
    given = roots(keywords(" ".join(arg_values(dict(args)))))
    wanted = value.strip().lower()
    for rows in _record_lists(result):
        holding = [r for r in rows if any(str(v).strip().lower() == wanted
                                          for v in r.values() if _is_scalar(v))]
        if len(holding) != 1:
            continue
        held = next(k for k, v in holding[0].items()
                    if _is_scalar(v) and str(v).strip().lower() == wanted)
        for key, field in holding[0].items():
            named = roots(keywords(field)) if isinstance(field, str) else set()
            column = [str(r.get(key, "")) for r in rows]
            if not named & said or named & given or len({c.lower() for c in column}) < 2:
                continue
            return rows, str(held), str(key)
    return None


def row_pick(result: str, value: str, args: Mapping[str, object], prompt: str
             ) -> list[str] | None:
    """A feed example's ``pick``: ``[key, by]`` of :func:`picked_row`, or None (no row
    picked by the task's words); an example without the field predates picks."""
    pick = picked_row(result, value, args, prompt)
    return None if pick is None else [pick[1], pick[2]]


def row_named(result: str, key: str, by: str, prompt: str) -> str | None:
    """The ``key`` of the one record of a JSON list in ``result`` whose ``by`` field the
    ``prompt`` names (a word of it, by root), or None where no one record is named."""
    said = roots(keywords(prompt))
    for rows in _record_lists(result):
        if not all(by in r and key in r for r in rows):
            continue
        named = [r for r in rows if isinstance(field := r[by], str)  # as picked_row reads
                 and roots(keywords(field)) & said]
        if len(named) == 1 and _is_scalar(named[0][key]):
            return str(named[0][key])
        return None
    return None


def _is_scalar(value: object) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _record_lists(result: str) -> Iterator[list[dict[str, object]]]:
    """The lists of two or more records (JSON objects) in a JSON ``result``, outermost first,
    each cut to its first rows (none in a result too long to search, or not JSON)."""
    if len(result) > _PICK_CHARS:
        return
    try:
        value = json.loads(result)
    except (ValueError, RecursionError):
        return
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            rows = [r for r in item[:_PICK_ROWS] if isinstance(r, dict)]
            if len(rows) >= 2 and len(rows) == len(item[:_PICK_ROWS]):
                yield rows
            stack.extend(reversed(item))


def answer_labels(result: str | None, output: str, prompt: str) -> set[str]:
    """The words naming where, in a tool's ``result``, the run's ``output`` took its answer
    from: the keys leading to each value the output repeats (``"lead_time_days": 9`` ->
    lead, time, days), or in text the words just before it (``currency code FDK``). What the
    prompt already said (a name, an id the lookup echoes) is no answer.

    Why: the tasks of one kind are worded apart ("Who supplies the Vessel caulk gun?", "What
    is the lead time for the Hadley work light?", "Name the supplier of the Tollin pipe
    cutter."), share no word, and the one tool that answers them is described in none of
    theirs ("Purchasing records of an item."), so a lesson keyed on their words applies to
    nothing and is shown to no task. The field the answer stood in says what such a task
    asks for, whatever its wording.
    """
    if not result or not output:
        return set()
    asked, said = output.lower(), prompt.lower()
    numbers = {float(n) for n in _NUMBER.findall(asked.replace(",", ""))} - {
        float(n) for n in _NUMBER.findall(said.replace(",", ""))}

    def answers(value: object) -> bool:
        if isinstance(value, bool) or value is None:
            return False
        if isinstance(value, int | float):
            return float(value) in numbers
        text = str(value).strip().lower()
        if _NUMBER.fullmatch(text):
            return float(text) in numbers
        found = _NUMBER.findall(text)  # a figure with its unit ("6.1 %", "LDL 3.2 mmol/L")
        if len(found) == 1 and len(text) - len(found[0]) <= 12 and float(found[0]) in numbers:
            return True
        return len(text) > 1 and text in asked and text not in said

    labels: set[str] = set()
    try:  # a stranger's tool may nest deeper than Python recurses: then no labels
        parsed = json.loads(result)
        if isinstance(parsed, dict | list):
            for path, value in json_leaves(parsed):
                if answers(value):
                    labels.update(w.lower() for key in path for w in _KEY_PART.findall(key))
            return set(keywords(" ".join(labels)))
    except RecursionError:
        return set()
    except ValueError:
        pass
    lowered = result.lower()
    for value in [*_NUMBER.findall(result), *keywords(result)]:
        if answers(value) and (at := lowered.find(value)) >= 0:  # (find only what answers)
            label = _LABEL_START.split(result[max(0, at - 40):at])[-1]
            labels.update(keywords(label))
    return labels


def json_leaves(value: object) -> Iterator[tuple[tuple[str, ...], object]]:
    """The leaves of parsed JSON, in order, each with the keys leading to it (list items take
    their list's path). Iterative: a value nested as deep as the parser allows is no error."""
    stack: list[tuple[tuple[str, ...], object]] = [((), value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, dict):
            stack.extend(reversed([((*path, str(k)), v) for k, v in item.items()]))
        elif isinstance(item, list):
            stack.extend(reversed([(path, v) for v in item]))
        else:
            yield path, item


def word_support(evidence: Sequence[Insight], counts: Mapping[str, int] | None = None,
                 keep: int = 32, more: Mapping[str, int] | None = None) -> dict[str, int]:
    """How many of the tasks of ``evidence`` said each word, added to ``counts`` (and to
    ``more``'s, another strategy's being folded in): keyed by the word as first written,
    counted by its :func:`~toolcycle.words.root`; the ``keep`` most said, the
    newest first among words said as often (a word one old task said makes way for one the
    latest said, which the next may say again)."""
    support = dict(counts or {})
    written = {root(w): w for w in support}
    for word, n in (more or {}).items():
        key = written.setdefault(root(word), word)
        support[key] = support.get(key, 0) + n
    for insight in evidence:
        said = [w for w in insight.keywords if len(w) <= LONGEST_STEMMED]  # (no ids, no junk)
        for stem, word in {root(w): w for w in reversed(said)}.items():
            key = written.setdefault(stem, word)
            support[key] = support.get(key, 0) + 1
    ranked = sorted(enumerate(support.items()), key=lambda item: (-item[1][1], -item[0]))
    return dict(item for _, item in ranked[:keep])


def applicability(evidence: Sequence[Insight], limit: int = 12) -> list[str]:
    """Words common to the tasks a pattern came from (in at least half of them, at least 2),
    then the other words their runs lent the pattern (:attr:`Insight.tool_words`: those the
    tasks share with the descriptions of its tools, :func:`described_words`, and the rest
    :func:`sequence_words` finds), the words more of its tasks said first."""
    counts: dict[str, int] = {}  # by root: "supplies" and "supplier" count as one word
    written: dict[str, str] = {}  # each root as its first task wrote it
    for insight in evidence:
        for word in insight.keywords:
            written.setdefault(root(word), word)
        for stem in roots(insight.keywords):
            counts[stem] = counts.get(stem, 0) + 1
    need = max(2, (len(evidence) + 1) // 2) if len(evidence) > 1 else 1
    common = [w for w, c in counts.items() if c >= need]
    common.sort(key=lambda w: (-counts[w], written[w]))
    for insight in evidence:  # (a picked column's words need not be the task's)
        for word in insight.tool_words:
            written.setdefault(root(word), word)
    described = {root(w): None for i in evidence for w in i.tool_words
                 if counts.get(root(w), 0) < need}
    ranked = sorted(described, key=lambda w: (-counts.get(w, 0), written.get(w, w)))
    return [written.get(w, w) for w in [*common, *ranked]][:limit]


def confirmed(words: Sequence[str], insight: Insight, limit: int = 12) -> list[str]:
    """A strategy's ``words`` once ``insight``'s task confirmed it: only those the new task
    shares, unless fewer than two would remain (a union would soon make every strategy apply
    to every task: a pitfall confirmed by a weather task then matched currency tasks by a
    person's name), then the words of the new task that its tools describe (grounded in
    what the tools do, they widen a lesson to another wording of its kind)."""
    said = roots(insight.keywords)
    shared = [w for w in words if root(w) in said]
    return by_root([*(shared if len(shared) >= 2 else words), *insight.tool_words])[:limit]


def by_root(words: Sequence[str]) -> list[str]:
    """``words`` without a second form of a root: each as first written, in order."""
    kept: dict[str, str] = {}
    for word in words:
        kept.setdefault(root(word), word)
    return list(kept.values())


def confirmed_by(words: Sequence[str], support: Mapping[str, int], insight: Insight,
                 limit: int = 12, read: Sequence[str] = ()) -> tuple[list[str], dict[str, int]]:
    """A sequence's ``words`` and ``support`` (:func:`word_support`) once ``insight``'s task
    confirmed it: all of ``words``, then the new task's words its tools describe, then each
    of ``words`` that a result its steps fed on holds (``read``: the texts of its feed
    examples), then every word two of its tasks said.

    Why not narrow, as :func:`confirmed` does a pitfall's: the tasks of one kind are worded
    apart, and narrowing to what each new task shares forgets the others' words: a sequence
    learned from "Who supplies ...?" and "What is the lead time of ...?" that one more
    lead-time task narrows to "lead", "time", "days" is never shown a supplier question
    again, and one promoted on two tasks (:func:`~toolcycle.playbook.probe.answers_agree`)
    that a third confirms would lose what the first two said apart. Only sequences: their
    tasks are the runs their tools answered, one kind, and every word they hold passed
    :func:`applicability` when they were promoted; a pitfall's tasks are any runs that met
    its error. Offline (``bench/learning_gen/shown.py``, seeds 300-399, three train tasks per
    kind, half of them given up) test tasks shown a lesson of their own went 48.8 -> 67.5 %
    with this and two-run promotion, those shown another kind's 1.5 -> 2.2 %.

    The words a result holds are those a picked column lent (:func:`picked_words`): what the
    chain picks among, not how one task was worded, so a task that picked another row does
    not narrow them away. Why: the rows a chain picks among are the kind's whole range;
    narrowed to the rows its later tasks happened to pick, a lesson is no longer shown a
    task about the row an earlier one picked (or any row no task picked yet).
    """
    counts = word_support([insight], support)
    kept = by_root([*words, *insight.tool_words])
    held = set().union(*(roots(keywords(text)) for text in read)) if read else set()
    kept = by_root([*kept, *(w for w in words if root(w) in held)])
    known = roots(kept)
    backed = [w for w, n in counts.items() if n >= 2 and root(w) not in known]
    return [*kept, *backed][:limit], counts


def contested(task: str, sequences: Sequence[Strategy]) -> set[str]:
    """The ids of the ``sequences`` that ``task`` meets only through words a sequence of
    other tools among them applies to as well: which of them fits is not known.

    A word one task behind a sequence said (its :attr:`~Strategy.word_support`, below the two
    tasks :func:`applicability` asks for) settles it for that sequence, where no other
    applies to that word: it never brings a sequence to a task, it only tells apart those
    retrieval already found.

    Why: a word every kind of task in a domain says tells no kind from another: a bill
    question and a stay question and a housekeeping question all say "room", and a task met
    through "room" alone is as likely sent down the wrong sequence (made to begin with its
    first call) as the right one. A word one of a sequence's own tasks said ("bill") is
    weak evidence for that sequence, but it is the only evidence that tells them apart.
    """
    said = roots(keywords(task))
    vocabulary = {s.id: roots(s.applies_when) | roots(index_terms(s)) for s in sequences}
    out: set[str] = set()
    for s in sequences:
        others = [vocabulary[o.id] for o in sequences if o.tools != s.tools]
        met = said & (vocabulary[s.id] | roots(s.word_support))
        if others and met and met <= set().union(*others):
            out.add(s.id)
    return out


def given_words(strategy: Strategy) -> set[str]:
    """The roots naming what a sequence is *given*, not what its tasks asked: the words of
    the arguments its calls took a value in (the first call's argument for the task's named
    value, :attr:`~Strategy.heads`, and each argument fed from the step before,
    :attr:`~Strategy.feeds`). Not its tools' names, which name what they return as often
    ("open_invoice") as what they take ("student_lookup")."""
    names = [*strategy.heads,
             *(str(feed.get("arg", "")) for run in strategy.feeds for feed in run)]
    return roots(keywords(" ".join(n.replace("_", " ").replace("-", " ") for n in names)))


def asks_what_it_answered(task: str, sequence: Strategy) -> bool:
    """Whether ``task`` meets ``sequence`` through a word of what its tasks asked, not only
    through the names of what it is given (:func:`given_words`): the thing a task is about
    (a student, a course, a service) is what several kinds of task in one domain share; what
    it asks of it (an average grade, an enrolment count, a delay) tells the kinds apart.
    A sequence met only so is not shown as the task's lesson; where no other lesson is
    found, the guide still offers it with the words its tasks were asked in, for the model
    to judge by meaning.

    Why: a lesson met only through what it is given is a lesson of another kind about the
    same thing: a course's enrolment question met "Call student_lookup(student), then ...",
    learned from grade questions, through "students" alone, and a model that follows it
    looks the course up as a student and answers that there is none.
    """
    said = roots(keywords(task))
    met = said & (roots(sequence.applies_when) | roots(index_terms(sequence)))
    return bool(met - given_words(sequence))


def asks_what_a_skipped_tool_gives(task: str, sequence: Strategy,
                                   descriptions: Mapping[str, frozenset[str]]) -> bool:
    """Whether ``task`` says a word that the description of a tool ``sequence`` tells to skip
    holds (``descriptions``: :func:`description_words`), while none of the sequence's own
    tools' descriptions holds it and none of its tasks said it (its :attr:`~Strategy.
    applies_when`, :func:`~.strategy.index_terms` and :attr:`~Strategy.word_support`).

    Why: a sequence learned from one kind of task names the tools its runs did without
    ("Call warehouse_ledger(article_code), then answer. Do not use warehouse_daily_report"),
    and another kind about the same thing meets it through the words they share ("article",
    "units"); a task asking what the skipped tool is described to give ("units shipped on
    the 27th of July": "The units shipped of an article on a given day") is then told not
    to call the one tool that answers it. What a tool is described to give is the
    author's own statement of its purpose, so a task that asks for it is that tool's, not
    the lesson's (the evidence: docs/playbook.md, "Where each rule comes from").
    """
    skipped = [t for t in sequence.skips if t in descriptions]
    if sequence.kind != "sequence" or not skipped:
        return False
    said = roots(keywords(task))
    own: set[str] = set()
    for tool in sequence.tools:
        own.update(descriptions.get(tool, ()))
    known = (roots(sequence.applies_when) | roots(index_terms(sequence))
             | roots(sequence.word_support))
    return any(word in descriptions[tool] and word not in own and word not in known
               for tool in skipped for word in said)
