"""Contract of the EKS access entry and access policy operations through boto3 (REST-JSON):
Create/Describe/Update/Delete/ListAccessEntries, Associate/DisassociateAccessPolicy,
ListAssociatedAccessPolicies, with EKS's statuses (404 not found, 409 in use, 400 invalid)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .conftest import assert_complete, error_of

VIEW = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy"
EDIT = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSEditPolicy"
GROUP = "hyperpod-ns-nlp-namespace-level-group"
Ctx = dict[str, str]


@pytest.fixture
def eks(client: Callable[..., Any]) -> Any:
    return client("eks")


@pytest.fixture
def ctx(client: Callable[..., Any], hyperpod_arn: str, account: str) -> Ctx:
    """The seeded cluster 'gpu-eks' (API_AND_CONFIG_MAP), an IAM role with an entry, another without."""
    iam = client("iam")
    lead = iam.create_role(RoleName="acme-nlp-lead", Path="/teams/", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    other = iam.create_role(RoleName="acme-nlp-engineer", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    client("eks").create_access_entry(clusterName="gpu-eks", principalArn=lead, kubernetesGroups=[GROUP],
                                      tags={"Project": "nlp"})
    return {"cluster": "gpu-eks", "lead": lead, "other": other, "account": account}


def test_create_fills_aws_defaults(eks: Any, ctx: Ctx) -> None:
    created = eks.create_access_entry(clusterName="gpu-eks", principalArn=ctx["other"])

    assert_complete("eks", "CreateAccessEntry", created)
    entry = created["accessEntry"]
    assert (entry["type"], entry["kubernetesGroups"]) == ("STANDARD", [])
    assert entry["username"] == f"arn:aws:sts::{ctx['account']}:assumed-role/acme-nlp-engineer/{{{{SessionName}}}}"
    assert entry["accessEntryArn"].startswith(
        f"arn:aws:eks:us-west-2:{ctx['account']}:access-entry/gpu-eks/role/{ctx['account']}/acme-nlp-engineer/")


def test_describe_update_and_list(eks: Any, ctx: Ctx) -> None:
    described = eks.describe_access_entry(clusterName="gpu-eks", principalArn=ctx["lead"])
    updated = eks.update_access_entry(clusterName="gpu-eks", principalArn=ctx["lead"],
                                      kubernetesGroups=[GROUP, "nlp-readers"], username="nlp-lead")
    listed = eks.list_access_entries(clusterName="gpu-eks")

    assert_complete("eks", "DescribeAccessEntry", described)
    assert (described["accessEntry"]["kubernetesGroups"], described["accessEntry"]["tags"]) == ([GROUP],
                                                                                                  {"Project": "nlp"})
    assert_complete("eks", "UpdateAccessEntry", updated)
    assert (updated["accessEntry"]["kubernetesGroups"], updated["accessEntry"]["username"]) == \
        ([GROUP, "nlp-readers"], "nlp-lead")
    assert_complete("eks", "ListAccessEntries", listed)
    assert listed["accessEntries"] == [ctx["lead"]]


def test_an_identity_center_role_is_found_by_its_arn(client: Callable[..., Any], eks: Any, ctx: Ctx) -> None:
    """The role IAM Identity Center provisions lives under `/aws-reserved/sso.amazonaws.com/<region>/`
    (IAM Identity Center user guide); its ARN, in the request path of DescribeAccessEntry, holds
    `.amazonaws.com`, which must not be read as the request's region (AWS reads it from the host)."""
    role = client("iam").create_role(RoleName="AWSReservedSSO_acme-nlp-engineer_0123456789abcdef",
                                     Path="/aws-reserved/sso.amazonaws.com/us-west-2/",
                                     AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    eks.create_access_entry(clusterName="gpu-eks", principalArn=role, kubernetesGroups=[GROUP])

    described = eks.describe_access_entry(clusterName="gpu-eks", principalArn=role)["accessEntry"]
    assert (described["principalArn"], described["kubernetesGroups"]) == (role, [GROUP])
    eks.delete_access_entry(clusterName="gpu-eks", principalArn=role)
    assert role not in eks.list_access_entries(clusterName="gpu-eks")["accessEntries"]


def test_associate_replace_list_and_disassociate_policies(eks: Any, ctx: Ctx) -> None:
    first = eks.associate_access_policy(clusterName="gpu-eks", principalArn=ctx["lead"], policyArn=VIEW,
                                        accessScope={"type": "namespace", "namespaces": ["hyperpod-ns-nlp"]})
    eks.associate_access_policy(clusterName="gpu-eks", principalArn=ctx["lead"], policyArn=VIEW,
                                accessScope={"type": "cluster"})
    eks.associate_access_policy(clusterName="gpu-eks", principalArn=ctx["lead"], policyArn=EDIT,
                                accessScope={"type": "namespace", "namespaces": ["hyperpod-ns-nlp"]})
    listed = eks.list_associated_access_policies(clusterName="gpu-eks", principalArn=ctx["lead"])
    by_policy = eks.list_access_entries(clusterName="gpu-eks", associatedPolicyArn=EDIT)["accessEntries"]
    eks.disassociate_access_policy(clusterName="gpu-eks", principalArn=ctx["lead"], policyArn=EDIT)
    after = eks.list_associated_access_policies(clusterName="gpu-eks", principalArn=ctx["lead"])

    assert_complete("eks", "AssociateAccessPolicy", first)
    assert_complete("eks", "ListAssociatedAccessPolicies", listed)
    assert {p["policyArn"]: p["accessScope"]["type"] for p in listed["associatedAccessPolicies"]} == \
        {VIEW: "cluster", EDIT: "namespace"}
    assert by_policy == [ctx["lead"]]
    assert [p["policyArn"] for p in after["associatedAccessPolicies"]] == [VIEW]


def test_access_policies_are_listed(eks: Any) -> None:
    listed = eks.list_access_policies(maxResults=100)

    assert_complete("eks", "ListAccessPolicies", listed)
    assert {VIEW, EDIT} <= {p["arn"] for p in listed["accessPolicies"]}


def test_entry_tags_and_deletion(eks: Any, ctx: Ctx) -> None:
    arn = eks.describe_access_entry(clusterName="gpu-eks", principalArn=ctx["lead"])["accessEntry"]["accessEntryArn"]
    eks.tag_resource(resourceArn=arn, tags={"CostCentre": "CC-1234"})
    eks.untag_resource(resourceArn=arn, tagKeys=["Project"])
    tags = eks.list_tags_for_resource(resourceArn=arn)["tags"]
    eks.delete_access_entry(clusterName="gpu-eks", principalArn=ctx["lead"])

    assert tags == {"CostCentre": "CC-1234"}
    assert eks.list_access_entries(clusterName="gpu-eks")["accessEntries"] == []


def test_entries_die_with_their_cluster(client: Callable[..., Any], eks: Any, ctx: Ctx) -> None:
    eks.delete_cluster(name="gpu-eks")
    eks.create_cluster(name="gpu-eks", roleArn="arn:aws:iam::111122223333:role/eks",
                       resourcesVpcConfig={"subnetIds": ["s"]}, accessConfig={"authenticationMode": "API"})

    assert eks.list_access_entries(clusterName="gpu-eks")["accessEntries"] == []


def test_config_map_cluster_refuses_entries(eks: Any, ctx: Ctx) -> None:
    eks.create_cluster(name="legacy", roleArn="arn:aws:iam::111122223333:role/eks",
                       resourcesVpcConfig={"subnetIds": []})

    code, status, message = error_of(eks.create_access_entry, clusterName="legacy", principalArn=ctx["other"])
    eks.update_cluster_config(name="legacy", accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"})

    assert (code, status) == ("InvalidRequestException", 400)
    assert "authentication mode" in message
    assert eks.create_access_entry(clusterName="legacy", principalArn=ctx["other"])["accessEntry"]["type"] == "STANDARD"


INVALID: list[Any] = [
    pytest.param("create_access_entry", lambda c: {"clusterName": "gpu-eks"},
                 "InvalidParameterException", 400, "Value null at 'principalArn'", id="create-missing-principal"),
    pytest.param("create_access_entry", lambda c: {"clusterName": "gpu-eks", "principalArn": c["lead"]},
                 "ResourceInUseException", 409, "already in use", id="create-duplicate"),
    pytest.param("create_access_entry", lambda c: {"clusterName": "nope", "principalArn": c["other"]},
                 "ResourceNotFoundException", 404, "No cluster found for name: nope", id="create-unknown-cluster"),
    pytest.param("create_access_entry", lambda c: {"clusterName": "gpu-eks", "principalArn": "acme-nlp-lead"},
                 "InvalidParameterException", 400, "format is not valid", id="create-principal-not-an-arn"),
    pytest.param("create_access_entry", lambda c: {"clusterName": "gpu-eks",
                                                   "principalArn": f"arn:aws:iam::{c['account']}:role/ghost"},
                 "InvalidParameterException", 400, "could not be found", id="create-principal-missing"),
    pytest.param("create_access_entry", lambda c: {"clusterName": "gpu-eks", "principalArn": c["other"],
                                                   "kubernetesGroups": ["system:masters"]},
                 "InvalidParameterException", 400, "system:", id="create-reserved-group"),
    pytest.param("create_access_entry", lambda c: {"clusterName": "gpu-eks", "principalArn": c["other"],
                                                   "type": "EC2_LINUX", "kubernetesGroups": ["g"]},
                 "InvalidParameterException", 400, "only be set for access entries of type STANDARD",
                 id="create-groups-on-node-entry"),
    pytest.param("create_access_entry", lambda c: {"clusterName": "gpu-eks", "principalArn": c["other"],
                                                   "tags": {}},
                 "InvalidParameterException", 400, "length greater than or equal to 1", id="create-empty-tags"),
    pytest.param("describe_access_entry", lambda c: {"clusterName": "gpu-eks", "principalArn": c["other"]},
                 "ResourceNotFoundException", 404, "could not be found", id="describe-unknown"),
    pytest.param("update_access_entry", lambda c: {"clusterName": "gpu-eks", "principalArn": c["lead"],
                                                   "username": "system:admin"},
                 "InvalidParameterException", 400, "reserved prefix", id="update-reserved-username"),
    pytest.param("update_access_entry", lambda c: {"clusterName": "gpu-eks", "principalArn": c["other"]},
                 "ResourceNotFoundException", 404, "could not be found", id="update-unknown"),
    pytest.param("delete_access_entry", lambda c: {"clusterName": "gpu-eks", "principalArn": c["other"]},
                 "ResourceNotFoundException", 404, "could not be found", id="delete-unknown"),
    pytest.param("list_access_entries", lambda c: {"clusterName": "nope"},
                 "ResourceNotFoundException", 404, "No cluster found", id="list-unknown-cluster"),
    pytest.param("list_access_entries", lambda c: {"clusterName": "gpu-eks", "maxResults": 101},
                 "InvalidParameterException", 400, "less than or equal to 100", id="list-max-results"),
    pytest.param("associate_access_policy", lambda c: {"clusterName": "gpu-eks", "principalArn": c["lead"],
                                                       "policyArn": VIEW},
                 "InvalidParameterException", 400, "Value null at 'accessScope'", id="associate-missing-scope"),
    pytest.param("associate_access_policy", lambda c: {"clusterName": "gpu-eks", "principalArn": c["lead"],
                                                       "policyArn": VIEW, "accessScope": {"type": "namespace"}},
                 "InvalidParameterException", 400, "at least one namespace", id="associate-namespace-without-names"),
    pytest.param("associate_access_policy", lambda c: {"clusterName": "gpu-eks", "principalArn": c["lead"],
                                                       "policyArn": VIEW, "accessScope": {"type": "everything"}},
                 "InvalidParameterException", 400, "enum value set", id="associate-scope-enum"),
    pytest.param("associate_access_policy", lambda c: {"clusterName": "gpu-eks", "principalArn": c["lead"],
                                                       "policyArn": "arn:aws:iam::aws:policy/ReadOnlyAccess",
                                                       "accessScope": {"type": "cluster"}},
                 "InvalidParameterException", 400, "policyArn parameter format", id="associate-iam-policy-arn"),
    pytest.param("associate_access_policy", lambda c: {"clusterName": "gpu-eks", "principalArn": c["lead"],
                                                       "policyArn": VIEW.replace("View", "God"),
                                                       "accessScope": {"type": "cluster"}},
                 "ResourceNotFoundException", 404, "could not be found", id="associate-unknown-policy"),
    pytest.param("associate_access_policy", lambda c: {"clusterName": "gpu-eks", "principalArn": c["other"],
                                                       "policyArn": VIEW, "accessScope": {"type": "cluster"}},
                 "ResourceNotFoundException", 404, "could not be found", id="associate-unknown-entry"),
    pytest.param("disassociate_access_policy", lambda c: {"clusterName": "gpu-eks", "principalArn": c["lead"],
                                                          "policyArn": EDIT},
                 "ResourceNotFoundException", 404, "is not associated", id="disassociate-not-associated"),
    pytest.param("list_associated_access_policies", lambda c: {"clusterName": "gpu-eks", "principalArn": c["other"]},
                 "ResourceNotFoundException", 404, "could not be found", id="list-policies-unknown-entry"),
]


@pytest.mark.parametrize(("operation", "request_of", "code", "status", "message"), INVALID)
def test_invalid_requests_get_documented_errors(client: Callable[..., Any], ctx: Ctx, operation: str,
                                                request_of: Callable[[Ctx], dict[str, Any]], code: str, status: int,
                                                message: str) -> None:
    got = error_of(getattr(client("eks", checked=False), operation), **request_of(ctx))

    assert got[:2] == (code, status)
    assert message in got[2]
