"""The merge request's summary names the people behind the Identity Center members a change adds,
read from the embedded endpoint's identity store, seeded with the example tree's people
(`EmbeddedAwsProcess(seed_config=config)`: embedded_aws/identity_people.yaml); offline, it says
"not checked", never a count.

The change: vision's Viewer persona (config/projects/vision.yaml) gains
`identitycenter:group/nlp-engineers`, a group nlp.yaml names too, so the seeder made it. Counted by
hand from identity_people.yaml, nlp-engineers has 3 people: akowalski (Adam Kowalski), lwinter
(Lena Winter) and ravi (Ravi Shankar), listed by user name.
"""

from __future__ import annotations

from pathlib import Path

import git
import pytest
from click.testing import CliRunner

from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from engines.settings import AwsSettings
from hypergov.gitsource import read_tree_at
from hypergov.tree_files import read_tree_dir
from hypergov.validate import validate_files
from reconciler.merge_request import identity_store_people, leading_sections
from tests.integration.conftest import cli_env, governance_repo

pytestmark = pytest.mark.integration

VIEWER = "  Viewer:\n    - identitycenter:group/finance-analysts\n"
ADDED = "  - `+ identitycenter:group/nlp-engineers` (Viewer)"
# The variables boto3 finds credentials in, all emptied (tests/integration/test_access.py does the same).
NO_CREDENTIALS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                  "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI")


def _branch_adding_a_group(root: Path) -> git.Repo:
    """The example tree on main, and a branch whose commit adds nlp-engineers to vision's Viewers."""
    repo = governance_repo(root / "gov")
    repo.git.checkout("-b", "vision-viewers")
    vision = root / "gov" / "config" / "projects" / "vision.yaml"
    text = vision.read_text()
    assert text.count(VIEWER) == 1
    vision.write_text(text.replace(VIEWER, VIEWER + "    - identitycenter:group/nlp-engineers\n"))
    repo.index.add([str(vision.relative_to(root / "gov"))])
    repo.index.commit("vision: nlp-engineers may view")
    return repo


def test_the_plan_shows_the_people_of_an_added_group(endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    _branch_adding_a_group(tmp_path)
    markdown = tmp_path / "mr.md"
    result = CliRunner().invoke(main, ["plan", "--base", "main", "--private-state", "--markdown", str(markdown)],
                                env=cli_env(endpoint.endpoint_url, tmp_path))
    assert result.exit_code == 2, result.output  # changes planned: the exit status is as before
    assert "1 Identity Center member(s) of the change looked up in the identity store" in result.output
    text = markdown.read_text()
    assert (f"{ADDED}: 3 people\n    <details><summary>who</summary>\n\n"
            "    - `akowalski` Adam Kowalski\n    - `lwinter` Lena Winter\n    - `ravi` Ravi Shankar\n\n"
            "    </details>") in text


def test_without_credentials_or_a_store_the_members_are_not_checked(
        endpoint: EmbeddedAwsProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`hypergov plan` needs credentials before any summary (the engines require them: exit 1, one
    clear line), so the summary without them is checked where the plan makes it: `leading_sections`
    with the plan's reader of the identity store (`identity_store_people`), as `plan_merge_request`
    passes it. The same for an endpoint nothing answers on."""
    repo = _branch_adding_a_group(tmp_path)
    for key in NO_CREDENTIALS:
        monkeypatch.delenv(key, raising=False)
    for key in ("AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"):
        monkeypatch.setenv(key, str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    planned = CliRunner().invoke(main, ["plan", "--base", "main"], env=cli_env(endpoint.endpoint_url, tmp_path))
    assert planned.exit_code == 1 and "no AWS credentials were found" in planned.output, planned.output
    assert "Traceback" not in planned.output

    base = validate_files(read_tree_at(Path(repo.working_dir), "main", "config"))
    head = validate_files(read_tree_dir(tmp_path / "gov" / "config"))
    assert base.ok and head.ok
    offline = identity_store_people(AwsSettings(endpoint_url=endpoint.endpoint_url), base.tree, head.tree)
    summary = leading_sections(base.tree, head, people_of=offline)[0]
    assert f"{ADDED}: not checked (no AWS credentials)" in summary and "people" not in summary

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    nobody = AwsSettings(endpoint_url="http://127.0.0.1:9", max_retries=0)  # the discard port: refused
    summary = leading_sections(base.tree, head, people_of=identity_store_people(nobody, base.tree, head.tree))[0]
    assert f"{ADDED}: not checked (the identity store could not be read: " in summary
