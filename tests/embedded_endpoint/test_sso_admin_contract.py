"""IAM Identity Center admin (sso-admin) as the SSO Admin API reference and the user guide
document it, through boto3 against the embedded endpoint."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from botocore.exceptions import ClientError

from embedded_aws.sso_roles import find_provisioned_role

from .conftest import REGION, assert_complete, error_of

ROLE = re.compile(r"^AWSReservedSSO_lead_[0-9a-f]{16}$")
PRINCIPAL = "906749f1-1e6b-4ecf-a3a5-6b47e0c7a1a2"


def _policy(*actions: str) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": list(actions),
                                                               "Resource": "*"}]})


@pytest.fixture
def sso(client: Callable[..., Any]) -> Any:
    return client("sso-admin")


@pytest.fixture
def instance(sso: Any) -> str:
    return str(sso.list_instances()["Instances"][0]["InstanceArn"])


@pytest.fixture
def permission_set(sso: Any, instance: str) -> str:
    created = sso.create_permission_set(Name="lead", InstanceArn=instance, SessionDuration="PT8H",
                                        Tags=[{"Key": "Project", "Value": "nlp"}])
    return str(created["PermissionSet"]["PermissionSetArn"])


def _assign(sso: Any, instance: str, ps: str, account: str, *, delete: bool = False) -> dict[str, Any]:
    call = sso.delete_account_assignment if delete else sso.create_account_assignment
    key = "AccountAssignmentDeletionStatus" if delete else "AccountAssignmentCreationStatus"
    return dict(call(InstanceArn=instance, TargetId=account, TargetType="AWS_ACCOUNT", PermissionSetArn=ps,
                     PrincipalType="GROUP", PrincipalId=PRINCIPAL)[key])


def _sso_roles(client: Callable[..., Any]) -> list[dict[str, Any]]:
    return list(client("iam").list_roles(PathPrefix="/aws-reserved/sso.amazonaws.com/")["Roles"])


def test_permission_set_arn_and_defaults(sso: Any, instance: str) -> None:
    """CreatePermissionSet answers an ARN arn:aws:sso:::permissionSet/ssoins-.../ps-... (the
    model's PermissionSetArn pattern) and SessionDuration defaults to PT1H."""
    created = sso.create_permission_set(Name="viewer", InstanceArn=instance)["PermissionSet"]
    instance_id = instance.rsplit("/", 1)[1]
    assert re.fullmatch(rf"arn:aws:sso:::permissionSet/{instance_id}/ps-[0-9a-f]{{16}}", created["PermissionSetArn"])
    described = sso.describe_permission_set(InstanceArn=instance, PermissionSetArn=created["PermissionSetArn"])
    assert described["PermissionSet"]["SessionDuration"] == "PT1H"
    assert_complete("sso-admin", "DescribePermissionSet", described)


def test_validation_errors_from_the_model(client: Callable[..., Any], instance: str) -> None:
    """Names are 1-32 characters ([\\w+=,.@-]+), InstanceArn matches arn:...:sso:::instance/...:
    AWS answers ValidationException (HTTP 400)."""
    sso = client("sso-admin", checked=False)
    code, status, message = error_of(sso.create_permission_set, Name="x" * 33, InstanceArn=instance)
    assert (code, status) == ("ValidationException", 400) and "length less than or equal to 32" in message
    code, status, _ = error_of(sso.list_permission_sets, InstanceArn="arn:aws:sso:::instance/not-an-instance")
    assert (code, status) == ("ValidationException", 400)


def test_duplicate_name_is_a_conflict(sso: Any, instance: str, permission_set: str) -> None:
    """A permission set name is unique in its instance: ConflictException."""
    assert error_of(sso.create_permission_set, Name="lead", InstanceArn=instance)[0] == "ConflictException"


def test_unknown_permission_set_is_not_found(sso: Any, instance: str) -> None:
    """ResourceNotFoundException for a permission set that does not exist."""
    unknown = instance.replace(":instance/", ":permissionSet/") + "/ps-0123456789abcdef"
    assert error_of(sso.describe_permission_set, InstanceArn=instance,
                    PermissionSetArn=unknown)[0] == "ResourceNotFoundException"


@pytest.mark.parametrize("boundary", [
    {"CustomerManagedPolicyReference": {"Name": "acme-boundary", "Path": "/governance/"}},
    {"ManagedPolicyArn": "arn:aws:iam::aws:policy/PowerUserAccess"},
])
def test_permissions_boundary_round_trip(sso: Any, instance: str, permission_set: str,
                                         boundary: dict[str, Any]) -> None:
    """Put/Get/DeletePermissionsBoundary...: Get answers what Put stored; after Delete, Get and
    Delete answer ResourceNotFoundException."""
    ids = {"InstanceArn": instance, "PermissionSetArn": permission_set}
    assert error_of(sso.get_permissions_boundary_for_permission_set, **ids)[0] == "ResourceNotFoundException"
    sso.put_permissions_boundary_to_permission_set(**ids, PermissionsBoundary=boundary)
    got = sso.get_permissions_boundary_for_permission_set(**ids)
    assert got["PermissionsBoundary"] == boundary
    assert_complete("sso-admin", "GetPermissionsBoundaryForPermissionSet", got)
    sso.delete_permissions_boundary_from_permission_set(**ids)
    assert error_of(sso.get_permissions_boundary_for_permission_set, **ids)[0] == "ResourceNotFoundException"
    assert error_of(sso.delete_permissions_boundary_from_permission_set, **ids)[0] == "ResourceNotFoundException"


def test_tags(sso: Any, instance: str, permission_set: str) -> None:
    """CreatePermissionSet's Tags are read by ListTagsForResource; TagResource adds or replaces,
    UntagResource removes by key."""
    ids = {"InstanceArn": instance, "ResourceArn": permission_set}
    assert sso.list_tags_for_resource(**ids)["Tags"] == [{"Key": "Project", "Value": "nlp"}]
    sso.tag_resource(**ids, Tags=[{"Key": "Project", "Value": "vision"}, {"Key": "Owner", "Value": "team"}])
    sso.untag_resource(**ids, TagKeys=["Owner"])
    assert sso.list_tags_for_resource(**ids)["Tags"] == [{"Key": "Project", "Value": "vision"}]


def test_provisioning_status_round_trip(sso: Any, instance: str, permission_set: str, account: str) -> None:
    """ProvisionPermissionSet answers a PermissionSetProvisioningStatus whose RequestId
    DescribePermissionSetProvisioningStatus and ListPermissionSetProvisioningStatus find; an
    unknown request id is ResourceNotFoundException."""
    started = sso.provision_permission_set(InstanceArn=instance, PermissionSetArn=permission_set,
                                           TargetType="AWS_ACCOUNT", TargetId=account)
    status = started["PermissionSetProvisioningStatus"]
    assert status["Status"] in ("IN_PROGRESS", "SUCCEEDED") and status["PermissionSetArn"] == permission_set
    described = sso.describe_permission_set_provisioning_status(
        InstanceArn=instance, ProvisionPermissionSetRequestId=status["RequestId"])
    assert described["PermissionSetProvisioningStatus"]["Status"] == "SUCCEEDED"
    assert described["PermissionSetProvisioningStatus"]["AccountId"] == account
    listed = sso.list_permission_set_provisioning_status(InstanceArn=instance)["PermissionSetsProvisioningStatus"]
    assert status["RequestId"] in {s["RequestId"] for s in listed}
    assert sso.list_accounts_for_provisioned_permission_set(
        InstanceArn=instance, PermissionSetArn=permission_set)["AccountIds"] == [account]
    assert error_of(sso.describe_permission_set_provisioning_status, InstanceArn=instance,
                    ProvisionPermissionSetRequestId="00000000-0000-0000-0000-000000000000")[0] == \
        "ResourceNotFoundException"


def test_assignment_statuses(sso: Any, instance: str, permission_set: str, account: str) -> None:
    """Create/DeleteAccountAssignment answer a status whose RequestId the Describe...Status
    operations find, SUCCEEDED once done; the creation request stays describable after deletion."""
    created = _assign(sso, instance, permission_set, account)
    assert created["Status"] in ("IN_PROGRESS", "SUCCEEDED")
    deleted = _assign(sso, instance, permission_set, account, delete=True)
    creation = sso.describe_account_assignment_creation_status(
        InstanceArn=instance, AccountAssignmentCreationRequestId=created["RequestId"])
    deletion = sso.describe_account_assignment_deletion_status(
        InstanceArn=instance, AccountAssignmentDeletionRequestId=deleted["RequestId"])
    assert creation["AccountAssignmentCreationStatus"]["Status"] == "SUCCEEDED"
    assert deletion["AccountAssignmentDeletionStatus"]["Status"] == "SUCCEEDED"
    assert creation["AccountAssignmentCreationStatus"]["PrincipalId"] == PRINCIPAL


def test_deleting_an_assigned_permission_set_is_a_conflict(sso: Any, instance: str, permission_set: str,
                                                           account: str) -> None:
    """DeletePermissionSet documents ConflictException: a permission set still assigned cannot go."""
    _assign(sso, instance, permission_set, account)
    assert error_of(sso.delete_permission_set, InstanceArn=instance,
                    PermissionSetArn=permission_set)[0] == "ConflictException"


def test_provisioned_role_lifecycle(client: Callable[..., Any], sso: Any, instance: str, permission_set: str,
                                    account: str) -> None:
    """The user guide (referencingpermissionsets.html): assigning a permission set creates the
    role AWSReservedSSO_<name>_<16 hex> under /aws-reserved/sso.amazonaws.com/<region>/, trusted
    for SAML federation, with the inline policy (AwsSSOInlinePolicy), the boundary and the session
    duration; reprovisioning updates it in place; deleting the last assignment deletes it; a later
    assignment creates a role with a new suffix."""
    iam = client("iam")
    iam.create_policy(PolicyName="acme-boundary", Path="/governance/", PolicyDocument=_policy("sagemaker:*"))
    ids = {"InstanceArn": instance, "PermissionSetArn": permission_set}
    sso.put_inline_policy_to_permission_set(**ids, InlinePolicy=_policy("sagemaker:DescribeCluster"))
    sso.put_permissions_boundary_to_permission_set(**ids, PermissionsBoundary={
        "CustomerManagedPolicyReference": {"Name": "acme-boundary", "Path": "/governance/"}})
    _assign(sso, instance, permission_set, account)

    [listed] = _sso_roles(client)
    assert ROLE.match(listed["RoleName"]) and listed["Path"] == f"/aws-reserved/sso.amazonaws.com/{REGION}/"
    role = iam.get_role(RoleName=listed["RoleName"])["Role"]
    assert role["MaxSessionDuration"] == 8 * 3600
    assert role["PermissionsBoundary"]["PermissionsBoundaryArn"] == \
        f"arn:aws:iam::{account}:policy/governance/acme-boundary"
    statement = role["AssumeRolePolicyDocument"]["Statement"][0]
    assert re.fullmatch(rf"arn:aws:iam::{account}:saml-provider/AWSSSO_[0-9a-f]+_DO_NOT_DELETE",
                        statement["Principal"]["Federated"])
    assert set(statement["Action"]) == {"sts:AssumeRoleWithSAML", "sts:TagSession"}
    inline = iam.get_role_policy(RoleName=role["RoleName"], PolicyName="AwsSSOInlinePolicy")["PolicyDocument"]
    assert inline["Statement"][0]["Action"] == ["sagemaker:DescribeCluster"]

    sso.update_permission_set(**ids, SessionDuration="PT4H")
    sso.put_inline_policy_to_permission_set(**ids, InlinePolicy=_policy("sagemaker:ListClusters"))
    sso.provision_permission_set(**ids, TargetType="ALL_PROVISIONED_ACCOUNTS")
    updated = iam.get_role(RoleName=role["RoleName"])["Role"]
    assert updated["MaxSessionDuration"] == 4 * 3600
    assert iam.get_role_policy(RoleName=role["RoleName"], PolicyName="AwsSSOInlinePolicy")[
        "PolicyDocument"]["Statement"][0]["Action"] == ["sagemaker:ListClusters"]

    _assign(sso, instance, permission_set, account, delete=True)
    assert _sso_roles(client) == []
    _assign(sso, instance, permission_set, account)
    [again] = _sso_roles(client)
    assert ROLE.match(again["RoleName"]) and again["RoleName"] != role["RoleName"]


def test_role_path_without_region_in_us_east_1(aws: Any, account: str) -> None:
    """An Identity Center instance in us-east-1 provisions roles under /aws-reserved/sso.amazonaws.com/."""
    sso = aws.client("sso-admin", account=account, region="us-east-1")
    instance = sso.list_instances()["Instances"][0]["InstanceArn"]
    ps = sso.create_permission_set(Name="lead", InstanceArn=instance)["PermissionSet"]["PermissionSetArn"]
    _assign(sso, instance, ps, account)
    roles = aws.client("iam", account=account, region="us-east-1").list_roles(
        PathPrefix="/aws-reserved/sso.amazonaws.com/")["Roles"]
    assert [(bool(ROLE.match(r["RoleName"])), r["Path"]) for r in roles] == [(True, "/aws-reserved/sso.amazonaws.com/")]
    found = find_provisioned_role(aws, account=account, permission_set_name="lead", identity_center_region="us-east-1")
    assert found is not None and found["RoleName"] == roles[0]["RoleName"]


def test_missing_customer_managed_boundary_fails_provisioning(sso: Any, instance: str, permission_set: str,
                                                              account: str) -> None:
    """A customer managed policy reference the account lacks fails the provisioning (FAILED with
    a FailureReason): IAM Identity Center needs the policy to exist in each target account."""
    ids = {"InstanceArn": instance, "PermissionSetArn": permission_set}
    sso.put_permissions_boundary_to_permission_set(**ids, PermissionsBoundary={
        "CustomerManagedPolicyReference": {"Name": "missing"}})
    started = sso.provision_permission_set(**ids, TargetType="AWS_ACCOUNT", TargetId=account)
    status = sso.describe_permission_set_provisioning_status(
        InstanceArn=instance, ProvisionPermissionSetRequestId=started["PermissionSetProvisioningStatus"]["RequestId"])
    assert status["PermissionSetProvisioningStatus"]["Status"] == "FAILED"
    assert status["PermissionSetProvisioningStatus"]["FailureReason"]


@pytest.fixture
def threads_switch_often() -> Iterator[None]:
    """The endpoint runs in this process: its request threads switch every microsecond instead of
    every 5 ms, so they interleave inside each request as they do on a loaded server."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


@pytest.mark.usefixtures("threads_switch_often")
def test_permission_sets_created_at_once_each_keep_their_own_arn(sso: Any, instance: str) -> None:
    """Creates arriving together (the server answers each on its own thread, as a provider engine
    applying 100 stacks at once sends them) each answer the ARN of the set they created: described
    by that ARN, it has the name the create gave. And one name created twice at once is created
    once (the API reference: ConflictException for a name already in the instance)."""
    names = [f"burst-{i:03d}" for i in range(200)]
    with ThreadPoolExecutor(max_workers=50) as pool:
        arns = list(pool.map(lambda n: sso.create_permission_set(Name=n, InstanceArn=instance)
                             ["PermissionSet"]["PermissionSetArn"], names))
    described = [sso.describe_permission_set(InstanceArn=instance, PermissionSetArn=a)["PermissionSet"]["Name"]
                 for a in arns]
    assert described == names
    assert len(set(arns)) == len(names)

    def create_twin(_: int) -> str:
        try:
            sso.create_permission_set(Name="twin", InstanceArn=instance)
            return "created"
        except ClientError as exc:
            return str(exc.response["Error"]["Code"])

    with ThreadPoolExecutor(max_workers=20) as pool:
        outcomes = sorted(pool.map(create_twin, range(20)))
    assert outcomes == ["ConflictException"] * 19 + ["created"]
