"""The provider engine (`engine: provider`: the AWS provider spoken to directly) side by side with
the terraform engine on the same org, the same embedded endpoint and the same state (issue 34).

Setup: the synthetic org of `bench_drift` (every cluster with task governance) committed on
`main` of a fresh Git repository; the embedded endpoint process seeded with its clusters; every
stack applied from nothing by the provider engine (timed: the org's first apply). Then:

(a) one-stack merge-request plan: one project's budget raised in the working tree, the real
    `hypergov plan --base main --markdown mr.md` (a subprocess) with `HYPERGOV_ENGINE=provider`
    and with `=terraform`, on the same state directory (the terraform engine reads the state the
    provider engine wrote), best of `--repeat`; refreshed (the provider waits 5 s before reading
    the project's budget, in either engine) and with `--no-refresh` (terraform's -refresh=false,
    the goal's measure). The terraform engine's first run initialises the stack's directory and is
    not counted.
(b) an org-wide change (an action added to a persona policy in org.yaml: every project stack's
    role policies change) planned by the provider engine for every project stack: each stack's
    graph captured anew (timed apart), then refreshed and planned by the provider, nothing
    extrapolated; then planned again with --no-refresh. Checked: every project stack plans an
    update, and only updates. The CPU seconds of the refreshed plan per process (hypergov, the
    provider's processes, the embedded endpoint) say what bounds it on this machine's cores.
    Terraform: the same change planned for `--sample` project stacks, extrapolated to all of them
    at its `terraform.parallelism`.
(c) that change applied: the terraform engine applies its sample's plans (timed), the provider
    engine every other project stack's (timed); each extrapolated per stack to 1,000 projects at
    its parallelism. Afterwards terraform plans nothing for a stack the provider engine applied.

The provider engine runs `PROVIDER_PARALLELISM` stacks at once
(`terraform.provider_engine_parallelism`): its stacks mostly wait (for AWS, and in the provider's
own waits: five seconds before every budget read), where each terraform stack spends ~15 CPU
seconds; terraform keeps its default parallelism.

Run: `python -m benchmarks.bench_provider_engine [--projects 1000] [--clusters 20] [--sample 4]
[--repeat 5] [--quick]`.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import git

from benchmarks.bench_drift import CREDENTIALS, baseline_settings, sampled_projects
from benchmarks.bench_mr import HYPERGOV, change_one_budget, command_env, run_command, write_settings
from benchmarks.bench_scan_plan import add_persona_permission, commit_org
from benchmarks.common import org_size_arguments, print_table, quick_sizes, write_results
from benchmarks.drift_probe import cpu_seconds_of
from embedded_aws import EmbeddedAwsProcess
from engines.factory import provider_engine, terraform_engine
from engines.plan import Action, Failure, Plan, StackName
from engines.provider.pool import ProviderPool
from engines.settings import Settings
from engines.terraform.engine import TerraformEngine
from engines.terraform.provider_runner import ProviderRunner
from hypergov.model.tree import GovernanceTree
from stacks.spec import plan_stacks

GOALS = {"one_stack_plan_s": 2.0, "org_wide_plan_s": 60.0, "apply_speedup": 20.0}
PROVIDER_PARALLELISM = 100  # `terraform.provider_engine_parallelism` (its stacks wait, 5 s per budget read)
SCALE_TO = 1000  # the apply is extrapolated to the org
MR_COMMAND = ["plan", "--base", "main", "--markdown", "mr.md"]


def engine_settings(endpoint_url: str, state_dir: Path, *, provider_parallelism: int | None = None) -> Settings:
    settings = baseline_settings(endpoint_url, state_dir)
    if provider_parallelism is not None:
        settings = settings.model_copy(update={"terraform": settings.terraform.model_copy(
            update={"provider_engine_parallelism": provider_parallelism})})
    return settings


def plan_and_apply(engine: TerraformEngine, stacks: Sequence[StackName]) -> dict[str, Any]:
    """Plan `stacks`, apply what changes; seconds of each, and what failed."""
    start = time.perf_counter()
    planned = engine.plan_many(stacks)
    plan_s = time.perf_counter() - start
    failed = {str(s): o.message for s, o in planned.items() if isinstance(o, Failure)}
    start = time.perf_counter()
    results = engine.apply_many([p for p in planned.values() if isinstance(p, Plan) and not p.is_empty])
    apply_s = time.perf_counter() - start
    failed.update({str(r.stack): r.failure or "" for r in results if not r.ok})
    return {"stacks": len(stacks), "plan_s": round(plan_s, 2), "apply_s": round(apply_s, 2),
            "failed": dict(list(failed.items())[:5]), "failed_count": len(failed), "plans": planned}


def one_stack_mr_plan(root: Path, state: Path, repeat: int) -> dict[str, Any]:
    """(a): the real command after one budget change, per engine, refreshed and not, best of `repeat`."""
    changed = change_one_budget(root / "config")
    walls: dict[str, list[float]] = {}
    for engine in ("terraform", "provider"):
        env = command_env(state_dir=state, extra={"HYPERGOV_ENGINE": engine})
        if engine == "terraform":
            run_command(root, env, how=HYPERGOV, command=MR_COMMAND)  # terraform init of the stack's directory
        for label, command in ((engine, MR_COMMAND), (f"{engine}_no_refresh", [*MR_COMMAND, "--no-refresh"])):
            walls[label] = [round(run_command(root, env, how=HYPERGOV, command=command)[0], 2) for _ in range(repeat)]
    git.Repo(root).git.checkout("--", ".")
    best = {label: min(w) for label, w in walls.items()}
    return {"changed": changed, "walls_s": walls, **{f"{label}_s": s for label, s in best.items()},
            "ratio": round(best["terraform"] / best["provider"], 1),
            "ratio_no_refresh": round(best["terraform_no_refresh"] / best["provider_no_refresh"], 1)}


def update_only(plans: dict[StackName, Any]) -> dict[str, Any]:
    """Every project stack plans updates of its persona's role policies and nothing else."""
    wrong: dict[str, object] = {}
    for stack, plan in plans.items():
        if not isinstance(plan, Plan):
            wrong[str(stack)] = f"failed: {plan.message}"
            continue
        actions = {c.action for c in plan.actionable if c.executor == "terraform"}
        if actions != {Action.UPDATE}:
            wrong[str(stack)] = sorted(f"{c.address} {c.action}" for c in plan.actionable)[:6]
    return {"stacks": len(plans), "wrong_count": len(wrong), "wrong": dict(list(wrong.items())[:5]), "ok": not wrong}


def org_wide_plan(provider: TerraformEngine, no_refresh: TerraformEngine, stacks: Sequence[StackName], *,
                  endpoint_pid: int | None) -> tuple[dict[str, Any], dict[StackName, Any]]:
    """(b): every stack's graph captured anew (the change reaches every project's view), then
    planned with --no-refresh (the graphs then cached), then refreshed: the plans (c) applies,
    saved last. The CPU seconds each process spent on each plan: hypergov's, the AWS provider's
    processes', the embedded endpoint's (all on this machine's cores)."""
    start = time.perf_counter()
    provider.graphs(stacks)
    capture_s = time.perf_counter() - start
    before, start = _cpu_now([no_refresh, provider], endpoint_pid), time.perf_counter()
    unrefreshed_plans = no_refresh.plan_many(stacks)
    no_refresh_s, no_refresh_cpu = time.perf_counter() - start, _cpu_since(before, [no_refresh, provider], endpoint_pid)
    before, start = _cpu_now([no_refresh, provider], endpoint_pid), time.perf_counter()
    planned = provider.plan_many(stacks)
    plan_s, cpu = time.perf_counter() - start, _cpu_since(before, [no_refresh, provider], endpoint_pid)
    return {"provider_s": round(capture_s + plan_s, 2), "graph_capture_s": round(capture_s, 2),
            "plan_s": round(plan_s, 2), "check": update_only(planned), "cpu_s": cpu, "cores": os.cpu_count(),
            "no_refresh": {"provider_s": round(capture_s + no_refresh_s, 2), "plan_s": round(no_refresh_s, 2),
                           "check": update_only(unrefreshed_plans), "cpu_s": no_refresh_cpu}}, planned


def _cpu_now(engines: Sequence[TerraformEngine], endpoint_pid: int | None) -> dict[str, float]:
    """CPU seconds so far of this process, of the engines' provider processes and of the endpoint."""
    return {"hypergov": _own_cpu_s(),
            "provider": sum(cpu_seconds_of(pid) for engine in engines for pid in _pool_of(engine).pids()),
            "endpoint": cpu_seconds_of(endpoint_pid) if endpoint_pid else 0.0}


def _cpu_since(before: dict[str, float], engines: Sequence[TerraformEngine],
               endpoint_pid: int | None) -> dict[str, float]:
    now = _cpu_now(engines, endpoint_pid)
    return {k: round(now[k] - before[k], 1) for k in now}


def unrefreshed(settings: Settings, tree: GovernanceTree) -> TerraformEngine:
    """The provider engine planning as `hypergov plan --no-refresh` does (`cli.plan`)."""
    return provider_engine(settings.model_copy(update={"terraform": settings.terraform.model_copy(
        update={"refresh_while_planning": False})}), tree)


def _own_cpu_s() -> float:
    times = os.times()
    return times.user + times.system


def _pool_of(engine: TerraformEngine) -> ProviderPool:
    runner = engine.runner
    assert isinstance(runner, ProviderRunner)
    return runner.pool


def scaled(seconds: float, stacks: int, parallelism: int, *, to: int) -> float:
    """`seconds` for `stacks` stacks run `parallelism` at a time, as seconds for `to` stacks."""
    return round(seconds * math.ceil(to / parallelism) / math.ceil(stacks / parallelism), 1)


def run(*, projects: int, clusters: int, seed: int, sample: int, repeat: int) -> dict[str, Any]:
    os.environ.update(CREDENTIALS)
    with tempfile.TemporaryDirectory(prefix="bench-provider-engine-") as tmp:
        root, state = Path(tmp) / "repo", Path(tmp) / "state"
        base = commit_org(root, projects, clusters, seed)
        stacks = [spec.name for spec in plan_stacks(base)]
        projects_of = [s for s in stacks if s.startswith("project-")]
        result: dict[str, Any] = {"projects": projects, "clusters": clusters, "stacks": len(stacks),
                                  "provider_parallelism": PROVIDER_PARALLELISM}
        with EmbeddedAwsProcess(seed_config=root / "config") as endpoint:
            write_settings(root, endpoint_url=endpoint.endpoint_url, state_dir=state)
            (root / ".gitignore").write_text("hypergov.yaml\nmr.md\n")
            fast = engine_settings(endpoint.endpoint_url, state, provider_parallelism=PROVIDER_PARALLELISM)
            slow = engine_settings(endpoint.endpoint_url, state)
            first = plan_and_apply(provider_engine(fast, base), stacks)
            result["first_apply"] = {k: v for k, v in first.items() if k != "plans"}
            if first["failed_count"]:
                return result
            result["one_stack_plan"] = one_stack_mr_plan(root, state, repeat)

            head = add_persona_permission(root)
            provider = provider_engine(fast, head)
            result["org_wide_plan"], planned = org_wide_plan(provider, unrefreshed(fast, head), projects_of,
                                                             endpoint_pid=endpoint.pid)

            chosen = [StackName(s) for s in sampled_projects(projects_of, sample)]
            reference = plan_and_apply(terraform_engine(slow, head), chosen)
            tf_parallelism = slow.terraform.parallelism
            result["org_wide_plan"]["terraform"] = {
                "sample": [str(s) for s in chosen], "parallelism": tf_parallelism, "plan_s": reference["plan_s"],
                "extrapolated_s": scaled(reference["plan_s"], len(chosen), tf_parallelism, to=len(projects_of)),
                "check": update_only(reference["plans"]), "failed": reference["failed"]}

            rest = [p for s, p in planned.items() if s not in chosen and isinstance(p, Plan)]
            start = time.perf_counter()
            applied = provider.apply_many(rest)
            apply_s = round(time.perf_counter() - start, 2)
            provider_failed = {str(r.stack): r.failure or "" for r in applied if not r.ok}
            after = terraform_engine(slow, head).plan_many([rest[0].stack]) if rest else {}
            left = [c.address for p in after.values() if isinstance(p, Plan) for c in p.actionable
                    if c.executor == "terraform"]
            provider_1000 = scaled(apply_s, len(rest), PROVIDER_PARALLELISM, to=SCALE_TO)
            terraform_1000 = scaled(reference["apply_s"], len(chosen), tf_parallelism, to=SCALE_TO)
            result["org_wide_apply"] = {
                "provider": {"stacks": len(rest), "apply_s": apply_s, "failed_count": len(provider_failed),
                             "failed": dict(list(provider_failed.items())[:5]),
                             "extrapolated_1000_s": provider_1000},
                "terraform": {"stacks": len(chosen), "apply_s": reference["apply_s"],
                              "extrapolated_1000_s": terraform_1000},
                "speedup": round(terraform_1000 / provider_1000, 1) if provider_1000 and not provider_failed else None,
                "terraform_plans_after_provider_apply": left}
    return result


def report(r: dict[str, Any]) -> None:
    first = r["first_apply"]
    print_table(f"provider engine vs terraform engine: {r['projects']} projects, {r['clusters']} clusters, "
                f"{r['stacks']} stacks; first apply by the provider engine {first['plan_s']} s plan + "
                f"{first['apply_s']} s apply ({first['failed_count']} failed)",
                ["measure", "provider", "terraform", "ratio", "goal"], rows(r))
    if "org_wide_plan" in r:
        print(f"\norg-wide plan check: provider {r['org_wide_plan']['check']}, --no-refresh "
              f"{r['org_wide_plan']['no_refresh']['check']}, terraform {r['org_wide_plan']['terraform']['check']}")
        print(f"terraform plans after the provider engine's apply: "
              f"{r['org_wide_apply']['terraform_plans_after_provider_apply'] or 'nothing'}")


def rows(r: dict[str, Any]) -> list[list[object]]:
    out: list[list[object]] = []
    if "one_stack_plan" in r:
        a = r["one_stack_plan"]
        out.append(["(a) one-stack MR plan --no-refresh, s (best)", a["provider_no_refresh_s"],
                    a["terraform_no_refresh_s"], a["ratio_no_refresh"], f"< {GOALS['one_stack_plan_s']} s"])
        out.append(["(a) one-stack MR plan refreshed, s (best)", a["provider_s"], a["terraform_s"], a["ratio"],
                    "(5 s budget read)"])
    if "org_wide_plan" in r:
        b = r["org_wide_plan"]
        out.append([f"(b) org-wide plan of {b['check']['stacks']} project stacks, s", b["provider_s"],
                    f"{b['terraform']['extrapolated_s']} (extrapolated)",
                    round(b["terraform"]["extrapolated_s"] / b["provider_s"], 1), f"< {GOALS['org_wide_plan_s']} s"])
        out.append(["(b) of which graph capture / plan, s", f"{b['graph_capture_s']} / {b['plan_s']}", "", "", ""])
        out.append(["(b) same, --no-refresh (graphs captured above), s", b["no_refresh"]["provider_s"], "", "", ""])
        for label, cpu in (("refreshed", b["cpu_s"]), ("--no-refresh", b["no_refresh"]["cpu_s"])):
            out.append([f"(b) CPU s of the {label} plan on {b['cores']} cores: hypergov / provider / endpoint",
                        f"{cpu['hypergov']} / {cpu['provider']} / {cpu['endpoint']}", "", "", ""])
        c = r["org_wide_apply"]
        out.append([f"(c) org-wide apply, s ({c['provider']['stacks']} / {c['terraform']['stacks']} stacks)",
                    c["provider"]["apply_s"], c["terraform"]["apply_s"], "", ""])
        out.append([f"(c) extrapolated to {SCALE_TO} projects, s", c["provider"]["extrapolated_1000_s"],
                    c["terraform"]["extrapolated_1000_s"], c["speedup"], f">= {GOALS['apply_speedup']}x"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    org_size_arguments(parser, sample_help="project stacks the terraform engine plans and applies (extrapolated)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of the one-stack plan per engine (best kept; "
                        "this machine's speed varies by ~30%% over minutes)")
    args = quick_sizes(parser.parse_args())
    result = run(projects=args.projects, clusters=args.clusters, seed=args.seed, sample=args.sample,
                 repeat=args.repeat)
    report(result)
    write_results("provider_engine", result)
    if "org_wide_apply" not in result:
        raise SystemExit(f"the provider engine's first apply failed: {result['first_apply']['failed']}")
    applied = result["org_wide_apply"]
    if applied["provider"]["failed_count"] or applied["terraform_plans_after_provider_apply"]:
        raise SystemExit(f"the provider engine's org-wide apply failed or left changes: "
                         f"{applied['provider']['failed']}, terraform plans "
                         f"{applied['terraform_plans_after_provider_apply']}")


if __name__ == "__main__":
    main()
