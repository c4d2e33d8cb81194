"""Building blocks shared by the four layers' models: strictness, names, principals, tags."""

from __future__ import annotations

import re
from typing import Annotated, Literal, NewType

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from hypergov.model.aws_limits import AwsEnum, aws_enum_values, aws_str

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
IDENTITY_CENTER_RE = re.compile(r"^identitycenter:(user|group)/[A-Za-z0-9_+=,.@ -]{1,128}$")
Principal = Annotated[
    str,
    StringConstraints(
        pattern=r"^(arn:aws(-cn|-us-gov)?:iam::\d{12}:(user|role)/([A-Za-z0-9_+=,.@-]+/)*[A-Za-z0-9_+=,.@-]{1,64}"
                r"|identitycenter:(user|group)/[A-Za-z0-9_+=,.@ -]{1,128})$",
        max_length=2048),
    Field(description="an IAM user/role ARN, or 'identitycenter:user/<name>' / "
                      "'identitycenter:group/<name>' for IAM Identity Center"),
]

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
