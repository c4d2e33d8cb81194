"""org.yaml's `pricing` section: prices read as the exact decimals written, and every mistake
reported at its file and line with what is wrong and how to fix it (the corpus cases
`cases/cost005-*`, `cases/sch00?-price-*` pin more of them)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from hypergov.model.org import InstancePrice, Pricing
from hypergov.validate import validate_files
from tests.example_tree import example_files

P5 = "    ml.p5.48xlarge: {per_instance_hour: 55.04, purchase_option: on-demand}     # illustrative\n"


def _with_org(org: str) -> dict[str, bytes]:
    files = example_files()
    files["org.yaml"] = org.encode()
    return files


def _org() -> str:
    return example_files()["org.yaml"].decode()


def test_example_prices_are_the_decimals_written() -> None:
    report = validate_files(example_files())
    assert report.ok and report.tree.org is not None
    pricing = report.tree.org.model.pricing
    assert pricing is not None and pricing.currency == "USD"
    assert pricing.instance_types["ml.p5.48xlarge"] == InstancePrice(per_instance_hour=Decimal("55.04"),
                                                                     purchase_option="on-demand")
    assert pricing.instance_types["ml.trn1.32xlarge"].per_instance_hour == Decimal("21.50")


@pytest.mark.parametrize(("written", "expected"), [
    pytest.param(0.1, "0.1", id="no-binary-tail"), pytest.param(55.04, "55.04", id="p5"),
    pytest.param(7, "7", id="integer"), pytest.param(0.00000001, "1E-8", id="smallest"),
    pytest.param(9999999.99999999, "9999999.99999999", id="largest"),
])
def test_a_yaml_number_is_kept_as_the_decimal_it_reads_as(written: float, expected: str) -> None:
    price = Pricing.model_validate({"instance_types": {"ml.p5.48xlarge": {
        "per_instance_hour": written, "purchase_option": "reserved"}}})
    assert price.instance_types["ml.p5.48xlarge"].per_instance_hour == Decimal(expected)
    assert str(price.instance_types["ml.p5.48xlarge"].per_instance_hour) == expected


def test_pricing_is_optional() -> None:
    org = _org()
    start, end = org.index("pricing:\n"), org.index("platform_admins:")
    report = validate_files(_with_org(org[:start] + org[end:]))
    assert report.ok and report.problems == []
    assert report.tree.org is not None and report.tree.org.model.pricing is None


@pytest.mark.parametrize(("old", "new", "rule", "says"), [
    pytest.param("per_instance_hour: 55.04,", "per_instance_hour: -55.04,", "SCH004", "greater than 0", id="negative"),
    pytest.param("per_instance_hour: 55.04,", "per_instance_hour: .inf,", "SCH004", "finite", id="infinite"),
    pytest.param("per_instance_hour: 55.04,", "per_instance_hour: .nan,", "SCH004", "finite", id="nan"),
    pytest.param("per_instance_hour: 55.04,", "per_instance_hour: true,", "SCH002", "must be a number", id="bool"),
    pytest.param("per_instance_hour: 55.04,", "per_instance_hour: 12345678.9,", "SCH004", "7 digits",
                 id="too-large"),
    pytest.param("per_instance_hour: 55.04, purchase_option: on-demand}", "per_instance_hour: 55.04}", "SCH003",
                 "purchase_option", id="no-purchase-option"),
    pytest.param("ml.p5.48xlarge: {", "ml.p5.48xlargee: {", "SCH004", "not an allowed key", id="unknown-type"),
])
def test_a_bad_price_names_file_line_and_fix(old: str, new: str, rule: str, says: str) -> None:
    org = _org()
    assert P5 in org and old in P5
    line = org[:org.index(P5)].count("\n") + 1
    report = validate_files(_with_org(org.replace(P5, P5.replace(old, new))))

    (found,) = report.problems
    assert (found.rule, found.pos.file, found.pos.line) == (rule, "config/org.yaml", line)
    assert says in found.message and found.hint.strip()


def test_a_price_for_a_type_the_org_does_not_allow_is_cost005() -> None:
    """The org drops ml.p4d.24xlarge from allowed_instance_types (trn-east then offers a type it does
    not allow: CAP005 there) but keeps its price: COST005 on the price's line in org.yaml."""
    org = _org()
    price = "    ml.p4d.24xlarge: {per_instance_hour: 21.96, purchase_option: on-demand}    # illustrative\n"
    assert price in org and "  - ml.p4d.24xlarge\n" in org
    edited = org.replace("  - ml.p4d.24xlarge\n", "", 1)
    line = edited[:edited.index(price)].count("\n") + 1

    problems = validate_files(_with_org(edited)).problems

    cost = [p for p in problems if p.rule == "COST005"]
    assert [(p.pos.file, p.pos.line, p.pos.column) for p in cost] == [("config/org.yaml", line, 5)]
    assert "ml.p4d.24xlarge" in cost[0].message and "allowed_instance_types" in cost[0].hint
    assert {p.rule for p in problems} == {"COST005", "CAP005"}
