"""Every language-specific word list the playbook reads text with, in one place.

Why one module: the playbook's rules are meant to hold in any domain, but some evidence is
only text written for people: a tool's "No results." instead of ``[]``, an HTTP client's
"connection refused", a task's function words. Each list below is English (the language of
the tools, tasks and providers this project was measured on) and says what it is for; a
deployment whose tools speak another language extends these lists here, and nowhere else.
A rule that needs a word list and is not built on one of these is a rule for one suite.

Never listed here: the engine's own wording. What the loop says about a call (a timeout, a
refused argument) is read from the trace's typed fields (``ToolCallRecord.error_type``).
"""

from __future__ import annotations

import re

#: Function words of a task or result, left out of the content words retrieval and
#: applicability compare (``strategy.keywords``).
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
