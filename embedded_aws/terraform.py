"""How the Terraform AWS provider must be configured to talk to the embedded endpoint.

The endpoint serves every service at one URL; the provider needs that URL per service, the
account given as the access key id (the endpoint's account convention), no credential or
metadata lookups, and few retries: against an endpoint that lacks an operation the provider's
default retries turn one missing call into minutes of waiting. (Provider 5.x passes
``max_retries`` to the Go SDK as its maximum number of attempts: 1 means no retry at all.)
The provider must still look up the account id (do not set ``skip_requesting_account_id``),
or it builds broken budget ids; it does so with iam:GetUser, which answers in the account
the access key names.
"""

from __future__ import annotations

from typing import Any

from embedded_aws.handle import SECRET_KEY

# The services the governance components use, each served at the endpoint URL.
PROVIDER_SERVICES = ("iam", "sts", "organizations", "budgets", "eks", "sagemaker", "ssoadmin", "identitystore")


def provider_block(endpoint_url: str, *, region: str, account: str, max_retries: int = 1) -> dict[str, Any]:
    """The body of a Terraform JSON ``provider.aws`` block pointing at the embedded endpoint."""
    return {
        "region": region,
        "access_key": account,
        "secret_key": SECRET_KEY,
        "max_retries": max_retries,
        "skip_credentials_validation": True,
        "skip_metadata_api_check": True,
        "skip_region_validation": True,
        "endpoints": [{service: endpoint_url for service in PROVIDER_SERVICES}],
    }
