"""The reconciler's event log: `--log-format json` prints one JSON object per event carrying ts,
level, event, branch, commit and stack; secrets never reach a line in either format. The passes
here need no engine (a tree that fails validation is refused before one is built; a head already
applied is up to date); JSON lines from passes that apply run in
tests/integration/test_observe_daemon.py."""

from __future__ import annotations

import io
import json
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import git
import pytest
from click.testing import CliRunner

from cli.main import main
from hypergov.redaction import secret_values
from reconciler.logs import EventLog, configure, redact
from tests.example_tree import CONFIG

ACTOR = git.Actor("admin", "admin@example.com")
# AWS's documented example secret access key (docs: "Managing access keys for IAM users").
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def committed_tree(root: Path, *, cost_centre: str | None = None) -> git.Repo:
    """The example tree committed on main in `root` (`cost_centre`: project speech's, quoted back by COST002)."""
    shutil.copytree(CONFIG, root / "config")
    if cost_centre is not None:  # the value is quoted back by COST002's message
        speech = root / "config" / "projects" / "speech.yaml"
        speech.write_text("\n".join(f"cost_centre: {cost_centre}" if line.startswith("cost_centre:") else line
                                    for line in speech.read_text().splitlines()) + "\n")
    repo = git.Repo.init(root, initial_branch="main")
    repo.index.add([str(p.relative_to(root)) for p in (root / "config").rglob("*") if p.is_file()])
    repo.index.commit("tree", author=ACTOR, committer=ACTOR)
    return repo


def _env(root: Path, **extra: str) -> dict[str, str]:
    return {"HYPERGOV_SETTINGS": str(root / "none.yaml"), "HYPERGOV_STATE_DIR": str(root / "state"),
            "HYPERGOV_CONFIG_DIR": str(root / "gov" / "config"), **extra}


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_json_lines_of_a_refused_pass_carry_the_envelope(tmp_path: Path) -> None:
    repo = committed_tree(tmp_path / "gov", cost_centre="CC-12")
    head = repo.head.commit.hexsha
    result = CliRunner().invoke(main, ["reconcile", "--log-format", "json"], env=_env(tmp_path))
    assert result.exit_code == 1, result.output
    assert result.stdout == ""  # JSON mode: every event on stderr, one object per line
    events = _lines(result.stderr)
    for line in events:
        assert set(line) >= {"ts", "level", "event", "branch", "commit", "stack", "message"}, line
        assert line["branch"] == "main"
        datetime.fromisoformat(line["ts"])
    assert [e["event"] for e in events] == ["pass.start", "audit.records", "pass.end", "tree.problem"]
    recorded = events[1]  # the refusal's `rejected` record: the first on a new audit branch
    assert (recorded["first_seq"], recorded["last_seq"], recorded["commit"]) == (1, 1, head)
    end = events[2]
    assert (end["level"], end["commit"], end["status"], end["failure_kind"]) == ("error", head, "invalid", "permanent")
    problem = events[3]
    assert problem["rule"] == "COST002" and problem["path"] == "config/projects/speech.yaml"
    assert problem["commit"] == head and problem["stack"] is None


def test_text_lines_stay_what_people_read(tmp_path: Path) -> None:
    repo = committed_tree(tmp_path / "gov")
    head = repo.head.commit.hexsha
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "reconciler.json").write_text(json.dumps({"branches": {"main": {"applied_commit": head}}}))
    result = CliRunner().invoke(main, ["reconcile"], env=_env(tmp_path))
    assert result.exit_code == 0, result.output
    assert result.stdout == f"main@{head[:12]}: up to date\n"  # results on stdout; JSON-only detail not printed
    assert result.stderr == ""


def test_the_aws_secret_key_from_the_environment_never_appears(tmp_path: Path) -> None:
    """COST002 quotes the cost centre it refuses; a secret pasted there is redacted in both formats."""
    committed_tree(tmp_path / "gov", cost_centre=SECRET.replace("/", ""))
    secret = SECRET.replace("/", "")
    for fmt in ("json", "text"):
        result = CliRunner().invoke(main, ["reconcile", "--log-format", fmt],
                                    env=_env(tmp_path, AWS_SECRET_ACCESS_KEY=secret))
        assert result.exit_code == 1, result.output
        assert "COST002" in result.output and "cost centre '***'" in result.output
        assert secret not in result.output


def test_a_url_token_never_appears() -> None:
    """A governance repository URL with a token (as `--repo https://user:token@host/...` is given,
    and as the daemon logs where it reconciles from): redacted in the message and in every field,
    nested ones included, and so is the webhook secret from the environment."""
    token = "ghp_aaaaBBBBccccDDDDeeeeFFFF0000"
    url = f"https://hypergov:{token}@git.example.com/platform/governance.git"
    stream = io.StringIO()
    log = EventLog(configure("json", environ={"HYPERGOV_WEBHOOK_SECRET": "shared-webhook-secret"}, err=stream),
                   branch="main")
    log.event("reconciler.started", f"reconciling {url}", repo=url,
              detail={"remotes": [url], "also": ["shared-webhook-secret"]})
    (line,) = _lines(stream.getvalue())
    assert token not in stream.getvalue() and "shared-webhook-secret" not in stream.getvalue()
    assert line["message"] == "reconciling https://***@git.example.com/platform/governance.git"
    assert line["repo"] == "https://***@git.example.com/platform/governance.git"
    assert line["detail"] == {"remotes": ["https://***@git.example.com/platform/governance.git"], "also": ["***"]}


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("fetch https://u:p@host/r.git failed", "fetch https://***@host/r.git failed", id="user-and-password"),
    pytest.param("ssh://git@host:22/r.git", "ssh://***@host:22/r.git", id="ssh-user"),
    pytest.param("https://host/r.git", "https://host/r.git", id="no-credentials"),
    pytest.param("mail admin@example.com", "mail admin@example.com", id="not-a-url"),
])
def test_redact_url_credentials(text: str, expected: str) -> None:
    assert redact(text, ()) == expected


def test_only_secret_looking_variables_of_8_characters_or_more_are_redacted() -> None:
    environ = {"AWS_SECRET_ACCESS_KEY": SECRET, "AWS_SESSION_TOKEN": "short", "GIT_PASSWORD": "hunter2hunter2",
               "AWS_DEFAULT_REGION": "us-west-2-long-enough", "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE"}
    assert set(secret_values(environ)) == {SECRET, "hunter2hunter2"}
