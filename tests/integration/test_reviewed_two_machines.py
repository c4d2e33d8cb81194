"""What was reviewed is what gets applied, across two machines: the merge request's plan runs on a
CI runner (its own state directory), the reconciler on another (its own), both with terraform's
state in one S3 bucket of the embedded endpoint and one Git remote (a bare repository). The
reviewed record lives in the bucket (`<prefix>/reconciler/reviewed/<tree id>.json`), so the
reconciler finds it; it compares attribute values, so a budget amount that changed between review
and merge is a difference; a tree nobody reviewed is recorded as unreviewed, and refused with
`require_reviewed`. The real terraform; the reconciler's pass runs in this process
(`reconcile_once`, one reconciler: no replicas)."""

from __future__ import annotations

import json
from pathlib import Path

import git
import pytest

from embedded_aws import EmbeddedAwsProcess
from engines.factory import cluster_executor, reconciler_records, terraform_engine
from engines.settings import load_settings
from reconciler.audit import AuditLog
from reconciler.pass_result import PassResult
from reconciler.reconcile import PassOptions, reconcile_once
from tests.integration.applied_once import S3_STATE_BACKEND, STATE_BUCKET, restore
from tests.integration.common import reconciler_env, run_hypergov
from tests.integration.conftest import MANAGEMENT, PROD, REGION, audit_records

pytestmark = pytest.mark.integration
SPEECH = "config/projects/speech.yaml"
BUDGET = "acme-speech-monthly"


def _commit(repo: git.Repo, old: str, new: str, message: str) -> str:
    path = Path(repo.working_dir) / SPEECH
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    repo.index.add([SPEECH])
    repo.index.commit(message, author=git.Actor("dev", "dev@example.com"))
    return str(repo.head.commit.tree["config"].hexsha)


def _set_budget_amount(endpoint: EmbeddedAwsProcess, amount: str) -> None:
    """Someone changes the speech budget's amount by hand (the console), between review and merge."""
    budgets = endpoint.client("budgets", account=PROD, region="us-east-1")
    budget = budgets.describe_budget(AccountId=PROD, BudgetName=BUDGET)["Budget"]
    budget["BudgetLimit"]["Amount"] = amount
    budget.pop("CalculatedSpend", None)
    budgets.update_budget(AccountId=PROD, NewBudget=budget)


def _budget_amount(endpoint: EmbeddedAwsProcess) -> float:
    budgets = endpoint.client("budgets", account=PROD, region="us-east-1")
    return float(budgets.describe_budget(AccountId=PROD, BudgetName=BUDGET)["Budget"]["BudgetLimit"]["Amount"])


def test_the_reviewed_plan_is_found_and_compared_by_value_on_another_machine(
        own_endpoint: EmbeddedAwsProcess, tmp_path: Path, reconciled_into_s3: Path) -> None:
    restore(reconciled_into_s3, own_endpoint, tmp_path)  # the reconciler's machine: tmp_path/gov, tmp_path/state
    clone = tmp_path / "gov"
    ci = tmp_path / "ci"  # the CI runner's machine: its own clone and state directory
    runner = git.Repo.clone_from(str(tmp_path / "remote.git"), str(ci / "gov"))
    ci_env = {**reconciler_env(own_endpoint, ci), "HYPERGOV_STATE_BACKEND": S3_STATE_BACKEND}

    # The merge request: speech's budget alerts at 90% instead of 100% (its project YAML).
    runner.git.checkout("-b", "alerts")
    tree = _commit(runner, "alert_at_percent: [50, 80, 100]", "alert_at_percent: [50, 80, 90]", "speech: alert at 90%")
    reviewed = run_hypergov(ci_env, ci, "plan", "--base", "origin/main", "--markdown", str(ci / "mr.md"))
    assert reviewed.returncode == 2, reviewed.stdout + reviewed.stderr
    s3 = own_endpoint.client("s3", account=MANAGEMENT, region=REGION)
    record = json.loads(s3.get_object(Bucket=STATE_BUCKET, Key=f"prod/reconciler/reviewed/{tree}.json")["Body"].read())
    [budget] = [c for c in record["stacks"]["project-speech"]["changes"] if c["address"].startswith("aws_budgets")]
    assert budget["action"] == "update"
    assert [a["path"] for a in budget["attributes"]] == ["notification"]  # the amount is what is live: unchanged
    assert not (ci / "state" / "reviewed").exists() and not (tmp_path / "state" / "reviewed").exists()

    # Between review and merge the live amount is changed by hand: the merge's plan of the same
    # tree updates the same budget (same address, same action) and now also sets its amount back.
    _set_budget_amount(own_endpoint, "150000.0")
    runner.git.push("origin", "alerts:main")
    differs = _pass(own_endpoint, tmp_path, clone)
    [refused] = [r for r in differs.results if r.stack == "project-speech"]
    assert refused.refusal is not None and refused.refusal.kind == "plan changed"
    assert refused.refusal.message.startswith("the plan differs from the one reviewed")
    assert "limit_amount=" in refused.refusal.message.split("only in the new plan:")[1], refused.refusal
    assert _budget_amount(own_endpoint) == 150000.0  # nothing of the refused stack applied
    intent = [r for r in audit_records(clone) if r["type"] == "intent"][-1]
    assert intent["review"] == "reviewed" and intent["stacks"][0]["refused"] == refused.refusal.message
    assert intent["stacks"][0]["refused_kind"] == "plan changed"

    # A commit nobody planned in a merge request: refused with require_reviewed, else applied as unreviewed.
    runner.git.checkout("main")
    runner.git.pull("--ff-only", "origin", "main")
    _commit(runner, "alert_at_percent: [50, 80, 90]", "alert_at_percent: [50, 80, 95]", "speech: alert at 95%")
    runner.git.push("origin", "main")
    strict = _pass(own_endpoint, tmp_path, clone, require_reviewed=True)
    [unreviewed] = [r for r in strict.results if r.stack == "project-speech"]
    assert unreviewed.refusal is not None and unreviewed.refusal.kind == "not reviewed"
    assert unreviewed.refusal.message.startswith("not reviewed:")
    assert "hypergov plan --base" in unreviewed.refusal.message and (
        f"s3://{STATE_BUCKET}/prod/reconciler/reviewed/" in unreviewed.refusal.message)
    assert _budget_amount(own_endpoint) == 150000.0
    applied = _pass(own_endpoint, tmp_path, clone)
    assert applied.status == "applied" and applied.review == "unreviewed", applied.errors
    assert _budget_amount(own_endpoint) == 120000.0  # the project YAML's budget, restored
    intents = [r for r in audit_records(clone) if r["type"] == "intent"]
    assert [i["review"] for i in intents[-2:]] == ["unreviewed", "unreviewed"]


def _pass(endpoint: EmbeddedAwsProcess, root: Path, clone: Path, *, require_reviewed: bool = False) -> PassResult:
    """One pass of the reconciler on its machine (its clone fetched first), as the daemon wires it."""
    env = {**reconciler_env(endpoint, root), "HYPERGOV_STATE_BACKEND": S3_STATE_BACKEND}
    settings = load_settings(environ=env)
    records = reconciler_records(settings)
    audit = AuditLog.from_settings(settings, clone, shared=records)
    return reconcile_once(clone, "main", "config", root / "state",
                          lambda tree, head: terraform_engine(settings, tree, source_commit=head, environ=env),
                          audit=audit, options=PassOptions(
                              fetch=lambda: git.Repo(clone).git.pull("--ff-only"), records=records,
                              clusters=lambda tree: cluster_executor(settings, tree),
                              require_reviewed=require_reviewed))
