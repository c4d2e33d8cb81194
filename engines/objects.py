"""Small JSON records that several reconcilers share: a local file (one machine, the default) or
an S3 object in the state bucket (`state_backend: s3://...`), both written with a compare-and-swap.

A write names the version it read (`expected`: the ETag, or None for "must not exist yet"); S3
checks it (`If-Match: <etag>`, `If-None-Match: *` on a first write: S3's conditional writes), so
of two replicas that read the same version only one write succeeds. The other gets
`WriteConflict` (someone else wrote: re-read, never clobber). `update` is that loop: read, change,
write, and on a conflict read again and apply the change to what the other wrote.

The reconciler's applied-commit record, the audit checkpoint and the leases (`engines.leases`)
are records here. Clients are passed in (`S3Api`); nothing here decides what a record means.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from botocore.exceptions import ClientError

from engines.file_lock import file_lock
from engines.outcomes import PermanentError, TemporaryError

Record = dict[str, Any]


class WriteConflict(TemporaryError):
    """A conditional write lost: the record changed (or appeared) since it was read."""

    reason = "write-conflict"
    retry_after_s = 0.5


class RecordUnreadable(PermanentError):
    """A record is not JSON of the expected shape; the message says which and how to recover."""

    reason = "record-unreadable"


@dataclass(frozen=True)
class Versioned:
    data: Record
    etag: str  # what a write that replaces exactly this version names


class RecordStore(Protocol):
    """Where shared records live. `write` raises `WriteConflict` when the record is not at `expected`."""

    def read(self, name: str) -> Versioned | None: ...

    def write(self, name: str, data: Record, *, expected: str | None) -> str: ...

    def where(self, name: str) -> str: ...

    def names(self, under: str) -> list[str]: ...


def encode(data: Record) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()


def _decode(raw: bytes, where: str) -> Record:
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise RecordUnreadable(f"{where} is unreadable (not JSON: {exc})") from exc
    if not isinstance(data, dict):
        raise RecordUnreadable(f"{where} is unreadable (not a JSON object)")
    return data


class LocalRecords:
    """Records as files under `root`; the compare-and-swap holds an flock on a file beside them
    (for processes sharing one disk). The ETag is the content's SHA-256."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def where(self, name: str) -> str:
        return str(self.root / name)

    def names(self, under: str) -> list[str]:
        """The record names below `under/` (one level or more; not the compare-and-swap's lock files)."""
        base = self.root / under
        return sorted(str(p.relative_to(self.root)) for p in base.rglob("*")
                      if p.is_file() and not p.name.endswith((".lock", ".tmp"))) if base.is_dir() else []

    def read(self, name: str) -> Versioned | None:
        try:
            raw = (self.root / name).read_bytes()
        except FileNotFoundError:
            return None
        return Versioned(_decode(raw, self.where(name)), hashlib.sha256(raw).hexdigest())

    def write(self, name: str, data: Record, *, expected: str | None) -> str:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._locked(path):
            try:
                current: str | None = hashlib.sha256(path.read_bytes()).hexdigest()
            except FileNotFoundError:
                current = None
            if current != expected:
                raise WriteConflict(f"{path} changed since it was read; read it again")
            body = encode(data)
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_bytes(body)
            tmp.replace(path)  # atomic: a crash leaves the old record, never half a file
            return hashlib.sha256(body).hexdigest()

    @staticmethod
    def _locked(path: Path) -> AbstractContextManager[None]:
        return file_lock(path.with_name(path.name + ".lock"))


class S3Api(Protocol):
    """The three S3 calls used (boto3's client has them)."""

    def get_object(self, **kwargs: Any) -> Any: ...

    def put_object(self, **kwargs: Any) -> Any: ...

    def list_objects_v2(self, **kwargs: Any) -> Any: ...


_LOST = ("PreconditionFailed", "ConditionalRequestConflict", "412", "409")


class S3Records:
    """Records as objects `<prefix>/<name>` in `bucket`, written with S3's conditional writes."""

    def __init__(self, s3: S3Api, *, bucket: str, prefix: str) -> None:
        self.s3 = s3
        self.bucket = bucket
        self.prefix = prefix.strip("/")

    def key(self, name: str) -> str:
        return "/".join(p for p in (self.prefix, name) if p)

    def where(self, name: str) -> str:
        return f"s3://{self.bucket}/{self.key(name)}"

    def read(self, name: str) -> Versioned | None:
        try:
            got = self.s3.get_object(Bucket=self.bucket, Key=self.key(name))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise
        return Versioned(_decode(got["Body"].read(), self.where(name)), str(got["ETag"]))

    def write(self, name: str, data: Record, *, expected: str | None) -> str:
        condition = {"IfMatch": expected} if expected is not None else {"IfNoneMatch": "*"}
        try:
            put = self.s3.put_object(Bucket=self.bucket, Key=self.key(name), Body=encode(data),
                                     ContentType="application/json", **condition)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in _LOST:
                raise WriteConflict(f"{self.where(name)} changed since it was read; read it again") from exc
            raise
        return str(put["ETag"])

    def names(self, under: str) -> list[str]:
        """The record names below `under/` (one level or more), for listing leases and checkpoints."""
        start = self.key(under).rstrip("/") + "/"
        names: list[str] = []
        token: dict[str, str] = {}
        while True:
            page = self.s3.list_objects_v2(Bucket=self.bucket, Prefix=start, **token)
            names += [str(item["Key"])[len(self.key("")) + (1 if self.prefix else 0):]
                      for item in page.get("Contents", [])]
            if not page.get("IsTruncated"):
                return names
            token = {"ContinuationToken": str(page["NextContinuationToken"])}


def update(store: RecordStore, name: str, change: Callable[[Record], Record | None], *,
           attempts: int = 8) -> Record | None:
    """Read, change, write with the version read; on a lost write read again and change what the
    other writer wrote (never overwrite it). `change` gets a copy of the record ({} when there is
    none) and returns the new record, or None to leave it as it is. The record as written (None:
    unchanged). Raises `WriteConflict` when every attempt lost."""
    for _ in range(attempts):
        current = store.read(name)
        new = change(json.loads(json.dumps(current.data)) if current else {})
        if new is None:
            return None
        try:
            store.write(name, new, expected=current.etag if current else None)
        except WriteConflict:
            continue
        return new
    raise WriteConflict(f"{store.where(name)} changed under each of {attempts} writes; another reconciler is "
                        "writing it, try again")
