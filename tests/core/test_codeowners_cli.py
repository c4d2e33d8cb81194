"""`hypergov codeowners`: writes the file where the host reads it, `--check` exits 1 with a diff
when it is missing or stale and 0 when current; refusals, a shadowing CODEOWNERS and a tree
outside any repository exit 1 with a message, never a traceback."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from click.testing import CliRunner, Result

from cli.main import main
from tests.example_tree import example_files

GOLDEN = Path(__file__).resolve().parent / "golden" / "codeowners"


def _repo(root: Path, files: dict[str, bytes] | None = None, folder: str = "config") -> Path:
    for rel, data in (files or example_files()).items():
        (root / folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / folder / rel).write_bytes(data)
    return root


def _run(root: Path, *args: str, folder: str = "config") -> Result:
    return CliRunner().invoke(main, ["codeowners", "--config", str(root / folder), "--repo-root", str(root), *args])


def test_check_exits_1_with_a_diff_when_the_file_is_missing(tmp_path: Path) -> None:
    result = _run(_repo(tmp_path), "--check")
    assert result.exit_code == 1, result.output
    assert "+++ b/.github/CODEOWNERS" in result.stdout and "+/config/org.yaml @acme/ml-platform" in result.stdout
    assert "missing: .github/CODEOWNERS" in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / ".github").exists()  # --check writes nothing


def test_written_then_checked_is_current(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    written = _run(root)
    assert written.exit_code == 0 and written.stdout.startswith("wrote .github/CODEOWNERS"), written.output
    assert (root / ".github/CODEOWNERS").read_text() == (GOLDEN / "example-github").read_text()
    checked = _run(root, "--check")
    assert checked.exit_code == 0 and checked.stdout.startswith("current: .github/CODEOWNERS"), checked.output
    again = _run(root)
    assert again.exit_code == 0 and again.stdout.startswith("unchanged: .github/CODEOWNERS"), again.output


def test_check_exits_1_when_stale_and_says_how_to_fix_it(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert _run(root, "--format", "gitlab").exit_code == 0
    path = root / "config/projects/nlp.yaml"
    path.write_text(path.read_text().replace("@acme/nlp-leads", "@acme/nlp-owners"))
    result = _run(root, "--format", "gitlab", "--check")
    assert result.exit_code == 1, result.output
    assert "-/config/projects/nlp.yaml @acme/nlp-leads @acme/ml-platform" in result.stdout
    assert "+/config/projects/nlp.yaml @acme/nlp-owners @acme/ml-platform" in result.stdout
    assert "stale: .gitlab/CODEOWNERS" in result.stderr and "--format gitlab" in result.stderr


def test_an_owner_without_a_handle_exits_1_naming_the_file_and_nothing_is_written(tmp_path: Path) -> None:
    files = example_files()
    files["org.yaml"] = files["org.yaml"].replace(b"platform_admins_on_git_host: ['@acme/ml-platform']\n", b"")
    result = _run(_repo(tmp_path, files))
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "no CODEOWNERS written" in result.stderr and "config/org.yaml:135" in result.stderr
    assert not (tmp_path / ".github").exists()
    as_json = json.loads(_run(tmp_path, "--json").stdout)
    assert as_json["status"] == "refused" and as_json["refusals"][0]["line"] == 135


def test_json_reports_the_status_and_the_diff(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    missing = _run(root, "--check", "--json")
    assert missing.exit_code == 1
    report = json.loads(missing.stdout)
    assert (report["status"], report["path"], report["format"], report["lines"]) == (
        "missing", ".github/CODEOWNERS", "github", 16)
    assert report["diff"].startswith("--- /dev/null\n+++ b/.github/CODEOWNERS")
    assert json.loads(_run(root, "--json").stdout)["status"] == "written"


def test_the_repository_is_the_git_repository_holding_the_tree(tmp_path: Path) -> None:
    root = _repo(tmp_path, folder="governance/config")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    result = CliRunner().invoke(main, ["codeowners", "--config", str(root / "governance/config")])
    assert result.exit_code == 0, result.output
    text = (root / ".github/CODEOWNERS").read_text()
    assert "\n/governance/config/org.yaml @acme/ml-platform\n" in text


def test_a_tree_outside_any_repository_asks_for_repo_root(tmp_path: Path) -> None:
    _repo(tmp_path)
    result = CliRunner().invoke(main, ["codeowners", "--config", str(tmp_path / "config")])
    assert result.exit_code == 1 and "--repo-root" in result.stderr and "Traceback" not in result.output


def test_a_codeowners_file_the_host_reads_first_is_refused(tmp_path: Path) -> None:
    """GitLab reads CODEOWNERS, docs/CODEOWNERS, .gitlab/CODEOWNERS and uses the first it finds."""
    root = _repo(tmp_path)
    (root / "CODEOWNERS").write_text("* @someone\n")
    result = _run(root, "--format", "gitlab")
    assert result.exit_code == 1 and "reads CODEOWNERS before .gitlab/CODEOWNERS" in result.stderr
    assert not (root / ".gitlab").exists()
    assert _run(root, "--format", "gitlab", "--output", str(root / "CODEOWNERS"), "--check").exit_code == 1  # stale


def test_output_outside_the_repository_is_a_usage_error(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    result = _run(root, "--output", str(tmp_path / "CODEOWNERS"))
    assert result.exit_code == 1 and "is not inside the repository" in result.stderr


def test_an_invalid_tree_exits_1(tmp_path: Path) -> None:
    files = example_files()
    files["org.yaml"] += b"unknown_key: 1\n"
    result = _run(_repo(tmp_path, files))
    assert result.exit_code == 1 and "Traceback" not in result.output and not (tmp_path / ".github").exists()
