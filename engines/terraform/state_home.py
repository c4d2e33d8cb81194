"""Where a stack's terraform state lives: its own directory (the default) or the state bucket
(`state_backend: s3://...`, `engines.terraform.backend`). The engine asks this one place whether
a stack holds resources, which stacks exist, and, with S3, gets back a lost directory's
configuration and inventory (kept beside the state after each apply) and reads the lock a dead
holder left."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from engines.inventory import INVENTORY_FILE
from engines.terraform.backend import (
    S3State,
    StateLock,
    dead_lock,
    holds_resources,
    load_stack_file,
    read_lock,
    save_stack_file,
    stacks_in_bucket,
)

CONFIG_FILE = "main.tf.json"
KEPT_BESIDE_STATE = (CONFIG_FILE, INVENTORY_FILE)  # what a destroy needs when the directory is gone


@dataclass(frozen=True)
class StateHome:
    state: S3State | None  # None: each stack's directory holds its state
    s3: Any = None

    def holds_resources(self, directory: Path) -> bool:
        """Whether the stack's state records resources."""
        if self.state is not None:
            return holds_resources(self.s3, self.state, directory.name)
        return _local_state(directory)

    def stacks(self, root: Path) -> set[str]:
        """Stacks with a directory under `root` (planned or applied at some point) and, with S3,
        every stack with a state object there (applied by another machine, or a lost disk)."""
        local = {p.name for p in root.iterdir() if (p / CONFIG_FILE).exists()} if root.exists() else set()
        return local | (set(stacks_in_bucket(self.s3, self.state)) if self.state is not None else set())

    def restore(self, directory: Path) -> None:
        """With S3: a stack whose directory is gone gets back what was kept beside its state."""
        if self.state is None:
            return
        for name in KEPT_BESIDE_STATE:
            if not (directory / name).exists():
                body = load_stack_file(self.s3, self.state, directory.name, name)
                if body is not None:
                    directory.mkdir(parents=True, exist_ok=True)
                    (directory / name).write_bytes(body)

    def keep(self, directory: Path) -> None:
        """After an apply, with S3: the configuration and inventory beside the state (`restore`)."""
        if self.state is None:
            return
        for name in KEPT_BESIDE_STATE:
            if (directory / name).exists():
                save_stack_file(self.s3, self.state, directory.name, name, (directory / name).read_bytes())

    def dead_lock(self, stack: str, *, lease_taken_at: datetime) -> StateLock | None:
        """With S3: the stack's `.tflock` when its holder is provably dead (`backend.dead_lock`)."""
        if self.state is None:
            return None
        lock = read_lock(self.s3, self.state, stack)
        return lock if lock is not None and dead_lock(lock, lease_taken_at=lease_taken_at) else None


def _local_state(directory: Path) -> bool:
    state = directory / "terraform.tfstate"
    if not state.exists():
        return False
    try:
        return bool(json.loads(state.read_text()).get("resources"))
    except json.JSONDecodeError:
        return True  # unreadable state: let terraform itself say what is wrong
