"""The errors the embedded endpoint raises, named exactly as each service's model names them.

moto serializes a ``ServiceException`` by looking its ``code`` up in the service model: the
HTTP status (``httpStatusCode``, 400 when absent), the error members and the wire format
(``__type`` for JSON, ``x-amzn-ErrorType`` for REST-JSON, ``<Error><Code>`` for query) all come
from there. So one exception type with the right code is enough; the code decides the shape.
"""

from __future__ import annotations

from typing import Any

from moto.core.exceptions import ServiceException

from embedded_aws.modelcheck import Violation, validation_message

# What each service calls a request that breaks its model's constraints.
VALIDATION_CODE: dict[str, str] = {
    "sagemaker": "ValidationException",
    "eks": "InvalidParameterException",
    "budgets": "InvalidParameterException",
    "organizations": "InvalidInputException",
    "iam": "ValidationError",
    "sts": "ValidationError",
}


class AwsError(ServiceException):
    """An error AWS documents for an operation; extra keyword members (e.g. EKS's
    ``clusterName``) are serialized when the error shape declares them."""

    def __init__(self, code: str, message: str, **members: Any) -> None:
        super().__init__(code, message)
        for name, value in members.items():
            setattr(self, name, value)


def validation_error(service: str, violations: list[Violation]) -> AwsError:
    return AwsError(VALIDATION_CODE.get(service, "ValidationException"), validation_message(violations))


# SageMaker (JSON 1.1; none of these shapes declares a status, so all are HTTP 400).
def sm_validation(message: str) -> AwsError:
    return AwsError("ValidationException", message)


def sm_not_found(message: str) -> AwsError:
    return AwsError("ResourceNotFound", message)


def sm_conflict(message: str) -> AwsError:
    return AwsError("ConflictException", message)


def sm_in_use(message: str) -> AwsError:
    return AwsError("ResourceInUse", message)


# EKS (REST-JSON; statuses from the model: 400, 404, 409).
def eks_invalid_parameter(message: str, *, cluster: str | None = None) -> AwsError:
    return AwsError("InvalidParameterException", message, clusterName=cluster)


def eks_invalid_request(message: str, *, cluster: str | None = None) -> AwsError:
    return AwsError("InvalidRequestException", message, clusterName=cluster)


def eks_not_found(message: str, *, cluster: str | None = None) -> AwsError:
    return AwsError("ResourceNotFoundException", message, clusterName=cluster)


def eks_in_use(message: str, *, cluster: str | None = None) -> AwsError:
    return AwsError("ResourceInUseException", message, clusterName=cluster)


# Budgets (JSON 1.1, all HTTP 400).
def budgets_not_found(message: str) -> AwsError:
    return AwsError("NotFoundException", message)


def budgets_invalid(message: str) -> AwsError:
    return AwsError("InvalidParameterException", message)


def budgets_duplicate(message: str) -> AwsError:
    return AwsError("DuplicateRecordException", message)


def budgets_invalid_token() -> AwsError:
    return AwsError("InvalidNextTokenException", "The NextToken is not valid.")
