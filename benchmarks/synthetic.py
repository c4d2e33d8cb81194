"""A synthetic, valid governance tree of any size, for benchmarks that need a big organization.

The tree is built as loader input (tree-relative path -> YAML bytes), so a benchmark measures
hypergov's own work (validation, stack generation, graph capture) and not the file system. It is
a pure function of its arguments: the same seed gives byte-identical files. Quotas are drawn
first and each cluster's capacity is derived from them with some headroom, so the guarantees
always fit the hardware; every choice the rules check (lending, priority classes, workload
sizes) is made so that the tree validates with no error.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

import yaml

_INSTANCE_TYPES = ("ml.p5.48xlarge", "ml.p4d.24xlarge", "ml.g5.12xlarge", "ml.trn1.32xlarge")
_GPUS = {"ml.p5.48xlarge": 8, "ml.p4d.24xlarge": 8, "ml.g5.12xlarge": 4, "ml.trn1.32xlarge": 16}
_PRIORITIES = (("inference", 100), ("training", 60), ("experimentation", 20))
_ACCOUNTS = (("ml-prod", "111122223333"), ("ml-research", "444455556666"), ("ml-shared", "777788889999"))
_REGIONS = ("us-west-2", "us-east-1")


def generate_org(*, projects: int, clusters: int, seed: int, plain_eks_every: int | None = 4) -> dict[str, bytes]:
    """A valid config tree with `projects` teams spread over `clusters` HyperPod clusters; every
    `plain_eks_every`-th cluster runs in plain-EKS (Kueue) mode, the others with HyperPod task
    governance (None: all of them)."""
    if projects < 1 or clusters < 1:
        raise ValueError("a synthetic org needs at least one project and one cluster")
    rng = random.Random(seed)
    cluster_names = [f"c{i:02d}" for i in range(clusters)]
    teams = [f"p{i:04d}" for i in range(1, projects + 1)]
    quotas = {team: _draw_quotas(rng, team_index=i, cluster_names=cluster_names) for i, team in enumerate(teams)}
    files: dict[str, bytes] = {"org.yaml": _dump(_org())}
    demand: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for team_quotas in quotas.values():
        for cluster, quota in team_quotas.items():
            for itype, count in quota["instances"].items():
                demand[cluster][itype] += count
    for i, cluster in enumerate(cluster_names):
        files[f"clusters/{cluster}.yaml"] = _dump(_cluster(cluster, index=i, demand=demand[cluster],
                                                           plain_eks_every=plain_eks_every))
    for i, team in enumerate(teams):
        files[f"projects/{team}.yaml"] = _dump(_project(rng, team=team, index=i, quotas=quotas[team]))
        for name, workload in _workloads(rng, quotas=quotas[team]).items():
            files[f"workloads/{team}/{name}.yaml"] = _dump(workload)
    return dict(sorted(files.items()))


def one_budget_changed(files: dict[str, bytes]) -> tuple[dict[str, bytes], str]:
    """The tree with the first project's monthly budget raised by 1,000 USD, and that file's path:
    the smallest change a merge request makes (one project stack affected)."""
    changed = dict(files)
    path = sorted(p for p in files if p.startswith("projects/"))[0]
    text = changed[path].decode()
    marker = "monthly_usd: "
    start = text.index(marker) + len(marker)
    end = text.index("\n", start)
    changed[path] = (text[:start] + str(int(text[start:end]) + 1000) + text[end:]).encode()
    return changed, path


def _dump(data: dict[str, Any]) -> bytes:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False).encode()


def _org() -> dict[str, Any]:
    return {
        "name": "synth",
        "partition": "aws",
        "home_region": _REGIONS[0],
        "allowed_regions": list(_REGIONS),
        "organizational_unit": "ou-syn1-platform1",
        "accounts": [{"name": name, "id": account_id} for name, account_id in _ACCOUNTS],
        "permission_boundary": {
            "allow": ["sagemaker:*", "eks:Describe*", "eks:List*", "eks:AccessKubernetesApi",
                      "s3:GetObject", "s3:PutObject", "s3:ListBucket", "logs:GetLogEvents",
                      "cloudwatch:GetMetricData", "budgets:ViewBudget"],
            "deny": ["iam:*", "organizations:*", "sagemaker:CreateCluster", "sagemaker:DeleteCluster",
                     "sagemaker:UpdateCluster", "sagemaker:CreateComputeQuota", "sagemaker:UpdateComputeQuota",
                     "sagemaker:DeleteComputeQuota", "sagemaker:CreateClusterSchedulerConfig",
                     "sagemaker:UpdateClusterSchedulerConfig", "sagemaker:DeleteClusterSchedulerConfig",
                     "sagemaker:CreatePresignedNotebookInstanceUrl"],
        },
        "personas": {
            "ProjectLead": {"actions": ["sagemaker:Describe*", "sagemaker:List*", "eks:DescribeCluster",
                                        "eks:AccessKubernetesApi", "budgets:ViewBudget"]},
            "Engineer": {"actions": ["sagemaker:DescribeCluster", "sagemaker:ListClusterNodes",
                                     "eks:DescribeCluster", "eks:AccessKubernetesApi", "logs:GetLogEvents"]},
            "Viewer": {"actions": ["sagemaker:DescribeCluster", "eks:DescribeCluster"]},
        },
        "cost_allocation": {"project_tag": "Project", "cost_centre_tag": "CostCentre",
                            "cost_centre_pattern": "^CC-[0-9]{4}$", "required_tags": ["Owner"]},
        "allowed_instance_types": list(_INSTANCE_TYPES),
        "platform_admins": ["arn:aws:iam::111122223333:role/PlatformAdministrator"],
        "identity_center": {"instance_arn": "arn:aws:sso:::instance/ssoins-7223a7b5d1e5e2c4",
                            "identity_store_id": "d-9067c1a2b3", "region": _REGIONS[0],
                            "account": _ACCOUNTS[0][0], "session_duration": "8h"},
        "change_control": [{"paths": ["org.yaml", "clusters/*.yaml"], "owners": ["platform-admins"]},
                           {"paths": ["projects/<project>.yaml"], "owners": ["project-leads"]}],
    }


def _draw_quotas(rng: random.Random, *, team_index: int, cluster_names: list[str]) -> dict[str, dict[str, Any]]:
    """One or two clusters per team; every team lends. The first round of teams (one per cluster,
    round-robin) only lends, on one cluster: so every cluster a later team borrows on already has
    another lender, as the CAP004 rule wants."""
    first = cluster_names[team_index % len(cluster_names)]
    chosen = [first]
    later_round = team_index >= len(cluster_names)
    if later_round and len(cluster_names) > 1 and rng.random() < 0.3:
        chosen.append(rng.choice([c for c in cluster_names if c != first]))
    result: dict[str, dict[str, Any]] = {}
    for cluster in sorted(chosen):
        types = rng.sample(_INSTANCE_TYPES, k=rng.choice((1, 1, 2)))
        quota: dict[str, Any] = {"instances": {t: rng.randint(1, 4) for t in sorted(types)}}
        if later_round and rng.random() < 0.4:
            quota["sharing"] = "LendAndBorrow"
            quota["borrow_limit_percent"] = rng.choice((25, 50, 100))
        else:
            quota["sharing"] = "Lend"
        result[cluster] = quota
    return result


def _cluster(name: str, *, index: int, demand: dict[str, int], plain_eks_every: int | None) -> dict[str, Any]:
    account, account_id = _ACCOUNTS[index % len(_ACCOUNTS)]
    region = _REGIONS[index % len(_REGIONS)]
    task_governance = plain_eks_every is None or index % plain_eks_every != plain_eks_every - 1
    hyperpod: dict[str, str] = {"cluster_name": f"synth-{name}"}
    if task_governance:  # compute quotas are bound to the ARN, whose last part SageMaker generates
        hyperpod["arn"] = f"arn:aws:sagemaker:{region}:{account_id}:cluster/synth{index:07d}"
    # A cluster no team uses still needs capacity; headroom keeps guarantees strictly inside it.
    capacity = {t: {"instances": count + max(2, count // 10)} for t, count in sorted(demand.items())}
    if not capacity:
        capacity = {_INSTANCE_TYPES[0]: {"instances": 4}}
    return {
        "account": account,
        "region": region,
        "owner": "arn:aws:iam::111122223333:role/PlatformAdministrator",
        "hyperpod": hyperpod,
        "eks": {"cluster_name": f"synth-{name}-eks"},
        "task_governance": task_governance,
        "capacity": capacity,
        "scheduler": {"priority_classes": [{"name": n, "weight": w} for n, w in _PRIORITIES],
                      "fair_share": True, "idle_resource_sharing": True},
        "tags": {"Environment": "synthetic", "Owner": "ml-platform"},
    }


def _project(rng: random.Random, *, team: str, index: int, quotas: dict[str, dict[str, Any]]) -> dict[str, Any]:
    account = _ACCOUNTS[index % len(_ACCOUNTS)][1]
    return {
        "description": f"synthetic team {team}",
        "members": {
            "ProjectLead": [f"arn:aws:iam::{account}:role/{team}-lead"],
            "Engineer": [f"identitycenter:group/{team}-engineers", f"arn:aws:iam::{account}:user/{team}-dev"],
            "Viewer": [f"identitycenter:group/{team}-viewers"],
        },
        "cost_centre": f"CC-{1000 + index % 9000:04d}",
        "budget": {"monthly_usd": rng.randrange(10_000, 500_000, 1_000), "alert_at_percent": [80, 100]},
        "tags": {"Owner": f"{team}-team", "Environment": "synthetic"},
        "quotas": quotas,
        "fair_share_weight": rng.randint(1, 100),
        "preempt_own_lower_priority": rng.random() < 0.8,
        "allowed_priority_classes": ["training", "experimentation"],
        "extra_permissions": {"Engineer": ["s3:GetObject", "s3:PutObject"]},
    }


def _workloads(rng: random.Random, *, quotas: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A training class sized to the team's smallest guarantee (always admissible) and a notebook."""
    itype, count = min(((t, c) for q in quotas.values() for t, c in q["instances"].items()),
                       key=lambda tc: (tc[1] * _GPUS[tc[0]], tc[0]))
    return {
        "train": {"description": "multi-node training", "priority_class": "training",
                  "max_gpus_per_job": count * _GPUS[itype], "max_run_time": rng.choice(("24h", "72h", "7d")),
                  "required_labels": ["experiment"], "instance_types": [itype]},
        "notebook": {"description": "interactive sessions", "priority_class": "experimentation",
                     "max_gpus_per_job": 1, "max_run_time": "8h", "required_labels": []},
    }
