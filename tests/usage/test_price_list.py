"""Prices from the Price List, pure (usage/SEMANTICS.md P1-P6): which product is a HyperPod
cluster's, which price is its on-demand hourly one, how org.yaml's prices compare, and the edit.

The documents are written by hand in the offer format the Price List API reference shows for
GetProducts (`aws pricing get-products` example: product.attributes, product.sku, serviceCode,
terms.OnDemand.<sku.term>.priceDimensions.<rate>.{unit, beginRange, pricePerUnit}); the HyperPod
usage type `<region code>-Cluster:<type>` is the one AWS bills a cluster's instances under
(awslabs ai-on-sagemaker-hyperpod, "GPU Cost Allocation from CUR")."""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from hypergov.tree_files import read_tree_dir
from hypergov.validate import validate_files
from tests.example_tree import CONFIG
from usage.price_list import ListedPrice, NotListed, listed_price
from usage.price_proposal import Action, PriceEditError, changes, compare, edited_org


def offer(itype: str, region: str, usage_type: str, prices: dict[str, str], *, unit: str = "Hrs",
          begin: str = "0", sku: str = "ABCDEFGHJKLMNPQR") -> str:
    dimensions = {f"{sku}.JRTCKXETXF.{n}": {"unit": unit, "beginRange": begin, "endRange": "Inf",
                                              "pricePerUnit": {cur: amount}, "appliesTo": [],
                                              "rateCode": f"{sku}.JRTCKXETXF.{n}", "description": "x"}
                  for n, (cur, amount) in enumerate(prices.items())}
    return json.dumps({
        "product": {"productFamily": "ML Instance", "sku": sku,
                    "attributes": {"instanceName": itype, "regionCode": region, "usagetype": usage_type}},
        "serviceCode": "AmazonSageMaker",
        "terms": {"OnDemand": {f"{sku}.JRTCKXETXF": {"priceDimensions": dimensions, "sku": sku,
                                                      "effectiveDate": "2026-11-01T00:00:00Z",
                                                      "offerTermCode": "JRTCKXETXF", "termAttributes": {}}}},
        "version": "20261101000000", "publicationDate": "2026-11-01T00:00:00Z"})


P5 = "ml.p5.48xlarge"


def test_the_cluster_product_is_taken_not_the_training_jobs() -> None:
    docs = [offer(P5, "us-west-2", "USW2-Train:ml.p5.48xlarge", {"USD": "63.2960000000"}),
            offer(P5, "us-west-2", "USW2-Cluster:ml.p5.48xlarge", {"USD": "55.0400000000"}, sku="CLUSTER000000000")]
    found = listed_price(docs, P5, "us-west-2", currency="USD")
    assert isinstance(found, ListedPrice)
    assert (found.per_instance_hour, found.sku, found.usage_type) == \
        (Decimal("55.04"), "CLUSTER000000000", "USW2-Cluster:ml.p5.48xlarge")


def test_a_usage_type_without_region_prefix_is_a_clusters_too() -> None:
    found = listed_price([offer(P5, "us-east-1", "Cluster:ml.p5.48xlarge", {"USD": "55.04"})], P5, "us-east-1",
                         currency="USD")
    assert isinstance(found, ListedPrice) and found.per_instance_hour == Decimal("55.04")


@pytest.mark.parametrize(("docs", "why"), [
    ([offer(P5, "us-west-2", "USW2-Train:ml.p5.48xlarge", {"USD": "63.296"})], NotListed.NO_PRODUCT),
    ([offer(P5, "us-east-1", "USE1-Cluster:ml.p5.48xlarge", {"USD": "55.04"})], NotListed.NO_PRODUCT),
    ([offer(P5, "us-west-2", "USW2-Cluster:ml.p5.48xlarge", {"CNY": "380"})], NotListed.OTHER_CURRENCY),
    ([offer(P5, "us-west-2", "USW2-Cluster:ml.p5.48xlarge", {"USD": "0.0000000000"})], NotListed.NO_ON_DEMAND),
    ([offer(P5, "us-west-2", "USW2-Cluster:ml.p5.48xlarge", {"USD": "1.0"}, unit="GB-Mo")], NotListed.NO_ON_DEMAND),
    ([offer(P5, "us-west-2", "USW2-Cluster:ml.p5.48xlarge", {"USD": "1.0"}, begin="720")], NotListed.NO_ON_DEMAND),
    ([offer(P5, "us-west-2", "USW2-Cluster:ml.p5.48xlarge", {"USD": "55.04"}),
      offer(P5, "us-west-2", "USW2-Cluster:ml.p5.48xlarge", {"USD": "54.00"}, sku="OTHER00000000000")],
     NotListed.AMBIGUOUS),
])
def test_why_no_price(docs: list[str], why: NotListed) -> None:
    """Another region's product, a training job's, another currency, a zero, a non-hourly unit, a
    tier that does not start at 0, two different hourly prices: no price, and why."""
    assert listed_price(docs, P5, "us-west-2", currency="USD") is why


def _listed(itype: str, region: str, price: str) -> ListedPrice:
    return ListedPrice(itype, region, Decimal(price), "USD", "SKU", f"X-Cluster:{itype}", "")


def test_compare_each_action() -> None:
    listed: dict[tuple[str, str], Any] = {
        ("ml.a", "us-west-2"): _listed("ml.a", "us-west-2", "10"),  # org.yaml 10 on-demand: same
        ("ml.b", "us-west-2"): _listed("ml.b", "us-west-2", "12"),  # org.yaml 11 on-demand: change
        ("ml.c", "us-west-2"): _listed("ml.c", "us-west-2", "5"),  # not in org.yaml: add
        ("ml.d", "us-west-2"): _listed("ml.d", "us-west-2", "9"),  # reserved 7: kept
        ("ml.e", "us-west-2"): NotListed.NO_PRODUCT,  # nothing listed: kept
        ("ml.f", "us-east-1"): _listed("ml.f", "us-east-1", "20"),  # two regions: the highest (P4)
        ("ml.f", "us-west-2"): _listed("ml.f", "us-west-2", "21.5"),
    }
    current = {"ml.a": (Decimal("10.00"), "on-demand"), "ml.b": (Decimal("11"), "on-demand"),
               "ml.d": (Decimal("7"), "reserved"), "ml.e": (Decimal("3"), "on-demand"),
               "ml.f": (Decimal("20"), "on-demand")}
    rows = {r.instance_type: r for r in compare(current, listed)}
    assert {t: (r.action, r.proposed) for t, r in rows.items()} == {
        "ml.a": (Action.SAME, Decimal("10")), "ml.b": (Action.CHANGE, Decimal("12")),
        "ml.c": (Action.ADD, Decimal("5")), "ml.d": (Action.KEPT_CONTRACT, None),
        "ml.e": (Action.NOT_LISTED, None), "ml.f": (Action.CHANGE, Decimal("21.5"))}
    assert rows["ml.f"].differs_by_region and not rows["ml.b"].differs_by_region
    assert [r.instance_type for r in changes(list(rows.values()))] == ["ml.b", "ml.c", "ml.f"]


@pytest.fixture
def tree_dir(tmp_path: Path) -> Path:
    shutil.copytree(CONFIG, tmp_path / "config")
    return tmp_path / "config"


def _org(tree_dir: Path) -> tuple[dict[str, Any], Any]:
    files = read_tree_dir(tree_dir)
    result = validate_files(files, display_root=str(tree_dir))
    assert result.ok
    return files, result.tree.org.doc


def _edit(tree_dir: Path, listed: dict[tuple[str, str], Any]) -> str:
    files, doc = _org(tree_dir)
    from usage.adapter import org_rates

    currency, rates = org_rates(validate_files(files, display_root=str(tree_dir)).tree)
    text = edited_org(files["org.yaml"].decode(), doc, compare(rates, listed), currency=currency)
    after = validate_files({**files, "org.yaml": text.encode()}, display_root=str(tree_dir))
    assert after.ok, after.problems
    return text


def test_a_changed_price_is_replaced_on_its_line_and_an_added_type_follows_the_last(tree_dir: Path) -> None:
    """p4d's line changes, nothing else does; ml.g5.48xlarge (allowed, its price taken out of
    org.yaml first) is added after ml.trn1.32xlarge, indented as the other types; the edited tree
    validates with the new prices."""
    org = tree_dir / "org.yaml"
    org.write_text("".join(line for line in org.read_text().splitlines(keepends=True)
                           if not line.startswith("    ml.g5.48xlarge:")))
    text = _edit(tree_dir, {("ml.p4d.24xlarge", "us-east-1"): _listed("ml.p4d.24xlarge", "us-east-1", "25.25"),
                            ("ml.g5.48xlarge", "us-east-1"): _listed("ml.g5.48xlarge", "us-east-1", "20.36")})
    before = org.read_text().splitlines()
    after = text.splitlines()
    changed = [(b, a) for b, a in zip(before, after, strict=False) if b != a]
    assert changed[0] == ("    ml.p4d.24xlarge: {per_instance_hour: 21.96, purchase_option: on-demand}"
                          "    # illustrative",
                          "    ml.p4d.24xlarge: {per_instance_hour: 25.25, purchase_option: on-demand}  "
                          "# AWS Price List, on-demand, us-east-1")
    trn = after.index(next(line for line in after if line.startswith("    ml.trn1.32xlarge:")))
    assert after[trn + 1] == ("    ml.g5.48xlarge: {per_instance_hour: 20.36, purchase_option: on-demand}  "
                              "# AWS Price List, on-demand, us-east-1")
    assert len(after) == len(before) + 1


def test_an_org_without_pricing_gets_a_pricing_section(tree_dir: Path) -> None:
    org = tree_dir / "org.yaml"
    lines = org.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("pricing:"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() and not lines[i].startswith(" "))
    org.write_text("".join(lines[:start] + lines[end:]))
    text = _edit(tree_dir, {("ml.p5.48xlarge", "us-west-2"): _listed("ml.p5.48xlarge", "us-west-2", "55.04")})
    assert text.endswith("pricing:\n  currency: USD\n  instance_types:\n"
                         "    ml.p5.48xlarge: {per_instance_hour: 55.04, purchase_option: on-demand}  "
                         "# AWS Price List, on-demand, us-west-2\n")


def test_inline_instance_types_are_not_edited(tree_dir: Path) -> None:
    org = tree_dir / "org.yaml"
    text = org.read_text()
    start = text.index("  instance_types:\n")
    end = text.index("\nplatform_admins:")
    org.write_text(text[:start] + "  instance_types: {ml.p5.48xlarge: {per_instance_hour: 55.04, "
                   "purchase_option: on-demand}}\n" + text[end:])
    files, doc = _org(tree_dir)
    rows = compare({"ml.p5.48xlarge": (Decimal("55.04"), "on-demand")},
                   {("ml.g5.12xlarge", "us-west-2"): _listed("ml.g5.12xlarge", "us-west-2", "5.67")})
    with pytest.raises(PriceEditError, match="written inline"):
        edited_org(files["org.yaml"].decode(), doc, rows, currency="USD")
