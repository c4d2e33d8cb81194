"""The AWS Price List Service, which moto does not serve: DescribeServices, GetAttributeValues and
GetProducts over the products of ``price_list.yaml`` (SageMaker's ML instances), as the Price
List API reference documents them.

- Every request is checked against botocore's ``pricing`` model first (`ModelValidatedResponse`).
- GetProducts answers ``FormatVersion`` ``aws_v1`` only; each ``PriceList`` entry is a JSON
  document (``product`` with ``productFamily``, ``attributes`` and ``sku``; ``serviceCode``;
  ``terms.OnDemand`` with one price dimension per hour; ``version``, ``publicationDate``).
- Filters, all of which must hold (the Filter shape's documentation): ``TERM_MATCH`` and
  ``EQUALS`` the attribute's value exactly; ``CONTAINS`` a substring; ``ANY_OF`` / ``NONE_OF``
  one / none of a comma-separated list. The field ``ServiceCode`` or any attribute name; an
  attribute a product lacks matches nothing (and everything under NONE_OF).
- An unknown service code is a NotFoundException; an unknown format version or attribute name an
  InvalidParameterException; a foreign NextToken an InvalidNextTokenException.
The service is global: its endpoints are in us-east-1, eu-central-1 and ap-south-1 and each
answers for every region's products.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Final

import botocore.session
import yaml
from moto.core.responses import ActionResult, BaseResponse

from embedded_aws.errors import AwsError
from embedded_aws.extension import ModelValidatedResponse, page

SEED: Final = Path(__file__).with_name("price_list.yaml")
FORMAT_VERSION: Final = "aws_v1"
PUBLICATION: Final = ("20261101000000", "2026-11-01T00:00:00Z")  # version, publicationDate of the seed
ON_DEMAND_TERM: Final = "JRTCKXETXF"  # AWS's offer term code of on-demand prices
HOURLY_RATE: Final = "6YS6EN2CT7"  # AWS's rate code of an hourly on-demand price dimension
# Hosts the dispatcher routes to this service: api.pricing.<region>.amazonaws.com, as botocore
# builds them, and pricing.<region>.amazonaws.com, as moto's dispatcher names a signed request's host.
HOST_PATTERN: Final = r"^(api\.)?pricing\.[a-z0-9-]+\.amazonaws\.com(:\d+)?$"


def _operations() -> frozenset[str]:
    return frozenset(botocore.session.get_session().get_service_model("pricing").operation_names)


@functools.cache
def _region_names() -> dict[str, str]:
    """Region code -> the `location` the Price List gives it ("US West (Oregon)"), from botocore's
    endpoint data: the same descriptions."""
    data = botocore.session.get_session().get_data("endpoints")
    return {code: region["description"] for partition in data["partitions"]
            for code, region in partition["regions"].items()}


@functools.cache
def catalogue() -> dict[str, list[dict[str, Any]]]:
    """Service code -> its products as Price List documents (a dict each), from the seed."""
    seed = yaml.safe_load(SEED.read_text(encoding="utf-8"))
    prefixes: Mapping[str, str] = seed["usage_type_prefix"]
    documents = []
    for itype, region, usage, usd, vcpus, gpus in seed["products"]:
        usage_type = f"{prefixes[region]}-{usage}:{itype}"
        sku = _sku(usage_type)
        attributes = {
            "servicecode": seed["service_code"], "servicename": "Amazon SageMaker", "location": _region_names()[region],
            "locationType": "AWS Region", "regionCode": region, "instanceName": itype, "usagetype": usage_type,
            "vCpu": str(vcpus), "gpu": str(gpus), "component": usage,
            "operation": "RunInstance" if usage == "Cluster" else "RunTrainingJob",
        }
        term = f"{sku}.{ON_DEMAND_TERM}"
        documents.append({
            "product": {"productFamily": seed["product_family"], "attributes": attributes, "sku": sku},
            "serviceCode": seed["service_code"],
            "terms": {"OnDemand": {term: {
                "priceDimensions": {f"{term}.{HOURLY_RATE}": {
                    "unit": "Hrs", "endRange": "Inf", "beginRange": "0", "appliesTo": [],
                    "rateCode": f"{term}.{HOURLY_RATE}", "pricePerUnit": {"USD": usd},
                    "description": f"${usd} per {usage} {itype} hour in {_region_names()[region]}"}},
                "sku": sku, "effectiveDate": PUBLICATION[1], "offerTermCode": ON_DEMAND_TERM, "termAttributes": {}}}},
            "version": PUBLICATION[0], "publicationDate": PUBLICATION[1],
        })
    return {seed["service_code"]: documents}


def _sku(usage_type: str) -> str:
    """A 16-character SKU of AWS's alphabet, the same for the same usage type."""
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    digest = hashlib.sha256(usage_type.encode()).digest()
    return "".join(alphabet[b % len(alphabet)] for b in digest[:16])


def _field_value(document: Mapping[str, Any], field: str) -> str | None:
    if field == "ServiceCode":
        return str(document["serviceCode"])
    value = document["product"]["attributes"].get(field)
    return None if value is None else str(value)


def matches(document: Mapping[str, Any], filters: list[Mapping[str, str]]) -> bool:
    """Whether the product `document` satisfies every filter (the Filter shape's documented types)."""
    for item in filters:
        value = _field_value(document, item["Field"])
        wanted = item["Value"]
        listed = [v.strip() for v in wanted.split(",")]
        kind = item["Type"]
        if kind == "NONE_OF":
            if value is not None and value in listed:
                return False
            continue
        if value is None:
            return False
        if kind in ("TERM_MATCH", "EQUALS") and value != wanted:
            return False
        if kind == "CONTAINS" and wanted not in value:
            return False
        if kind == "ANY_OF" and value not in listed:
            return False
    return True


def invalid(message: str) -> AwsError:
    return AwsError("InvalidParameterException", message)


class PriceListResponse(ModelValidatedResponse, BaseResponse):
    VALIDATED: ClassVar[frozenset[str]] = _operations()

    def __init__(self) -> None:
        super().__init__(service_name="pricing")
        self.automated_parameter_parsing = True

    def _products(self) -> list[dict[str, Any]]:
        code = self.param("ServiceCode")
        products = catalogue().get(code)
        if products is None:
            raise AwsError("NotFoundException", f"Service code {code} is not found")
        return products

    def _format(self) -> None:
        if self.param("FormatVersion", FORMAT_VERSION) != FORMAT_VERSION:
            raise invalid(f"Invalid FormatVersion: {self.param('FormatVersion')}; valid values: {FORMAT_VERSION}")

    def _page(self, items: list[Any]) -> tuple[list[Any], str | None]:
        return page(items, max_results=self.param("MaxResults"), next_token=self.param("NextToken"),
                    invalid=AwsError("InvalidNextTokenException", "The next token is invalid."))

    def describe_services(self) -> ActionResult:
        self._format()
        codes = [self.param("ServiceCode")] if self.param("ServiceCode") else sorted(catalogue())
        services = []
        for code in codes:
            if code not in catalogue():
                raise AwsError("NotFoundException", f"Service code {code} is not found")
            names = sorted({name for doc in catalogue()[code] for name in doc["product"]["attributes"]})
            services.append({"ServiceCode": code, "AttributeNames": names})
        chunk, token = self._page(services)
        return self.shaped({"Services": chunk, "FormatVersion": FORMAT_VERSION, "NextToken": token})

    def get_attribute_values(self) -> ActionResult:
        name = self.param("AttributeName")
        products = self._products()
        if not any(name in doc["product"]["attributes"] for doc in products):
            raise invalid(f"Invalid attribute name: {name}")
        values = sorted({str(doc["product"]["attributes"][name]) for doc in products
                         if name in doc["product"]["attributes"]})
        chunk, token = self._page([{"Value": v} for v in values])
        return self.shaped({"AttributeValues": chunk, "NextToken": token})

    def get_products(self) -> ActionResult:
        self._format()
        products = self._products()
        filters: list[Mapping[str, str]] = self.param("Filters", [])
        known = {name for doc in products for name in doc["product"]["attributes"]} | {"ServiceCode"}
        for item in filters:
            if item["Field"] not in known:
                raise invalid(f"Invalid filter field: {item['Field']}")
        found = [json.dumps(doc, separators=(",", ":")) for doc in products if matches(doc, filters)]
        chunk, token = self._page(found)
        return self.shaped({"FormatVersion": FORMAT_VERSION, "PriceList": chunk, "NextToken": token})
