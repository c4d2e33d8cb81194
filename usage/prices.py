"""The price of one unit-hour of each pool (a GPU-, Neuron-device- or vCPU-hour), from the org's
price per instance-hour (`Organization.pricing`; `usage.adapter.prices_for_tree` reads it), and
money exactly rounded to a currency's minor unit. SEMANTICS.md, "Chargeback", C1-C3.

Pure: prices and instance shapes in, prices per unit-hour out. A unit price is kept exact, as
the instance price over the units per instance (a `Fraction`): 5.67 / 48 vCPUs has no finite
decimal, and a month of hours times a rounded unit price would drift from the instance's price.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction
from typing import Final

from usage.resources import ResourceKind

PoolKey = tuple[str, str, ResourceKind]
"""A pool: (cluster, instance type, kind), as `usage.accounting.Pool.key`."""


class NoPrice(StrEnum):
    """Why a pool carries no price per unit-hour; the value says it to the reader."""

    NOT_PRICED = "org.yaml's pricing gives no price for the instance type"
    CARRIED_BY_ACCELERATORS = "vCPUs of an instance type with accelerators: its price is charged per accelerator"
    NEURONCORES = "NeuronCores: cores per device depend on the chip; Neuron devices carry the price"
    VCPUS_UNKNOWN = "the instance type's vCPUs are unknown, so no price per vCPU-hour"
    NOT_IN_TREE = "no cluster of the tree offers this pool's instance type"


@dataclass(frozen=True)
class UnitPrice:
    """One pool's price per unit-hour: `per_instance_hour` / `units_per_instance` (accelerators, or
    vCPUs of a CPU-only type), exact as `per_unit_hour`."""

    cluster: str
    instance_type: str
    kind: ResourceKind
    per_instance_hour: Decimal
    units_per_instance: int
    purchase_option: str
    currency: str

    @property
    def key(self) -> PoolKey:
        return self.cluster, self.instance_type, self.kind

    @property
    def per_unit_hour(self) -> Fraction:
        return Fraction(self.per_instance_hour) / self.units_per_instance


@dataclass(frozen=True)
class InstanceRate:
    """What the org pays per instance-hour of a type, and how (org.yaml's `purchase_option`)."""

    per_instance_hour: Decimal
    purchase_option: str


def unit_price(key: PoolKey, rate: InstanceRate | None, *, currency: str, accelerators: int,
               vcpus: int | None) -> UnitPrice | NoPrice:
    """The price per unit-hour of the pool `key`, or why it has none (C1, C2). `accelerators`
    per instance (0 for a CPU-only type), `vcpus` per instance (None: unknown)."""
    cluster, itype, kind = key
    if kind is ResourceKind.NEURONCORE:
        return NoPrice.NEURONCORES
    if kind is ResourceKind.VCPU and accelerators > 0:
        return NoPrice.CARRIED_BY_ACCELERATORS  # never charge an instance twice
    if rate is None:
        return NoPrice.NOT_PRICED
    if kind is ResourceKind.VCPU and not vcpus:
        return NoPrice.VCPUS_UNKNOWN
    units = vcpus if kind is ResourceKind.VCPU and vcpus else accelerators
    if units <= 0:
        raise ValueError(f"{kind} pool of {itype} on {cluster}: an instance type without accelerators has no "
                         "accelerator pool")
    return UnitPrice(cluster, itype, kind, rate.per_instance_hour, units, rate.purchase_option, currency)


@dataclass(frozen=True)
class PoolPrices:
    """Every pool's price per unit-hour, or why it has none, in one currency."""

    currency: str
    pools: Mapping[PoolKey, UnitPrice | NoPrice] = field(default_factory=dict)

    def of(self, key: PoolKey) -> UnitPrice | NoPrice:
        """A pool the tree does not give is unpriced, never free: NeuronCore pools (their
        capacity comes from the caller) and pools of clusters or types no longer in the tree."""
        found = self.pools.get(key)
        if found is not None:
            return found
        return NoPrice.NEURONCORES if key[2] is ResourceKind.NEURONCORE else NoPrice.NOT_IN_TREE


# ISO 4217's minor unit (digits after the point) where it is not 2: the currencies of ISO 4217's
# list one (SIX, "Current currency & funds code list") whose minor unit is 0, 3 or 4.
_MINOR_UNITS: Final[dict[str, int]] = {
    **dict.fromkeys(("BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "UYI",
                     "VND", "VUV", "XAF", "XOF", "XPF"), 0),
    **dict.fromkeys(("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"), 3),
    **dict.fromkeys(("CLF", "UYW"), 4),
}


def minor_unit(currency: str) -> int:
    """Digits after the point of `currency`'s smallest unit: 2 (cents) unless ISO 4217 says otherwise."""
    return _MINOR_UNITS.get(currency, 2)


def round_half_even(value: Fraction, places: int) -> Decimal:
    """`value` rounded once to `places` digits after the point, a tie to the even digit (as
    `decimal.ROUND_HALF_EVEN`): exact for any rational, where a Decimal division would round first."""
    scaled = value * 10**places
    whole, rest = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * rest
    if twice > scaled.denominator or (twice == scaled.denominator and whole % 2 == 1):
        whole += 1
    return Decimal(f"{whole}E-{places}")  # from text: exact, whatever the context's precision
