"""An embedded AWS endpoint for the demo and the tests: moto's server plus what moto lacks.

hypergov's engines, drift detection and tests talk to AWS over HTTP with boto3 and with the Go
SDK inside the Terraform AWS provider. This package gives them one local URL that answers as
AWS does for everything hypergov touches: IAM, STS, Organizations and Budgets (moto, with the
Budgets tag/update/subscriber operations the provider needs), EKS (moto, plus access entries,
access policy associations and the authentication mode), IAM Identity Center (sso-admin with
permissions boundaries, tags, request statuses and the provisioned ``AWSReservedSSO_`` roles;
identitystore lookups), SageMaker HyperPod (clusters with
AWS's id-based ARNs and UpdateCluster, compute quotas and cluster scheduler configs) and the
AWS Price List (moto has none: GetProducts over illustrative SageMaker products). Requests
to the added operations are validated against botocore's service models (required members,
enums, lengths, ranges, patterns) and refused with the error code, HTTP status and wire format
the service documents; responses are cut to the model's output shape.

Stable API
----------
``EmbeddedAws(host="127.0.0.1", port=0, sleep=time.sleep)`` -- a server thread in this process;
    context manager (``sleep``: how latency faults wait).
    ``start() -> self`` (port 0 picks a free port), ``stop()``, ``running``.
``EmbeddedAwsProcess(port=0, seed_config=None, ...)`` -- the same served by a child process
    (``python -m embedded_aws``); ``start()`` returns once it is healthy and seeded;
    ``stop()`` sends SIGTERM and returns the exit code. Use it for tools that must not share
    this process's moto state (terraform runs, the demo).
Both are handles (`EndpointHandle`) with:
    ``endpoint_url`` -- ``http://127.0.0.1:<port>``, serving every service.
    ``client(service, account=..., region=..., config=None)`` -- a boto3 client.
    ``reset()`` -- forget all state (all services, accounts, regions), faults and the call log.
    ``inject_fault(service, operation="*", kind="throttle"|"5xx"|"latency", times=1,
    delay_s=0.0, status=500)`` and ``clear_faults()`` -- per operation (its model name, e.g.
    ``("sagemaker", "UpdateComputeQuota")``), for any HTTP client; ``times=None`` means every
    call. Throttles use the service's own throttling error (EKS 429 ThrottlingException, IAM 400
    Throttling, SageMaker 400 ThrottlingException...).
    ``pending_faults()`` -- the faults not used up yet; ``healthy()`` -- the server answers.
    ``calls()`` / ``clear_calls()`` -- the operations answered, with their HTTP status.
    ``set_transition(model, progression=..., times=..., seconds=...)`` -- let statuses pass
    through Creating/Updating (models: ``sagemaker::hyperpod-cluster``,
    ``sagemaker::compute-quota``, ``sagemaker::cluster-scheduler-config``); "immediate" by default.
    ``seed_hyperpod_cluster(name, eks_cluster_name, account=..., region=...,
    instance_groups=[InstanceGroup(...)], cluster_id=None) -> str`` -- creates the EKS cluster
    (authentication mode API_AND_CONFIG_MAP) and a HyperPod cluster orchestrated by it, through
    the endpoint's API; idempotent; returns the HyperPod cluster ARN (ending in `cluster_id`
    when given; AWS picks cluster ids, a config tree that recorded an ARN needs that one).
    ``reserve_hyperpod_cluster_id(name, cluster_id, account=..., region=...)`` -- the next
    CreateCluster of `name` there gets that id (what seeding with `cluster_id` uses).
``seed_tree_clusters(tree, endpoint)`` -- seed every cluster of a config tree (its
    ``hyperpod.cluster_name`` and ``eks.cluster_name``, with the id of ``hyperpod.arn`` when
    recorded, in the org account and region it names).
``seed_identity.seed_identity_center(tree, endpoint)`` -- the Identity Center instance and people
    of org.yaml's ``identity_center`` (None without it; in the endpoint's process).
``sso_roles.find_provisioned_role(endpoint, account=..., permission_set_name=...,
    identity_center_region=...)`` -- the role Identity Center provisioned (IAM Role dict) or None.
``terraform.provider_block(endpoint_url, region=..., account=..., max_retries=1)`` -- the
    Terraform JSON ``provider.aws`` body for this endpoint (per-service endpoints, no
    credential/metadata checks; provider 5.x treats max_retries as attempts).
CLI: ``hypergov embedded-aws [--port N] [--seed-config config/]`` prints the URL on stdout and
    serves until SIGINT/SIGTERM.

Accounts: the access key id chooses the account. A 12-digit access key id acts in that account
(``client(..., account="111122223333")`` does this; give the Terraform provider
``access_key = "<account id>"``); any other key acts in moto's default account 123456789012.

Behaviour worth knowing: compute quotas and cluster policies start at version 1 with status
``Created``; an update must pass ``TargetVersion`` equal to the current version (else
``ConflictException``), bumps the version and ends ``Updated``; old versions stay readable.
An EKS cluster created without ``accessConfig`` has authentication mode ``CONFIG_MAP`` (the EKS
API default) and refuses access entries, as AWS does. moto's state is process-wide: two
endpoints in one process share it (faults and call logs are per endpoint); moto's own modules
are not modified, so ``mock_aws`` elsewhere in the process keeps moto's behaviour. Operations
nobody implements answer HTTP 501 ``NotImplemented`` at once instead of a retried 500.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from embedded_aws.faults import FaultKind, FaultSpec
    from embedded_aws.handle import DEFAULT_ACCOUNT, DEFAULT_REGION, EndpointError, EndpointHandle
    from embedded_aws.process import EmbeddedAwsProcess
    from embedded_aws.seed import InstanceGroup, SeededCluster, seed_hyperpod_cluster, seed_tree_clusters
    from embedded_aws.server import EmbeddedAws

# Public name -> defining module. Loaded on first use, so that importing a light submodule (the
# CLI command) does not load moto and its Flask server into every hypergov command.
_EXPORTS = {
    "DEFAULT_ACCOUNT": "handle", "DEFAULT_REGION": "handle", "EndpointError": "handle", "EndpointHandle": "handle",
    "EmbeddedAws": "server", "EmbeddedAwsProcess": "process", "FaultKind": "faults", "FaultSpec": "faults",
    "InstanceGroup": "seed", "SeededCluster": "seed", "seed_hyperpod_cluster": "seed", "seed_tree_clusters": "seed",
}
__all__ = [
    "DEFAULT_ACCOUNT", "DEFAULT_REGION", "EmbeddedAws", "EmbeddedAwsProcess", "EndpointError", "EndpointHandle",
    "FaultKind", "FaultSpec", "InstanceGroup", "SeededCluster", "seed_hyperpod_cluster", "seed_tree_clusters",
]


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
