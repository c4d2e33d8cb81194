"""Field limits taken from botocore's official AWS service models, never retyped by hand.

When AWS changes a limit (a new HyperPod instance type, a longer name), upgrading botocore
updates our validation with it. Each helper returns a pydantic `Annotated` type carrying the
shape's length bounds, pattern (anchored: AWS matches the whole value) or enum.
"""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Annotated, Any, Literal

import botocore.session
from botocore.model import ServiceModel, Shape
from pydantic import Field, StringConstraints


@cache
def _service(name: str) -> ServiceModel:
    return _session().get_service_model(name)


@lru_cache(maxsize=1)
def _session() -> botocore.session.Session:
    return botocore.session.get_session()


def shape(service: str, shape_name: str) -> Shape:
    return _service(service).shape_for(shape_name)


def member_shape(service: str, structure: str, member: str) -> Shape:
    return shape(service, structure).members[member]  # type: ignore[attr-defined,no-any-return]


def anchored(pattern: str) -> str:
    """AWS validates the whole value; botocore patterns are often written unanchored."""
    core = pattern.removeprefix("^").removesuffix("$")
    return f"^(?:{core})$"


def aws_string(service: str, shape_name: str, *, member: str | None = None,
               description: str = "") -> Any:
    """`str` constrained exactly as the AWS shape (or structure member) is."""
    found = member_shape(service, shape_name, member) if member else shape(service, shape_name)
    meta = found.metadata
    pattern = meta.get("pattern")
    return Annotated[
        str,
        StringConstraints(
            min_length=meta.get("min"),
            max_length=meta.get("max"),
            pattern=anchored(pattern) if pattern else None,
        ),
        Field(description=description or f"AWS {service} {found.name}"),
    ]


def aws_int(service: str, shape_name: str, *, description: str = "") -> Any:
    meta = shape(service, shape_name).metadata
    return Annotated[int, Field(ge=meta.get("min"), le=meta.get("max"),
                                description=description or f"AWS {service} {shape_name}")]


def aws_enum_values(service: str, shape_name: str) -> tuple[str, ...]:
    return tuple(shape(service, shape_name).enum)  # type: ignore[attr-defined]


def aws_enum(service: str, shape_name: str, *, description: str = "") -> Any:
    values = aws_enum_values(service, shape_name)
    return Annotated[Literal[values], Field(description=description or f"AWS {service} {shape_name}")]  # type: ignore[valid-type]


def shape_pattern(service: str, shape_name: str) -> str:
    return anchored(shape(service, shape_name).metadata["pattern"])


def shape_max(service: str, shape_name: str) -> int:
    return int(shape(service, shape_name).metadata["max"])
