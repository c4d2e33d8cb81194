"""Where the provider engine reads and writes a stack's terraform state, and how it locks it, the
way terraform's own backends do, so that either engine takes over from the other (issue 34):

- the stack's directory (terraform's local backend): `terraform.tfstate` under a POSIX write lock
  on the file itself, written in place;
- the state bucket (`state_backend: s3://...`, terraform's S3 backend with `use_lockfile`): the
  object `<prefix>/stacks/<stack>/terraform.tfstate`, locked by a conditional write
  (`If-None-Match: *`) of `<key>.tflock` holding terraform's lock info (statemgr.LockInfo as
  JSON), released by deleting it when it still holds our ID, as `terraform force-unlock` does.

A held lock is refused at once with terraform's own words ("Error acquiring the state lock"),
which `engines.outcomes` classifies as temporary.
"""

from __future__ import annotations

import fcntl
import getpass
import json
import os
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Protocol

from botocore.exceptions import ClientError

from engines.outcomes import classify_text
from engines.terraform.backend import LOCK_SUFFIX, STATE_NAME, S3State, object_or_none, read_lock
from engines.terraform.errors import TerraformError
from engines.terraform.state_home import StateHome

# terraform's lock info names what held the lock (statemgr.LockInfo.Operation)
PLANNING, APPLYING = "OperationTypePlan", "OperationTypeApply"
LOCK_WRITER = "hypergov provider engine"  # statemgr.LockInfo.Version: who wrote the lock


class StateHandle(Protocol):
    def read(self) -> str: ...

    def write(self, text: str) -> None: ...


@dataclass
class _LocalHandle:
    file: IO[str]

    def read(self) -> str:
        self.file.seek(0)
        return self.file.read()

    def write(self, text: str) -> None:
        self.file.seek(0)
        self.file.truncate()
        self.file.write(text)
        self.file.flush()
        os.fsync(self.file.fileno())


@dataclass
class _S3Handle:
    s3: Any
    bucket: str
    key: str

    def read(self) -> str:
        body = object_or_none(self.s3, self.bucket, self.key)
        return "" if body is None else body.decode("utf-8")

    def write(self, text: str) -> None:
        # as terraform's S3 backend writes it (`encrypt = true` in the backend block hypergov writes)
        self.s3.put_object(Bucket=self.bucket, Key=self.key, Body=text.encode("utf-8"),
                           ContentType="application/json", ServerSideEncryption="AES256")


def _held(step: str, detail: str) -> TerraformError:
    return TerraformError(step, detail, failure=classify_text(
        f"Error acquiring the state lock: {detail}", prefix="provider engine: "))


@contextmanager
def opened_state(cwd: Path, home: StateHome, *, lock: bool, operation: str) -> Iterator[StateHandle]:
    """The stack's state (directory `cwd`, stack `cwd.name`), locked for the block when `lock`."""
    if home.state is None:
        with _local(cwd, lock=lock, operation=operation) as handle:
            yield handle
        return
    handle_s3 = _S3Handle(home.s3, home.state.bucket, home.state.key(cwd.name))
    if not lock:
        yield handle_s3
        return
    lock_id = _take_s3_lock(home.s3, home.state, cwd.name, operation=operation)
    try:
        yield handle_s3
    finally:
        release_s3_lock(home.s3, home.state, cwd.name, lock_id)


@contextmanager
def _local(cwd: Path, *, lock: bool, operation: str) -> Iterator[StateHandle]:
    with open(os.open(cwd / STATE_NAME, os.O_RDWR | os.O_CREAT, 0o600), "r+", encoding="utf-8") as file:
        if lock:
            try:
                fcntl.lockf(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                raise _held("apply" if operation == APPLYING else "plan",
                            "the stack's state file is locked by another process") from exc
        yield _LocalHandle(file)


def lock_info(state: S3State, stack: str, *, operation: str, now: datetime | None = None) -> dict[str, str]:
    """Terraform's lock info (statemgr.LockInfo) for a lock this process takes."""
    created = (now or datetime.now(UTC)).astimezone(UTC)
    return {"ID": str(uuid.uuid4()), "Operation": operation, "Info": "", "Who": f"{_user()}@{socket.gethostname()}",
            "Version": LOCK_WRITER, "Created": created.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            "Path": f"{state.bucket}/{state.key(stack)}"}


def _take_s3_lock(s3: Any, state: S3State, stack: str, *, operation: str) -> str:
    info = lock_info(state, stack, operation=operation)
    try:
        s3.put_object(Bucket=state.bucket, Key=state.key(stack) + LOCK_SUFFIX, Body=json.dumps(info).encode(),
                      ContentType="application/json", ServerSideEncryption="AES256", IfNoneMatch="*")
    except ClientError as exc:
        if _code(exc) in ("PreconditionFailed", "412", "ConditionalRequestConflict", "409"):
            raise _held("apply" if operation == APPLYING else "plan",
                        f"s3://{state.bucket}/{state.key(stack)}{LOCK_SUFFIX} is held by another process") from exc
        raise
    return info["ID"]


def release_s3_lock(s3: Any, state: S3State, stack: str, lock_id: str) -> bool:
    """Delete the stack's `.tflock` when it holds `lock_id` (terraform's unlock and `force-unlock`
    compare the ID first); False when the lock is gone or another's."""
    held = read_lock(s3, state, stack)
    if held is None or held.id != lock_id:
        return False
    s3.delete_object(Bucket=state.bucket, Key=state.key(stack) + LOCK_SUFFIX)
    return True


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))
