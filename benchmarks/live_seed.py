"""The live state of a whole org created directly with boto3 from its desired state, as an apply
would leave it: the benchmark's stand-in for ~1,000 terraform applies (hours on this machine).

Every desired object (`engines.live.scan.scan_context`: Pulumi type, camelCase inputs, account
and region) is created with the calls the Terraform AWS provider makes for its resource type,
with the same request members (nothing the provider leaves to the service's defaults is set
here), and every HyperPod task-governance request (`engines.live.hyperpod.governed_clusters`)
as the HyperPod executor creates it. Objects that reference others are created in waves: a role
before its inline policy and its access entries, an access entry before its policy association,
an Organizations policy before its attachment (whose `policyId` input is `<id:NAME>` of the
policy: resolved to the id the create returned). Within a wave, creates run in bounded threads.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from botocore.config import Config

from engines.desired import DesiredLookup, DesiredObject
from engines.live.hyperpod import GovernedCluster
from engines.live.lookups import read_lookups, resolved
from engines.live.runner import CallCounter

ClientFor = Callable[[str, str, str], Any]  # (service, account, region) -> boto3 client
Creator = Callable[[Any, DesiredObject, "CreatedIds"], None]
SEED_THREADS = 8
HYPERPOD_TYPE = "hyperpod"  # the Counter key of task-governance objects


def client_config(threads: int) -> Config:
    """A connection per thread; the SDK's standard retries (the endpoint answers throttles as AWS does)."""
    return Config(max_pool_connections=max(10, threads), retries={"mode": "standard", "total_max_attempts": 3})


class CreatedIds:
    """The ids the creates returned, by (stack, logical name): what `<id:NAME>` inputs resolve to."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ids: dict[tuple[str, str], str] = {}

    def record(self, obj: DesiredObject, created_id: str) -> None:
        with self._lock:
            self._ids[(obj.stack, obj.name)] = created_id

    def resolve(self, obj: DesiredObject, value: str) -> str:
        """`<id:NAME>` and `<arn:NAME>` (graph capture's outputs) as the create of NAME returned them."""
        for prefix in ("<id:", "<arn:"):
            if value.startswith(prefix) and value.endswith(">"):
                return self._ids[(obj.stack, value[len(prefix):-1])]
        return value


def _tag_list(tags: Mapping[str, str] | None, key: str = "Key", value: str = "Value") -> list[dict[str, str]]:
    return [{key: k, value: v} for k, v in sorted((tags or {}).items())]


def _optional(**members: Any) -> dict[str, Any]:
    """The request members that are set (the provider sends no member its configuration leaves unset)."""
    return {k: v for k, v in members.items() if v not in (None, "", [], {})}


def create_role(iam: Any, obj: DesiredObject, _: CreatedIds) -> None:
    i = obj.inputs
    iam.create_role(RoleName=i["name"], AssumeRolePolicyDocument=i["assumeRolePolicy"],
                    **_optional(Path=i.get("path"), Description=i.get("description"),
                                MaxSessionDuration=i.get("maxSessionDuration"),
                                PermissionsBoundary=i.get("permissionsBoundary"), Tags=_tag_list(i.get("tags"))))


def create_role_policy(iam: Any, obj: DesiredObject, _: CreatedIds) -> None:
    i = obj.inputs
    iam.put_role_policy(RoleName=i["role"], PolicyName=i["name"], PolicyDocument=i["policy"])


def create_managed_policy(iam: Any, obj: DesiredObject, _: CreatedIds) -> None:
    i = obj.inputs
    iam.create_policy(PolicyName=i["name"], PolicyDocument=i["policy"], Path=i.get("path") or "/",
                      **_optional(Description=i.get("description"), Tags=_tag_list(i.get("tags"))))


def create_org_policy(organizations: Any, obj: DesiredObject, ids: CreatedIds) -> None:
    i = obj.inputs
    created = organizations.create_policy(Name=i["name"], Content=i["content"], Description=i.get("description", ""),
                                          Type=i.get("type") or "SERVICE_CONTROL_POLICY",
                                          **_optional(Tags=_tag_list(i.get("tags"))))
    ids.record(obj, created["Policy"]["PolicySummary"]["Id"])


def create_org_attachment(organizations: Any, obj: DesiredObject, ids: CreatedIds) -> None:
    organizations.attach_policy(PolicyId=ids.resolve(obj, obj.inputs["policyId"]), TargetId=obj.inputs["targetId"])


def create_topic(sns: Any, obj: DesiredObject, ids: CreatedIds) -> None:
    created = sns.create_topic(Name=obj.inputs["name"], **_optional(Tags=_tag_list(obj.inputs.get("tags"))))
    ids.record(obj, created["TopicArn"])


def create_topic_policy(sns: Any, obj: DesiredObject, ids: CreatedIds) -> None:
    sns.set_topic_attributes(TopicArn=ids.resolve(obj, obj.inputs["arn"]), AttributeName="Policy",
                             AttributeValue=obj.inputs["policy"])


def create_budget(budgets: Any, obj: DesiredObject, _: CreatedIds) -> None:
    """CreateBudget, then one CreateNotification (with its subscribers) per notification block,
    as the provider's create does."""
    i = obj.inputs
    budget = {"BudgetName": i["name"], "BudgetType": i["budgetType"], "TimeUnit": i["timeUnit"],
              "BudgetLimit": {"Amount": str(i["limitAmount"]), "Unit": i["limitUnit"]},
              **_optional(CostFilters={f["name"]: list(f["values"]) for f in i.get("costFilters") or []})}
    account = i.get("accountId") or obj.account
    budgets.create_budget(AccountId=account, Budget=budget, **_optional(ResourceTags=_tag_list(i.get("tags"))))
    for n in i.get("notifications") or []:
        subscribers = ([{"SubscriptionType": "SNS", "Address": a} for a in n.get("subscriberSnsTopicArns") or []]
                       + [{"SubscriptionType": "EMAIL", "Address": a}
                          for a in n.get("subscriberEmailAddresses") or []])
        notification = {"NotificationType": n["notificationType"], "ComparisonOperator": n["comparisonOperator"],
                        "Threshold": float(n["threshold"]), "ThresholdType": n.get("thresholdType") or "PERCENTAGE"}
        budgets.create_notification(AccountId=account, BudgetName=i["name"], Notification=notification,
                                    Subscribers=subscribers)


def create_access_entry(eks: Any, obj: DesiredObject, _: CreatedIds) -> None:
    i = obj.inputs
    eks.create_access_entry(clusterName=i["clusterName"], principalArn=i["principalArn"],
                            **_optional(kubernetesGroups=list(i.get("kubernetesGroups") or []), type=i.get("type"),
                                        tags=dict(i.get("tags") or {}), username=i.get("userName")))


def create_access_policy_association(eks: Any, obj: DesiredObject, _: CreatedIds) -> None:
    i = obj.inputs
    scope = {"type": i["accessScope"]["type"], **_optional(namespaces=i["accessScope"].get("namespaces"))}
    eks.associate_access_policy(clusterName=i["clusterName"], principalArn=i["principalArn"], policyArn=i["policyArn"],
                                accessScope=scope)


def create_permission_set(sso: Any, obj: DesiredObject, ids: CreatedIds) -> None:
    i = obj.inputs
    created = sso.create_permission_set(InstanceArn=i["instanceArn"], Name=i["name"], **_optional(
        Description=i.get("description"), SessionDuration=i.get("sessionDuration"),
        Tags=_tag_list(i.get("tags"))))
    ids.record(obj, created["PermissionSet"]["PermissionSetArn"])


def put_permission_set_policy(sso: Any, obj: DesiredObject, ids: CreatedIds) -> None:
    i = obj.inputs
    sso.put_inline_policy_to_permission_set(InstanceArn=i["instanceArn"], InlinePolicy=i["inlinePolicy"],
                                            PermissionSetArn=ids.resolve(obj, i["permissionSetArn"]))


def put_permission_set_boundary(sso: Any, obj: DesiredObject, ids: CreatedIds) -> None:
    i = obj.inputs
    reference = i["permissionsBoundary"]["customerManagedPolicyReference"]
    sso.put_permissions_boundary_to_permission_set(
        InstanceArn=i["instanceArn"], PermissionSetArn=ids.resolve(obj, i["permissionSetArn"]),
        PermissionsBoundary={"CustomerManagedPolicyReference": {"Name": reference["name"],
                                                                "Path": reference.get("path") or "/"}})


def create_account_assignment(sso: Any, obj: DesiredObject, ids: CreatedIds) -> None:
    i = obj.inputs
    sso.create_account_assignment(
        InstanceArn=i["instanceArn"], PermissionSetArn=ids.resolve(obj, i["permissionSetArn"]),
        PrincipalId=i["principalId"], PrincipalType=i["principalType"], TargetId=i["targetId"],
        TargetType=i["targetType"])


@dataclass(frozen=True)
class TypeSeed:
    service: str
    create: Creator
    wave: int  # created after every object of a lower wave (what it references exists by then)


SEEDS: dict[str, TypeSeed] = {
    "aws:iam/policy:Policy": TypeSeed("iam", create_managed_policy, 0),
    "aws:organizations/policy:Policy": TypeSeed("organizations", create_org_policy, 0),
    "aws:sns/topic:Topic": TypeSeed("sns", create_topic, 0),
    "aws:iam/role:Role": TypeSeed("iam", create_role, 1),  # its boundary is a managed policy
    "aws:organizations/policyAttachment:PolicyAttachment": TypeSeed("organizations", create_org_attachment, 1),
    "aws:sns/topicPolicy:TopicPolicy": TypeSeed("sns", create_topic_policy, 1),
    "aws:budgets/budget:Budget": TypeSeed("budgets", create_budget, 1),  # notifies the topic
    "aws:iam/rolePolicy:RolePolicy": TypeSeed("iam", create_role_policy, 2),
    "aws:ssoadmin/permissionSet:PermissionSet": TypeSeed("sso-admin", create_permission_set, 0),
    "aws:ssoadmin/permissionSetInlinePolicy:PermissionSetInlinePolicy": TypeSeed(
        "sso-admin", put_permission_set_policy, 1),
    # the boundary is a customer-managed policy of each assigned account (wave 0)
    "aws:ssoadmin/permissionsBoundaryAttachment:PermissionsBoundaryAttachment": TypeSeed(
        "sso-admin", put_permission_set_boundary, 1),
    # provisions the permission set's role in the account, with its policy and boundary
    "aws:ssoadmin/accountAssignment:AccountAssignment": TypeSeed("sso-admin", create_account_assignment, 2),
    # the principal must exist: a role (wave 1), or the role an assignment provisioned (wave 2)
    "aws:eks/accessEntry:AccessEntry": TypeSeed("eks", create_access_entry, 3),
    "aws:eks/accessPolicyAssociation:AccessPolicyAssociation": TypeSeed("eks", create_access_policy_association, 4),
}


@dataclass(frozen=True)
class SeedReport:
    seconds: float
    created: Mapping[str, int]  # desired type (or "hyperpod") -> objects created
    waves_s: Sequence[float]  # wall seconds of each wave

    @property
    def total(self) -> int:
        return sum(self.created.values())


def seed_hyperpod(sagemaker: Any, cluster: GovernedCluster, tags: Mapping[str, str] | None = None) -> int:
    """The cluster's scheduler config, then its compute quotas, as the HyperPod executor creates them."""
    extra = {"Tags": _tag_list(tags)} if tags else {}
    sagemaker.create_cluster_scheduler_config(**cluster.scheduler_config, **extra)
    for request in cluster.quotas.values():
        sagemaker.create_compute_quota(**request, **extra)
    return 1 + len(cluster.quotas)


def seed_live_state(desired: Sequence[DesiredObject], clusters: Sequence[GovernedCluster], client_for: ClientFor, *,
                    management_account: str, threads: int = SEED_THREADS,
                    lookups: Sequence[DesiredLookup] = ()) -> SeedReport:
    """Create every desired object and every governed cluster's task-governance objects; raises
    on the first failed create (a partial seed would make the benchmark's scan report drift).
    `lookups`: the reads the objects' placeholders come from, read again before each wave (a
    permission set's role exists once a wave assigned it), as terraform reads its data sources."""
    unknown = sorted({o.type for o in desired} - set(SEEDS))
    if unknown:
        raise ValueError(f"no seeder for desired type(s) {', '.join(unknown)}: add one to benchmarks.live_seed.SEEDS")
    started = time.perf_counter()
    clients = _client_cache(client_for)
    ids = CreatedIds()
    created: Counter[str] = Counter()
    waves_s: list[float] = []

    def create(obj: DesiredObject) -> None:
        seed = SEEDS[obj.type]
        seed.create(clients(seed.service, obj.account or management_account, obj.region), obj, ids)

    with ThreadPoolExecutor(max_workers=threads) as pool:
        for wave in sorted({s.wave for s in SEEDS.values()}):
            wave_started = time.perf_counter()
            objects = [o for o in desired if SEEDS[o.type].wave == wave]
            if lookups:
                results, failures = read_lookups(
                    lookups, lambda service, account, region: clients(service, account or management_account, region),
                    CallCounter())
                if failures:
                    raise RuntimeError(f"cannot read {failures[0].what}: {failures[0].failure.message}")
                objects = list(resolved(objects, results))
            jobs: list[Callable[[], Any]] = [lambda o=o: create(o) for o in objects]  # type: ignore[misc]
            if wave == 0:  # HyperPod objects reference nothing hypergov creates
                jobs += [lambda c=c: seed_hyperpod(clients("sagemaker", c.account, c.region), c)  # type: ignore[misc]
                         for c in clusters]
            for future in [pool.submit(job) for job in jobs]:
                future.result()
            created.update(o.type for o in objects)
            if wave == 0:
                created[HYPERPOD_TYPE] += sum(1 + len(c.quotas) for c in clusters)
            waves_s.append(round(time.perf_counter() - wave_started, 3))
    return SeedReport(seconds=round(time.perf_counter() - started, 3), created=dict(sorted(created.items())),
                      waves_s=tuple(waves_s))


def _client_cache(client_for: ClientFor) -> ClientFor:
    made: dict[tuple[str, str, str], Any] = {}
    lock = threading.Lock()  # boto3 client creation is not thread-safe; the clients are

    def client(service: str, account: str, region: str) -> Any:
        with lock:
            key = (service, account, region)
            if key not in made:
                made[key] = client_for(service, account, region)
            return made[key]

    return client
