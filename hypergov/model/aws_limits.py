"""Field limits taken from botocore's official AWS service models, never retyped by hand.

When AWS changes a limit (a new HyperPod instance type, a longer name), upgrading botocore
updates our validation with it. Each helper returns pydantic metadata for `Annotated[...]` carrying the
shape's length bounds, pattern (anchored: AWS matches the whole value), range or enum.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import botocore.session
from annotated_types import Interval
from botocore.model import ServiceModel, Shape, StructureShape
from pydantic import GetCoreSchemaHandler, StringConstraints
from pydantic_core import core_schema


@cache
def _service(name: str) -> ServiceModel:
    return _session().get_service_model(name)


@lru_cache(maxsize=1)
def _session() -> botocore.session.Session:
    return botocore.session.get_session()


def shape(service: str, shape_name: str) -> Shape:
    return _service(service).shape_for(shape_name)


def member_shape(service: str, structure: str, member: str) -> Shape:
    found = shape(service, structure)
    assert isinstance(found, StructureShape), f"{service} {structure} is not a structure"
    return found.members[member]


def anchored(pattern: str) -> str:
    """AWS validates the whole value; botocore patterns are often written unanchored."""
    core = pattern.removeprefix("^").removesuffix("$")
    return f"^(?:{core})$"


def aws_str(service: str, shape_name: str, *, member: str | None = None) -> StringConstraints:
    """String constraints exactly as the AWS shape (or structure member) has them.
    Use as `Annotated[str, aws_str("iam", "roleNameType"), Field(description=...)]`."""
    found = member_shape(service, shape_name, member) if member else shape(service, shape_name)
    meta = found.metadata
    pattern = meta.get("pattern")
    return StringConstraints(min_length=meta.get("min"), max_length=meta.get("max"),
                             pattern=anchored(pattern) if pattern else None)


def aws_range(service: str, shape_name: str) -> Interval:
    """Numeric bounds of an AWS integer shape, e.g. `Annotated[int, aws_range("sagemaker", "FairShareWeight")]`."""
    meta = shape(service, shape_name).metadata
    return Interval(ge=meta.get("min"), le=meta.get("max"))


def aws_enum_values(service: str, shape_name: str) -> tuple[str, ...]:
    values: list[str] = shape(service, shape_name).enum
    return tuple(values)


@dataclass(frozen=True)
class AwsEnum:
    """A string that must be one of an AWS enum shape's values (JSON Schema: `enum`)."""

    service: str
    shape_name: str

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.literal_schema(list(aws_enum_values(self.service, self.shape_name)))


def shape_pattern(service: str, shape_name: str) -> str:
    return anchored(shape(service, shape_name).metadata["pattern"])


def shape_max(service: str, shape_name: str) -> int:
    return int(shape(service, shape_name).metadata["max"])
