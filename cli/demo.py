"""`make demo`: the main job end to end on the embedded default.

A local Git repository holds the example governance tree; the embedded AWS endpoint (a child
process) is seeded with its organization and clusters; the tree is validated, every stack is
planned with the engine the settings select (terraform here: no Pulumi CLI) and the real
`terraform` (the merge-request plan), applied by a reconciler pass (the merge) with an audit
commit, and planned again (which must be empty). Then drift is made by hand (out of band, with
boto3), found by the live scan (`hypergov drift`) and repaired by it (`--remediate
--prune-unmanaged`, audited); last, a merged change is applied by the reconciler to exactly the
stack it affects. Everything lives under
`.cli/demo/` and the endpoint is stopped at the end, whatever happens.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import git

from embedded_aws import EmbeddedAwsProcess
from engines.factory import build_engine
from engines.outcomes import Failure
from engines.plan import ApplyResult, Plan, StackName, failure_lines, split_outcomes
from engines.protocol import Engine
from engines.settings import Settings, load_settings
from hypergov.gitsource import read_tree_at
from hypergov.model.tree import GovernanceTree
from hypergov.validate import validate_files
from reconciler.audit import AuditLog
from reconciler.reconcile import PassResult, reconcile_once
from reconciler.render import apply_line, render_markdown, render_text, summary_line
from stacks.spec import plan_stacks

ROOT = Path(__file__).resolve().parent.parent
DEMO_DIR = ROOT / ".hypergov" / "demo"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-west-2"}
PROD = "111122223333"


class DemoError(Exception):
    pass


def commit_summary(commit: git.Commit) -> str:
    summary = commit.summary
    return summary.decode() if isinstance(summary, bytes) else summary


@contextmanager
def step(number: int, total: int, title: str) -> Iterator[None]:
    click.secho(f"\n[{number}/{total}] {title}", bold=True)
    start = time.perf_counter()
    yield
    click.secho(f"      done in {time.perf_counter() - start:.1f} s", dim=True)


def _governance_repo(target: Path) -> git.Repo:
    shutil.copytree(ROOT / "config", target / "config")
    repo = git.Repo.init(target, initial_branch="main")
    repo.index.add([str(p.relative_to(target)) for p in (target / "config").rglob("*") if p.is_file()])
    actor = git.Actor("platform-admin", "platform-admin@example.com")
    repo.index.commit("Governance tree of the acme organization", author=actor, committer=actor)
    return repo


def _plan_all(engine: Engine, stacks: list[StackName], *, quiet: bool = False) -> list[Plan]:
    def progress(stack: StackName, outcome: Plan | Failure) -> None:
        if not quiet:
            click.echo(f"      planned {summary_line(outcome) if isinstance(outcome, Plan) else f'{stack}: {outcome}'}")

    plans, failures = split_outcomes(engine.plan_many(stacks, progress=progress))
    if failures:
        raise DemoError("; ".join(failure_lines(failures)))
    return plans


def _reconcile(repo: git.Repo, settings: Settings) -> PassResult:
    def applied(result: ApplyResult) -> None:
        click.echo(f"      {apply_line(result)}")

    def engine_for(tree: GovernanceTree, head: str) -> Engine:
        return build_engine(settings, tree, source_commit=head, environ={**os.environ, **CREDENTIALS})

    trail = AuditLog.from_settings(settings, Path(repo.working_dir))
    outcome = reconcile_once(Path(repo.working_dir), "main", "config", Path(settings.state_dir), engine_for,
                             audit=trail, on_apply=applied)
    planned = ", ".join(p.stack for p in outcome.plans) or "none"
    click.echo(f"      main@{outcome.head[:12]}: {outcome.status}; stacks planned: {planned}")
    if outcome.audit_commit:
        audit = repo.commit(outcome.audit_commit)
        click.echo(f"      audit commit {audit.hexsha[:12]}: {commit_summary(audit)}")
    if not outcome.ok:
        raise DemoError(f"the reconciler pass failed: {outcome.status}: {'; '.join(outcome.errors)}")
    return outcome


def run_demo() -> None:
    total = 9
    if DEMO_DIR.exists():
        shutil.rmtree(DEMO_DIR)
    DEMO_DIR.mkdir(parents=True)
    os.environ.update(CREDENTIALS)
    with step(1, total, "a local Git repository holds the governance tree"):
        repo = _governance_repo(DEMO_DIR / "governance")
        head = repo.head.commit.hexsha
        click.echo(f"      {repo.working_dir} @ {head[:12]}")
    with step(2, total, "start the embedded AWS endpoint, seeded with the tree's organization and clusters"):
        endpoint = EmbeddedAwsProcess(seed_config=Path(repo.working_dir) / "config").start()
        click.echo(f"      {endpoint.endpoint_url} (pid {endpoint.pid})")
    try:
        _main_job(repo, head, endpoint, total)
    finally:
        code = endpoint.stop()
        click.echo(f"\nembedded AWS endpoint stopped (exit {code})")


def _main_job(repo: git.Repo, head: str, endpoint: EmbeddedAwsProcess, total: int) -> None:
    with step(3, total, f"validate the tree at {head[:12]}"):
        report = validate_files(read_tree_at(repo.working_dir, head, "config"))
        if not report.ok:
            raise DemoError(f"the example tree is invalid: {report.problems[:3]}")
        tree = report.tree
        click.echo(f"      valid: {len(tree.projects)} projects, {len(tree.clusters)} clusters, "
                   f"{len(tree.workloads)} workload classes")
    settings = load_settings(environ={"HYPERGOV_SETTINGS": str(DEMO_DIR / "absent.yaml")}, overrides={
        "aws.endpoint_url": endpoint.endpoint_url, "aws.max_retries": 3, "state_dir": str(DEMO_DIR / "state")})
    engine = build_engine(settings, tree, source_commit=head, environ={**os.environ, **CREDENTIALS})
    stacks = [StackName(s.name) for s in plan_stacks(tree)]
    with step(4, total, f"plan {len(stacks)} stacks with the real terraform "
                        f"({settings.terraform.parallelism} at a time)"):
        plans = _plan_all(engine, stacks)
        click.echo(render_text(plans))
        markdown = DEMO_DIR / "plan.md"
        markdown.write_text(render_markdown(plans, title=f"hypergov plan for {head[:12]}"))
        click.echo(f"      merge-request plan (Markdown): {markdown}")
    with step(5, total, "merge: the reconciler applies the branch head in dependency order, audited on hypergov/audit"):
        _reconcile(repo, settings)
    with step(6, total, "plan again: must be empty"):
        again = _plan_all(engine, stacks)
        if not all(p.is_empty for p in again):
            raise DemoError("the second plan is not empty: " + render_text([p for p in again if not p.is_empty]))
    with step(7, total, "drift by hand (boto3, out of band); the live scan finds it: hypergov drift"):
        _inject_drift(endpoint)
        found = _hypergov(settings, repo, "drift")
        if found.returncode != 2:
            raise DemoError(f"hypergov drift exited {found.returncode}, not 2 (drift found)")
    with step(8, total, "repair: hypergov drift --remediate --prune-unmanaged --yes, then scan again"):
        repaired = _hypergov(settings, repo, "drift", "--remediate", "--prune-unmanaged", "--yes")
        clean = _hypergov(settings, repo, "drift")
        if repaired.returncode != 0 or clean.returncode != 0:
            raise DemoError(f"the drift was not repaired (exit {repaired.returncode}, then {clean.returncode})")
        audit = repo.commit(settings.audit_branch)
        click.echo(f"      audit commit {audit.hexsha[:12]} on {settings.audit_branch}: {commit_summary(audit)}")
    with step(9, total, "merge a change (speech's budget 120000 -> 90000): only the stack it affects is applied"):
        target = Path(repo.working_dir) / "config" / "projects" / "speech.yaml"
        target.write_text(target.read_text().replace("monthly_usd: 120000", "monthly_usd: 90000"))
        repo.index.add(["config/projects/speech.yaml"])
        actor = git.Actor("platform-admin", "platform-admin@example.com")
        repo.index.commit("speech: lower the monthly budget", author=actor, committer=actor)
        outcome = _reconcile(repo, settings)
        budget = endpoint.client("budgets", account=PROD, region="us-east-1").describe_budget(
            AccountId=PROD, BudgetName="acme-speech-monthly")["Budget"]["BudgetLimit"]["Amount"]
        click.echo(f"      live budget acme-speech-monthly: {float(budget):.0f} USD")
        if [p.stack for p in outcome.plans] != ["project-speech"] or float(budget) != 90000:
            raise DemoError("the merged change was not applied as planned")
    click.secho("\ndemo complete: validated, planned, applied on merge, audited, re-planned empty, drift found by "
                "the live scan and repaired, a merged change applied to exactly its stack", fg="green", bold=True)
    click.echo(f"git log of the governance repository ({repo.working_dir}):")
    for commit in repo.iter_commits("main", max_count=6):
        click.echo(f"  {commit.hexsha[:12]} {commit_summary(commit)}")


def _inject_drift(endpoint: EmbeddedAwsProcess) -> None:
    """What a person with console access does: raise their own team's quota, make a quota for a
    team the tree does not know, and stretch a role's session."""
    sagemaker = endpoint.client("sagemaker", account=PROD, region="us-west-2")
    (cluster,) = sagemaker.list_clusters()["ClusterSummaries"]
    quotas = {q["Name"]: q for q in sagemaker.list_compute_quotas(ClusterArn=cluster["ClusterArn"])[
        "ComputeQuotaSummaries"]}
    vision = quotas["vision-on-gpu-west"]
    config = vision["ComputeQuotaConfig"]
    raised = [{**r, "Count": r["Count"] + 4} for r in config["ComputeQuotaResources"]]
    sagemaker.update_compute_quota(ComputeQuotaId=vision["ComputeQuotaId"], TargetVersion=vision["ComputeQuotaVersion"],
                                   ComputeQuotaConfig={**config, "ComputeQuotaResources": raised},
                                   ComputeQuotaTarget=vision["ComputeQuotaTarget"])
    click.echo(f"      raised vision's quota on gpu-west: {config['ComputeQuotaResources'][0]['Count']} -> "
               f"{raised[0]['Count']} {raised[0]['InstanceType']}")
    sagemaker.create_compute_quota(
        Name="interns-by-hand", ClusterArn=cluster["ClusterArn"],
        ComputeQuotaTarget={"TeamName": "interns", "FairShareWeight": 5},
        ComputeQuotaConfig={"ComputeQuotaResources": [{"InstanceType": "ml.g5.12xlarge", "Count": 2}],
                            "ResourceSharingConfig": {"Strategy": "DontLend"}})
    click.echo("      created compute quota interns-by-hand for a team the tree does not know")


def _hypergov(settings: Settings, repo: git.Repo, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the hypergov command as a user would, its output shown indented."""
    environ = {**os.environ, **CREDENTIALS, "HYPERGOV_AWS_ENDPOINT_URL": str(settings.aws.endpoint_url),
               "HYPERGOV_STATE_DIR": str(settings.state_dir), "HYPERGOV_SETTINGS": str(DEMO_DIR / "absent.yaml"),
               "HYPERGOV_CONFIG_DIR": str(Path(repo.working_dir) / "config")}
    click.echo(f"      $ hypergov {' '.join(args)}")
    done = subprocess.run([str(Path(sys.executable).parent / "hypergov"), *args], env=environ, text=True,
                          capture_output=True, check=False)
    for line in (done.stderr + done.stdout).splitlines():
        click.echo(f"        {line}")
    click.echo(f"      (exit {done.returncode})")
    return done


def main() -> None:
    try:
        run_demo()
    except DemoError as exc:
        click.secho(f"\ndemo failed: {exc}", fg="red", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
