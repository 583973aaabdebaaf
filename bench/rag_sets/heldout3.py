"""Third held-out RAG set (written 2026-12-07 about 03:18 UTC, before any run on it; the first two
were read while the citation wording and :mod:`toolcycle.rag.attribution` were chosen): a
museum's visitor information, a bakery's ordering terms and a university course's rules.
Each answerable question's fact sits in one passage; two questions the base does not
answer."""

from __future__ import annotations

from toolcycle.rag import Document

DOCS = [
    Document("admission", "Adult admission is 18 euros; visitors under 12 enter free. Entry "
             "is free for everyone on the first Sunday of each month.", title="Admission"),
    Document("museum-hours", "The museum is open from 9:30 to 17:30, and until 21:00 on "
             "Thursdays. It is closed on Mondays.", title="Opening hours"),
    Document("tours", "Guided tours start every hour and last 75 minutes. Groups are limited "
             "to 15 people.", title="Guided tours"),
    Document("orders", "Cakes must be ordered at least 3 days ahead. Orders above 80 euros "
             "need a deposit of 25 percent.", title="Orders"),
    Document("delivery", "We deliver within 8 kilometres of the shop for a fee of 6 euros; "
             "deliveries are made between 7:00 and 11:00.", title="Delivery"),
    Document("allergens", "All our breads contain gluten. The almond croissant is made with "
             "nuts; the rye loaf is vegan.", title="Allergens"),
    Document("grading", "The final exam counts for 60 percent of the grade and the project "
             "for 40 percent. A grade of 5.5 or higher passes.", title="Grading"),
    Document("deadlines", "Projects are due on 12 January at noon. Late projects lose one "
             "point per day.", title="Deadlines"),
    Document("attendance", "Students must attend at least 80 percent of the lab sessions to "
             "sit the exam.", title="Attendance"),
    Document("resit", "A failed exam can be retaken once, in the resit week in April.",
             title="Resits"),
]

QUESTIONS: list[tuple[str, str | None, str | None]] = [
    ("How much does an adult ticket cost?", "18", "admission#0"),
    ("Until what time is the museum open on Thursdays?", "21:00", "museum-hours#0"),
    ("How long does a guided tour last?", "75 minutes", "tours#0"),
    ("How many days ahead must I order a cake?", "3", "orders#0"),
    ("What does delivery cost?", "6", "delivery#0"),
    ("Which loaf is vegan?", "rye", "allergens#0"),
    ("How much does the final exam count for?", "60", "grading#0"),
    ("When are projects due?", "12 January", "deadlines#0"),
    ("What share of lab sessions must students attend?", "80", "attendance#0"),
    ("When is the resit week?", "April", "resit#0"),
    ("Does the museum have a cafe?", None, None),
    ("Who teaches the course?", None, None),
]
