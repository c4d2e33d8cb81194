"""`engine: provider` as the factory builds it: the example tree's org, cluster and project stacks
planned and applied by the terraform engine with the provider runner beneath it, and then the
terraform engine itself, on the same state directory, finds nothing to do (issue 34).

Real: the embedded endpoint in a child process (seeded with the example clusters), the hashicorp/aws
provider spoken to over the plugin protocol from one pool, the HyperPod driver, and the real
`terraform` for the second engine. Expected values come from the tree (the roles and boundary it
declares, read back with boto3) and from terraform's plan, not from what the provider engine
reports.
"""

from __future__ import annotations

import os

import pytest

from embedded_aws import EmbeddedAwsProcess
from engines.factory import build_engine, provider_engine, terraform_engine
from engines.plan import Action, Plan, StackName
from engines.settings import Settings
from hypergov.validate import validate_files
from tests.integration.conftest import CREDENTIALS, PROD, REGION, example_files

pytestmark = pytest.mark.integration
STACKS = (StackName("org"), StackName("cluster-gpu-west"), StackName("project-vision"), StackName("project-recsys"))


def test_the_provider_engine_applies_the_example_and_terraform_then_has_nothing_to_do(
        settings: Settings, endpoint: EmbeddedAwsProcess) -> None:
    tree = validate_files(example_files()).tree
    environ = {**os.environ, **CREDENTIALS}
    chosen = build_engine(settings.model_copy(update={"engine": "provider"}), tree, environ=environ)
    assert chosen.name == "provider"
    engine = provider_engine(settings, tree, environ=environ)
    plans = engine.plan_many(STACKS)
    assert all(isinstance(p, Plan) and p.engine == "provider" for p in plans.values()), plans
    created = {c.address for p in plans.values() if isinstance(p, Plan) for c in p.changes
               if c.executor == "terraform" and c.action is Action.CREATE}
    assert any(a.startswith("aws_iam_role.") for a in created) and any(a.startswith("aws_iam_policy.") for a in created)
    results = engine.apply_many([p for p in plans.values() if isinstance(p, Plan)])
    for result in results:
        assert result.ok, (result.stack, result.error, result.refusal, result.failed)

    iam = endpoint.client("iam", account=PROD, region=REGION)
    role = iam.get_role(RoleName="acme-vision-engineer")["Role"]
    assert role["Path"] == "/hypergov/"
    assert role["PermissionsBoundary"]["PermissionsBoundaryArn"] == \
        f"arn:aws:iam::{PROD}:policy/acme-hypergov-permissions-boundary"

    reference = terraform_engine(settings, tree, environ=environ)
    for stack, plan in reference.plan_many(STACKS).items():
        assert isinstance(plan, Plan), (stack, plan)
        assert plan.engine == "terraform"
        assert not [c for c in plan.actionable if c.executor == "terraform"], (stack, plan.actionable)


