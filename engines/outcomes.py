"""What a stack's plan, apply or refresh ended with, as a value, and the one classifier that
turns any failure into that value.

Every boundary (a stack inside a multi-stack run, a reconciler pass inside `--watch`, a CLI
command) ends in one of three outcomes: success, a refusal (expected, for the user: an invalid
tree, a plan that changed since review, a dependency that failed) or a `Failure`. A failure is
**temporary** (throttling that outlived the SDK's retries, 5xx, connection errors, a held state
lock, terraform's transient errors: the same work may succeed later, and it carries a suggested
delay) or **permanent** (access denied, validation, a missing provider mirror, no credentials:
retrying changes nothing until a person or a new commit does). `classify` is the only place that
reads terraform's output, botocore's error codes and HTTP statuses, kubernetes' `ApiException`
statuses and Git's errors for that; nothing else guesses.

`Backoff` is the one retry schedule (exponential, capped, full jitter) for loops that retry on
temporary failures; the SDKs keep their own per-request retries underneath.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypeVar

FailureKind = Literal["temporary", "permanent"]

# Terraform's output: what makes a failed command worth running again as it is.
_TF_TEMPORARY = re.compile(
    r"Error acquiring the state lock|Throttling|ThrottlingException|RequestLimitExceeded|Rate exceeded|"
    r"TooManyRequests|SlowDown|StatusCode: 5\d\d|status code: 5\d\d|InternalFailure|ServiceUnavailable|"
    r"InternalServerError|connection refused|connection reset|i/o timeout|no such host|TLS handshake timeout|"
    r"timeout awaiting response headers|context deadline exceeded|unexpected EOF|send request failed|"
    r"could not connect to registry",
    re.IGNORECASE)
# Terraform's output when it found no credentials (printed once per provider alias).
_TF_NO_CREDENTIALS = re.compile(
    r"No valid credential sources found|failed to refresh cached credentials|NoCredentialProviders|"
    r"no EC2 IMDS role found|get credentials: failed", re.IGNORECASE)
NO_CREDENTIALS = ("no AWS credentials were found: set a profile (aws.profile in hypergov.yaml, "
                  "HYPERGOV_AWS_PROFILE or AWS_PROFILE) or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; "
                  "the embedded endpoint (aws.endpoint_url) takes any key, e.g. AWS_ACCESS_KEY_ID=testing "
                  "AWS_SECRET_ACCESS_KEY=testing")

_ACCESS_DENIED = frozenset({
    "AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnrecognizedClientException",
    "InvalidClientTokenId", "ExpiredToken", "ExpiredTokenException", "SignatureDoesNotMatch",
    "AuthFailure", "NotAuthorized", "UnauthorizedException", "AccessDeniedForDependencyException"})
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# Git's errors: a remote that cannot be reached (or a lock another git process holds) is
# temporary; a remote that answered "no" (bad credentials, no such repository or branch) is not.
_GIT_PERMANENT = re.compile(r"Authentication failed|Permission denied|could not read Username|"
                            r"terminal prompts disabled|Repository not found|does not appear to be a git repository|"
                            r"couldn't find remote ref|returned error: 4(?!29)\d\d|not a git repository|"
                            r"Host key verification failed", re.IGNORECASE)
_GIT_TEMPORARY = re.compile(r"Could not resolve host|Temporary failure in name resolution|Connection timed out|"
                            r"Connection refused|Connection reset|unable to connect|unable to look up|timed out|"
                            r"returned error: (5\d\d|429)|unable to access|early EOF|The remote end hung up|"
                            r"index\.lock|cannot lock ref", re.IGNORECASE)


@dataclass(frozen=True)
class Failure:
    """A failure as a value: what went wrong (one line for a person), whether trying again as it
    is may help, and after how long. `reason` is a short stable word for logs and metrics."""

    message: str
    kind: FailureKind
    reason: str
    retry_after_s: float = 0.0

    @property
    def temporary(self) -> bool:
        return self.kind == "temporary"

    def __str__(self) -> str:
        return self.message

    def as_dict(self) -> dict[str, object]:
        return {"message": self.message, "kind": self.kind, "reason": self.reason,
                "retry_after_s": self.retry_after_s}


RefusalKind = Literal[
    "stopping",  # the reconciler is stopping (SIGTERM): the next pass plans the stack again
    "dependency failed",  # a stack it depends on did not apply
    "plan changed",  # the plan differs from the one reviewed in the merge request
    "not reviewed",  # `require_reviewed`: no review of this tree was recorded
    "stale plan",  # the saved plan is not this run's, or changed since it was made
    "review only",  # a plan decided from the live scan is shown, never applied
    "cluster not as declared",  # a declared cluster refused a change: no stack goes past it
    "history rewritten",  # the branch no longer contains the commit applied last (a force-push)
]


@dataclass(frozen=True)
class Refusal:
    """An expected refusal to apply, for the user: `kind` for code (no caller compares message
    text), `message` for people (what happened and what to do)."""

    kind: RefusalKind
    message: str

    def __str__(self) -> str:
        return self.message


def temporary(message: str, reason: str, retry_after_s: float = 5.0) -> Failure:
    return Failure(message=message, kind="temporary", reason=reason, retry_after_s=retry_after_s)


def permanent(message: str, reason: str) -> Failure:
    return Failure(message=message, kind="permanent", reason=reason)


def classify(exc: BaseException) -> Failure:
    """The one classifier: any exception raised inside a stack boundary -> a `Failure`."""
    for classifier in (_hypergov, _botocore, _kubernetes, _git, _pulumi, _urllib3):
        found = classifier(exc)
        if found is not None:
            return found
    if isinstance(exc, TimeoutError | ConnectionError):
        return temporary(f"{type(exc).__name__}: {exc}", "connection")
    if isinstance(exc, OSError):
        return permanent(f"{type(exc).__name__}: {exc}", "filesystem")
    return permanent(f"unexpected {type(exc).__name__}: {exc}", "unexpected")


A = TypeVar("A")
X = TypeVar("X")


def guarded(work: Callable[[X], A], item: X) -> A | Failure:
    """A boundary: whatever `work` raises becomes a classified value (KeyboardInterrupt and
    SystemExit still stop the program)."""
    try:
        return work(item)
    except Exception as exc:  # the boundary: every failure is a value
        return classify(exc)


def summarize(output: str, limit: int = 1200) -> str:
    """The error lines terraform prints, without colour codes, box drawing and repeats (the same
    error comes once per provider alias)."""
    text = _ANSI.sub("", output)
    lines = [ln.strip(" │╷╵") for ln in text.splitlines()]
    kept = list(dict.fromkeys(ln for ln in lines if ln and not ln.startswith(("with ", "on main.tf.json line"))))
    joined = " ".join(kept)
    return joined if len(joined) <= limit else joined[: limit - 3] + "..."


def classify_terraform_output(command: str, output: str) -> Failure:
    """A failed `terraform <command>`: its output, condensed to what a person needs."""
    return classify_text(output, prefix=f"terraform {command} failed: ")


def classify_text(output: str, *, prefix: str = "") -> Failure:
    """An engine's error output (terraform's, or the Pulumi CLI's, which runs the same providers)."""
    if _TF_NO_CREDENTIALS.search(output):
        return permanent(NO_CREDENTIALS, "no-credentials")
    text = f"{prefix}{summarize(output)}"
    if "Error acquiring the state lock" in output or "the stack is currently locked" in output:
        return temporary(text, "state-lock", retry_after_s=10.0)
    if _TF_TEMPORARY.search(output):
        return temporary(text, "throttled" if re.search(r"thrott|rate exceeded|toomany|slowdown", output, re.I)
                         else "transient")
    if re.search(r"AccessDenied|not authorized|UnauthorizedOperation|InvalidClientTokenId", output):
        return permanent(text, "access-denied")
    return permanent(text, "terraform")


def _hypergov(exc: BaseException) -> Failure | None:
    from hypergov.gitsource import NotInRepositoryError, RefNotFoundError
    from hypergov.validate import InvalidTreeError

    if isinstance(exc, InvalidTreeError):
        return permanent(str(exc), "invalid-tree")
    if isinstance(exc, RefNotFoundError | NotInRepositoryError):
        return permanent(str(exc), "git-ref")
    failure = getattr(exc, "failure", None)  # our own errors carry their classification
    return failure if isinstance(failure, Failure) else None


def _botocore(exc: BaseException) -> Failure | None:
    try:
        from botocore import exceptions as bex
        from botocore.retries.standard import ThrottledRetryableChecker, TransientRetryableChecker
    except ImportError:  # pragma: no cover - botocore is a dependency
        return None
    if isinstance(exc, bex.NoCredentialsError | bex.PartialCredentialsError):
        return permanent(NO_CREDENTIALS, "no-credentials")
    if isinstance(exc, bex.ProfileNotFound | bex.NoRegionError | bex.ParamValidationError):
        return permanent(str(exc), "configuration")
    if isinstance(exc, bex.ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        operation = getattr(exc, "operation_name", "") or "request"
        text = f"AWS {operation}: {code or status}: {error.get('Message', '')}".rstrip(": ")
        if code in ThrottledRetryableChecker._THROTTLED_ERROR_CODES or status == 429:
            return temporary(f"{text} (throttled for longer than the SDK's retries)", "throttled", 30.0)
        if code in TransientRetryableChecker._TRANSIENT_ERROR_CODES or status >= 500:
            return temporary(text, "server-error")
        if code in ("ConflictException", "ResourceInUse", "ConcurrentModificationException"):
            return temporary(f"{text} (changed concurrently; the next plan sees the new state)", "conflict")
        if code in _ACCESS_DENIED or status in (401, 403):
            return permanent(text, "access-denied")
        return permanent(text, "rejected")
    if isinstance(exc, TransientRetryableChecker._TRANSIENT_EXCEPTION_CLS):
        return temporary(f"cannot reach AWS: {exc}", "connection")
    if isinstance(exc, bex.BotoCoreError):
        return permanent(str(exc), "aws-sdk")
    return None


def _kubernetes(exc: BaseException) -> Failure | None:
    status = getattr(exc, "status", None)
    module = type(exc).__module__
    if not module.startswith("kubernetes") or not isinstance(status, int):
        return None
    reason = getattr(exc, "reason", "") or ""
    text = f"Kubernetes API: {status} {reason}".strip()
    if status == 429 or status >= 500:
        return temporary(text, "throttled" if status == 429 else "server-error")
    if status == 409:
        return temporary(text, "conflict")
    if status in (401, 403):
        return permanent(text, "access-denied")
    return permanent(text, "rejected")


def _git(exc: BaseException) -> Failure | None:
    module = type(exc).__module__
    if not module.startswith("git"):
        return None
    return classify_git_output(str(getattr(exc, "stderr", "") or exc))


def classify_git_output(stderr: str, *, prefix: str = "git: ", reason: str = "git") -> Failure:
    """A failed git command, from what it printed: temporary when the remote could not be reached
    (or another git process holds a lock), permanent when it answered with a refusal."""
    text = f"{prefix}{' '.join(stderr.split())}"
    if _GIT_PERMANENT.search(stderr) or not _GIT_TEMPORARY.search(stderr):
        return permanent(text, reason)
    return temporary(text, reason)


def _pulumi(exc: BaseException) -> Failure | None:
    if not type(exc).__module__.startswith("pulumi.automation"):
        return None
    name = type(exc).__name__
    if name == "ConcurrentUpdateError":
        return temporary(f"pulumi: another update of this stack is running: {summarize(str(exc))}", "state-lock",
                         10.0)
    if name in ("CompilationError", "InlineSourceRuntimeError", "RuntimeError", "StackNotFoundError"):
        return permanent(f"pulumi: {name}: {summarize(str(exc))}", "pulumi")
    return classify_text(str(exc), prefix="pulumi: ")


def _urllib3(exc: BaseException) -> Failure | None:
    if type(exc).__module__.startswith("urllib3"):
        return temporary(f"connection: {exc}", "connection")
    return None


class HypergovError(Exception):
    """An error of ours that knows its classification (kopf's TemporaryError / PermanentError)."""

    kind: FailureKind = "permanent"
    reason: str = "error"
    retry_after_s: float = 0.0

    @property
    def failure(self) -> Failure:
        return Failure(message=str(self), kind=self.kind, reason=self.reason, retry_after_s=self.retry_after_s)


class PermanentError(HypergovError):
    """Retrying changes nothing until a person (or a new commit) does."""


class TemporaryError(HypergovError):
    """The same work may succeed later."""

    kind: FailureKind = "temporary"
    retry_after_s = 5.0


@dataclass
class Backoff:
    """Exponential backoff with full jitter, capped: attempt n waits uniform(0, min(cap, base*2^n)),
    and never less than what the failure itself asks for (e.g. a held lock)."""

    base_s: float = 2.0
    cap_s: float = 300.0
    attempt: int = 0
    _random: random.Random = field(default_factory=random.Random, repr=False)

    def next_delay(self, failure: Failure | None = None) -> float:
        ceiling = min(self.cap_s, self.base_s * (2 ** self.attempt))
        self.attempt += 1
        delay = self._random.uniform(0, ceiling)
        return min(self.cap_s, max(delay, failure.retry_after_s if failure else 0.0))

    def reset(self) -> None:
        self.attempt = 0
