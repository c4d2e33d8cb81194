"""The AWS Price List Service the embedded endpoint adds (moto has none), as the Price List API
reference documents GetProducts, DescribeServices and GetAttributeValues: the Filter types
(TERM_MATCH, EQUALS, CONTAINS, ANY_OF, NONE_OF), paging, FormatVersion aws_v1, the documented
errors, and each PriceList entry a JSON document of AWS's offer format (product, serviceCode,
terms.OnDemand with hourly price dimensions). The products are embedded_aws/price_list.yaml's."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from embedded_aws.pricing_ext import SEED

from .conftest import assert_complete, error_of

SAGEMAKER = "AmazonSageMaker"


@pytest.fixture
def pricing(client: Callable[..., Any]) -> Any:
    return client("pricing")


def _seed_rows() -> list[list[Any]]:
    return list(yaml.safe_load(SEED.read_text())["products"])


def _all(pricing: Any, **kwargs: Any) -> list[dict[str, Any]]:
    documents, token = [], None
    while True:
        page = pricing.get_products(ServiceCode=SAGEMAKER, MaxResults=3, **kwargs,
                                    **({"NextToken": token} if token else {}))
        assert_complete("pricing", "GetProducts", page)
        documents += [json.loads(text) for text in page["PriceList"]]
        token = page.get("NextToken")
        if not token:
            return documents


def _term(field: str, value: str, kind: str = "TERM_MATCH") -> dict[str, str]:
    return {"Type": kind, "Field": field, "Value": value}


def test_term_match_on_two_attributes_returns_every_product_of_that_type_and_region(pricing: Any) -> None:
    """ml.p5.48xlarge in us-west-2: the HyperPod cluster product and the training-job product,
    each with its usage type and its seed price as the OnDemand hourly USD price."""
    docs = _all(pricing, Filters=[_term("instanceName", "ml.p5.48xlarge"), _term("regionCode", "us-west-2")])
    expected = {(f"USW2-{usage}:{itype}", usd) for itype, region, usage, usd, *_ in _seed_rows()
                if itype == "ml.p5.48xlarge" and region == "us-west-2"}
    found = set()
    for doc in docs:
        assert doc["serviceCode"] == SAGEMAKER and doc["product"]["productFamily"] == "ML Instance"
        (term,) = doc["terms"]["OnDemand"].values()
        (dimension,) = term["priceDimensions"].values()
        assert dimension["unit"] == "Hrs" and dimension["beginRange"] == "0" and term["sku"] == doc["product"]["sku"]
        found.add((doc["product"]["attributes"]["usagetype"], dimension["pricePerUnit"]["USD"]))
    assert found == expected and len(expected) == 2


def test_contains_any_of_and_none_of(pricing: Any) -> None:
    rows = _seed_rows()
    cluster = _all(pricing, Filters=[_term("usagetype", "-Cluster:", "CONTAINS")])
    assert len(cluster) == sum(1 for r in rows if r[2] == "Cluster")
    east_or_west = _all(pricing, Filters=[_term("regionCode", "us-east-1,us-west-2", "ANY_OF")])
    assert len(east_or_west) == len(rows)
    not_p5 = _all(pricing, Filters=[_term("instanceName", "ml.p5.48xlarge, ml.p4d.24xlarge", "NONE_OF")])
    assert len(not_p5) == sum(1 for r in rows if r[0] not in ("ml.p5.48xlarge", "ml.p4d.24xlarge"))
    exact = _all(pricing, Filters=[_term("instanceName", "ml.p5", "EQUALS")])
    assert exact == []


def test_pages_hold_every_product_once(pricing: Any) -> None:
    docs = _all(pricing)
    skus = [doc["product"]["sku"] for doc in docs]
    assert len(skus) == len(set(skus)) == len(_seed_rows())


def test_describe_services_and_attribute_values(pricing: Any) -> None:
    (service,) = pricing.describe_services(ServiceCode=SAGEMAKER)["Services"]
    assert {"instanceName", "regionCode", "usagetype"} <= set(service["AttributeNames"])
    values = pricing.get_attribute_values(ServiceCode=SAGEMAKER, AttributeName="regionCode")
    assert_complete("pricing", "GetAttributeValues", values)
    assert [v["Value"] for v in values["AttributeValues"]] == sorted({r[1] for r in _seed_rows()})


def test_documented_errors(pricing: Any, client: Callable[..., Any]) -> None:
    assert error_of(pricing.get_products, ServiceCode="AmazonEC2")[0] == "NotFoundException"
    assert error_of(pricing.get_products, ServiceCode=SAGEMAKER, FormatVersion="aws_v2")[0] == \
        "InvalidParameterException"
    assert error_of(pricing.get_products, ServiceCode=SAGEMAKER,
                    Filters=[_term("noSuchAttribute", "x")])[0] == "InvalidParameterException"
    assert error_of(pricing.get_products, ServiceCode=SAGEMAKER, NextToken="not-ours")[0] == \
        "InvalidNextTokenException"
    assert error_of(pricing.get_attribute_values, ServiceCode=SAGEMAKER,
                    AttributeName="noSuchAttribute")[0] == "InvalidParameterException"
    # MaxResults is 1..100 in the model: the endpoint, not botocore, refuses 0.
    code, status, _ = error_of(client("pricing", checked=False).get_products, ServiceCode=SAGEMAKER, MaxResults=0)
    assert status == 400 and code == "ValidationException"
