"""Second held-out RAG set (written 2026-12-07 about 03:00 UTC, before any run on it; the first,
:mod:`.heldout`, was read while the citation wording was chosen and is development data
since): a public library's rules, a gym's membership terms and a cloud service's quotas.
Each answerable question's fact sits in one passage; two questions the base does not
answer."""

from __future__ import annotations

from toolcycle.rag import Document

DOCS = [
    Document("loans", "Books may be borrowed for 21 days and renewed twice online. DVDs are "
             "lent for 7 days and cannot be renewed.", title="Loans"),
    Document("late-fees", "A late book costs 0.20 euros per day, up to a maximum of 6 euros per "
             "item. Children's books have no late fees.", title="Late fees"),
    Document("library-hours", "The main library opens at 10:00 and closes at 20:00 on weekdays; "
             "on Saturdays it closes at 16:00. It is closed on Sundays.",
             title="Opening hours"),
    Document("membership", "A monthly gym membership costs 39 euros; a yearly one costs 390 "
             "euros. Students get a 20 percent discount.", title="Membership"),
    Document("cancellation", "Memberships can be cancelled with one month's notice. A yearly "
             "membership cancelled early is refunded pro rata.", title="Cancellation"),
    Document("classes", "Group classes must be booked at least 2 hours in advance. Each member "
             "may book up to 4 classes per week.", title="Classes"),
    Document("quotas", "Each project may create up to 50 virtual machines and 10 public IP "
             "addresses. Storage is limited to 5 terabytes per project.", title="Quotas"),
    Document("billing", "Usage is billed per second with a minimum of 60 seconds. Invoices are "
             "sent on the 3rd day of each month.", title="Billing"),
    Document("regions", "Virtual machines are available in the Frankfurt, Dublin and Helsinki "
             "regions. Helsinki runs on renewable energy only.", title="Regions"),
    Document("backups", "Snapshots are kept for 35 days. Deleted projects can be restored "
             "within 7 days.", title="Backups"),
]

QUESTIONS: list[tuple[str, str | None, str | None]] = [
    ("How long can I keep a borrowed book?", "21 days", "loans#0"),
    ("What is the maximum late fee for one book?", "6", "late-fees#0"),
    ("When does the library close on Saturdays?", "16:00", "library-hours#0"),
    ("How much does a yearly gym membership cost?", "390", "membership#0"),
    ("How much notice do I need to give to cancel my membership?", "one month",
     "cancellation#0"),
    ("How many classes can I book per week?", "4", "classes#0"),
    ("How many public IP addresses can a project have?", "10", "quotas#0"),
    ("What is the minimum billed duration?", "60 seconds", "billing#0"),
    ("Which region runs on renewable energy only?", "Helsinki", "regions#0"),
    ("How long are snapshots kept?", "35 days", "backups#0"),
    ("Does the gym have a swimming pool?", None, None),
    ("What GPU types does the cloud offer?", None, None),
]
