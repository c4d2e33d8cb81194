"""org.yaml's prices compared with the Price List's, and the change that brings them in line,
written into org.yaml where the prices stand. SEMANTICS.md, "Prices from the Price List", P3-P6.

Pure: the org's prices and the listed prices in, one line per instance type and the edited file
out. org.yaml holds one price per type for every cluster (`Pricing.instance_types`), so a type run
in several regions at different listed prices is proposed at the highest (P4: a team is never
charged less than its instances may cost) and the difference is said.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

from hypergov.source import Document
from usage.price_list import ListedPrice, NotListed

ON_DEMAND = "on-demand"


class Action(StrEnum):
    ADD = "add"  # org.yaml has no price for the type: the listed one is proposed
    CHANGE = "change"  # an on-demand price that differs from the listed one
    SAME = "same"
    KEPT_CONTRACT = "kept: contract rate"  # reserved or training-plan: not a public price (P3)
    NOT_LISTED = "kept: not listed"  # nothing listed in any of its regions (P5)


@dataclass(frozen=True)
class TypePrice:
    """One instance type: what org.yaml says, what the Price List says per region, what to do."""

    instance_type: str
    current: Decimal | None
    purchase_option: str | None
    listed: Mapping[str, ListedPrice | NotListed]  # region -> listed price, or why none
    action: Action
    proposed: Decimal | None

    @property
    def differs_by_region(self) -> bool:
        return len({p.per_instance_hour for p in self.listed.values() if isinstance(p, ListedPrice)}) > 1


def compare(current: Mapping[str, tuple[Decimal, str]],
            listed: Mapping[tuple[str, str], ListedPrice | NotListed]) -> list[TypePrice]:
    """Every type the Price List was asked about: `current` maps a type to org.yaml's (price,
    purchase option); `listed` maps (type, region) to the Price List's answer."""
    by_type: dict[str, dict[str, ListedPrice | NotListed]] = {}
    for (itype, region), answer in listed.items():
        by_type.setdefault(itype, {})[region] = answer
    rows: list[TypePrice] = []
    for itype in sorted(by_type):
        regions = dict(sorted(by_type[itype].items()))
        prices = [p.per_instance_hour for p in regions.values() if isinstance(p, ListedPrice)]
        price, option = current.get(itype, (None, None))
        proposed = max(prices) if prices else None
        if option is not None and option != ON_DEMAND:
            action, proposed = Action.KEPT_CONTRACT, None
        elif proposed is None:
            action = Action.NOT_LISTED
        elif price is None:
            action = Action.ADD
        elif price != proposed:
            action = Action.CHANGE
        else:
            action = Action.SAME
        rows.append(TypePrice(itype, price, option, regions, action, proposed))
    return rows


def changes(rows: list[TypePrice]) -> list[TypePrice]:
    return [r for r in rows if r.action in (Action.ADD, Action.CHANGE)]


class PriceEditError(Exception):
    """org.yaml cannot be edited where the prices stand (the message says where and how to do it by hand)."""


def edited_org(text: str, doc: Document, rows: list[TypePrice], *, currency: str) -> str:
    """org.yaml's text with each change written: a changed price replaced on its line (comments and
    layout kept), an added type as one line after the last of `pricing.instance_types`, or a new
    `pricing` section at the end when org.yaml has none (P6)."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    added: list[TypePrice] = []
    for row in changes(rows):
        assert row.proposed is not None
        if row.action is Action.ADD:
            added.append(row)
            continue
        at = doc.value_pos.get(("pricing", "instance_types", row.instance_type, "per_instance_hour"))
        if at is None:
            raise PriceEditError(f"{doc.file}: no pricing.instance_types.{row.instance_type}.per_instance_hour "
                                 "to change")
        line, column = at
        old = lines[line - 1]
        end = column - 1
        while end < len(old) and (old[end].isdigit() or old[end] in ".eE+-_"):
            end += 1
        rest = old[end:].rstrip("\n")
        comment = rest.find(" #")
        rest = (rest[:comment] if comment >= 0 else rest).rstrip()  # the old price's note no longer holds
        lines[line - 1] = f"{old[:column - 1]}{_number(row.proposed)}{rest}  # {_source(row)}\n"
    if added:
        lines = _with_added(lines, doc, added, currency=currency)
    return "".join(lines)


def _with_added(lines: list[str], doc: Document, rows: list[TypePrice], *, currency: str) -> list[str]:
    entries = [f"{r.instance_type}: {{per_instance_hour: {_number(r.proposed)}, purchase_option: {ON_DEMAND}}}"
               f"  # {_source(r)}\n" for r in rows]
    types_key = doc.key_pos.get(("pricing", "instance_types"))
    if doc.key_pos.get(("pricing",)) is None:
        block = ["\n", "# What an instance-hour costs, for the usage chargeback: the AWS Price List's on-demand "
                 "prices.\n", "pricing:\n", f"  currency: {currency}\n", "  instance_types:\n"]
        return lines + block + [f"    {e}" for e in entries]
    if types_key is None:
        raise PriceEditError(f"{doc.file}: pricing has no instance_types mapping to add {rows[0].instance_type} "
                             "to; add `instance_types:` under `pricing:` and run again")
    line, column = types_key
    if lines[line - 1].rstrip().endswith("}") or lines[line - 1].rstrip().endswith("{"):
        raise PriceEditError(f"{doc.file}:{line}: pricing.instance_types is written inline; write it one type per "
                             "line to let hypergov add to it")
    indent = None
    last = line
    for index in range(line, len(lines)):
        stripped = lines[index].strip()
        width = len(lines[index]) - len(lines[index].lstrip(" "))
        if not stripped or stripped.startswith("#"):
            continue
        if width <= column - 1:
            break
        indent = width if indent is None else indent
        last = index + 1
    pad = " " * (indent if indent is not None else column + 1)
    return lines[:last] + [pad + e for e in entries] + lines[last:]


def _number(value: Decimal | None) -> str:
    assert value is not None
    text = format(value, "f")
    if "." not in text:
        return text + ".00"
    whole, frac = text.split(".")
    return f"{whole}.{frac.ljust(2, '0')}"


def _source(row: TypePrice) -> str:
    regions = [region for region, p in row.listed.items() if isinstance(p, ListedPrice)]
    return f"AWS Price List, on-demand, {', '.join(regions)}"
