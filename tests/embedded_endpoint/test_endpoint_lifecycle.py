"""Starting, stopping and resetting the endpoint from Python and as a process (`hypergov
embedded-aws`), seeding from a config tree, and the account convention."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError
from click.testing import CliRunner

from cli.main import main
from embedded_aws import EmbeddedAws, EmbeddedAwsProcess, EndpointError
from hypergov.validate import load_valid_tree

CONFIG = Path(__file__).resolve().parents[2] / "config"


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_start_serves_on_a_free_port_and_stop_frees_it() -> None:
    endpoint = EmbeddedAws().start()
    port = int(endpoint.endpoint_url.rsplit(":", 1)[1])
    healthy = endpoint.healthy()
    endpoint.stop()
    endpoint.stop()  # stopping twice is harmless

    assert healthy
    # The health check's connection closes on its request thread, which may still be finishing
    # on a loaded machine when stop() returns (the server's threads are daemons, not joined).
    deadline = time.monotonic() + 10
    while not _port_is_free(port) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _port_is_free(port)
    assert not endpoint.running
    with pytest.raises(EndpointError, match="not running"):
        _ = endpoint.endpoint_url


def test_the_listening_socket_queues_thousands_of_connections(aws: EmbeddedAws) -> None:
    """The kernel's queue of connections waiting for the accept loop is the endpoint's, not
    werkzeug's 128 (which overflowed at 100 stacks at once: the provider's reads were reset). The
    kernel's own view of the socket (`ss`, inet_diag: Send-Q of a listening socket is its backlog),
    capped as Linux caps it at net.core.somaxconn."""
    port = aws.endpoint_url.rsplit(":", 1)[1]
    listed = subprocess.run(["ss", "-Hltn", f"sport = :{port}"], capture_output=True, text=True, check=True).stdout
    backlog = int(listed.split()[2])
    somaxconn = int(Path("/proc/sys/net/core/somaxconn").read_text())
    assert backlog == min(4096, somaxconn) and backlog > 128


def test_starting_twice_or_on_a_busy_port_is_a_clear_error(aws: EmbeddedAws) -> None:
    port = int(aws.endpoint_url.rsplit(":", 1)[1])

    with pytest.raises(EndpointError, match="already running"):
        aws.start()
    with pytest.raises(EndpointError, match=f"could not start the embedded AWS endpoint on 127.0.0.1:{port}"):
        EmbeddedAws(port=port).start()


def test_moto_itself_is_left_unchanged(aws: EmbeddedAws) -> None:
    """Extensions live in the endpoint's own apps: moto's in-process mocks keep moto's behaviour."""
    import moto.eks.urls
    import moto.sagemaker.urls
    from moto.eks.responses import EKSResponse
    from moto.sagemaker.responses import SageMakerResponse

    aws.client("sagemaker").list_clusters()  # the extended apps exist now

    assert moto.sagemaker.urls.url_paths["{0}/$"] == SageMakerResponse.dispatch
    assert all(handler.__self__ is EKSResponse for handler in moto.eks.urls.url_paths.values())
    assert not any("access-entries" in path for path in moto.eks.urls.url_paths)


def test_reset_forgets_state_faults_and_calls() -> None:
    with EmbeddedAws() as endpoint:
        iam = endpoint.client("iam")
        iam.create_role(RoleName="before-reset", AssumeRolePolicyDocument="{}")
        endpoint.inject_fault("iam", "GetRole", times=None)

        endpoint.reset()

        assert iam.list_roles()["Roles"] == []
        assert endpoint.pending_faults() == []
        assert [c["operation"] for c in endpoint.calls()] == ["ListRoles"]


def test_the_access_key_chooses_the_account(aws: EmbeddedAws, client: Callable[..., Any], account: str) -> None:
    client("iam").create_role(RoleName="only-here", AssumeRolePolicyDocument="{}")
    elsewhere = aws.client("iam", account=f"{int(account) + 1:012d}")

    identity = client("sts").get_caller_identity()
    with pytest.raises(ClientError) as caught:
        elsewhere.get_role(RoleName="only-here")

    assert identity["Account"] == account
    assert caught.value.response["Error"]["Code"] == "NoSuchEntity"


def test_seeding_can_fix_the_cluster_id(aws: EmbeddedAws, account: str) -> None:
    arn = aws.seed_hyperpod_cluster("fixed", "fixed-eks", account=account, cluster_id="abcdef123456")
    again = aws.seed_hyperpod_cluster("fixed", "fixed-eks", account=account)

    assert arn == again == f"arn:aws:sagemaker:us-west-2:{account}:cluster/abcdef123456"
    with pytest.raises(ValueError, match="not with id"):
        aws.seed_hyperpod_cluster("fixed", "fixed-eks", account=account, cluster_id="000000000000")
    with pytest.raises(EndpointError, match="12 lowercase letters or digits"):
        aws.reserve_hyperpod_cluster_id("other", "Not-An-Id", account=account)


def test_process_seeds_the_config_tree_and_stops_cleanly_on_sigterm() -> None:
    with EmbeddedAwsProcess(seed_config=CONFIG) as endpoint:
        summaries = {
            (account, region): [c["ClusterName"] for c in endpoint.client(
                "sagemaker", account=account, region=region).list_clusters()["ClusterSummaries"]]
            for account, region in (("111122223333", "us-west-2"), ("444455556666", "us-east-1"))}
        described = endpoint.client("sagemaker", account="111122223333").describe_cluster(ClusterName="gpu-west")
        endpoint.inject_fault("sagemaker", "DescribeCluster", kind="5xx", times=None)
        with pytest.raises(ClientError):
            endpoint.client("sagemaker", account="111122223333").describe_cluster(ClusterName="gpu-west")
        code = endpoint.stop()

    assert summaries == {("111122223333", "us-west-2"): ["gpu-west"], ("444455556666", "us-east-1"): ["trn-east"]}
    assert described["Orchestrator"]["Eks"]["ClusterArn"].endswith(":cluster/gpu-west-eks")
    recorded = load_valid_tree(CONFIG).clusters["gpu-west"].model.hyperpod.arn
    assert recorded is None or described["ClusterArn"] == recorded  # the config's ARN, when it records one
    assert {g["InstanceGroupName"]: g["CurrentCount"] for g in described["InstanceGroups"]} == \
        {"g5-12xlarge": 16, "p5-48xlarge": 32}
    assert code == 0


def test_process_that_cannot_start_reports_why(tmp_path: Path) -> None:
    (tmp_path / "org.yaml").write_text("name: Not Valid\n", encoding="utf-8")

    with pytest.raises(EndpointError, match=r"exited with status 1 before serving[\s\S]*cannot seed from"):
        EmbeddedAwsProcess(seed_config=tmp_path).start()


def test_cli_prints_the_url_and_stops_on_sigint() -> None:
    process = subprocess.Popen([sys.executable, "-m", "embedded_aws"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()

    assert url.startswith("http://127.0.0.1:")
    assert process.returncode == 0
    assert "Traceback" not in stderr
    assert "stopped" in stderr


@pytest.mark.parametrize(("args", "code", "message"), [
    pytest.param(["--seed-config", "does-not-exist"], 1, "is not a directory", id="missing-dir"),
    pytest.param(["--port", "70000"], 1, "70000 is not in the range", id="bad-port"),
])
def test_cli_usage_errors_have_no_traceback(args: list[str], code: int, message: str) -> None:
    result = CliRunner().invoke(main, ["embedded-aws", *args])

    assert result.exit_code == code
    assert message in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_cli_refuses_an_invalid_tree(tmp_path: Path) -> None:
    (tmp_path / "org.yaml").write_text("name: Not Valid\n", encoding="utf-8")

    result = CliRunner().invoke(main, ["embedded-aws", "--seed-config", str(tmp_path)])

    assert result.exit_code == 1
    assert "cannot seed from" in result.output
    assert "hypergov validate" in result.output
