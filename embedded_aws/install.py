"""How the extended response classes get into the server: the per-service Flask apps.

moto's server builds one Flask app per service, the first time a request for it arrives, from
that service's ``urls.url_paths`` (URL regex -> response-class dispatcher). The endpoint builds
the apps of SageMaker, EKS, Budgets, IAM, SSO Admin and Identity Store from the same paths
pointed at the extended classes (plus EKS's new access-entry paths), the app of a service moto
lacks (the Price List) from its class alone, and every other service's app exactly as moto does.
Nothing in moto's modules is changed, so moto's in-process mocks
(``mock_aws``) elsewhere in the process keep moto's own behaviour.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

import moto.eks.urls
from flask import Flask
from moto.core.utils import convert_regex_to_flask_path, convert_to_flask_response
from moto.moto_server.utilities import RegexConverter
from moto.moto_server.werkzeug_app import HTTP_METHODS, BackendRequest, create_backend_app
from werkzeug.routing import Map

from embedded_aws import eks_responses
from embedded_aws.budgets_ext import ExtendedBudgetsResponse
from embedded_aws.extension import register_managed_models
from embedded_aws.iam_ext import ExtendedIamResponse
from embedded_aws.identitystore_ext import ExtendedIdentityStoreResponse
from embedded_aws.pricing_ext import HOST_PATTERN as PRICING_HOSTS
from embedded_aws.pricing_ext import PriceListResponse
from embedded_aws.sagemaker_responses import ExtendedSageMakerResponse
from embedded_aws.sso_admin_ext import ExtendedSsoAdminResponse

_lock = threading.Lock()
_registered = False


def extended_paths() -> dict[str, dict[str, Callable[..., Any]]]:
    """URL regex (moto's ``{0}`` form) -> dispatcher, for each extended service."""
    return {
        "sagemaker": {"{0}/$": ExtendedSageMakerResponse.dispatch},
        "budgets": {"{0}/$": ExtendedBudgetsResponse.dispatch},
        "iam": {"{0}/$": ExtendedIamResponse.dispatch},
        "ssoadmin": {"{0}/$": ExtendedSsoAdminResponse.dispatch},
        "identitystore": {"{0}/$": ExtendedIdentityStoreResponse.dispatch},
        "eks": eks_responses.url_paths(moto.eks.urls.url_paths),
        **ADDED_SERVICES,
    }


# Services moto has no backend for: the dispatcher routes their hosts here (`ADDED_HOSTS`).
ADDED_SERVICES: dict[str, dict[str, Callable[..., Any]]] = {
    "pricing": {"{0}/$": PriceListResponse.dispatch},
}
ADDED_HOSTS: tuple[tuple[str, re.Pattern[str]], ...] = (("pricing", re.compile(PRICING_HOSTS)),)


def create_extended_backend_app(service: Any) -> Flask:
    """moto's `create_backend_app`, with the extended services routed to the extended classes."""
    paths = extended_paths().get(str(service))
    app = _added_service_app() if str(service) in ADDED_SERVICES else create_backend_app(service)
    if paths is None:
        return app
    app.view_functions = {}
    app.url_map = Map()
    app.url_map.converters["regex"] = RegexConverter
    for index, (url_path, handler) in enumerate(paths.items()):
        app.add_url_rule(convert_regex_to_flask_path(url_path.format("")), endpoint=f"{service}.extended.{index}",
                         methods=HTTP_METHODS, view_func=convert_to_flask_response(handler), strict_slashes=False)
    return app


def _added_service_app() -> Flask:
    """The app moto would make for a service of its own, before its routes: moto's request class."""
    app = Flask("moto")
    app.request_class = BackendRequest
    return app


def install() -> None:
    """Register the status progressions of the modelled resources with moto (once per process)."""
    global _registered
    with _lock:
        if not _registered:
            register_managed_models()
            _registered = True
