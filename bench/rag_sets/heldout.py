"""Held-out RAG set (written 2026-12-07 02:32 UTC, before any run on it): a city's transit
rules, a software library's release notes and an office's HR handbook. Each answerable
question's fact sits in one passage; two questions the base does not answer."""

from __future__ import annotations

from toolcycle.rag import Document

DOCS = [
    Document("tickets", "A single ticket costs 2.40 euros and is valid for 90 minutes on "
             "buses, trams and the metro. A day pass costs 7.50 euros.", title="Tickets"),
    Document("night-buses", "Night buses run from 00:30 to 05:00 every 30 minutes on lines "
             "N1 to N6. Regular tickets are valid on night buses.", title="Night buses"),
    Document("bikes", "Bicycles may be taken on the metro outside rush hours (7:00-9:00 and "
             "16:00-18:30) for free. Folding bikes are allowed at any time.", title="Bikes"),
    Document("fines", "Travelling without a valid ticket costs a fine of 60 euros, reduced to "
             "40 euros if paid within 14 days.", title="Fines"),
    Document("release-3-2", "Version 3.2 adds streaming uploads and drops support for Python "
             "3.8. The default timeout was raised from 10 to 30 seconds.",
             title="Release 3.2"),
    Document("release-3-1", "Version 3.1 fixes a memory leak in the connection pool and adds "
             "the retry_backoff option, which defaults to 0.5 seconds.", title="Release 3.1"),
    Document("install", "Install with pip install fastlane-client. The package needs OpenSSL "
             "1.1.1 or newer.", title="Installation"),
    Document("leave", "Employees receive 27 days of paid leave per year. Up to 5 unused days "
             "may be carried over to the next year.", title="Leave"),
    Document("remote", "Staff may work remotely up to 3 days per week after their probation "
             "period of 6 months.", title="Remote work"),
    Document("expenses", "Travel expenses must be submitted within 45 days. Meals are "
             "reimbursed up to 35 euros per day.", title="Expenses"),
]

#: (question, the fact a right answer holds, the chunk that holds it); ``None`` where the
#: base does not answer the question.
QUESTIONS: list[tuple[str, str | None, str | None]] = [
    ("How much is a day pass?", "7.50", "tickets#0"),
    ("How often do night buses run?", "30 minutes", "night-buses#0"),
    ("Can I bring a folding bike on the metro during rush hour?", "any time", "bikes#0"),
    ("What is the fine if I pay it within two weeks?", "40", "fines#0"),
    ("Which Python version did release 3.2 stop supporting?", "3.8", "release-3-2#0"),
    ("What is the default of retry_backoff?", "0.5", "release-3-1#0"),
    ("Which OpenSSL version does the client need?", "1.1.1", "install#0"),
    ("How many unused leave days can be carried over?", "5", "leave#0"),
    ("How long is the probation period?", "6 months", "remote#0"),
    ("What is the daily meal allowance on business trips?", "35", "expenses#0"),
    ("What is the parking fee at the central station?", None, None),
    ("Who is the CEO of the company?", None, None),
]
