"""Where audit checkpoints are published, outside the repository: a versioned S3 bucket (the
state bucket by default, Object Lock in compliance mode where the bucket has it) or a directory.

A record checkpoint is created once (`If-None-Match: *`; a later pass that pushed nothing new
finds it there, and the first stays); the alive checkpoint is replaced. The
history matters more than the latest state: an S3 witness lists every version and delete marker
(`ListObjectVersions`), so a checkpoint deleted or overwritten by someone who can write the
bucket is still seen, and its first version read; with Object Lock that first version cannot be
removed at all. A directory witness has no history: it proves only as much as its permissions.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from botocore.exceptions import ClientError

from engines.factory import s3_client, state_bucket
from engines.outcomes import PermanentError
from engines.settings import Settings
from engines.state_url import parse_state_url
from reconciler.audit_checkpoints import ALIVE, ROOT, Listed, Opened, Statement, opened, sealed
from reconciler.audit_signing import SigningKey


class WitnessError(PermanentError):
    """A witness cannot be read or written; the message says which and why."""

    reason = "audit-witness"


class Witness(Protocol):
    @property
    def where(self) -> str: ...

    def publish(self, name: str, body: bytes, *, replace: bool) -> None: ...

    def listing(self, under: str) -> list[Listed]: ...

    def read(self, name: str, *, first: bool) -> bytes | None: ...


@dataclass
class DirectoryWitness:
    root: Path

    @property
    def where(self) -> str:
        return str(self.root)

    def publish(self, name: str, body: bytes, *, replace: bool) -> None:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if replace:
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_bytes(body)
            tmp.replace(path)
            return
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return  # this record is vouched for already (the name holds its hash): the first stays
        with os.fdopen(fd, "wb") as out:
            out.write(body)

    def listing(self, under: str) -> list[Listed]:
        base = self.root / under
        if not base.is_dir():
            return []
        return [Listed(str(p.relative_to(self.root)), latest_at=datetime.fromtimestamp(p.stat().st_mtime, UTC))
                for p in sorted(base.rglob("*.json")) if p.is_file()]

    def read(self, name: str, *, first: bool) -> bytes | None:
        try:
            return (self.root / name).read_bytes()
        except FileNotFoundError:
            return None


@dataclass
class S3Witness:
    s3: Any  # boto3's S3 client
    bucket: str
    prefix: str
    retention_days: int = 400
    _locked: bool | None = field(default=None, repr=False)

    @property
    def where(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}".rstrip("/")

    def key(self, name: str) -> str:
        return "/".join(p for p in (self.prefix, name) if p)

    def object_lock(self) -> bool:
        """Whether the bucket has Object Lock enabled (then every checkpoint is retained in
        compliance mode: nobody, the account's root included, can delete it before it expires)."""
        if self._locked is None:
            try:
                got = self.s3.get_object_lock_configuration(Bucket=self.bucket)
                self._locked = got.get("ObjectLockConfiguration", {}).get("ObjectLockEnabled") == "Enabled"
            except ClientError as exc:
                if _code(exc) not in ("ObjectLockConfigurationNotFoundError", "NoSuchObjectLockConfiguration"):
                    raise WitnessError(f"{self.where}: cannot read the bucket's Object Lock setting: {_said(exc)}") \
                        from exc
                self._locked = False
        return self._locked

    def publish(self, name: str, body: bytes, *, replace: bool) -> None:
        extra: dict[str, Any] = {} if replace else {"IfNoneMatch": "*"}
        if self.object_lock():
            extra |= {"ObjectLockMode": "COMPLIANCE",
                      "ObjectLockRetainUntilDate": datetime.now(UTC) + timedelta(days=self.retention_days)}
        try:
            self.s3.put_object(Bucket=self.bucket, Key=self.key(name), Body=body, ContentType="application/json",
                               **extra)
        except ClientError as exc:
            if _code(exc) in ("PreconditionFailed", "412"):
                return  # this record is vouched for already (the name holds its hash): the first stays
            raise WitnessError(f"{self.where}/{name}: the checkpoint could not be published: {_said(exc)}") from exc

    def listing(self, under: str) -> list[Listed]:
        """Every name ever published below `under`, with its versions and delete markers."""
        start = self.key(under).rstrip("/") + "/"
        versions: dict[str, list[tuple[datetime, bool]]] = {}
        marker: dict[str, str] = {}
        while True:
            try:
                page = self.s3.list_object_versions(Bucket=self.bucket, Prefix=start, **marker)
            except ClientError as exc:
                raise WitnessError(f"{self.where}: cannot list the checkpoints: {_said(exc)}") from exc
            for item in page.get("Versions", []):
                versions.setdefault(item["Key"], []).append((item["LastModified"], False))
            for item in page.get("DeleteMarkers", []):
                versions.setdefault(item["Key"], []).append((item["LastModified"], True))
            if not page.get("IsTruncated"):
                break
            marker = {"KeyMarker": page["NextKeyMarker"],
                      **({"VersionIdMarker": page["NextVersionIdMarker"]} if page.get("NextVersionIdMarker") else {})}
        cut = len(self.key("")) + (1 if self.prefix else 0)
        listed = []
        for key, history in sorted(versions.items()):
            history.sort(key=lambda v: v[0])
            listed.append(Listed(key[cut:], versions=sum(1 for _, d in history if not d),
                                 deleted=any(d for _, d in history), latest_at=history[-1][0]))
        return listed

    def read(self, name: str, *, first: bool) -> bytes | None:
        """The name's first version (what was published before anyone could change it) or latest."""
        key = self.key(name)
        version: dict[str, str] = {}
        if first:
            try:
                page = self.s3.list_object_versions(Bucket=self.bucket, Prefix=key)
            except ClientError as exc:
                raise WitnessError(f"{self.where}/{name}: cannot list its versions: {_said(exc)}") from exc
            found = sorted((v for v in page.get("Versions", []) if v["Key"] == key), key=lambda v: v["LastModified"])
            if not found:
                return None
            version = {"VersionId": found[0]["VersionId"]}
        try:
            return bytes(self.s3.get_object(Bucket=self.bucket, Key=key, **version)["Body"].read())
        except ClientError as exc:
            if _code(exc) in ("NoSuchKey", "404", "NoSuchVersion"):
                return None
            raise WitnessError(f"{self.where}/{name}: cannot read it: {_said(exc)}") from exc


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _said(exc: ClientError) -> str:
    error = exc.response.get("Error", {})
    return f"{error.get('Code', '?')}: {error.get('Message', '')}".strip()


def witness_at(location: str, *, s3_for: Any = None, retention_days: int = 400) -> Witness:
    """A witness from its location: `s3://bucket/prefix` (`s3_for(bucket)` gives the client) or
    a directory."""
    if location.startswith("s3://"):
        bucket, prefix = parse_state_url(location)
        if s3_for is None:
            raise WitnessError(f"{location}: an S3 witness needs AWS access (settings aws)")
        return S3Witness(s3_for(bucket), bucket, prefix, retention_days)
    return DirectoryWitness(Path(location))


def opener(witness: Witness) -> Any:
    """`judge`'s reader: a record checkpoint's first version, the alive one's latest."""
    def read(name: str) -> Opened:
        raw = witness.read(name, first=not name.endswith("/" + ALIVE))
        if raw is None:
            return Opened(name, None, None, "listed but unreadable")
        return opened(name, raw)
    return read


def publish(witnesses: Sequence[Witness], statement: Statement, key: SigningKey | None) -> list[str]:
    """Publish one checkpoint to every witness; the errors (one line each), never raised: the
    records are safe on the branch, and the next checkpoint vouches for them too."""
    body = sealed(statement, key)
    errors = []
    for witness in witnesses:
        try:
            witness.publish(statement.name, body, replace=statement.kind == "alive")
        except (WitnessError, ClientError, OSError) as exc:
            errors.append(f"{witness.where}: {exc}")
    return errors


def witnesses_of(settings: Settings, locations: Sequence[str] = ()) -> list[Witness]:
    """The witnesses: `locations` (e.g. `audit verify --witness`), else settings `audit_witness`,
    else the state bucket with an S3 state backend (beside the reconcilers' shared records), else
    the state directory."""
    chosen = list(locations) or list(settings.audit_witness)
    if not chosen and settings.state_backend:
        state, s3 = state_bucket(settings)
        return [S3Witness(s3, state.bucket, state.records_prefix, settings.audit_checkpoint_retention_days)]
    if not chosen:
        return [DirectoryWitness(Path(settings.state_dir).resolve())]
    return [witness_at(w, s3_for=lambda _bucket: s3_client(settings),
                       retention_days=settings.audit_checkpoint_retention_days) for w in chosen]

__all__ = ["ROOT", "DirectoryWitness", "S3Witness", "Witness", "WitnessError", "opener", "publish", "witness_at",
           "witnesses_of"]
