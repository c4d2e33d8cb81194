"""`hypergov usage prices` through click, against the embedded endpoint's Price List
(embedded_aws/price_list.yaml: its products are the input, read here as the expected prices).

The example tree runs ml.p5.48xlarge and ml.g5.12xlarge on gpu-west (us-west-2), ml.trn1.32xlarge
and ml.p4d.24xlarge on trn-east (us-east-1); org.yaml prices all four on-demand. The listed
HyperPod (`-Cluster:`) prices in those regions are compared, never a training job's (`-Train:`),
which the list also holds for p5 and p4d in us-west-2 at other prices."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from cli.main import main
from embedded_aws import EmbeddedAws
from embedded_aws.pricing_ext import SEED
from hypergov.validate import load_valid_tree
from tests.example_tree import CONFIG
from tests.integration.common import CREDENTIALS

TREE_REGIONS = {"ml.p5.48xlarge": "us-west-2", "ml.g5.12xlarge": "us-west-2", "ml.trn1.32xlarge": "us-east-1",
                "ml.p4d.24xlarge": "us-east-1"}


@pytest.fixture(scope="module")
def aws() -> Iterator[EmbeddedAws]:
    with EmbeddedAws() as endpoint:
        yield endpoint


def _settings(tmp_path: Path, endpoint_url: str) -> Path:
    path = tmp_path / "hypergov.yaml"
    path.write_text(yaml.safe_dump({"config_dir": str(tmp_path / "config"), "state_dir": str(tmp_path / "state"),
                                    "aws": {"endpoint_url": endpoint_url, "max_retries": 1}}))
    return path


@pytest.fixture
def settings_file(aws: EmbeddedAws, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key, value in CREDENTIALS.items():
        monkeypatch.setenv(key, value)
    shutil.copytree(CONFIG, tmp_path / "config")
    return _settings(tmp_path, aws.endpoint_url)


def _run(settings_file: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["usage", "prices", "--settings", str(settings_file), *args])


def _cluster_prices() -> dict[tuple[str, str], Decimal]:
    return {(itype, region): Decimal(usd) for itype, region, usage, usd, *_ in
            yaml.safe_load(SEED.read_text())["products"] if usage == "Cluster"}


def _org_prices(config: Path) -> dict[str, Decimal]:
    pricing = load_valid_tree(config).org.model.pricing  # type: ignore[union-attr]
    assert pricing is not None
    return {t: p.per_instance_hour for t, p in pricing.instance_types.items()}


def test_differing_prices_are_proposed_written_and_then_agree(settings_file: Path) -> None:
    config = settings_file.parent / "config"
    before = _org_prices(config)
    listed = {itype: _cluster_prices()[(itype, region)] for itype, region in TREE_REGIONS.items()}
    differing = {t for t in TREE_REGIONS if listed[t] != before[t]}
    assert differing == {"ml.trn1.32xlarge", "ml.p4d.24xlarge"}  # the seed and the example differ on these

    result = _run(settings_file, "--json")
    assert result.exit_code == 2, result.output
    report = json.loads(result.stdout)
    assert {row["instance_type"]: (row["action"], Decimal(row["proposed"])) for row in report["types"]} == {
        t: ("change" if t in differing else "same", listed[t]) for t in TREE_REGIONS}
    assert all(set(row["listed"]) == {TREE_REGIONS[row["instance_type"]]} for row in report["types"])
    assert all("-Cluster:" in usage["usage_type"] for row in report["types"] for usage in row["listed"].values())

    markdown = _run(settings_file)
    assert markdown.exit_code == 2 and "| ml.p4d.24xlarge | 21.96 (on-demand) |" in markdown.stdout
    assert "```diff" in markdown.stdout

    written = _run(settings_file, "--write")
    assert written.exit_code == 2, written.output
    assert _org_prices(config) == {**before, **{t: listed[t] for t in differing}}  # validates; the rest unchanged
    again = _run(settings_file)
    assert again.exit_code == 0, again.output
    assert "match the Price List" in again.stdout


def test_a_contract_rate_is_kept(settings_file: Path) -> None:
    org = settings_file.parent / "config" / "org.yaml"
    org.write_text(org.read_text().replace("{per_instance_hour: 21.96, purchase_option: on-demand}",
                                           "{per_instance_hour: 18.00, purchase_option: reserved}"))
    report = json.loads(_run(settings_file, "--json").stdout)
    p4d = next(row for row in report["types"] if row["instance_type"] == "ml.p4d.24xlarge")
    assert (p4d["action"], p4d["proposed"], Decimal(p4d["current"])) == ("kept: contract rate", None, Decimal(18))


def test_another_currency_is_an_error_not_a_match(settings_file: Path) -> None:
    org = settings_file.parent / "config" / "org.yaml"
    org.write_text(org.read_text().replace("  currency: USD\n", "  currency: EUR\n"))
    result = _run(settings_file)
    assert result.exit_code == 1
    assert "another currency than org.yaml's pricing.currency EUR" in result.output
    assert "Traceback" not in result.output


def test_an_unreachable_price_list_is_an_error_with_its_cause(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in CREDENTIALS.items():
        monkeypatch.setenv(key, value)
    shutil.copytree(CONFIG, tmp_path / "config")
    result = _run(_settings(tmp_path, "http://127.0.0.1:9"))  # the discard port: nothing listens
    assert result.exit_code == 1
    assert "Traceback" not in result.output and "127.0.0.1:9" in result.output
