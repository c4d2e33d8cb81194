"""Building blocks shared by the four layers' models: strictness, names, principals, tags."""

from __future__ import annotations

import re
from typing import Annotated, Literal, NewType

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from hypergov.model.aws_limits import AwsEnum, aws_enum_values, aws_str, shape

TeamName = NewType("TeamName", str)
ClusterName = NewType("ClusterName", str)
WorkloadClassName = NewType("WorkloadClassName", str)


class StrictModel(BaseModel):
    """Unknown keys are errors and no value is coerced from another type ("1" is not 1)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True,
                              str_strip_whitespace=False, validate_default=True)


Persona = Literal["ProjectLead", "Engineer", "Viewer"]
PERSONAS: tuple[Persona, ...] = ("ProjectLead", "Engineer", "Viewer")

InstanceType = Annotated[str, AwsEnum("sagemaker", "ClusterInstanceType"),
                         Field(description="a HyperPod instance type, e.g. ml.p5.48xlarge")]
INSTANCE_TYPES = frozenset(aws_enum_values("sagemaker", "ClusterInstanceType"))

AccountId = Annotated[str, aws_str("organizations", "AccountId"),
                      Field(description="12-digit AWS account id (quote it)")]
OrganizationalUnitId = Annotated[str, aws_str("organizations", "OrganizationalUnitId"),
                                 Field(description="an Organizations OU id, e.g. ou-ab12-cd34ef56")]
HyperPodClusterName = Annotated[str, aws_str("sagemaker", "ClusterName"),
                                Field(description="the HyperPod cluster name")]
HyperPodClusterArn = Annotated[str, aws_str("sagemaker", "ClusterArn"),
                               Field(description="the HyperPod cluster ARN")]
EksClusterName = Annotated[str, aws_str("eks", "CreateClusterRequest", member="name"),
                           Field(description="the EKS cluster that orchestrates the HyperPod cluster")]
PriorityClassName = Annotated[str, aws_str("sagemaker", "ClusterSchedulerPriorityClassName"),
                              Field(description="a scheduler priority class name (lowercase, digits, '-')")]
TagKey = Annotated[str, aws_str("iam", "tagKeyType"),
                   Field(description="an AWS tag key")]
TagValue = Annotated[str, aws_str("iam", "tagValueType"),
                     Field(description="an AWS tag value")]
Tags = dict[TagKey, TagValue]

Partition = Literal["aws", "aws-cn", "aws-us-gov"]
Region = Annotated[str, StringConstraints(pattern=r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d$"),
                   Field(description="an AWS region, e.g. us-west-2")]

# IAM actions are `service:Action` with `*` / `?` wildcards; service prefixes and action names are
# letters, digits and '-' (https://docs.aws.amazon.com/service-authorization/latest/reference/;
# e.g. vpc-lattice:AssociateViaAWSService-EventsAndStates). Every action of AWS's published
# catalogue matches (tests/core/test_aws_actions.py).
IAM_ACTION_PATTERN = r"^(\*|[a-zA-Z0-9*?-]+:[a-zA-Z0-9*?-]+)$"
ActionPattern = Annotated[str, StringConstraints(pattern=IAM_ACTION_PATTERN, max_length=256),
                          Field(description="an IAM action pattern like 's3:Get*' or 'sagemaker:*'")]

IAM_PRINCIPAL_RE = re.compile(
    r"^arn:aws(-cn|-us-gov)?:iam::\d{12}:(user|role)/([A-Za-z0-9_+=,.@-]+/)*[A-Za-z0-9_+=,.@-]{1,64}$")
IDENTITY_CENTER_PREFIX = "identitycenter:"
# The identity store attribute each kind of member is found by: its unique name there (a group's
# display name, a user's user name), which is what the tree writes after the kind.
IDENTITY_STORE_NAME_ATTRIBUTE = {"group": "DisplayName", "user": "UserName"}


def _identity_store_name(shape_name: str) -> tuple[str, int]:
    """An identity-store name's character class exactly as botocore's model has it (`[...]+`,
    Unicode classes), and its longest length. pydantic's regex engine knows `\\p{L}` and the other
    Unicode classes (Python's `re` does not); the length is checked apart (`_member_length`),
    since a bounded repetition of those classes exceeds the engine's size limit."""
    meta = shape("identitystore", shape_name).metadata
    pattern: str = meta["pattern"]
    if not pattern.endswith("]+") or meta["min"] != 1:
        raise ValueError(f"identitystore {shape_name}: unexpected pattern {pattern!r}")
    return pattern, int(meta["max"])


# Identity Center members are named as the identity store names them: a group by its display name
# (1-1024 letters, marks, symbols, digits, punctuation and spaces), a user by its user name (1-128
# of the same, no spaces). botocore's identitystore model: GroupDisplayName, UserName.
_GROUP_NAME, GROUP_NAME_MAX = _identity_store_name("GroupDisplayName")
_USER_NAME, USER_NAME_MAX = _identity_store_name("UserName")
IDENTITY_CENTER_MEMBER_MAX = {"group": GROUP_NAME_MAX, "user": USER_NAME_MAX}


def _member_length(value: str) -> str:
    if value.startswith(IDENTITY_CENTER_PREFIX):
        kind, name = identity_center_member(value)
        if len(name) > IDENTITY_CENTER_MEMBER_MAX[kind]:
            raise ValueError(f"an Identity Center {kind} name has at most {IDENTITY_CENTER_MEMBER_MAX[kind]} "
                             f"characters; this one has {len(name)}")
    return value


Principal = Annotated[
    str,
    StringConstraints(
        pattern=r"^(arn:aws(-cn|-us-gov)?:iam::\d{12}:(user|role)/([A-Za-z0-9_+=,.@-]+/)*[A-Za-z0-9_+=,.@-]{1,64}"
                rf"|identitycenter:user/{_USER_NAME}|identitycenter:group/{_GROUP_NAME})$",
        max_length=2048),
    AfterValidator(_member_length),
    Field(description="an IAM user/role ARN, or an IAM Identity Center member: 'identitycenter:group/<display "
                      "name>' (1-1024 characters, spaces allowed) or 'identitycenter:user/<user name>' (1-128 "
                      "characters, no spaces), as the identity store names them"),
]


# Who approves on the Git host (`hypergov codeowners`): the handles CODEOWNERS files take. GitHub: a
# user `@name`, a team `@org/team-name`, or an e-mail address added to a user's account ("About code
# owners", docs.github.com); GitLab: a user `@name`, a group `@group` or subgroup `@group/sub/...`, or
# an e-mail address ("Syntax of CODEOWNERS file", docs.gitlab.com). Roles (`@@maintainer`) are not
# handles of people and are not taken.
GitHostOwner = Annotated[
    str,
    StringConstraints(pattern=r"^(@[A-Za-z0-9][A-Za-z0-9_.-]{0,254}(/[A-Za-z0-9_.-]{1,255}){0,20}"
                              r"|[^@\s]+@[^@\s]+\.[A-Za-z]{2,})$", max_length=1024),
    Field(description="a Git-host code owner: '@user', '@org/team' (GitHub), '@group' or '@group/subgroup' "
                      "(GitLab), or an e-mail address of a Git-host account"),
]


def is_identity_center(principal: str) -> bool:
    return principal.startswith(IDENTITY_CENTER_PREFIX)


def identity_center_member(principal: str) -> tuple[str, str]:
    """'identitycenter:group/ML Platform' -> ('group', 'ML Platform')."""
    kind, _, name = principal.removeprefix(IDENTITY_CENTER_PREFIX).partition("/")
    return kind, name


Duration = Annotated[str, StringConstraints(pattern=r"^[1-9][0-9]{0,5}(m|h|d)$"),
                     Field(description="a duration like '90m', '72h' or '7d'")]

_DURATION_UNITS = {"m": 60, "h": 3600, "d": 86400}


def duration_seconds(value: str) -> int:
    return int(value[:-1]) * _DURATION_UNITS[value[-1]]


# Kubernetes label keys: optional DNS-subdomain prefix, '/', then a 63-char name.
K8S_LABEL_KEY = (r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                 r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
LabelKey = Annotated[str, StringConstraints(pattern=K8S_LABEL_KEY, max_length=317),
                     Field(description="a Kubernetes label key, e.g. 'team' or 'example.com/experiment'")]
