"""`make demo`: the whole story of a governed HyperPod organization, end to end on the embedded
default.

A bare Git repository is the governance remote; a platform admin's clone pushes the example tree
to it. The embedded AWS endpoint (a child process) is seeded with the tree's organization and
clusters. The reconciler runs as a daemon in the background (`hypergov reconcile --repo URL
--watch`, JSON logs, Prometheus metrics, a drift scan on a schedule that repairs what it finds):
its first pass applies every stack with the real `terraform` and pushes its audit records to the
remote's audit branch. A merge request that raises one team's compute quota is planned (the
Markdown comment, with the governance summary and the capacity impact), merged and pushed; the
daemon applies exactly the stack it affects and pushes the records. Before that, the permission
sets the first pass made for the personas whose members arrive through IAM Identity Center are
listed with their assignments and provisioned roles, and `hypergov access` reports who holds what.
trn-east is declared in the tree (its instance groups, adopted by the first pass); a second merge
request scales its p4d group 8 -> 12, its plan shows the GPUs gained, and the daemon applies it
(DescribeCluster checks it).
Then a quota is changed by hand with boto3 and one is made for a team the tree does not know:
the scheduled scan finds both and repairs the change, `hypergov drift --prune-unmanaged` removes
the other. `hypergov audit verify` passes on the remote and fails on a copy with one record
edited by hand; the daemon's metrics are scraped. Last, a HyperPod cluster set up by hand with
boto3 is imported as a tree by `hypergov import` (`cli.demo_import`), its report shown.
Everything lives under `.hypergov/demo/`; the
daemon and the endpoint are stopped at the end, whatever happens.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import click
import git
import yaml

from cli.demo_daemon import Daemon, Event, http_status, scrape
from cli.demo_usage import last_month, seed_last_month
from embedded_aws import EmbeddedAwsProcess
from hypergov import naming
from hypergov.gitsource import read_tree_at
from hypergov.model.tree import GovernanceTree
from hypergov.validate import validate_files

ROOT = Path(__file__).resolve().parent.parent
DEMO_DIR = ROOT / ".hypergov" / "demo"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-west-2"}
PROD = "111122223333"
TRN_EAST_ACCOUNT = "444455556666"  # ml-research (config/org.yaml), where trn-east runs
GPU_WEST = "arn:aws:sagemaker:us-west-2:111122223333:cluster/t7k2m9x4q1wz"  # config/clusters/gpu-west.yaml
ADMIN = git.Actor("platform-admin", "platform-admin@example.com")
AUDIT_BRANCH = "hypergov/audit"  # the settings' default (engines/settings.py)
DRIFT_EVERY = "10s"
PASS_TIMEOUT_S = 900.0  # a first pass applies every stack with terraform: minutes on a loaded 2-core machine
TOTAL = 14


class DemoError(Exception):
    pass


@contextmanager
def step(number: int, title: str) -> Iterator[None]:
    click.secho(f"\n[{number}/{TOTAL}] {title}", bold=True)
    start = time.perf_counter()
    yield
    click.secho(f"      done in {time.perf_counter() - start:.1f} s", dim=True)


def _say(event: Event) -> None:
    click.echo(f"      daemon: {str(event['message']).strip()}")


def _admin_clone(remote: Path, target: Path) -> git.Repo:
    """The platform admin's clone: the example tree committed and pushed to the bare remote, with
    trn-east declared (its instance groups, adopted) so that hypergov governs the cluster itself."""
    git.Repo.init(remote, bare=True, initial_branch="main")
    shutil.copytree(ROOT / "config", target / "config")
    _declare_trn_east(target / "config" / "clusters" / "trn-east.yaml")
    repo = git.Repo.init(target, initial_branch="main")
    repo.index.add([str(p.relative_to(target)) for p in (target / "config").rglob("*") if p.is_file()])
    repo.index.commit("Governance tree of the acme organization", author=ADMIN, committer=ADMIN)
    repo.create_remote("origin", remote.as_uri()).push("main:main").raise_if_error()
    return repo


def _declare_trn_east(path: Path) -> None:
    """trn-east's `capacity` (16 trn1, 8 p4d) as the instance groups it runs (the embedded
    endpoint seeds them so), `managed` and `adopt`: the first pass takes the cluster over."""
    doc = yaml.safe_load(path.read_text())
    account = TRN_EAST_ACCOUNT

    def group(instance_type: str) -> dict[str, object]:
        return {"name": instance_type.removeprefix("ml.").replace(".", "-"), "instance_type": instance_type,
                "instance_count": doc["capacity"][instance_type]["instances"],
                "lifecycle_config": {"source_s3_uri": "s3://trn-east-lifecycle/scripts/", "on_create": "on_create.sh"},
                "execution_role": f"arn:aws:iam::{account}:role/trn-east-hyperpod-execution"}

    groups = [group(t) for t in sorted(doc["capacity"])]
    del doc["capacity"]
    doc["hyperpod"] = {**doc["hyperpod"], "managed": True, "adopt": True, "instance_groups": groups}
    path.write_text("# Cluster layer: Trainium research cluster, declared: hypergov creates and scales its groups.\n"
                    + yaml.safe_dump(doc, sort_keys=False))


class Story:
    """What the demo drives: the admin's clone, the remote, the endpoint and the daemon."""

    def __init__(self, admin: git.Repo, remote: Path, endpoint: EmbeddedAwsProcess) -> None:
        self.admin, self.remote, self.endpoint = admin, remote, endpoint
        self.state = DEMO_DIR / "state"
        self.env = {**os.environ, **CREDENTIALS, "HYPERGOV_AWS_ENDPOINT_URL": endpoint.endpoint_url,
                    "HYPERGOV_STATE_DIR": str(self.state), "HYPERGOV_SETTINGS": str(DEMO_DIR / "absent.yaml"),
                    "HYPERGOV_AWS_MAX_RETRIES": "3"}
        self.daemon: Daemon | None = None

    def start_daemon(self) -> Daemon:
        command = [_hypergov_bin(), "reconcile", "--repo", self.remote.as_uri(), "--branch", "main", "--watch", "2",
                   "--metrics-port", "0", "--log-format", "json", "--drift-every", DRIFT_EVERY, "--remediate-drift",
                   "--drift-report", str(DEMO_DIR / "drift.md")]
        click.echo(f"      $ {' '.join(['hypergov', *command[1:]])} &")
        self.daemon = Daemon.start(command, env={**self.env, "HYPERGOV_CONFIG_DIR": "config"}, cwd=DEMO_DIR,
                                   log_dir=DEMO_DIR)
        return self.daemon

    def hypergov(self, *args: str, show: int | None = None) -> subprocess.CompletedProcess[str]:
        """Run the hypergov command as a user would (on the admin's clone), its output indented
        (the last `show` lines only, when given)."""
        click.echo(f"      $ hypergov {' '.join(args)}")
        done = subprocess.run([_hypergov_bin(), *args], env={
            **self.env, "HYPERGOV_CONFIG_DIR": str(Path(self.admin.working_dir) / "config")},
            cwd=self.admin.working_dir, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
        lines = done.stdout.splitlines()  # both streams, in the order the command wrote them
        if show is not None and len(lines) > show:
            click.echo(f"        ... ({len(lines) - show} line(s)" + (" before)" if show else ")"))
            lines = lines[-show:] if show else []
        for line in lines:
            click.echo(f"        {line}")
        click.echo(f"      (exit {done.returncode})")
        return done

    def hypergov_when_free(self, *args: str) -> subprocess.CompletedProcess[str]:
        """As `hypergov`, retried while the daemon's pass holds the state directory (exit 75)."""
        for _ in range(30):
            done = self.hypergov(*args)
            if done.returncode != 75:
                return done
            time.sleep(2)
        raise DemoError(f"hypergov {' '.join(args)} found the state directory busy for a minute")

    def wait_pass(self, commit: str, *, after: int) -> tuple[int, Event]:
        """The daemon's pass that ends at `commit`, its stacks and records shown as it goes."""
        assert self.daemon is not None
        at, end = self.daemon.log.wait_for(lambda e: e["event"] == "pass.end" and e["commit"] == commit
                                           and e["status"] != "up to date", after=after, timeout_s=PASS_TIMEOUT_S)
        for event in self.daemon.log.events()[after:at + 1]:
            if event["event"] in ("stack.applied", "audit.records", "pass.error", "pass.failed") or event is end:
                _say(event)
        if end["status"] != "applied":
            raise DemoError(f"the daemon's pass ended {end['status']}: {end['message']}")
        _, pushed = self.daemon.log.wait_for(lambda e: e["event"] in ("audit.pushed", "audit.push_failed")
                                             and e["commit"] == commit, after=after, timeout_s=60)
        _say(pushed)
        return at, end

    def quota(self, name: str) -> dict[str, object]:
        client = self.endpoint.client("sagemaker", account=PROD, region="us-west-2")
        (summary,) = [q for q in client.list_compute_quotas(ClusterArn=GPU_WEST)["ComputeQuotaSummaries"]
                      if q["Name"] == name]
        return dict(summary)


def _hypergov_bin() -> str:
    return str(Path(sys.executable).parent / "hypergov")


def run_demo() -> None:
    if DEMO_DIR.exists():
        shutil.rmtree(DEMO_DIR)
    DEMO_DIR.mkdir(parents=True)
    os.environ.update(CREDENTIALS)
    remote = DEMO_DIR / "governance.git"
    with step(1, "a bare Git remote holds the governance tree, pushed from the platform admin's clone"):
        admin = _admin_clone(remote, DEMO_DIR / "admin")
        click.echo(f"      {remote} main @ {admin.head.commit.hexsha[:12]}")
    with step(2, "start the embedded AWS endpoint, seeded with the tree's organization and clusters"):
        endpoint = EmbeddedAwsProcess(seed_config=Path(admin.working_dir) / "config").start()
        click.echo(f"      {endpoint.endpoint_url} (pid {endpoint.pid})")
    story = Story(admin, remote, endpoint)
    try:
        _story(story)
    finally:
        if story.daemon is not None:
            click.echo(f"\nreconciler daemon stopped by SIGTERM (exit {story.daemon.stop()})")
        click.echo(f"embedded AWS endpoint stopped (exit {endpoint.stop()})")


def _story(story: Story) -> None:
    admin = story.admin
    head = admin.head.commit.hexsha
    with step(3, f"validate the tree at {head[:12]}"):
        report = validate_files(read_tree_at(admin.working_dir, head, "config"))
        if not report.ok:
            raise DemoError(f"the example tree is invalid: {report.problems[:3]}")
        tree = report.tree
        click.echo(f"      valid: {len(tree.projects)} projects, {len(tree.clusters)} clusters, "
                   f"{len(tree.workloads)} workload classes")
    with step(4, "the reconciler daemon follows the remote: its first pass applies every stack with the real "
                 f"terraform and pushes the audit records to {AUDIT_BRANCH}"):
        daemon = story.start_daemon()
        port = daemon.metrics_port()
        click.echo(f"      metrics on http://127.0.0.1:{port}/metrics; JSON logs in {daemon.log.path}")
        at, _ = story.wait_pass(head, after=0)
        at, steady = daemon.log.wait_for(lambda e: e["event"] == "pass.end" and e["status"] == "up to date",
                                         after=at + 1, timeout_s=120)
        _say(steady)
    _identity_center(story, tree)
    merged = _merge_request(story)
    with step(7, "merged and pushed: the daemon plans the stacks the merge affects, applies the one that "
                 "changes and pushes its records"):
        at, end = story.wait_pass(merged, after=at)
        quota = story.quota("vision-on-gpu-west")["ComputeQuotaConfig"]["ComputeQuotaResources"]  # type: ignore[index]
        click.echo(f"      live quota vision-on-gpu-west: {quota}")
        if end["changed"] != 1 or quota != [{"InstanceType": "ml.p5.48xlarge", "Count": 16}]:
            raise DemoError("the merged change was not applied as planned")
        story.hypergov("audit", "log", "--repo", story.remote.as_uri(), "--cluster", "gpu-west", show=4)
    at = _scale_merge_request(story, after=at)
    at = _drift_by_hand(story, after=at)
    with step(11, "hypergov audit verify: the remote's trail is intact; a copy with one record edited is not"):
        intact = story.hypergov("audit", "verify", "--repo", story.remote.as_uri())
        tampered = story.hypergov("audit", "verify", "--repo", str(_tampered_copy(story.remote)))
        if intact.returncode != 0 or tampered.returncode != 1:
            raise DemoError(f"audit verify exited {intact.returncode} and {tampered.returncode}, not 0 and 1")
    with step(12, "the daemon's metrics, scraped (Prometheus text format), and hypergov status"):
        _show_metrics(port)
        story.hypergov("status", "--repo", str(story.state / "repo"))
    _usage(story)
    with step(14, "start from what runs: a HyperPod cluster set up by hand (boto3, as a console user would), "
                  "imported as a tree by hypergov import, with the report of what the tree cannot say"):
        from cli.demo_import import show_import

        imported = DEMO_DIR / "imported"
        if show_import(story.endpoint, story.hypergov, org="config/org.yaml", out=str(imported)) != 2:
            raise DemoError("hypergov import did not report the hand-made quota name and Edit association")
        click.echo(f"      the imported tree: {imported}")
    click.secho("\ndemo complete: followed a remote, applied every stack, planned and applied a merge request, "
                "scaled a declared cluster through another, found and repaired drift on a schedule, kept an audit "
                "trail that verifies and catches an edit, traced last month's GPU-hours and their cost to the "
                "teams and proposed guarantees from them, imported a hand-made cluster as a tree",
                fg="green", bold=True)


def _usage(story: Story) -> None:
    """Step 13: last month's Workloads (simulated: no cluster runs here, `cli.demo_usage`), accounted
    and reported per team with the chargeback at the example's prices."""
    with step(13, "last month's GPU-hours traced to their teams: the org's jobs as Kueue Workloads in the "
                  "collector's store; hypergov usage report with the chargeback and the missing hours; org.yaml's "
                  "prices against the AWS Price List; budget alerts on the chargeback; hypergov capacity suggest"):
        head = story.admin.head.commit.hexsha
        tree = validate_files(read_tree_at(story.admin.working_dir, head, "config")).tree
        month = last_month(datetime.now(UTC))
        written = seed_last_month(tree, story.state, month)
        click.echo(f"      {month}: " + ", ".join(f"{n} workloads on {c}" for c, n in written.items())
                   + " (the capacity simulator's replay of the org's trace under the tree's quotas)")
        charts = DEMO_DIR / "usage-charts"
        done = story.hypergov("usage", "report", "--month", month, "--charts", str(charts), show=34)
        if done.returncode != 0 or "## Chargeback (USD)" not in done.stdout or "## Missing data" not in done.stdout:
            raise DemoError("hypergov usage report did not report the month with its chargeback")
        click.echo(f"      the full report: hypergov usage report --month {month}; charts in {charts}")
        prices = story.hypergov("usage", "prices", "--json", show=0)
        if prices.returncode not in (0, 2):
            raise DemoError("hypergov usage prices did not compare org.yaml with the AWS Price List")
        click.echo("      usage prices: org.yaml against the AWS Price List's HyperPod on-demand prices")
        for row in json.loads(prices.stdout[prices.stdout.index("{"):])["types"]:
            listed = ", ".join(f"{region} {p.get('per_instance_hour', p.get('not_listed'))}"
                               for region, p in row["listed"].items())
            click.echo(f"        {row['instance_type']}: org.yaml {row['current']}, listed {listed}: {row['action']}")
        sent = story.hypergov("usage", "budgets", "--month", month, show=6)
        again = story.hypergov("usage", "budgets", "--month", month, show=2)
        if sent.returncode != 2 or again.returncode != 0:
            raise DemoError(f"usage budgets exited {sent.returncode} then {again.returncode}, not 2 then 0 "
                            "(alerts sent once)")
        suggested = story.hypergov("capacity", "suggest", "--days", "30", "--json", show=0)
        if suggested.returncode not in (0, 2):
            raise DemoError("hypergov capacity suggest failed")
        proposals = json.loads(suggested.stdout[suggested.stdout.index("{"):])["proposals"]
        click.echo(f"      capacity suggest: {len(proposals)} guarantee change(s) from the month's use, e.g.")
        for proposal in proposals[:4]:
            click.echo(f"        {proposal['team']} on {proposal['cluster']} {proposal['instance_type']}: "
                       f"{proposal['current']} -> {proposal['proposed']} {proposal['unit']} ({proposal['reason']})")


def _identity_center(story: Story, tree: GovernanceTree) -> None:
    """Step 5: the first pass made a permission set per persona with Identity Center members,
    assigned them to the tree's groups; Identity Center provisioned the roles; `hypergov access`
    says who holds what, read from the identity store."""
    assert tree.org is not None and tree.org.model.identity_center is not None
    ic = tree.org.model.identity_center
    with step(5, "people arrive through IAM Identity Center: a permission set per persona with Identity Center "
                 "members, assigned to exactly the tree's groups; hypergov access reports who holds what"):
        sso = story.endpoint.client("sso-admin", account=PROD, region=ic.region)
        arns = [a for page in sso.get_paginator("list_permission_sets").paginate(InstanceArn=ic.instance_arn)
                for a in page["PermissionSets"]]
        by_name = {sso.describe_permission_set(InstanceArn=ic.instance_arn, PermissionSetArn=a)
                   ["PermissionSet"]["Name"]: a for a in arns}
        click.echo(f"      {len(by_name)} permission sets: {', '.join(sorted(by_name))}")
        vision = naming.permission_set_name(tree.org.model.name, "vision", "Engineer")
        if vision not in by_name:
            raise DemoError(f"no permission set {vision} for vision's Engineer group")
        assigned = sso.list_account_assignments(InstanceArn=ic.instance_arn, AccountId=PROD,
                                                PermissionSetArn=by_name[vision])["AccountAssignments"]
        click.echo(f"      {vision} is assigned in {PROD} to {len(assigned)} principal(s) "
                   f"({', '.join(sorted(a['PrincipalType'] for a in assigned))})")
        roles = story.endpoint.client("iam", account=PROD, region=ic.region).list_roles(
            PathPrefix=naming.sso_role_path(ic.region))["Roles"]
        click.echo(f"      roles Identity Center provisioned in {PROD}: {len(roles)}, e.g. "
                   f"{next(r['Arn'] for r in roles if vision in r['RoleName'])}")
        # sgarcia is in two groups (embedded_aws/identity_people.yaml); the grants' merge from the
        # remote's audit branch, where the daemon pushed its records
        story.hypergov("access", "--person", "sgarcia", "--audit-repo", story.remote.as_uri())
        if len(assigned) != 1:  # config/projects/vision.yaml: Engineer has one group (and alice, an IAM user)
            raise DemoError(f"{vision} is not assigned to exactly vision's one Engineer group")


def _merge_request(story: Story) -> str:
    """Step 6: a branch raising vision's p5 quota, planned as a merge request's CI would."""
    with step(6, "a merge request raises vision's quota on gpu-west (12 -> 16 ml.p5.48xlarge): hypergov plan "
                 "--base main (Markdown with the governance summary and the capacity impact)"):
        markdown = _propose(story, branch="vision-more-p5", path="config/projects/vision.yaml",
                            edit=lambda text: text.replace("ml.p5.48xlarge: 12", "ml.p5.48xlarge: 16"),
                            message="vision: four more p5 instances on gpu-west", markdown="mr.md", show=6)
        click.echo(f"      merge-request comment ({DEMO_DIR / 'mr.md'}):")
        for line in markdown.splitlines():
            click.echo(f"      | {line}")
        return _merge(story, branch="vision-more-p5", title="four more p5 instances")


def _scale_merge_request(story: Story, *, after: int) -> int:
    """Step 8: a merge request scales trn-east's p4d group 8 -> 12; its plan shows the GPUs gained
    (AWS: 8 A100 per ml.p4d.24xlarge, so +32) and the capacity impact; merged, the daemon sends
    the UpdateCluster and DescribeCluster says 12."""
    with step(8, "a merge request scales trn-east's p4d instance group 8 -> 12: the plan shows the GPU and "
                 "capacity gain; merged, the daemon applies it (checked with DescribeCluster)"):
        markdown = _propose(story, branch="trn-east-more-p4d", path="config/clusters/trn-east.yaml",
                            edit=_scaled_p4d, message="trn-east: four more p4d instances", markdown="mr-scale.md",
                            show=4)
        shown = _section(markdown, "### HyperPod clusters")
        click.echo(f"      merge-request comment ({DEMO_DIR / 'mr-scale.md'}), its HyperPod clusters section:")
        for line in shown:
            click.echo(f"      | {line}")
        if not any("| 8 -> 12 | +32 |" in line for line in shown):
            raise DemoError("the merge-request plan does not show the p4d group's 8 -> 12 (+32 GPUs)")
        merged = _merge(story, branch="trn-east-more-p4d", title="four more p4d instances")
        at, _ = story.wait_pass(merged, after=after)
        live = story.endpoint.client("sagemaker", account=TRN_EAST_ACCOUNT, region="us-east-1").describe_cluster(
            ClusterName="trn-east")
        counts = {g["InstanceGroupName"]: g["TargetCount"] for g in live["InstanceGroups"]}
        click.echo(f"      DescribeCluster trn-east: {live['ClusterStatus']}, instances per group {counts}")
        if counts.get("p4d-24xlarge") != 12 or live["ClusterStatus"] != "InService":
            raise DemoError("the merged scale was not applied to trn-east")
    return at


def _scaled_p4d(text: str) -> str:
    doc = yaml.safe_load(text)
    (p4d,) = [g for g in doc["hyperpod"]["instance_groups"] if g["instance_type"] == "ml.p4d.24xlarge"]
    p4d["instance_count"] = 12
    return yaml.safe_dump(doc, sort_keys=False)


def _propose(story: Story, *, branch: str, path: str, edit: Callable[[str], str], message: str, markdown: str,
             show: int) -> str:
    """A merge request as a project lead opens it and CI plans it: `edit` of one file committed on
    `branch`, then `hypergov plan --base main --markdown` (exit 2: changes); the comment's text."""
    admin = story.admin
    admin.git.checkout("-b", branch)
    target = Path(admin.working_dir) / path
    target.write_text(edit(target.read_text()))
    admin.index.add([path])
    admin.index.commit(message, author=ADMIN, committer=ADMIN)
    comment = DEMO_DIR / markdown
    planned = story.hypergov("plan", "--base", "main", "--markdown", str(comment), "--private-state", show=show)
    if planned.returncode != 2:
        raise DemoError(f"hypergov plan exited {planned.returncode}, not 2 (changes planned)")
    return comment.read_text()


def _merge(story: Story, *, branch: str, title: str) -> str:
    """The reviewed branch merged into main and pushed; the merge commit."""
    admin = story.admin
    admin.git.checkout("main")
    admin.git.merge("--no-ff", "-m", f"Merge {branch}: {title}", branch)
    admin.remote("origin").push("main:main").raise_if_error()
    merged: str = admin.head.commit.hexsha
    click.echo(f"      merged and pushed: main @ {merged[:12]}")
    return merged


def _section(markdown: str, heading: str) -> list[str]:
    """The lines of `markdown` from `heading` to the next heading."""
    lines = markdown.splitlines()
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    return lines[start:end]


def _drift_by_hand(story: Story, *, after: int) -> int:
    """Steps 9-10: a quota raised in the console and one made for an unknown team; the scheduled
    scan repairs the first (audited), `hypergov drift --prune-unmanaged` deletes the second."""
    assert story.daemon is not None
    log = story.daemon.log
    with step(9, f"drift by hand (boto3, out of band); the daemon's scheduled scan (every {DRIFT_EVERY}) finds "
                 "it and repairs the change through an audited apply"):
        _inject_drift(story)
        found, scan = log.wait_for(lambda e: e["event"] == "drift.scan" and e["counts"]["changed"] > 0,
                                   after=after, timeout_s=PASS_TIMEOUT_S)
        _say(scan)
        at, repaired = log.wait_for(lambda e: e["event"] == "drift.repaired", after=found, timeout_s=PASS_TIMEOUT_S)
        for event in log.events()[found:at + 1]:
            if event["event"] in ("drift.item", "drift.repair", "drift.repaired"):
                _say(event)
        if not repaired["ok"]:
            raise DemoError(f"the scheduled repair failed: {repaired['message']}")
        restored = story.quota("speech-on-gpu-west")["ComputeQuotaConfig"]["ComputeQuotaResources"]  # type: ignore[index]
        click.echo(f"      live quota speech-on-gpu-west: {restored}; report: {DEMO_DIR / 'drift.md'}")
        if restored != [{"InstanceType": "ml.g5.12xlarge", "Count": 8}]:  # config/projects/speech.yaml
            raise DemoError("the scheduled scan did not restore speech's quota")
    with step(10, "the quota made by hand for a team the tree does not know: hypergov drift finds it, "
                 "--prune-unmanaged --yes deletes it (audited), a scan is clean"):
        listed = story.hypergov_when_free("drift")
        pruned = story.hypergov_when_free("drift", "--prune-unmanaged", "--yes")
        clean = story.hypergov_when_free("drift")
        if (listed.returncode, pruned.returncode, clean.returncode) != (2, 0, 0):
            raise DemoError(f"hypergov drift exited {listed.returncode}, {pruned.returncode}, {clean.returncode}; "
                            "not 2 (found), 0 (pruned), 0 (clean)")
    return at


def _inject_drift(story: Story) -> None:
    """What a person with console access does: raise their own team's quota and make one for a
    team the tree does not know."""
    sagemaker = story.endpoint.client("sagemaker", account=PROD, region="us-west-2")
    speech = story.quota("speech-on-gpu-west")
    config = speech["ComputeQuotaConfig"]
    assert isinstance(config, dict)
    raised = [{**r, "Count": r["Count"] + 4} for r in config["ComputeQuotaResources"]]
    sagemaker.update_compute_quota(ComputeQuotaId=speech["ComputeQuotaId"], TargetVersion=speech["ComputeQuotaVersion"],
                                   ComputeQuotaConfig={**config, "ComputeQuotaResources": raised},
                                   ComputeQuotaTarget=speech["ComputeQuotaTarget"])
    click.echo(f"      raised speech's quota on gpu-west: {config['ComputeQuotaResources'][0]['Count']} -> "
               f"{raised[0]['Count']} {raised[0]['InstanceType']}")
    sagemaker.create_compute_quota(
        Name="interns-by-hand", ClusterArn=GPU_WEST,
        ComputeQuotaTarget={"TeamName": "interns", "FairShareWeight": 5},
        ComputeQuotaConfig={"ComputeQuotaResources": [{"InstanceType": "ml.g5.12xlarge", "Count": 2}],
                            "ResourceSharingConfig": {"Strategy": "DontLend"}})
    click.echo("      created compute quota interns-by-hand for a team the tree does not know")


def _tampered_copy(remote: Path) -> Path:
    """A clone of the audit branch where one outcome record is edited with a text editor's
    change (applied -> failed) and committed, as a person with push rights could."""
    copy = DEMO_DIR / "tampered"
    repo = git.Repo.clone_from(remote.as_uri(), copy, branch=AUDIT_BRANCH)
    record = next(p for p in sorted((copy / "records").rglob("*.json"), key=lambda p: p.name)
                  if "-outcome-" in p.name)
    record.write_text(re.sub(r'"applied"', '"failed"', record.read_text(), count=1))
    repo.index.add([str(record.relative_to(copy))])
    mallory = git.Actor("mallory", "mallory@example.com")
    repo.index.commit("fix a record", author=mallory, committer=mallory)
    click.echo(f"      edited {record.relative_to(copy)} in {copy} (\"applied\" -> \"failed\") and committed it")
    return copy


def _show_metrics(port: int) -> None:
    samples = scrape(port)
    shown = ("hypergov_reconcile_passes_total", "hypergov_applies_total", "hypergov_drift_items",
             "hypergov_audit_records_unpushed", "hypergov_reconcile_last_success_timestamp_seconds",
             "hypergov_reconcile_pass_duration_seconds_count")
    for (name, labels), value in sorted(samples.items()):
        if name in shown and not (name == "hypergov_reconcile_passes_total" and value == 0):  # every result starts at 0
            label_text = ",".join(f'{k}="{v}"' for k, v in labels)
            click.echo(f"      {name}{{{label_text}}} {value:g}")
    click.echo(f"      /healthz {http_status(port, '/healthz')}, /readyz {http_status(port, '/readyz')}")


def main() -> None:
    try:
        run_demo()
    except DemoError as exc:
        click.secho(f"\ndemo failed: {exc}", fg="red", err=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
