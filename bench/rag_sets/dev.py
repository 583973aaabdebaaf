"""Development RAG set (a shop's support pages): prompts were tried on it (2026-12-07)."""

from __future__ import annotations

from toolcycle.rag import Document

DOCS = [
    Document("refunds", "Refunds are issued to the original payment method within 5 business "
             "days of the returned item arriving at our warehouse. Gift cards are refunded as "
             "store credit.", title="Refund policy"),
    Document("shipping", "Standard shipping takes 3 to 7 business days within the country. "
             "Express shipping arrives in 1 to 2 business days and costs 12 euros.",
             title="Shipping"),
    Document("warranty", "Every appliance carries a 2-year warranty covering manufacturing "
             "defects. Batteries are covered for 6 months. Damage from drops or water is not "
             "covered.", title="Warranty"),
    Document("returns", "Items can be returned within 30 days of delivery if unused and in "
             "their original packaging. Opened software cannot be returned.", title="Returns"),
    Document("support-hours", "Phone support is open Monday to Friday from 8:00 to 18:00 CET. "
             "Chat support is available every day from 9:00 to 21:00.", title="Support hours"),
    Document("loyalty", "Loyalty members earn 1 point per euro spent; 100 points are worth a 5 "
             "euro voucher. Points expire after 18 months without a purchase.",
             title="Loyalty programme"),
]

QUESTIONS: list[tuple[str, str | None, str | None]] = [
    ("How long does a refund take?", "5 business days", "refunds#0"),
    ("How much does express shipping cost?", "12", "shipping#0"),
    ("How long are batteries covered by the warranty?", "6 months", "warranty#0"),
    ("Within how many days can I return an item?", "30", "returns#0"),
    ("When is chat support available?", "21:00", "support-hours#0"),
    ("What are 100 loyalty points worth?", "5", "loyalty#0"),
    ("Do you ship to Japan?", None, None),
]
