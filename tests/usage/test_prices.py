"""Prices per unit-hour of the example tree's pools (config/org.yaml `pricing`; SEMANTICS.md C1, C2),
worked out from the prices written there and the instance shapes:

- gpu-west ml.p5.48xlarge: 55.04 / 8 H100 = 6.88 per GPU-hour; its vCPUs: carried by the GPUs.
- gpu-west ml.g5.12xlarge: 5.67 / 4 A10G = 1.4175 per GPU-hour; its vCPUs: carried.
- trn-east ml.trn1.32xlarge: 21.50 / 16 Trainium devices = 1.34375 per Neuron-device-hour.
- trn-east ml.p4d.24xlarge: 21.96 / 8 A100 = 2.745 per GPU-hour.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from hypergov.validate import validate_files
from tests.example_tree import example_files
from usage.adapter import prices_for_tree
from usage.prices import NoPrice, PoolPrices, UnitPrice
from usage.resources import ResourceKind

GPU, DEVICE, CORE, VCPU = ResourceKind.GPU, ResourceKind.NEURON_DEVICE, ResourceKind.NEURONCORE, ResourceKind.VCPU
G5_PRICE = "    ml.g5.12xlarge: {per_instance_hour: 5.67, purchase_option: on-demand}      # illustrative\n"


def _prices(files: dict[str, bytes]) -> PoolPrices:
    report = validate_files(files)
    assert report.ok, report.problems
    return prices_for_tree(report.tree)


def _org(files: dict[str, bytes]) -> str:
    return files["org.yaml"].decode()


def test_the_example_pools_are_priced_per_accelerator_hour() -> None:
    prices = _prices(example_files())
    expected = {("gpu-west", "ml.p5.48xlarge", GPU): (Fraction("6.88"), 8),
                ("gpu-west", "ml.g5.12xlarge", GPU): (Fraction("1.4175"), 4),
                ("trn-east", "ml.trn1.32xlarge", DEVICE): (Fraction("1.34375"), 16),
                ("trn-east", "ml.p4d.24xlarge", GPU): (Fraction("2.745"), 8)}
    for key, (per_unit, units) in expected.items():
        price = prices.of(key)
        assert isinstance(price, UnitPrice), key
        assert (price.per_unit_hour, price.units_per_instance, price.currency) == (per_unit, units, "USD")
        assert price.purchase_option == "on-demand"
    p5 = prices.of(("gpu-west", "ml.p5.48xlarge", GPU))
    assert isinstance(p5, UnitPrice) and p5.per_instance_hour == Decimal("55.04")  # as written, no float


def test_no_instance_is_charged_twice_and_neuroncores_are_unpriced() -> None:
    """Every instance type of the example has accelerators, so every vCPU pool is carried (C2)."""
    prices = _prices(example_files())
    vcpu_pools = [key for key in prices.pools if key[2] is VCPU]
    assert len(vcpu_pools) == 4
    assert all(prices.of(key) is NoPrice.CARRIED_BY_ACCELERATORS for key in vcpu_pools)
    assert prices.of(("trn-east", "ml.trn1.32xlarge", CORE)) is NoPrice.NEURONCORES


def test_a_type_without_a_price_is_unpriced_not_free() -> None:
    files = example_files()
    assert G5_PRICE in _org(files)
    files["org.yaml"] = _org(files).replace(G5_PRICE, "").encode()

    prices = _prices(files)

    assert prices.of(("gpu-west", "ml.g5.12xlarge", GPU)) is NoPrice.NOT_PRICED
    assert isinstance(prices.of(("gpu-west", "ml.p5.48xlarge", GPU)), UnitPrice)


def test_without_a_pricing_section_every_pool_is_unpriced() -> None:
    files = example_files()
    org = _org(files)
    files["org.yaml"] = (org[:org.index("pricing:\n")] + org[org.index("platform_admins:"):]).encode()

    prices = _prices(files)

    assert prices.currency == "USD"
    assert set(prices.pools.values()) == {NoPrice.NOT_PRICED, NoPrice.CARRIED_BY_ACCELERATORS}


def test_a_cpu_only_type_is_priced_per_vcpu_hour() -> None:
    """gpu-west also runs 2 ml.m5.12xlarge (48 vCPUs, no accelerator) at 2.88 per instance-hour:
    2.88 / 48 = 0.06 per vCPU-hour, in EUR as the org now says."""
    files = example_files()
    org = _org(files).replace("  - ml.trn1.32xlarge\n", "  - ml.trn1.32xlarge\n  - ml.m5.12xlarge\n", 1)
    org = org.replace("  currency: USD\n", "  currency: EUR\n").replace(
        G5_PRICE, G5_PRICE + "    ml.m5.12xlarge: {per_instance_hour: 2.88, purchase_option: reserved}\n")
    cluster = files["clusters/gpu-west.yaml"].decode().replace(
        "capacity:\n", "capacity:\n  ml.m5.12xlarge:\n    instances: 2\n", 1)
    files["org.yaml"], files["clusters/gpu-west.yaml"] = org.encode(), cluster.encode()

    price = _prices(files).of(("gpu-west", "ml.m5.12xlarge", VCPU))

    assert isinstance(price, UnitPrice)
    assert (price.per_unit_hour, price.units_per_instance, price.currency) == (Fraction("0.06"), 48, "EUR")
    assert price.purchase_option == "reserved"
