"""`hypergov reconcile`: what a merge does, against the embedded endpoint with the real terraform.

The governance repository is a real Git repository holding a trimmed example tree (org, two
clusters, project speech) so that a pass stays short; results are checked with boto3 against
the endpoint and in the repository's history, not in hypergov's own records."""

from __future__ import annotations

import json
import re
from pathlib import Path

import git
import pytest
from click.testing import CliRunner, Result

from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from reconciler.reconcile import LOCK_FILE, exclusive
from tests.integration.common import PLATFORM_ADMIN, TRIMMED, governance_repo
from tests.integration.conftest import PROD, REGION, audit_records

pytestmark = pytest.mark.integration
ACTOR = PLATFORM_ADMIN


def _governance_repo(root: Path) -> git.Repo:
    return governance_repo(root, projects=TRIMMED, actor=ACTOR)


def _commit(repo: git.Repo, path: str, old: bytes, new: bytes, message: str) -> str:
    target = Path(repo.working_dir) / path
    target.write_bytes(target.read_bytes().replace(old, new))
    repo.index.add([path])
    return str(repo.index.commit(message, author=ACTOR, committer=ACTOR).hexsha)


def _env(endpoint: EmbeddedAwsProcess, root: Path) -> dict[str, str]:
    return {"HYPERGOV_AWS_ENDPOINT_URL": endpoint.endpoint_url, "HYPERGOV_STATE_DIR": str(root / "state"),
            "HYPERGOV_SETTINGS": str(root / "none.yaml"), "HYPERGOV_AWS_MAX_RETRIES": "3",
            "HYPERGOV_CONFIG_DIR": str(root / "gov" / "config")}


def _reconcile(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(main, ["reconcile", *args], env=env)


def _budget(endpoint: EmbeddedAwsProcess) -> float:
    budget = endpoint.client("budgets", account=PROD, region="us-east-1").describe_budget(
        AccountId=PROD, BudgetName="acme-speech-monthly")["Budget"]
    return float(budget["BudgetLimit"]["Amount"])


def _applied_commit(root: Path) -> str:
    return str(json.loads((root / "state" / "reconciler.json").read_text())["branches"]["main"]["applied_commit"])


def test_each_merge_is_applied_once_audited_and_an_invalid_tree_never(endpoint: EmbeddedAwsProcess,
                                                                       tmp_path: Path) -> None:
    repo = _governance_repo(tmp_path / "gov")
    env = _env(endpoint, tmp_path)
    tree_commit = repo.head.commit.hexsha

    first = _reconcile(env)
    assert first.exit_code == 0, first.output
    assert "applied: 4 stack(s) planned, 3 changed (first pass: every stack)" in first.output
    assert repo.head.commit.hexsha == tree_commit and not repo.is_dirty()  # the governed branch untouched
    intent, *outcomes = audit_records(repo.working_dir)
    assert (intent["type"], intent["source_commit"], intent["source_author"]) == (
        "intent", tree_commit, "platform-admin <admin@example.com>")
    assert [(r["type"], r["stack"], r["outcome"]) for r in outcomes] == [
        ("outcome", "org", "applied"), ("outcome", "cluster-gpu-west", "applied"),
        ("outcome", "project-speech", "applied")]  # cluster-trn-east: nothing to change, nothing to record
    roles = endpoint.client("iam", account=PROD, region=REGION).list_roles(PathPrefix="/hypergov/")["Roles"]
    assert "acme-speech-lead" in {r["RoleName"] for r in roles}
    assert _applied_commit(tmp_path) == tree_commit

    quiet = _reconcile(env)
    assert quiet.exit_code == 0 and "up to date" in quiet.output, quiet.output
    assert len(audit_records(repo.working_dir)) == 4  # steady state leaves no records

    change = _commit(repo, "config/projects/speech.yaml", b"monthly_usd: 120000", b"monthly_usd: 90000",
                     "speech: lower the budget")
    merged = _reconcile(env)
    assert merged.exit_code == 0, merged.output
    assert "1 stack(s) planned, 1 changed (since" in merged.output
    assert _budget(endpoint) == 90000.0
    intent, outcome = audit_records(repo.working_dir)[4:]
    assert [s["stack"] for s in intent["stacks"]] == ["project-speech"]
    assert intent["stacks"][0]["actions"] == ["update aws_budgets_budget.budget_ml-prod"]
    assert (outcome["stack"], outcome["source_commit"], outcome["seq"]) == ("project-speech", change, 6)

    applied_before = _applied_commit(tmp_path)
    typo = _commit(repo, "config/projects/speech.yaml", b"monthly_usd: 90000", b"monthly_usd: -5", "speech: a typo")
    refused = _reconcile(env)
    assert refused.exit_code == 1, refused.output
    assert "REFUSED, the tree fails validation; nothing applied" in refused.output
    assert "config/projects/speech.yaml:11:" in refused.output and "Traceback" not in refused.output
    assert _budget(endpoint) == 90000.0 and _applied_commit(tmp_path) == applied_before
    (rejected,) = audit_records(repo.working_dir)[6:]
    assert (rejected["type"], rejected["source_commit"]) == ("rejected", typo)
    assert rejected["problems"][0]["file"] == "config/projects/speech.yaml" and rejected["problems"][0]["line"] == 11
    assert _reconcile(env).exit_code == 1 and len(audit_records(repo.working_dir)) == 7  # once per head

    _commit(repo, "config/projects/speech.yaml", b"monthly_usd: -5", b"monthly_usd: 90000", "speech: fix the typo")
    fixed = _reconcile(env)
    assert fixed.exit_code == 0 and "up to date" in fixed.output, fixed.output


def test_one_reconciler_at_a_time(endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    _governance_repo(tmp_path / "gov")
    env = _env(endpoint, tmp_path)
    with exclusive(tmp_path / "state"):
        busy = _reconcile(env)
    assert busy.exit_code == 75 and "another reconciler or hypergov apply is running" in busy.output
    assert (tmp_path / "state" / LOCK_FILE).exists() and not (tmp_path / "state" / "reconciler.json").exists()


def test_an_invalid_first_tree_or_a_missing_branch_is_refused(endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    repo = _governance_repo(tmp_path / "gov")
    env = _env(endpoint, tmp_path)
    missing = _reconcile(env, "--branch", "release")
    assert missing.exit_code == 1 and "no branch 'release'" in missing.output
    _commit(repo, "config/projects/speech.yaml", b"sharing: DontLend", b"sharing: Hoard", "speech: bad sharing")
    refused = _reconcile(env)
    assert refused.exit_code == 1 and "config/projects/speech.yaml:" in refused.output, refused.output
    assert not (tmp_path / "state" / "stacks").exists()  # refused before any stack was prepared


def test_an_unreadable_record_is_a_clear_error(endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    _governance_repo(tmp_path / "gov")
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "reconciler.json").write_text('{"branches": {"main": ')
    broken = _reconcile(_env(endpoint, tmp_path))
    assert broken.exit_code == 1 and "Traceback" not in broken.output
    assert "reconciler.json is unreadable" in broken.output and "delete it" in broken.output



def test_what_was_reviewed_is_what_gets_applied(own_endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    """A merge request planned from the live scan (`--terraform-max-stacks 0`) shows what terraform
    shows; the plan is kept by the tree's Git id, and when live state moved between the review and
    the merge (an access entry deleted by hand), the reconciler's terraform plan of the merged tree
    differs from the reviewed one: that stack is refused with both diffs, and recorded."""
    endpoint = own_endpoint
    repo = _governance_repo(tmp_path / "gov")
    env = _env(endpoint, tmp_path)
    first = _reconcile(env)
    assert first.exit_code == 0, first.output
    repo.git.checkout("-b", "lower-budget")
    _commit(repo, "config/projects/speech.yaml", b"monthly_usd: 120000", b"monthly_usd: 80000", "speech: lower")
    runner = CliRunner()
    mr = tmp_path / "mr.md"
    by_scan = runner.invoke(main, ["plan", "--base", "main", "--terraform-max-stacks", "0", "--markdown", str(mr),
                                   "--private-state"], env=env)
    assert by_scan.exit_code == 2, by_scan.output
    assert "Resource changes from the live scan" in mr.read_text()
    by_terraform = runner.invoke(main, ["plan", "--base", "main", "--private-state"], env=env)  # 1 stack: terraform
    assert by_terraform.exit_code == 2, by_terraform.output

    def resource_lines(text: str) -> list[str]:  # terraform's resources: `    ~ aws_x.y (aws_x)`
        return [line.split(" (")[0].strip() for line in text.splitlines()
                if re.match(r"^    (\+|~|-|-/\+) aws_", line)]

    assert resource_lines(by_scan.stdout) == resource_lines(by_terraform.stdout) == [
        "~ aws_budgets_budget.budget_ml-prod"]  # config/projects/speech.yaml: one account's budget
    assert "Resource changes from the live scan" not in runner.invoke(
        main, ["plan", "--base", "main", "--private-state", "--markdown", str(mr)], env=env).output + mr.read_text()

    # Drift between the review and the merge: what the merge would apply is no longer what was reviewed.
    eks = endpoint.client("eks", account=PROD, region=REGION)
    lead = f"arn:aws:iam::{PROD}:role/hypergov/acme-speech-lead"  # speech-lead is an IAM role (speech.yaml)
    eks.delete_access_entry(clusterName="gpu-west-eks", principalArn=lead)
    repo.git.checkout("main")
    repo.git.merge("--ff-only", "lower-budget")
    refused = _reconcile(env)
    assert refused.exit_code == 1, refused.output
    assert "differs from the one reviewed" in refused.output
    assert _budget(endpoint) == 120000.0  # nothing of the refused stack applied
    intent, record = audit_records(repo.working_dir)[-2:]
    assert intent["stacks"][0]["refused"].startswith("the plan differs from the one reviewed")
    assert (record["stack"], record["outcome"]) == ("project-speech", "refused")
    assert "only in the new plan: create aws_eks_access_entry.access-lead_gpu-west" in record["refusal"]
