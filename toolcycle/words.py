"""How toolcycle reads words: the words of a task, whether a text says a phrase, and every
language-specific word list the loop and the playbook read text with, in one place.

What a task is about is read here once, for learning and retrieval alike: its content words
(:func:`keywords`), their roots (:func:`root`), the names it gives (:func:`names`,
:func:`name_phrases`), the words a lesson learned from it applies to (:func:`task_words`) and
what tells it from another task (:func:`task_fingerprint`). Whether a text mentions a word or
phrase (an error naming a parameter, a result naming a thing) is :func:`says`, for the loop's
recovery advice and the playbook alike. Whether a tool's result says "nothing", in words or in
its shape (a page of nothing), is :func:`is_empty_result`: one reading for the run's grounding
(did any tool find something to answer from?) and the playbook (a dead end, a routine's step,
a fallback). Read two ways, ``{"matches": null, "total": 0}`` was nothing to the playbook and
a source to the grounding, and a small model's "the reading is not available", after a failed
call and that page, ended ``success``.

Why one module: the loop's and the playbook's rules are meant to hold in any domain, but some
evidence is only text written for people: a tool's "No results." instead of ``[]``, an HTTP
client's "connection refused", a task's function words. Each list below is English (the
language of the tools, tasks and providers this project was measured on) and says what it is
for; a deployment whose tools speak another language extends these lists here, and nowhere
else. A rule that needs a word list and is not built on one of these holds only where it was
written.

Never listed here: the engine's own wording. What the loop says about a call (a timeout, a
refused argument) is read from the trace's typed fields (``ToolCallRecord.error_type``).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

#: Function words of a task or result, left out of the content words retrieval and
#: applicability compare (:func:`keywords`).
_STOPWORD_TEXT = (
    "a an and are as at be by can could did do does for from has have how i in is it its me "
    "my of on or our please should tell than that the their them then there these this to "
    "was what when where which who whom why will with would you your currently current give "
    "find get show about into any some much many also just more most were been being am "
    "had having he she him her his hers we us ours they theirs those here not no nor only "
    "own same so too very s t don now out over under up down off again further once all both "
    "each few other such if because until while during before after above below between "
    "through against shall may might must let lets know need want like please thanks today "
    "yes one two"
)
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

#: Titles a person's name may follow ("Mr. Ravi Menon", "Dr Lee"): words of address, not
#: part of what a record says about the person.
TITLES = frozenset({"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "dame"})

#: The words of the playbook's own advice templates: every generated strategy has them, so
#: they say nothing about what a strategy is for and stay out of retrieval.
_TEMPLATE_TEXT = (
    "call calls then answer feed result results next use used kind task tasks avoid error "
    "errors seen runs run failed fails fail check arguments argument against earlier tools "
    "tool returned instead first pass needs times timed timeout like often nothing worked "
    "reliable prefer"
)
TEMPLATE_WORDS = frozenset(_TEMPLATE_TEXT.split())

#: The language the stemmer folds word forms in ("bookings", "booked" -> "book").
STEMMER_LANGUAGE = "english"

#: A tool's own words for "the call ran out of time" (a client's deadline inside the tool, an
#: MCP server's error); the loop's own timeout is ``error_type == "timeout"``.
TIMEOUT_WORDS = ("timed out", "timeout", "deadline exceeded")

#: A tool's words for "the service is down", not "the call was wrong" (a number is masked).
OUTAGE = re.compile(r"unavailable|unreachable|connection (refused|reset|closed)|bad gateway|"
                    r"service (is )?down|temporarily", re.IGNORECASE)

#: A tool's words for "the service refuses calls for now" (a quota, a rate limit: HTTP 429).
REFUSING = re.compile(r"quota|rate.?limit|too many requests|throttl", re.IGNORECASE)

#: A result that says "nothing" in words instead of an empty value.
EMPTY_TEXT = re.compile(
    r"^\s*(\[\s*\]|\{\s*\}|null|none|nil|n/?a|\"\"|''|"
    r"no (results?|match(es)?|data|records?|entry|entries|items?)( found)?|"
    r"not found|nothing( found)?|(0|zero) results?)\s*[.!]?\s*$",
    re.IGNORECASE,
)

#: An answer's words for "what was asked is not there" ("is not available", "could not find",
#: "no data"): read anywhere in an answer (:mod:`toolcycle.run.said_missing`).
SAID_MISSING = re.compile(
    r"\b(?:not (?:available|found|listed|known|provided|recorded)|unavailable|"
    r"(?:could ?n[o']t|can ?n[o']t|cannot|unable to|did ?n[o']t|was unable to) "
    r"(?:find|locate|retrieve|get|determine)|no (?:data|information|info|records?|entry|"
    r"details?|results?)|no (?:\w+ ){1,2}(?:is |are |was |were )?(?:found|available)|"
    r"(?:does|did|do) ?n[o']t exist|do(?:es)? not have (?:any|the|that|this)? ?"
    r"(?:data|information))\b",
    re.IGNORECASE,
)

#: A field's value that says it holds none (``"capacity": "unknown"``, ``"fax": "-"``), beside
#: :data:`EMPTY_TEXT`'s "n/a" and "none" and :data:`SAID_MISSING`'s "not available": a record
#: saying so supports an answer that says what was asked is not there. English, as those are.
NO_VALUE = re.compile(r"^\s*(?:unknown|tbd|tba|[-\u2013\u2014?]+)\s*$", re.IGNORECASE)

#: The fields of a page of results that say where it is, not what it holds (API naming).
PAGING = frozenset({"page", "pages", "page_size", "per_page", "limit", "offset", "next",
                    "previous", "prev", "cursor", "next_cursor", "total_pages"})

#: The fields of a response envelope that say the call went through, with the values saying
#: so: beside an empty collection they are no data (``{"status": "ok", "data": []}``).
ENVELOPE = frozenset({"status", "success", "ok", "code", "status_code", "result"})
WENT_THROUGH = frozenset({"ok", "success", "succeeded", "true", "200", "0"})

#: The fields that hold a page's collection: a ``null`` there is an empty one, where a
#: ``null`` beside a zero elsewhere is no page (``{"units_on_hand": 0, "note": null}``).
COLLECTIONS = frozenset({"results", "items", "data", "matches", "records", "rows", "entries",
                         "hits", "documents", "docs", "objects", "values", "list"})

#: How an error introduces an example value: "give the code, e.g. 'FR'".
EXAMPLE_INTRO = r"e\.g\.|eg\.|for example|such as|like"

#: How an error introduces the values an argument takes: "one of: low, high".
OPTIONS_INTRO = r"one of|" + EXAMPLE_INTRO

#: Words that join the items of a list of options ("a, b or c").
OPTIONS_JOINERS = ("or", "and")

#: The word an error uses to ask for a country (its ISO 3166 code, ``formats.country_code``).
COUNTRY_WORDS = ("country",)

#: The last words of a parameter that holds a handle (``ship_id``, ``order_no``, ``sku``): a
#: value a lookup gives, where ``ship_name`` is one the user gives (recovery tells which tool
#: gives a parameter by this: :func:`toolcycle.run.producers.producers`).
HANDLE_WORDS = frozenset({"id", "ids", "code", "key", "number", "no", "num", "ref", "sku",
                          "uuid", "guid", "slug"})

#: Numbers written in words, read as numbers a request gives ("four restaurants", "twenty-five
#: years", "five hundred"): the values a call carries as digits (:func:`spelled_numbers`,
#: :mod:`toolcycle.models.text.invented`).
_UNITS = """zero one two three four five six seven eight nine ten eleven twelve thirteen
    fourteen fifteen sixteen seventeen eighteen nineteen""".split()  # noqa: SIM905
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()  # noqa: SIM905
NUMBER_WORDS = ({word: value for value, word in enumerate(_UNITS)}
                | {word: 10 * value for value, word in enumerate(_TENS, 2)}
                | {"dozen": 12, "twice": 2, "double": 2, "thrice": 3, "triple": 3})
#: Words that multiply the number before them ("five hundred", "a thousand").
NUMBER_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}


#: Spans of time and how many of a smaller unit each holds: a request that says "over the
#: past decade" or "for the next week" gives the 10 (years) or 7 (days) a tool takes for it,
#: and "3 years" the 36 (months) (:func:`span_numbers`, :mod:`toolcycle.models.text.invented`).
#: Counts everyone agrees on, not the length of a particular month or year.
SPAN_WORDS: dict[str, tuple[int, ...]] = {
    "minute": (60,), "hour": (60, 3600), "day": (24,), "week": (7,), "fortnight": (14, 2),
    "month": (30, 4), "quarter": (3,), "year": (12, 52, 365), "decade": (10,),
    "century": (100,)}
_SPAN_PLURALS = {"centuries": "century"}

#: Words that say how many times: a request holding one may ask for a figure added more
#: than once ("the price of two tickets", "twice the dose"), so a sum that holds one record's
#: figure twice is not flagged (:mod:`toolcycle.run.unlike_sum`). Not "per" or "each": they
#: name a rate ("riders per hour"), not a multiple. The number words from two to ten (and
#: "twice", "double", ...), a dozen, and the past forms of the multiples.
COUNT_WORDS = frozenset({word for word, value in NUMBER_WORDS.items() if 2 <= value <= 10}
                        | {"dozen", "doubled", "tripled"})

#: Words that ask for a total ("the combined capacity of A and B", "A and B added together"):
#: with two names listed, an answer that gives one record's figure answers about one of them
#: (:func:`toolcycle.run.unfinished_sum.untotalled`). English, as the requests measured are;
#: another language's requests are not read so, and that check stays silent.
TOTAL_WORDS = frozenset({"combined", "together", "altogether", "total", "sum", "add",
                         "added"})

#: Words that end a phrase a task names a thing with: what stands between a thing's name and
#: the rest of a question ("the Vessel caulk gun *from* ..."; ``head_start.named_phrase``).
PHRASE_ENDS = frozenset("""
    a an the and or but nor if so than then that this these those there here which who whom
    whose what when where why how is are was were be been being am do does did done have has
    had having can could may might must shall should will would in on at to for from of off
    by with without about into onto over under up down out as per via we you he she it they
    i me us him her them my our your his its their mine ours yours theirs right now today
    currently still yet please left
""".split())  # noqa: SIM905 (a word list reads better so)


# -- reading a task's words ---------------------------------------------------------------

_WORD = re.compile(r"[a-z][a-z0-9_]+")


def keywords(text: str) -> list[str]:
    """The content words of a text, lower-cased, in order, without stopwords or duplicates.

    Lexical relevance and applicability are both computed on these, so retrieval and learning
    agree on what a task "is about".
    """
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if word not in STOPWORDS and len(word) > 2:
            seen.setdefault(word, None)
    return list(seen)


_STEMMER: Any = None  # made at the first word stemmed (:func:`_stemmer`)
_STEMMER_LOCK = threading.Lock()  # a Snowball stemmer keeps its state between words


#: Longer "words" (an id, a hash, a hostile prompt's run of letters) are matched as written:
#: no English word needs stemming at that length, and each cached root keeps its word.
LONGEST_STEMMED = 32


#: English function words other languages write too ("a" in Spanish and Portuguese, "me"
#: in French, "in" in Italian and German, "was" in German): no sign of English alone.
_SHARED_FUNCTION_WORDS = frozenset({"a", "i", "s", "t", "me", "no", "in", "so", "do", "on",
                                    "an", "am", "us", "he", "as", "was", "will", "also"})
#: Function words of the languages that write in Latin letters and that requests measured
#: here came in (Spanish, Portuguese, French, Italian, German, Indonesian), none of them an
#: English word: a request holding one, and no English function word, is in another language.
_OTHER_FUNCTION_WORDS = frozenset("""
    el la los las del que y en por para con es una cual cuál qué quiero
    os em um uma não você qual
    le les des du et est pour avec une
    di che il lo gli della sono
    der das und ist mit für nicht ich
    yang dan dari untuk ini itu ada apakah saya berapa
""".split())  # noqa: SIM905 (a word list reads better so)
_LETTERS = re.compile(r"[^\W\d_]+")


def in_list_language(text: str) -> bool:
    """Whether ``text`` reads as written in the language of these lists (English): its
    letters are mostly Latin ones, and it holds an English function word (:data:`STOPWORDS`,
    not one other languages share) or no function word of another language. A rule that
    judges a text by its words (which tools a task relates to, whether a value came from the
    request) cannot judge one in another language ("北京的天气", "¿Cuál es el clima en
    Cancún?") and should not act on what it did not read. A terse English request with no
    function word at all ("uk rainfall", "hello") still reads as English."""
    words = _LETTERS.findall(text.lower())
    others = sum(1 for word in words for letter in word if not letter.isascii())
    if others and 2 * others >= sum(1 for word in words for letter in word if letter.isascii()):
        return False  # (a letter of a syllabic script such as Hangul or Han stands for more)
    return (any(w in STOPWORDS and w not in _SHARED_FUNCTION_WORDS for w in words)
            or not any(w in _OTHER_FUNCTION_WORDS for w in words))


def root(word: str) -> str:
    """What a word is matched by: its Porter2 (Snowball English) stem, and an agent noun's
    "-ier" as its verb's ("supplier", "supplies", "supplied", "supply" -> ``suppli``;
    "carrier", "carry" -> ``carri``). Words are kept as written; only comparisons use roots.

    Why: the tasks of one kind are worded apart, and a lesson learned from "Who supplies the
    Vessel caulk gun?" met no word of "Who is the supplier of the Fenby staple gun?";
    "booking"/"book", "shipped"/"shipping", "sources"/"sourcing" were as far apart. Snowball
    leaves "-er" alone (order, number, weather keep theirs), so only "-ier", whose stem the
    verb also has, is taken off.
    """
    return word if len(word) > LONGEST_STEMMED else _stem(word)


def _stemmer() -> Any:
    """The Snowball stemmer, made once. Why not at import: the loop imports this module for
    :func:`says` on every run, and snowballstemmer loads every language's stemmer (~20 ms),
    which only runs that read roots (the playbook, grounding's field check) need."""
    global _STEMMER
    if _STEMMER is None:
        import snowballstemmer

        _STEMMER = snowballstemmer.stemmer(STEMMER_LANGUAGE)
    return _STEMMER


@lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    with _STEMMER_LOCK:
        stem: str = _stemmer().stemWord(word)
    if len(stem) > 5 and stem.endswith("ier"):
        stem = stem[:-3] + "i"
    return stem


def roots(words: Iterable[str]) -> set[str]:
    """The :func:`root` of each of ``words``."""
    return {root(w) for w in words}


def task_fingerprint(prompt: str) -> str:
    """What tells two tasks apart: their prompt with case and spacing normalised.

    Not the keywords: "Where is the parcel of order A-1042?" and "... order B-2210?" have
    the same ones (ids are not words), and the curator took three different parcel questions
    for one task asked three times, so the parcel lesson was never learned.
    """
    import hashlib  # (OpenSSL's import time: a plain run never fingerprints a task)

    text = " ".join(prompt.lower().split())
    return hashlib.sha1(text.encode()).hexdigest()[:16]


_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]+")
_SENTENCE_END = re.compile(r"[.?!:;\n]")


def names(text: str) -> set[str]:
    """The words of a text written as names or ids, lower-cased: a capitalised word that
    does not begin a sentence ("Kelby", "GitHub"), and a word mixing upper case and digits
    anywhere ("KL318"). All-capital words without digits ("PDF", "USD") are acronyms and
    stay content words. A word also used in lower case elsewhere in the text is no name.

    Why: a name says which thing a task is about, not what kind of task it is. Failed runs that
    happen to share a name ("Kelby") would teach a lesson applying to that name, shown to any
    later task about the same thing, whatever it asks. English capitalisation: in German, where
    every noun is capitalised, nouns inside a sentence would count as names too (see
    :func:`task_words`).
    """
    found: set[str] = set()
    plain: set[str] = set()
    end = -1  # where the previous word ended; -1: none yet, the next word begins the text
    for match in _TOKEN.finditer(text):
        word = match.group()
        has_upper = any(c.isupper() for c in word)
        initial = end < 0 or _SENTENCE_END.search(text, end, match.start()) is not None
        end = match.end()
        is_id = has_upper and any(c.isdigit() for c in word)
        mixed = has_upper and any(c.islower() for c in word)
        is_name = is_id or (mixed and (not initial or any(c.isupper() for c in word[1:])))
        (found if is_name else plain).add(word.lower())
    return found - plain


def name_phrases(text: str) -> list[str]:
    """The names ``text`` gives, each as written: runs of :func:`names` words with only
    spaces between them ("Leila Farouk" in "What OS version does Leila Farouk's phone
    have?"), in order, once each."""
    named = names(text)
    phrases: list[str] = []
    start = end = -1  # the span of the run of names so far (none: start < 0)
    for match in _TOKEN.finditer(text):
        word = match.group()
        gap = text[end:match.start()]
        if word.lower() in named and start >= 0 and gap and not gap.strip(" "):
            end = match.end()
            continue
        if start >= 0:
            phrases.append(text[start:end])
        start, end = (match.start(), match.end()) if word.lower() in named else (-1, match.end())
    if start >= 0:
        phrases.append(text[start:end])
    return list(dict.fromkeys(phrases))


def task_words(prompt: str) -> list[str]:
    """What a task is about, for learning where a lesson applies: its :func:`keywords`
    without :func:`names`. Retrieval still matches a task's full keywords, names included,
    against strategies; only the applicability learned from tasks leaves names out. A prompt
    whose every content word looks like a name keeps them all (better a name than nothing
    to apply to)."""
    named = names(prompt)
    words = keywords(prompt)
    return [w for w in words if w not in named] or words


# -- whether a text says a word or phrase -------------------------------------------------


def says(text: str, phrase: str) -> bool:
    """Whether ``text`` holds ``phrase`` as whole words, case aside (an empty or blank
    ``phrase`` is said by no text).

    "date" is said by "invalid date" and not by "update", and "New York" by "in new  york"
    (words split by any white space). Whole words because a parameter or value named inside
    a longer word is a coincidence, not a mention."""
    words = [re.escape(w) for w in phrase.split()]
    if not words:
        return False
    pattern = r"(?<!\w)" + r"\s+".join(words) + r"(?!\w)"
    return re.search(pattern, text, re.IGNORECASE) is not None


def is_empty_result(result: str | None) -> bool:
    """True when a tool's result holds nothing: no text, an empty JSON value or a "none" phrase.

    A JSON object counts as empty when every value in it is empty (``{"results": []}``), since
    that is how many APIs say "nothing": the keys are a schema, not data; so does a page of
    nothing, an empty collection beside counts of zero and paging fields (``{"matches": [],
    "count": 0}``, ``{"items": [], "total": 0, "page": 1}``, ``{"results": null, "count": 0}``),
    and an envelope saying "ok" about one (``{"status": "ok", "data": {"items": []}}``). A
    zero alone is an answer (``{"units_on_hand": 0}``), and so is an "ok" alone.
    """
    if result is None or not result.strip():
        return True
    if EMPTY_TEXT.match(result):
        return True
    try:  # (a stranger's tool may nest deeper than Python recurses: that holds something)
        return is_empty_value(json.loads(result))
    except (ValueError, RecursionError):
        return False


def is_empty_value(value: Any) -> bool:
    """:func:`is_empty_result` for a result already parsed as JSON."""
    if value is None or value == "" or value == [] or value == {}:
        return True
    if isinstance(value, dict):
        return all(is_empty_value(v) for v in value.values()) or _empty_page(value)
    return False


def _empty_page(page: dict[Any, Any]) -> bool:
    """An empty collection beside counts of zero, paging fields and an envelope's "ok": a
    page of nothing. (An "ok" with no collection beside it is an answer: a health check.)"""
    collections = [v for k, v in page.items() if isinstance(v, (list, dict))
                   or (v is None and str(k).lower() in COLLECTIONS)]
    if not collections or not all(is_empty_value(v) for v in collections):
        return False
    return all(isinstance(v, (list, dict)) or is_empty_value(v) or str(k).lower() in PAGING
               or (isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0)
               or (str(k).lower() in ENVELOPE and str(v).lower() in WENT_THROUGH)
               for k, v in page.items())


_SPELLED = re.compile(r"[a-z]+|[^a-z\s-]+")  # words, and what breaks a run of them


def spelled_numbers(text: str) -> set[int]:
    """The numbers ``text`` writes in words (:data:`NUMBER_WORDS`, :data:`NUMBER_SCALES`):
    each word's own value, and the runs they make ("twenty-five" 25, "five hundred" 500, "a
    hundred" 100); English, as the requests measured are."""
    found: set[int] = set()
    run: int | None = None
    for word in _SPELLED.findall(text.lower()):
        if word in NUMBER_WORDS:
            value = NUMBER_WORDS[word]
            found.add(value)
            run = run + value if run is not None and run % 10 == 0 and value < 10 else value
        elif word in NUMBER_SCALES:
            run = (run or 1) * NUMBER_SCALES[word]
        else:
            run = None
            continue
        found.add(run)
    return found


_SPAN_TOKEN = re.compile(r"\d+(?:\.\d+)?|[a-z]+")


def span_numbers(text: str) -> set[float]:
    """The counts the spans of time ``text`` names hold (:data:`SPAN_WORDS`): "next week" 7,
    "a decade" 10, and a number right before a span times each count ("3 years" 36, 156 and
    1095; "two weeks" 14). English, as the requests measured are."""
    found: set[float] = set()
    before: float | None = None
    for token in _SPAN_TOKEN.findall(text.lower()):
        word = _SPAN_PLURALS.get(token, token[:-1] if token.endswith("s") else token)
        counts = SPAN_WORDS.get(word, ())
        found.update(counts)
        if before is not None:
            found.update(before * count for count in counts)
        before = (float(token) if token[0].isdigit()
                  else float(NUMBER_WORDS[token]) if token in NUMBER_WORDS else None)
    return found
