"""HyperPod's public on-demand price per instance-hour, read from the AWS Price List API
(`pricing:GetProducts`). SEMANTICS.md, "Prices from the Price List", P1-P3.

HyperPod bills a cluster's instances under the service code AmazonSageMaker, with the usage type
`<region code>-Cluster:<instance type>`; a training job's instance of the same type is a different
product (`...-Train:...`) at a different price, and must not be taken for it. The products of one
type and region are asked for (`filters`), and the one whose usage type is the cluster's is kept.

`listed_price` is pure (Price List documents in, a price or why there is none out); `read_prices`
pages through GetProducts with the client it is given.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Any, Final

SERVICE_CODE: Final = "AmazonSageMaker"
PRICING_REGION: Final = "us-east-1"  # one of the Price List API's endpoints; each answers for every region
FORMAT_VERSION: Final = "aws_v1"
HOURLY_UNITS: Final = frozenset({"Hrs", "Hours", "hour", "Hour"})
_CLUSTER_USAGE = re.compile(r"(?:^|-)Cluster:(?P<type>ml\.[A-Za-z0-9.-]+)$")


class NotListed(StrEnum):
    """Why the Price List gives no HyperPod price for a type in a region; the value says it."""

    NO_PRODUCT = "the Price List has no HyperPod cluster product for it"
    NO_ON_DEMAND = "its HyperPod product has no hourly on-demand price"
    OTHER_CURRENCY = "its price is not in the org's currency"
    AMBIGUOUS = "the Price List gives it more than one hourly on-demand price"


@dataclass(frozen=True)
class ListedPrice:
    """One type's public on-demand price per instance-hour of a HyperPod cluster in one region."""

    instance_type: str
    region: str
    per_instance_hour: Decimal
    currency: str
    sku: str
    usage_type: str
    effective: str  # the price's effectiveDate, as the Price List gives it


def filters(instance_type: str, region: str) -> list[dict[str, str]]:
    """GetProducts filters for every product of `instance_type` in `region` (cluster, training, ...)."""
    return [{"Type": "TERM_MATCH", "Field": "instanceName", "Value": instance_type},
            {"Type": "TERM_MATCH", "Field": "regionCode", "Value": region}]


def listed_price(documents: Iterable[str | Mapping[str, Any]], instance_type: str, region: str, *,
                 currency: str) -> ListedPrice | NotListed:
    """The HyperPod on-demand price of `instance_type` in `region` among Price List `documents`
    (P1: the product whose usage type is `...Cluster:<type>`; P2: its OnDemand term's price
    dimension per hour, in `currency`)."""
    found: list[ListedPrice] = []
    products = 0
    other_currency = False
    for raw in documents:
        doc = json.loads(raw) if isinstance(raw, str) else raw
        attributes = doc.get("product", {}).get("attributes", {})
        usage = _CLUSTER_USAGE.search(str(attributes.get("usagetype", "")))
        if (usage is None or usage["type"] != instance_type or attributes.get("regionCode") != region
                or attributes.get("instanceName", instance_type) != instance_type):
            continue
        products += 1
        for term in doc.get("terms", {}).get("OnDemand", {}).values():
            for dimension in term.get("priceDimensions", {}).values():
                if dimension.get("unit") not in HOURLY_UNITS or str(dimension.get("beginRange", "0")) != "0":
                    continue
                amount = dimension.get("pricePerUnit", {}).get(currency)
                if amount is None:
                    other_currency = True
                    continue
                price = _positive_decimal(amount)
                if price is not None:
                    found.append(ListedPrice(instance_type, region, price, currency, str(doc["product"].get("sku", "")),
                                             str(attributes["usagetype"]), str(term.get("effectiveDate", ""))))
    if not products:
        return NotListed.NO_PRODUCT
    if not found:
        return NotListed.OTHER_CURRENCY if other_currency else NotListed.NO_ON_DEMAND
    if len({p.per_instance_hour for p in found}) > 1:
        return NotListed.AMBIGUOUS
    return found[0]


def _positive_decimal(text: object) -> Decimal | None:
    try:
        value = Decimal(str(text))
    except InvalidOperation:
        return None
    return value.normalize() if value.is_finite() and value > 0 else None


PriceListClient = Any
"""A boto3 `pricing` client (or anything with its get_products)."""


def read_prices(client: PriceListClient, wanted: Mapping[str, Iterable[str]], *, currency: str,
                progress: Callable[[str], None] = lambda _: None) -> dict[tuple[str, str], ListedPrice | NotListed]:
    """(instance type, region) -> its listed HyperPod price, for every region of each type in `wanted`."""
    found: dict[tuple[str, str], ListedPrice | NotListed] = {}
    for itype in sorted(wanted):
        for region in sorted(set(wanted[itype])):
            progress(f"Price List: {itype} in {region}")
            documents: list[str] = []
            token: str | None = None
            while True:
                page = client.get_products(ServiceCode=SERVICE_CODE, Filters=filters(itype, region),
                                           FormatVersion=FORMAT_VERSION, MaxResults=100,
                                           **({"NextToken": token} if token else {}))
                documents.extend(page.get("PriceList", []))
                token = page.get("NextToken")
                if not token:
                    break
            found[(itype, region)] = listed_price(documents, itype, region, currency=currency)
    return found
