"""Two kinds of lesson beyond issue 69's four, in any domain's words.

- ``unit``: a charge tool takes its quantity as a whole number of a smaller unit than the task
  says (grams for "2.5 kg", minutes for "1.5 hours"); the parameter's name and description do
  not say which, its error does (by name, or as a minimum in that unit).
- ``paging``: the price list answers a page at a time and says how many pages there are; the
  row a task asks about is never on the first page, which a call without ``page`` returns.
"""

from __future__ import annotations

from typing import Any

from .making import Call, KindPart, Maker, Task, as_json, slug

#: (the unit a task says, the unit the tool takes, how many of the second make one of the
#: first, what is measured)
UNITS = (("kg", "grams", 1000, "weight"), ("km", "metres", 1000, "distance"),
         ("hours", "minutes", 60, "duration"), ("litres", "millilitres", 1000, "volume"),
         ("GB", "MB", 1000, "data volume"), ("tonnes", "kilograms", 1000, "load"))


def unit(make: Maker, count: int) -> KindPart:
    d = make.domain
    said, takes, factor, measured = make.pick(UNITS)
    by_minimum = make.rng.random() < 0.5
    param = make.pick(("amount", "quantity", slug(measured)))
    code_param = make.pick((slug(d.thing), "code"))
    name = make.tool_name(("estimate", "quote", "charge", "pricing"))
    rates: dict[str, float] = {}
    # above every quantity a task says (6.5 at most), below every one converted (0.75 h = 45)
    minimum = 10 if factor < 100 else 100

    def charge(**args: Any) -> str:
        raw = args.get(param)
        try:
            amount = float(str(raw).strip())
        except ValueError:
            amount = -1.0
        if by_minimum and amount < minimum:
            raise ValueError(f"{param} {raw!r} is below the minimum of {minimum} {takes}")
        if not by_minimum and (amount != int(amount) or amount < minimum):
            raise ValueError(f"{param} must be a whole number of {takes}, got {raw!r}")
        code = "".join(str(args.get(code_param, "")).upper().split())
        if code not in rates:
            return "[]"
        return as_json({code_param: code, param: int(amount),
                        "charge_eur": round(rates[code] * amount, 2)})

    tools = [make.tool(name, f"The charge for a {d.thing} by its {measured}.",
                       {code_param: f"The {d.thing} code.", param: f"The {measured}."}, charge,
                       numbers=(param,))]
    tasks = []
    for _ in range(count):
        code = make.code(d.prefixes)
        quantity = make.pick((1.5, 2.5, 3.2, 0.75, 4.5, 1.25, 2.4, 6.5))
        rate = make.rng.randrange(11, 97) / 1000
        rates[code] = rate
        exact = round(quantity * factor)
        charge_eur = round(rate * exact, 2)
        prompt = make.pick((
            "What is the charge for {t} {c} with a {m} of {q} {u}?",
            "How much does {t} {c} cost for {q} {u}?",
            "{t_cap} {c}, {q} {u}: what is the charge in EUR?",
        )).format(t=d.thing, t_cap=d.thing.capitalize(), c=code, m=measured, q=quantity, u=said)
        tasks.append(Task("unit", prompt, f"{charge_eur:.2f}".rstrip("0").rstrip("."),
                          (Call(name, {code_param: code, param: exact}),), "charge_eur",
                          Call(name, {code_param: code, param: quantity}), "error"))
    return KindPart("unit", tools, tasks, 2, f"{said} as {takes}"
                    + (", by minimum" if by_minimum else ""))


def paging(make: Maker, count: int) -> KindPart:
    d = make.domain
    per_page = make.pick((5, 8, 10))
    name = make.tool_name(("price_list", "catalog", "list", "rates"))
    rows: list[dict[str, Any]] = []
    figure = d.item_figure
    for _ in range(per_page * 3):
        value, _text = make.figure(figure)
        rows.append({"name": f"{make.word()} {d.item}", figure.key: value})
    pages = -(-len(rows) // per_page)

    def listing(**args: Any) -> str:
        try:
            page = int(str(args.get("page", 1) or 1))
        except ValueError:
            page = 1
        page = min(max(page, 1), pages)
        return as_json({"items": rows[(page - 1) * per_page: page * per_page], "page": page,
                        "pages": pages})

    tools = [make.tool(name, f"The list of {d.item}s with their {figure.phrase}.", {},
                       listing, optional={"page": "integer"})]
    tasks = []
    later = list(range(per_page, len(rows)))
    make.rng.shuffle(later)
    for index in later[:count]:
        row = rows[index]
        page = index // per_page + 1
        prompt = make.pick((
            "What is the {p} of the {n}?", "How much is the {n}? Give the {p}.",
            "Tell me the {p} for {n}.",
        )).format(p=figure.phrase, n=row["name"])
        expected = make_text(row[figure.key], figure.decimals)
        tasks.append(Task("paging", prompt, expected,
                          tuple(Call(name, {"page": p}) for p in range(1, page + 1)),
                          figure.key, Call(name, {}), "no answer", row=row["name"]))
    return KindPart("paging", tools, tasks, 3, f"{per_page} a page")


def make_text(value: Any, decimals: int) -> str:
    return f"{value:.{decimals}f}" if decimals else str(value)
