"""A period's chargeback for people and machines: the Markdown section `hypergov usage report`
adds after the usage tables when the tree prices its instance types, and its JSON form. Pure."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from usage.chargeback import Chargeback, Money, PoolCharge, TeamCharge
from usage.report import UNIT, md_table

TEAM_HEADER = ("team", "own use", "borrowed", "idle guarantee", "total charged", "lent (paid by borrowers)",
               "of which lost to preemption")


def _money(value: Money) -> str:
    return f"{value.amount:,}"


def chargeback_markdown(charges: Chargeback) -> str:
    """Per team what it is charged (own use + borrowed + idle guarantee) and what its lending was
    worth; per pool the capacity's cost and the part nobody used nor was guaranteed; every pool
    that has hours but no price, and why."""
    currency = charges.currency
    lines = [f"## Chargeback ({currency})", "",
             "A team pays for its own use, what it borrowed, and its guarantee left idle; what it lent is paid "
             "by the teams that borrowed it (usage/SEMANTICS.md, C1-C7).", ""]
    lines += md_table(TEAM_HEADER, [_team_row(t) for t in charges.teams])
    if charges.pools:
        lines += ["", "| pool | price per unit-hour | capacity cost | charged to teams | idle, charged to nobody |",
                  "|---|---:|---:|---:|---:|"]
        lines += [_pool_row(p) for p in charges.pools]
    if charges.unpriced:
        lines += ["", "Not priced (hours shown above, no cost derived):", ""]
        lines += [f"- `{u.cluster}` `{u.instance_type}` {u.kind.value}: {u.reason.value} "
                  f"({u.used_hours:,.1f} {UNIT[u.kind]} used)" for u in charges.unpriced]
    if charges.carried:
        carried = ", ".join(f"`{cluster}` `{itype}`" for cluster, itype, _ in charges.carried)
        lines += ["", f"vCPUs of {carried}: paid through the instance's accelerators (not charged twice)."]
    return "\n".join(lines) + "\n"


def _team_row(team: TeamCharge) -> list[str]:
    return [team.team, _money(team.own), _money(team.borrowed), _money(team.idle_guarantee), _money(team.total),
            _money(team.lent), _money(team.lost_to_preemption)]


def _pool_row(pool: PoolCharge) -> str:
    price = pool.unit_price
    per_unit = Decimal(price.per_unit_hour.numerator) / Decimal(price.per_unit_hour.denominator)
    return (f"| `{pool.cluster}` `{pool.instance_type}` {pool.kind.value} | {per_unit:.4f} "
            f"({price.per_instance_hour} / {price.units_per_instance}, {price.purchase_option}) | "
            f"{_money(pool.capacity_cost)} | {_money(pool.charged)} | {_money(pool.unguaranteed_idle_cost)} |")


def chargeback_json(charges: Chargeback) -> dict[str, Any]:
    """Amounts as decimal strings (exact, in the currency's minor unit)."""
    def money(value: Money) -> str:
        return str(value.amount)

    return {
        "currency": charges.currency,
        "teams": [{"team": t.team, "own": money(t.own), "borrowed": money(t.borrowed),
                   "idle_guarantee": money(t.idle_guarantee), "total": money(t.total), "lent": money(t.lent),
                   "lost_to_preemption": money(t.lost_to_preemption),
                   "pools": [{"cluster": p.cluster, "instance_type": p.instance_type, "kind": p.kind.value,
                              "own": money(p.own), "borrowed": money(p.borrowed),
                              "idle_guarantee": money(p.idle_guarantee), "total": money(p.total),
                              "lent": money(p.lent)} for p in t.pools]}
                  for t in charges.teams],
        "pools": [{"cluster": p.cluster, "instance_type": p.instance_type, "kind": p.kind.value,
                   "per_instance_hour": str(p.unit_price.per_instance_hour),
                   "units_per_instance": p.unit_price.units_per_instance,
                   "purchase_option": p.unit_price.purchase_option, "capacity_cost": money(p.capacity_cost),
                   "charged": money(p.charged), "unguaranteed_idle_cost": money(p.unguaranteed_idle_cost),
                   "missing_intervals": p.missing_intervals} for p in charges.pools],
        "unpriced": [{"cluster": u.cluster, "instance_type": u.instance_type, "kind": u.kind.value,
                      "reason": u.reason.value, "used_hours": u.used_hours} for u in charges.unpriced],
    }
