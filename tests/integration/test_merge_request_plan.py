"""A merge request's plan (`hypergov plan --base REF`): only the affected stacks, with the
capacity impact of a quota change and the approvals change_control requires, as Markdown for the
merge-request comment."""

from __future__ import annotations

import shutil
from pathlib import Path

import git
import pytest
from click.testing import CliRunner, Result

from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from tests.integration.conftest import CONFIG

pytestmark = pytest.mark.integration


def test_quota_change_plans_affected_stacks_with_capacity_impact(endpoint: EmbeddedAwsProcess, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _example_repo(tmp_path)
    project = tmp_path / "config" / "projects" / "vision.yaml"
    project.write_text(project.read_text().replace("ml.p5.48xlarge: 12", "ml.p5.48xlarge: 10"))
    monkeypatch.chdir(tmp_path)
    result = _plan_against_main(endpoint, tmp_path)
    assert result.exit_code == 2, result.output
    assert "2 stack(s) affected, 0 removed, 6 unchanged" in result.output
    markdown = (tmp_path / "mr.md").read_text()
    assert "`cluster-gpu-west`" in markdown and "`project-vision`" in markdown and "`project-nlp`" not in markdown
    assert "hyperpod:ComputeQuota:vision-on-gpu-west" in markdown
    assert_capacity_impact_of_vision_losing_two_p5(markdown)
    assert "1 changed file(s) need approval" in result.output
    assert ("| `projects/vision.yaml` | modified | `arn:aws:iam::111122223333:role/vision-lead`, "
            "`arn:aws:iam::111122223333:role/PlatformAdministrator`") in markdown
    # what the change means, above the resource tables: vision 12 -> 10 p5 (8 GPUs each) = 96 -> 80;
    # gpu-west's teams 272 -> 256 of its 320 GPUs (tests/core/test_merge_request_golden.py works them out)
    order = ["## hypergov plan", "### Governance summary",
             "| `vision` | `gpu-west` | `ml.p5.48xlarge` | 12 → 10 | 96 → 80 |",
             "| `gpu-west` | 272 → 256 | 320 | 85% → 80% |", "### Validation", "no errors, 0 warning(s)",
             "### Resource changes", "| `cluster-gpu-west` |", "### Required approvals"]
    positions = [markdown.index(text) for text in order]
    assert positions == sorted(positions), positions



def _plan_against_main(endpoint: EmbeddedAwsProcess, root: Path) -> Result:
    """`hypergov plan --base main --markdown mr.md` in `root`, against the endpoint, state under `root`."""
    env = {"HYPERGOV_AWS_ENDPOINT_URL": endpoint.endpoint_url, "HYPERGOV_STATE_DIR": str(root / "state"),
           "HYPERGOV_SETTINGS": str(root / "none.yaml"), "HYPERGOV_AWS_MAX_RETRIES": "3"}
    return CliRunner().invoke(main, ["plan", "--base", "main", "--markdown", "mr.md"], env=env)


def _example_repo(root: Path) -> None:
    """The example tree committed on main of a repository at `root` (the merge request's base)."""
    shutil.copytree(CONFIG, root / "config")
    repo = git.Repo.init(root, initial_branch="main")
    repo.index.add([str(p.relative_to(root)) for p in (root / "config").rglob("*") if p.is_file()])
    repo.index.commit("base")


def capacity_tables(section: str) -> dict[str, dict[str, list[str]]]:
    """The tables of the capacity-impact section (`capacity.render.render_markdown`): cluster ->
    team -> the row's cells after the team's name (guaranteed GPUs, p50 wait, p90 wait, started at
    once on own quota, borrowed GPU-h, preempted, and the "worse" flag, empty when not worse)."""
    tables: dict[str, dict[str, list[str]]] = {}
    for part in section.split("\n#### ")[1:]:
        cluster, _, body = part.partition("\n")
        rows = [line.strip("|").split("|") for line in body.splitlines()
                if line.startswith("| ") and not line.startswith("| team |")]
        tables[cluster] = {cells[0].strip(): [cell.strip() for cell in cells[1:]] for cells in rows}
    return tables


def assert_capacity_impact_of_vision_losing_two_p5(markdown: str) -> None:
    """The capacity section of the comment for vision's gpu-west quota 12 -> 10 ml.p5.48xlarge.
    GPUs per instance are AWS's: P5 8, G5.12xlarge 4, P4d.24xlarge 8, Trn1.32xlarge 16 (Trainium)."""
    assert "\n### Capacity impact\n" in markdown
    section = markdown.split("\n### Capacity impact\n", 1)[1]
    # the default trace (reconciler/merge_request.py's SAMPLE_TRACE: capacity/samples/example-trace.jsonl,
    # 3,000 lines, one job each) under the --base ref and the working tree (cli/plan.py's head_ref)
    assert "The same trace (`example-trace.jsonl`, 3,000 jobs) simulated under `main` and `working tree`." in section
    # vision alone: no other team's quota changed, and the simulation finds none of them waiting longer,
    # starting fewer jobs at once or preempted more (capacity/diff.py's thresholds)
    assert "**1 team(s) get worse:** `gpu-west/vision`." in section
    tables = capacity_tables(section)
    assert list(tables) == ["gpu-west", "trn-east"]  # every cluster of the tree, by name
    # guaranteed GPUs per instance type, types in name order, from config/projects/*.yaml's gpu-west quotas:
    # nlp 12 p5 = 96; recsys 4 g5 = 16 and 4 p5 = 32; speech 8 g5 = 32; vision 12 -> 10 p5 = 96 -> 80
    assert {team: row[0] for team, row in tables["gpu-west"].items()} == {
        "nlp": "96", "recsys": "16+32", "speech": "32", "vision": "96 → 80"}
    # vision is worse first for its guarantee, then for its borrow limit, 50% of the guarantee
    # (vision.yaml's borrow_limit_percent; capacity/spec.py's borrow_limit_gpus): 96 / 2 = 48 -> 80 / 2 = 40
    assert tables["gpu-west"]["vision"][-1].startswith(
        "**worse**: guaranteed ml.p5.48xlarge GPUs 96 → 80; may borrow ml.p5.48xlarge GPUs 48 → 40")
    assert [team for team, row in tables["gpu-west"].items() if row[-1]] == ["vision"]
    # trn-east is untouched (nlp.yaml: 8 trn1 = 128; research.yaml: 8 p4d = 64 and 6 trn1 = 96) and
    # simulated alone, so every cell of it is the same under both configs: no arrow, no flag
    assert {team: row[0] for team, row in tables["trn-east"].items()} == {"nlp": "128", "research": "64+96"}
    assert not [cell for row in tables["trn-east"].values() for cell in row if "→" in cell or "worse" in cell]


def test_an_invalid_change_still_writes_the_comment_with_its_problems(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The merge request shows why nothing was planned: every problem with file:line and how to
    fix it, in mr.md; the terminal shows the problems as before, and the exit status is 1."""
    _example_repo(tmp_path)
    project = tmp_path / "config" / "projects" / "vision.yaml"
    project.write_text(project.read_text().replace("ml.p5.48xlarge: 12", "ml.p5.48xlarge: 20"))
    (tmp_path / "mr.md").write_text("a stale comment from an earlier run")
    monkeypatch.chdir(tmp_path)
    env = {"HYPERGOV_STATE_DIR": str(tmp_path / "state"), "HYPERGOV_SETTINGS": str(tmp_path / "none.yaml")}
    result = CliRunner().invoke(main, ["plan", "--base", "main", "--markdown", "mr.md"], env=env)
    assert result.exit_code == 1, result.output
    # 20 + nlp 12 + recsys 4 = 36 p5 guaranteed on gpu-west, which has 32 (clusters/gpu-west.yaml line 14)
    assert "config/clusters/gpu-west.yaml:14:16  CAP001" in result.output and "Traceback" not in result.output
    markdown = (tmp_path / "mr.md").read_text()
    assert markdown.startswith("## hypergov plan: the config tree is invalid\n")
    assert ("| error | `CAP001` | `config/clusters/gpu-west.yaml:14` | ml.p5.48xlarge: teams are guaranteed 36 "
            "instances (vision 20, nlp 12, recsys 4) but the cluster has 32 | lower the teams' quotas by 4") in markdown
    assert not (tmp_path / "state" / "stacks").exists()  # nothing was planned


@pytest.mark.parametrize("how", [
    pytest.param("absolute-config-elsewhere", id="absolute-config-from-another-directory"),
    pytest.param("env-config-in-subdir", id="config-dir-setting-from-a-subdirectory"),
])
def test_base_plan_finds_the_tree_in_its_repository_from_anywhere(endpoint: EmbeddedAwsProcess, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    how: str) -> None:
    """`plan --base` locates the repository and the tree's path in it the way `reconcile` does
    (one function), whatever the working directory and however the tree is named."""
    root = tmp_path / "repo"
    shutil.copytree(CONFIG, root / "governance" / "config")
    repo = git.Repo.init(root, initial_branch="main")
    repo.index.add([str(p.relative_to(root)) for p in (root / "governance").rglob("*") if p.is_file()])
    repo.index.commit("base")
    budget = root / "governance" / "config" / "projects" / "speech.yaml"
    budget.write_text(budget.read_text().replace("monthly_usd: 120000", "monthly_usd: 90000"))
    env = {"HYPERGOV_AWS_ENDPOINT_URL": endpoint.endpoint_url, "HYPERGOV_STATE_DIR": str(tmp_path / "state"),
           "HYPERGOV_SETTINGS": str(tmp_path / "none.yaml"), "HYPERGOV_AWS_MAX_RETRIES": "3"}
    if how == "absolute-config-elsewhere":
        (tmp_path / "elsewhere").mkdir()
        monkeypatch.chdir(tmp_path / "elsewhere")
        args = ["--config", str(root / "governance" / "config")]
    else:
        monkeypatch.chdir(root / "governance")
        env["HYPERGOV_CONFIG_DIR"] = "config"
        args = []
    result = CliRunner().invoke(main, ["plan", "--base", "main", *args], env=env)
    assert result.exit_code == 2, result.output
    assert "1 stack(s) affected, 0 removed, 7 unchanged" in result.output
    assert "aws_budgets_budget.budget_ml-prod" in result.output


def test_the_capacity_impact_replays_the_jobs_the_collector_saw(endpoint: EmbeddedAwsProcess, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """With usage collected in the state directory, the merge request's capacity impact replays the
    org's own jobs of the last 30 days (here: March 2026 of the example org, the simulator's replay
    written as Workloads in the collector's stores; "now" is April 1st), not the sample trace."""
    import cli.usage
    from cli.demo_usage import seed_last_month
    from hypergov.validate import validate_dir
    from usage.collector_store import CollectorStore
    from usage.trace import collected_trace

    _example_repo(tmp_path)
    seed_last_month(validate_dir(tmp_path / "config").tree, tmp_path / "state", "2026-03")
    april = 1775001600  # 2026-04-01T00:00:00Z
    monkeypatch.setattr(cli.usage, "utc_now_seconds", lambda: float(april))
    expected = collected_trace([CollectorStore.of(tmp_path / "state", c) for c in ("gpu-west", "trn-east")],
                               since=april - 30 * 86400, until=april)
    project = tmp_path / "config" / "projects" / "vision.yaml"
    project.write_text(project.read_text().replace("ml.p5.48xlarge: 12", "ml.p5.48xlarge: 10"))
    monkeypatch.chdir(tmp_path)
    result = _plan_against_main(endpoint, tmp_path)
    assert result.exit_code == 2, result.output
    assert f"capacity impact on the {len(expected.jobs)} job(s) collected in the last 30 days" in result.output
    section = (tmp_path / "mr.md").read_text().split("\n### Capacity impact\n", 1)[1]
    assert (f"The same trace (`collected-jobs.jsonl`, {len(expected.jobs):,} jobs) simulated under `main` and "
            "`working tree`.") in section
    assert capacity_tables(section)["gpu-west"]["vision"][0] == "96 → 80"
