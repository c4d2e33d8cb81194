"""Where each stack's terraform state lives: the stack's directory (the default, terraform's local
backend) or an S3 bucket through Terraform's own S3 backend, with its native lock file
(`use_lockfile = true`: a conditional write of `<key>.tflock`, Terraform >= 1.10; DynamoDB locking
is deprecated), so a reconciler that loses its disk loses nothing and any machine can continue.

`state_backend: s3://bucket/prefix` (settings, or `HYPERGOV_STATE_BACKEND`). Each stack's state is
`<prefix>/stacks/<stack>/terraform.tfstate`; the bucket's region is the org's home region. The
bucket must exist with versioning enabled (a state overwritten by mistake can then be restored):
`check_bucket` refuses it otherwise, before any stack is planned.

Pure but for `check_bucket` and `holds_resources` (one S3 read each; clients passed in).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from engines.outcomes import PermanentError
from engines.settings import AwsSettings
from engines.state_url import parse_state_url

STATE_NAME = "terraform.tfstate"


class StateBackendError(PermanentError):
    """The state bucket is unusable; the message says why and how to fix it."""

    reason = "state-backend"


@dataclass(frozen=True)
class S3State:
    bucket: str
    prefix: str  # without leading or trailing slash; may be empty
    region: str

    @classmethod
    def parse(cls, url: str, *, region: str) -> S3State:
        bucket, prefix = parse_state_url(url)
        return cls(bucket=bucket, prefix=prefix, region=region)

    def key(self, stack: str) -> str:
        return "/".join(p for p in (self.prefix, "stacks", stack, STATE_NAME) if p)

    @property
    def records_prefix(self) -> str:
        """Where the reconcilers' shared records (applied commit, audit checkpoints, leases) live."""
        return "/".join(p for p in (self.prefix, "reconciler") if p)

    def url(self, stack: str) -> str:
        return f"s3://{self.bucket}/{self.key(stack)}"

    def backend_block(self, stack: str, aws: AwsSettings) -> dict[str, Any]:
        """The stack's `terraform { backend "s3" {...} }` in Terraform's JSON syntax."""
        block: dict[str, Any] = {"bucket": self.bucket, "key": self.key(stack), "region": self.region,
                                 "use_lockfile": True, "encrypt": True}
        if aws.profile:
            block["profile"] = aws.profile
        endpoint = aws.endpoint_for("s3")
        if endpoint:  # an S3-compatible endpoint (the embedded one): path-style, no AWS account checks
            block.update({"endpoints": {"s3": endpoint, **({"sts": aws.endpoint_for("sts")}
                                                           if aws.endpoint_for("sts") else {})},
                          "use_path_style": True, "skip_credentials_validation": True,
                          "skip_requesting_account_id": True, "skip_metadata_api_check": True,
                          "skip_region_validation": True})
        return {"s3": block}


def check_bucket(s3: Any, state: S3State) -> None:
    """Refuse a bucket that does not exist or keeps no versions, saying how to fix it."""
    try:
        versioning = s3.get_bucket_versioning(Bucket=state.bucket)
    except ClientError as exc:
        code = exc.response.get("Error", {}).get("Code", "")
        raise StateBackendError(
            f"the state bucket s3://{state.bucket} cannot be read ({code}); create it in {state.region} with "
            "versioning enabled, or fix state_backend / HYPERGOV_STATE_BACKEND") from exc
    if versioning.get("Status") != "Enabled":
        raise StateBackendError(
            f"the state bucket s3://{state.bucket} has versioning {versioning.get('Status', 'never enabled')}; "
            f"enable it (aws s3api put-bucket-versioning --bucket {state.bucket} "
            "--versioning-configuration Status=Enabled): an overwritten state must be recoverable")


def object_or_none(s3: Any, bucket: str, key: str) -> bytes | None:
    """The object's bytes, or None when there is no such object (any other error raises)."""
    try:
        body: bytes = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
            return None
        raise
    return body


def holds_resources(s3: Any, state: S3State, stack: str) -> bool:
    """Whether the stack's state in S3 records any resource (what terraform would refresh)."""
    body = object_or_none(s3, state.bucket, state.key(stack))
    if body is None:
        return False
    try:
        return bool(json.loads(body).get("resources"))
    except (json.JSONDecodeError, AttributeError):
        return True  # unreadable state: let terraform itself say what is wrong


LOCK_SUFFIX = ".tflock"  # Terraform's S3 lock file beside the state (use_lockfile = true)


@dataclass(frozen=True)
class StateLock:
    """Terraform's lock info (statemgr.LockInfo, JSON): who, when, for what; no process id."""

    id: str
    who: str
    operation: str
    created: datetime | None


def read_lock(s3: Any, state: S3State, stack: str) -> StateLock | None:
    """The stack's `.tflock`, if one is held."""
    body = object_or_none(s3, state.bucket, state.key(stack) + LOCK_SUFFIX)
    if body is None:
        return None
    try:
        info = json.loads(body)
    except json.JSONDecodeError:
        return StateLock(id="", who="", operation="", created=None)
    return StateLock(id=str(info.get("ID", "")), who=str(info.get("Who", "")),
                     operation=str(info.get("Operation", "")), created=_created(str(info.get("Created", ""))))


def dead_lock(lock: StateLock | None, *, lease_taken_at: datetime) -> bool:
    """Pure: whether a lock was left by a dead holder. Called only by a reconciler that holds the
    stack's lease, taken from a holder whose lease expired (no renewal for a whole lease duration:
    dead or cut off, and a cut-off holder stops writing within the renew deadline). Reconcilers run
    terraform on a stack only under its lease, so a lock created before this lease was taken is
    that holder's. A lock without a readable time or ID is left alone (terraform says who holds it)."""
    return lock is not None and bool(lock.id) and lock.created is not None and lock.created <= lease_taken_at


def _created(text: str) -> datetime | None:
    # RFC 3339 with up to nanoseconds (Go's time.Time JSON); Python keeps microseconds.
    match = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$", text.strip())
    if match is None:
        return None
    fraction = (match[2] or "0")[:6].ljust(6, "0")
    zone = "+00:00" if match[3] == "Z" else match[3]
    return datetime.fromisoformat(f"{match[1]}.{fraction}{zone}")


def save_stack_file(s3: Any, state: S3State, stack: str, name: str, body: bytes) -> None:
    """A file of the stack's directory kept beside its state (its configuration, its inventory),
    so a reconciler without that directory can still destroy what the stack owns."""
    s3.put_object(Bucket=state.bucket, Key=_beside(state, stack, name), Body=body)


def load_stack_file(s3: Any, state: S3State, stack: str, name: str) -> bytes | None:
    return object_or_none(s3, state.bucket, _beside(state, stack, name))


def stacks_in_bucket(s3: Any, state: S3State) -> list[str]:
    """The stacks that have a state object in the bucket."""
    start = "/".join(p for p in (state.prefix, "stacks") if p) + "/"
    found: list[str] = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=state.bucket, Prefix=start):
        found += [str(item["Key"])[len(start):].split("/")[0] for item in page.get("Contents", [])
                  if str(item["Key"]).endswith("/" + STATE_NAME)]
    return sorted(set(found))


def _beside(state: S3State, stack: str, name: str) -> str:
    return state.key(stack).rsplit("/", 1)[0] + "/" + name
