"""One classifier for every failure: terraform's output, botocore's errors (codes from botocore's
own retry rules and the HTTP status AWS documents), kubernetes' ApiException statuses, Git's
errors, the Pulumi Automation API's errors; and the one backoff schedule."""

from __future__ import annotations

import random

import git
import pytest
from botocore import exceptions as bex
from kubernetes.client.exceptions import ApiException
from pulumi.automation._cmd import CommandResult
from pulumi.automation.errors import CompilationError, ConcurrentUpdateError

from engines.outcomes import NO_CREDENTIALS, Backoff, Failure, classify, classify_terraform_output, temporary
from engines.plan import failure_lines
from engines.settings import SettingsError
from engines.terraform.errors import TerraformError
from engines.terraform.workspace import MirrorNotFoundError
from hypergov.validate import InvalidTreeError, validate_files
from reconciler.applied_record import ReconcilerStateError
from reconciler.reconcile import ReconcilerBusyError


def _client_error(code: str, status: int, operation: str = "CreateComputeQuota") -> bex.ClientError:
    return bex.ClientError({"Error": {"Code": code, "Message": f"{code} happened"},
                            "ResponseMetadata": {"HTTPStatusCode": status}}, operation)


@pytest.mark.parametrize(("exc", "kind", "reason"), [
    # AWS's documented throttling errors (HTTP 400/429) outlived the SDK's retries: try later.
    pytest.param(_client_error("ThrottlingException", 400), "temporary", "throttled", id="sagemaker-throttling"),
    pytest.param(_client_error("Throttling", 400, "CreateRole"), "temporary", "throttled", id="query-throttling"),
    pytest.param(_client_error("TooManyRequestsException", 400), "temporary", "throttled", id="too-many-requests"),
    pytest.param(_client_error("SomethingNew", 429), "temporary", "throttled", id="status-429"),
    pytest.param(_client_error("InternalFailure", 500), "temporary", "server-error", id="status-500"),
    pytest.param(_client_error("ServiceUnavailable", 503), "temporary", "server-error", id="status-503"),
    pytest.param(_client_error("ConflictException", 400), "temporary", "conflict", id="version-conflict"),
    pytest.param(bex.EndpointConnectionError(endpoint_url="http://127.0.0.1:1"), "temporary", "connection",
                 id="endpoint-unreachable"),
    pytest.param(bex.ReadTimeoutError(endpoint_url="http://127.0.0.1:1"), "temporary", "connection",
                 id="read-timeout"),
    # Retrying changes nothing until a person does.
    pytest.param(_client_error("AccessDeniedException", 400), "permanent", "access-denied", id="access-denied"),
    pytest.param(_client_error("AccessDenied", 403, "GetRole"), "permanent", "access-denied", id="iam-403"),
    pytest.param(_client_error("ValidationException", 400), "permanent", "rejected", id="validation"),
    pytest.param(bex.NoCredentialsError(), "permanent", "no-credentials", id="no-credentials"),
    pytest.param(bex.ProfileNotFound(profile="nope"), "permanent", "configuration", id="profile-not-found"),
    pytest.param(ApiException(status=503, reason="Service Unavailable"), "temporary", "server-error", id="kube-503"),
    pytest.param(ApiException(status=429, reason="Too Many Requests"), "temporary", "throttled", id="kube-429"),
    pytest.param(ApiException(status=409, reason="Conflict"), "temporary", "conflict", id="kube-409"),
    pytest.param(ApiException(status=403, reason="Forbidden"), "permanent", "access-denied", id="kube-403"),
    pytest.param(ApiException(status=422, reason="Unprocessable Entity"), "permanent", "rejected", id="kube-422"),
    pytest.param(git.GitCommandError(["git", "fetch"], 128, stderr="fatal: unable to access 'https://x/': "
                                     "Could not resolve host: x"), "temporary", "git", id="git-network"),
    pytest.param(git.GitCommandError(["git", "commit"], 1, stderr="error: gpg failed to sign the data"),
                 "permanent", "git", id="git-signing"),
    # A remote that cannot be reached is temporary; one that answers "no" is not (git's messages, LC_ALL=C).
    pytest.param(git.GitCommandError(["git", "fetch"], 128, stderr="fatal: unable to connect to 127.0.0.1:\n"
                                     "127.0.0.1[0: 127.0.0.1]: errno=Connection refused"), "temporary", "git",
                 id="git-daemon-down"),
    pytest.param(git.GitCommandError(["git", "fetch"], 128, stderr="fatal: unable to access 'https://h/g.git/': "
                                     "The requested URL returned error: 503"), "temporary", "git", id="git-http-503"),
    pytest.param(git.GitCommandError(["git", "fetch"], 128, stderr="fatal: unable to access 'https://h/g.git/': "
                                     "The requested URL returned error: 403"), "permanent", "git", id="git-http-403"),
    pytest.param(git.GitCommandError(["git", "fetch"], 128, stderr="fatal: Authentication failed for "
                                     "'https://h/g.git/'"), "permanent", "git", id="git-auth-failed"),
    pytest.param(git.GitCommandError(["git", "fetch"], 128, stderr="git@h: Permission denied (publickey).\r\n"
                                     "fatal: Could not read from remote repository."), "permanent", "git",
                 id="git-ssh-key-refused"),
    pytest.param(ConcurrentUpdateError(CommandResult(stdout="", stderr="the stack is currently locked", code=255)),
                 "temporary", "state-lock", id="pulumi-concurrent-update"),
    pytest.param(CompilationError(CommandResult(stdout="", stderr="Build FAILED.", code=1)), "permanent",
                 "pulumi", id="pulumi-compilation"),
    pytest.param(MirrorNotFoundError("no mirror"), "permanent", "missing-provider", id="missing-mirror"),
    pytest.param(SettingsError("bad"), "permanent", "settings", id="settings"),
    pytest.param(ReconcilerStateError("unreadable"), "permanent", "reconciler-state", id="reconciler-record"),
    pytest.param(ReconcilerBusyError("busy"), "temporary", "busy", id="busy"),
    pytest.param(ConnectionResetError("reset"), "temporary", "connection", id="socket-reset"),
    pytest.param(PermissionError(13, "Permission denied"), "permanent", "filesystem", id="filesystem"),
    pytest.param(KeyError("bug"), "permanent", "unexpected", id="a-bug-is-permanent"),
])
def test_every_failure_is_classified(exc: Exception, kind: str, reason: str) -> None:
    failure = classify(exc)
    assert (failure.kind, failure.reason) == (kind, reason), failure
    assert failure.temporary is (kind == "temporary")
    assert failure.message and "\n" not in failure.message


def test_an_invalid_tree_is_permanent_and_lists_its_problems() -> None:
    failure = classify(InvalidTreeError(validate_files({"org.yaml": b"name: [\n"})))
    assert (failure.kind, failure.reason) == ("permanent", "invalid-tree")
    assert "SYN001" in failure.message


TF_LOCK = """
Error: Error acquiring the state lock

Error message: resource temporarily unavailable
Lock Info:
  ID:        5f1c
"""
# What terraform prints without credentials: the same error once per provider alias.
TF_NO_CREDENTIALS = "\n".join([
    "\x1b[31m╷\x1b[0m", "\x1b[31m│\x1b[0m \x1b[1m\x1b[31mError: \x1b[0m\x1b[0m\x1b[1mNo valid credential sources found",
    "│", "│   with provider[\"registry.terraform.io/hashicorp/aws\"].aws-prod-us-west-2,", "│   on main.tf.json line 1",
    "│ Please see https://registry.terraform.io/providers/hashicorp/aws for more information about providing "
    "credentials.", "│ Error: failed to refresh cached credentials, no EC2 IMDS role found", "╵"] * 3)
TF_5XX = "Error: creating IAM Role (x): operation error IAM: CreateRole, https response error StatusCode: 503"
TF_DENIED = "Error: creating IAM Role (x): AccessDenied: User is not authorized to perform: iam:CreateRole"


@pytest.mark.parametrize(("output", "kind", "reason"), [
    pytest.param(TF_LOCK, "temporary", "state-lock", id="state-lock"),
    pytest.param(TF_5XX, "temporary", "transient", id="5xx"),
    pytest.param("Error: creating Budget: ThrottlingException: Rate exceeded", "temporary", "throttled",
                 id="throttled"),
    pytest.param(TF_DENIED, "permanent", "access-denied", id="access-denied"),
    pytest.param("Error: Unsupported argument", "permanent", "terraform", id="config-error"),
    pytest.param(TF_NO_CREDENTIALS, "permanent", "no-credentials", id="no-credentials"),
])
def test_terraform_output_is_classified(output: str, kind: str, reason: str) -> None:
    failure = classify_terraform_output("plan", output)
    assert (failure.kind, failure.reason) == (kind, reason)
    assert classify(TerraformError("plan", output)) == failure  # the runner's error carries the same value


def test_a_missing_credential_is_one_line_saying_how_to_provide_it() -> None:
    failure = classify_terraform_output("plan", TF_NO_CREDENTIALS)
    assert failure.message == NO_CREDENTIALS
    assert "AWS_PROFILE" in failure.message and "AWS_ACCESS_KEY_ID" in failure.message
    assert "aws.endpoint_url" in failure.message


def test_terraform_errors_are_said_once_without_colour_or_boxes() -> None:
    repeated = ("\x1b[31m│\x1b[0m Error: creating IAM Role (x): AccessDenied\n│\n" * 4)
    message = classify_terraform_output("apply", repeated).message
    assert message == "terraform apply failed: Error: creating IAM Role (x): AccessDenied"


def test_a_failure_shared_by_many_stacks_is_said_once() -> None:
    shared = classify(bex.NoCredentialsError())
    lines = failure_lines({"org": shared, "project-a": shared, "project-b": temporary("slow", "throttled")})
    assert lines == [f"2 stacks (org, project-a): permanent: {NO_CREDENTIALS}", "project-b: temporary: slow"]


def test_backoff_is_exponential_capped_and_jittered() -> None:
    backoff = Backoff(base_s=1.0, cap_s=10.0, _random=random.Random(7))
    delays = [backoff.next_delay() for _ in range(8)]
    ceilings = [min(10.0, 2.0 ** n) for n in range(8)]
    assert all(0 <= d <= c for d, c in zip(delays, ceilings, strict=True))
    assert len(set(delays)) == len(delays)  # jittered: no two retries in lockstep
    assert max(Backoff(base_s=1.0, cap_s=10.0).next_delay() for _ in range(50)) <= 1.0
    backoff.reset()
    assert backoff.next_delay() <= 1.0
    held = Failure(message="lock held", kind="temporary", reason="state-lock", retry_after_s=5.0)
    assert Backoff(base_s=1.0, cap_s=10.0).next_delay(held) >= 5.0  # never sooner than the failure asks
    assert Backoff(base_s=1.0, cap_s=3.0).next_delay(held) == 3.0  # and never past the cap
