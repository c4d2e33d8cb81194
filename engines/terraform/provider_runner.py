"""The terraform engine's provider runner: what the engine asks of `terraform` (plan a stack's
directory into a saved plan, show it as `show -json` does, apply exactly it), done by talking to
the AWS provider directly (`engines.provider.walk`) with processes from one pool (issue 34).

The terraform engine stays the engine: graph capture, translation, adoption, the HyperPod and
Kubernetes executors, inventories, plan hashes and refusals are its own, unchanged; this runner
takes the place of the terraform binary beneath it (`engines.factory.provider_engine`). So both
engines read the same directory: the same `main.tf.json` and `imports.tf.json`, and the same
version-4 `terraform.tfstate`, in the stack's directory or in the state bucket, locked and
written the way terraform's local or S3 backend does (`engines.terraform.state_store`), after
every object.

A saved plan is a file (what `show_json` reads and the engine's plan hash covers) and, in this
process, the provider's own planned values and private data that applying it needs: a plan made
by another process is refused ("plan again"), as is one whose state changed since it was made.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engines import failpoints
from engines.outcomes import classify_text, permanent
from engines.provider.config import ConfigError
from engines.provider.data_reads import DataReads
from engines.provider.pool import ProviderPool
from engines.provider.schema import sensitive_paths
from engines.provider.state import Instance, State, StateFormatError, read_state, state_document
from engines.provider.walk import (
    Clients,
    ProviderError,
    StackPlan,
    apply_stack,
    plan_stack,
    refresh_entries,
    upgrader,
)
from engines.terraform.adoption import IMPORTS_FILE
from engines.terraform.errors import TerraformError
from engines.terraform.runner import IN_APPLY
from engines.terraform.state_home import CONFIG_FILE, StateHome
from engines.terraform.state_store import APPLYING, PLANNING, StateHandle, opened_state, release_s3_lock

# The `terraform_version` of a state the provider engine writes first: terraform refuses a state
# written by a newer terraform than itself, and reads any 1.x older than itself. 1.5 is the first
# with `import` blocks, which hypergov's adoption writes. A state terraform wrote keeps its version.
STATE_WRITER_VERSION = "1.5.0"
PLAN_FORMAT = "hypergov-provider-engine/1"


@dataclass(frozen=True)
class _Saved:
    text: str  # the plan file's content when it was written
    plan: StackPlan | None  # None: a refresh-only plan (nothing to apply)
    config: Mapping[str, Any]
    state_version: tuple[str, int] | None  # (lineage, serial) planned from; None: no state yet


@dataclass
class ProviderRunner:
    """The terraform runner's interface (`init`, `plan`, `show_json`, `apply`) over a provider pool."""

    pool: ProviderPool
    home: StateHome = field(default_factory=lambda: StateHome(None))  # where each stack's state lives
    reads: DataReads = field(default_factory=DataReads)  # the run's data source reads (one role listing shared)
    _saved: dict[Path, _Saved] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def init(self, cwd: Path, *, force: bool = False) -> None:
        """Nothing to install: the pool's provider binary is the workspace's."""

    def run(self, args: Sequence[str], *, cwd: Path,
            ok_codes: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
        raise TerraformError(args[0], "", failure=permanent(
            f"the provider engine runs no terraform command (asked for `terraform {args[0]}`); use engine: terraform",
            "provider-engine"))

    def force_unlock(self, cwd: Path, lock_id: str) -> None:
        """`break_dead_lock`: the S3 `.tflock` a dead holder left (terraform's or ours), by its ID,
        as `terraform force-unlock` removes it (a local state's lock dies with its holder)."""
        if self.home.state is not None:
            release_s3_lock(self.home.s3, self.home.state, cwd.name, lock_id)

    def plan(self, cwd: Path, *, out: str, refresh_only: bool = False, destroy: bool = False,
             lock: bool = True, refresh: bool = True) -> bool:
        """Write a saved plan to `cwd/out`; True when it has changes (terraform's exit code 2)."""
        config = _configuration(cwd, destroy=destroy)
        try:
            clients = self.pool.clients_for(config)
            with opened_state(cwd, self.home, lock=lock, operation=PLANNING) as handle:
                state, version = _read(handle, clients)
            document: dict[str, Any] = {"format_version": PLAN_FORMAT}
            stack_plan: StackPlan | None = None
            if refresh_only:
                document["resource_drift"] = refresh_entries(clients, state)
                changed = bool(document["resource_drift"])
            else:
                stack_plan = plan_stack(clients, config, state, refresh=refresh, read_data=self.reads.read)
                document["resource_changes"] = stack_plan.entries(clients)
                changed = stack_plan.has_changes
        except (ProviderError, ConfigError, StateFormatError) as exc:
            raise _failed("plan", exc) from exc
        planned_from = (state.lineage, state.serial) if version is not None else None
        document["prior_state"] = {"lineage": state.lineage, "serial": state.serial} if planned_from else None
        text = json.dumps(document, sort_keys=True, indent=1, default=str) + "\n"
        (cwd / out).write_text(text)
        with self._lock:
            self._saved[(cwd / out).resolve()] = _Saved(text, stack_plan, config, planned_from)
        return changed

    def show_json(self, cwd: Path, planfile: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((cwd / planfile).read_text())
        return data

    def apply(self, cwd: Path, planfile: str) -> None:
        """Carry out exactly the saved plan; the state written after every object."""
        self.reads.stop_sharing()  # what is applied may provision roles that later lookups must see
        path = (cwd / planfile).resolve()
        with self._lock:
            saved = self._saved.get(path)
        if saved is None or saved.plan is None or not path.exists() or path.read_text() != saved.text:
            raise TerraformError("apply", "", failure=permanent(
                "the provider engine applies only a plan this process made and nobody changed since; plan again",
                "stale-plan"))
        try:
            clients = self.pool.clients_for(saved.config)
            with opened_state(cwd, self.home, lock=True, operation=APPLYING) as handle:
                state, version = _read(handle, clients)
                now = (state.lineage, state.serial) if version is not None else None
                if now != saved.state_version:
                    raise TerraformError("apply", "", failure=permanent(
                        "the stack's state changed since it was planned (another apply ran); plan again", "stale-plan"))
                write = _writer(handle, clients, version or STATE_WRITER_VERSION, pool=self.pool)
                apply_stack(clients, saved.plan, state, write=write)
        except (ProviderError, ConfigError, StateFormatError) as exc:
            raise _failed("apply", exc) from exc
        finally:
            with self._lock:
                self._saved.pop(path, None)  # a saved plan is applied once


def _failed(step: str, exc: Exception) -> TerraformError:
    """The provider's refusal or failure, classified as terraform's output is (the same AWS errors)."""
    return TerraformError(step, str(exc), failure=classify_text(str(exc), prefix=f"provider engine {step}: "))


def _configuration(cwd: Path, *, destroy: bool) -> dict[str, Any]:
    """The stack's terraform configuration as the terraform engine wrote it, with its import
    blocks; for a destroy, its providers alone (every object in the state is then deleted)."""
    config: dict[str, Any] = json.loads((cwd / CONFIG_FILE).read_text())
    config.pop("terraform", None)  # its backend block: the runner's StateHome says where the state lives
    if destroy:
        return {"provider": config.get("provider", {})}
    imports = cwd / IMPORTS_FILE
    if imports.exists():
        config["import"] = json.loads(imports.read_text()).get("import", [])
    return config


class _TypesOf(dict[str, Any]):
    """Each resource type's object type from the default provider's schema, looked up on demand."""

    def __init__(self, clients: Clients) -> None:
        super().__init__()
        self._schema = clients[None].schema()

    def __missing__(self, name: str) -> Any:
        value = self._schema.resource(name).type
        self[name] = value
        return value

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default


def _read(handle: StateHandle, clients: Clients) -> tuple[State, str | None]:
    """The stack's state and the terraform version that wrote it (None: no state yet)."""
    text = handle.read()
    if not text.strip():
        return State(), None
    document = json.loads(text)
    state = read_state(document, _TypesOf(clients), upgrade=upgrader(clients))
    return state, str(document.get("terraform_version") or STATE_WRITER_VERSION)


def _writer(handle: StateHandle, clients: Clients, terraform_version: str, *, pool: ProviderPool) -> Any:
    types = _TypesOf(clients)
    schema = clients[None].schema()
    writes = [0]

    def sensitive(instance: Instance) -> list[list[dict[str, Any]]]:
        return sensitive_paths(schema.resource(instance.type).block, dict(instance.attributes))

    def write(state: State) -> None:
        document = state_document(state, types, terraform_version=terraform_version, sensitive=sensitive)
        handle.write(json.dumps(document, indent=2) + "\n")
        writes[0] += 1
        if writes[0] == 1 and failpoints.armed(IN_APPLY):
            # As the terraform runner's failpoint: the first object is in AWS and in the state; the
            # providers and this process die together, the rest of the stack undone.
            pool.kill()
            failpoints.reached(IN_APPLY)

    return write
