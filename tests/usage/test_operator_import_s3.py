"""The import reading the operator's bucket itself: the example's objects uploaded, under the same
keys, to a bucket of the embedded AWS endpoint's S3 (and, for the command, under a prefix), then
listed with the paginator and fetched object by object: the same records, the same figures."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from embedded_aws import EmbeddedAws
from embedded_aws.handle import DEFAULT_ACCOUNT, SECRET_KEY
from tests.usage.operator_checks import CLUSTER, accounted_period, assert_example_figures, import_into, settings_file
from tests.usage.operator_fixtures import OPERATOR_CLUSTER, upload, write_example
from usage.operator_layout import DirectorySource, S3Source, read_raw

REGION = "us-east-1"


@pytest.fixture(scope="module")
def aws() -> Iterator[EmbeddedAws]:
    with EmbeddedAws() as endpoint:
        yield endpoint


def _bucket(aws: EmbeddedAws, tmp_path: Path, prefix: str = "") -> tuple[str, Path]:
    s3 = aws.client("s3", region=REGION)
    bucket = f"usage-report-{abs(hash(tmp_path.name)) % 10**12}"
    s3.create_bucket(Bucket=bucket)
    root = write_example(tmp_path / "copy")
    assert upload(s3, bucket, root, prefix) == 8  # 3 workload hours, 3 heartbeat hours, a clusterqueue, a pod
    return bucket, root


def test_the_bucket_reads_as_its_local_copy_and_accounts_the_same(aws: EmbeddedAws, tmp_path: Path) -> None:
    bucket, root = _bucket(aws, tmp_path)
    source = S3Source(aws.client("s3", region=REGION), bucket)
    from_s3, from_copy = read_raw(source), read_raw(DirectorySource(root))
    assert from_s3.unreadable == [] and from_s3.not_read == {"clusterqueue": 1, "pod": 1}
    assert [r.workload_name for r in from_s3.workloads] == [r.workload_name for r in from_copy.workloads]
    assert [(r.at.row, r.timestamp, r.gpu) for r in from_s3.workloads] == \
        [(r.at.row, r.timestamp, r.gpu) for r in from_copy.workloads]
    assert from_s3.workloads[0].at.object.startswith(f"s3://{bucket}/raw/workload/year=2025/month=04/day=16/hour=09/")
    imported, written = import_into(tmp_path / "state", source)
    assert written.lines == 2 and imported.attempts == 2
    assert_example_figures(accounted_period(tmp_path / "state"))


def test_the_command_reads_a_bucket_prefix(aws: EmbeddedAws, tmp_path: Path) -> None:
    bucket, _ = _bucket(aws, tmp_path, prefix="usage/")
    env = {"HYPERGOV_AWS_ENDPOINT_URL": aws.endpoint_url, "AWS_ACCESS_KEY_ID": DEFAULT_ACCOUNT,
           "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_PROFILE": None, "AWS_REGION": REGION}
    args = ["--settings", str(settings_file(tmp_path)), "--from", f"s3://{bucket}/usage", "--cluster",
            f"{CLUSTER}={OPERATOR_CLUSTER}", "--json"]
    result = CliRunner().invoke(_command(), args, env=env)
    assert result.exit_code == 0, result.output
    assert [c["lines_added"] for c in json.loads(result.stdout)["clusters"]] == [2]
    assert_example_figures(accounted_period(tmp_path / "state"))
    again = CliRunner().invoke(_command(), args, env=env)
    assert [c["lines_added"] for c in json.loads(again.stdout)["clusters"]] == [0]


def _command() -> object:
    from cli.usage_import import import_cmd

    return import_cmd
