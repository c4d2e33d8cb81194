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
from typing import Any

from botocore.exceptions import ClientError

from engines.outcomes import PermanentError
from engines.settings import AwsSettings

_URL = re.compile(r"^s3://(?P<bucket>[a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:/(?P<prefix>[^?#]*?))?/?$")
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
        match = _URL.match(url.strip())
        if match is None:
            raise ValueError(f"{url!r} is not an S3 state location such as s3://acme-hypergov-state/prod")
        return cls(bucket=match["bucket"], prefix=(match["prefix"] or "").strip("/"), region=region)

    def key(self, stack: str) -> str:
        return "/".join(p for p in (self.prefix, "stacks", stack, STATE_NAME) if p)

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


def holds_resources(s3: Any, state: S3State, stack: str) -> bool:
    """Whether the stack's state in S3 records any resource (what terraform would refresh)."""
    try:
        body = s3.get_object(Bucket=state.bucket, Key=state.key(stack))["Body"].read()
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
            return False
        raise
    try:
        return bool(json.loads(body).get("resources"))
    except (json.JSONDecodeError, AttributeError):
        return True  # unreadable state: let terraform itself say what is wrong
