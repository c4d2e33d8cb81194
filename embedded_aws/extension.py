"""The one way operations are added to (or fixed in) moto: a response-class mixin.

A service's moto response class dispatches an operation to the method named after it
(``CreateComputeQuota`` -> ``create_compute_quota``). Subclassing it and adding methods is
how moto's own services grow; this mixin adds what every extended operation needs before its
method runs: the request parsed by the service's protocol and checked against the botocore
model, so a bad request gets the documented validation error and the method sees only valid
input. Shared helpers (ids, ARNs, pagination, status progressions) live here too.
"""

from __future__ import annotations

import base64
import datetime
import json
import uuid
from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar
from urllib.parse import urlsplit

from moto.core.responses import ActionResult, BaseResponse, EmptyResult
from moto.core.utils import get_service_model
from moto.moto_api import state_manager
from moto.moto_api._internal.managed_state_model import ManagedState

from embedded_aws.errors import AwsError, validation_error
from embedded_aws.faults import error_response
from embedded_aws.modelcheck import check_input, shape_output

T = TypeVar("T")

# Status progressions of the resources this package models (see `ManagedState`): "immediate"
# by default, switchable per model through moto's state manager (``EmbeddedAws.set_transition``).
MANAGED_MODELS = (
    "sagemaker::hyperpod-cluster",
    "sagemaker::compute-quota",
    "sagemaker::cluster-scheduler-config",
)


class ModelValidatedResponse(BaseResponse):
    """Mixin for a moto response class: operations named in ``VALIDATED`` are parsed and checked
    against the botocore model before their method runs."""

    VALIDATED: ClassVar[frozenset[str]] = frozenset()
    params: Any

    def _get_action(self) -> str:
        # moto works the operation out anew at each of its uses in one request (about five: setup,
        # parsing, dispatch, serializing), for the REST protocols (EKS) by matching the URL against
        # every route of the service: a fifth of the server's time on an EKS read. Once per request
        # is enough: `BaseResponse.dispatch` makes a new response object for every request.
        known: str | None = self.__dict__.get("_operation")
        if known is None:
            known = super()._get_action()
            if known:  # none yet (e.g. an unroutable request): asked again, as moto would
                self.__dict__["_operation"] = known
        return known

    def get_region_from_url(self, request: Any, full_url: str) -> str:
        # moto looks for `.<region>.amazonaws.com` anywhere in the URL; a REST path can hold that
        # text (an EKS access-entry path names a role under `/aws-reserved/sso.amazonaws.com/`),
        # and AWS reads the region from the host. Only the host is searched; the rest is moto's.
        parts = urlsplit(full_url)
        region: str = super().get_region_from_url(request, f"{parts.scheme}://{parts.netloc}/")
        return region

    def parse_parameters(self, request: Any) -> None:
        # moto's parsers raise ValueError on e.g. "abc" for an integer; AWS answers that with a
        # SerializationException, not a 500.
        self._parse_failure: str | None = None
        try:
            super().parse_parameters(request)
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            self._parse_failure = str(exc) or type(exc).__name__
            self.params = {}

    def call_action(self) -> Any:
        operation = self._get_action()
        if operation in self.VALIDATED:
            if not self.automated_parameter_parsing:
                self.parse_parameters(self.normalized_request)
            failure = getattr(self, "_parse_failure", None)
            if failure:
                # No service models SerializationException, so moto cannot shape it: shaped here.
                status, headers, body = error_response(service=self.boto3_service_name, status=400, sender=True,
                                                       code="SerializationException",
                                                       message=f"Could not read the request: {failure}")
                return status, dict(headers), body.decode()
            error = self._validate(operation)
            if error is not None:
                return self.error_response(error)
        return super().call_action()

    def _validate(self, operation: str) -> AwsError | None:
        model = get_service_model(self.boto3_service_name).operation_model(operation)
        violations = check_input(model.input_shape, self.params or {})
        return validation_error(self.boto3_service_name, violations) if violations else None

    def error_response(self, error: AwsError) -> tuple[int, dict[str, str], str]:
        status, headers, body = self.serialized(ActionResult(error))
        headers, body = self._enrich_response(headers, body)
        return status, headers, body

    def param(self, name: str, default: Any = None) -> Any:
        """A validated, parsed input member (by its model name)."""
        value = (self.params or {}).get(name)
        return default if value is None else value

    def shaped(self, data: Any) -> ActionResult:
        """`data` reduced to the current operation's output model, ready for moto to serialize."""
        model = get_service_model(self.boto3_service_name).operation_model(self._get_action())
        if model.output_shape is None:
            return EmptyResult()
        return ActionResult(shape_output(model.output_shape, data))


def new_resource_id() -> str:
    """The 12-character id SageMaker gives clusters, quotas and scheduler configs ([a-z0-9]{12})."""
    return uuid.uuid4().hex[:12]


def sagemaker_arn(*, partition: str, region: str, account: str, kind: str, resource_id: str) -> str:
    return f"arn:{partition}:sagemaker:{region}:{account}:{kind}/{resource_id}"


def caller_identity(access_key: str, *, account: str, region: str, partition: str) -> tuple[str, str]:
    """(user id, ARN) of the identity an access key belongs to, as STS GetCallerIdentity answers:
    an assumed role's session is kept by the STS backend of the account that assumed it, which
    is not the account it acts in, so every account's backend is asked."""
    from moto.sts.models import sts_backends

    for backends in list(sts_backends.values()):
        assumed = backends[partition].get_assumed_role_from_access_key(access_key)
        if assumed is not None:
            return str(assumed.user_id), str(assumed.arn)
    user_id, arn, _ = sts_backends[account][partition].get_caller_identity(access_key, region)
    return str(user_id), str(arn)


def page(items: Sequence[T], *, max_results: int | None, next_token: str | None,
         invalid: AwsError) -> tuple[list[T], str | None]:
    """One page of `items` and the token for the next (an opaque offset), or `invalid` raised
    for a token this endpoint did not issue."""
    start = 0
    if next_token:
        try:
            start = int(json.loads(base64.b64decode(next_token))["offset"])
        except (ValueError, KeyError, TypeError):
            raise invalid from None
    size = max_results or 100
    chunk = list(items[start:start + size])
    more = start + size < len(items)
    token = base64.b64encode(json.dumps({"offset": start + size}).encode()).decode() if more else None
    return chunk, token


def register_managed_models() -> None:
    for model_name in MANAGED_MODELS:
        state_manager.register_default_transition(model_name, transition={"progression": "immediate"})


def begin_transition(resource: ManagedState, status: str) -> None:
    """Put `resource` into transitional `status`; "manual"/"time" progressions count from now."""
    resource.status = status
    resource._tick = 0
    resource._time_progressed = datetime.datetime.now()


def naive_utc(moment: datetime.datetime) -> datetime.datetime:
    """moto keeps naive UTC datetimes; parsed request timestamps may carry a timezone."""
    return moment.astimezone(datetime.UTC).replace(tzinfo=None) if moment.tzinfo else moment


def tag_list(tags: Any) -> list[dict[str, str]]:
    """Tags as SageMaker's [{Key, Value}] list, later keys replacing earlier ones."""
    merged: dict[str, str] = {}
    for tag in tags or []:
        merged[tag["Key"]] = tag["Value"]
    return [{"Key": k, "Value": v} for k, v in merged.items()]
