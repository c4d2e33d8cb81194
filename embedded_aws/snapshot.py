"""Save the endpoint's whole state to a file and restore it, in this or another endpoint process.

Why: a test that needs "an org applied by terraform" would otherwise make its own first pass of
a real tree (minutes of terraform on two cores). With a snapshot, the pass is made once and each
such test starts from a copy: the endpoint's state restored from the file, terraform's state
directory copied beside it. Nothing about the code under test changes: the restored endpoint
answers exactly what the saving one would have answered.

moto keeps every service's state, and this package keeps its extensions' state, in
``BackendDict``s (``backends[account][region] -> backend``), module globals registered in
``BackendDict._instances`` once used. A snapshot is those globals' contents, pickled, keyed by the
module and name of the global so that restoring refills the very objects the request handlers
read. Objects keep their identity inside one snapshot (pickle's memo), so a backend that points
at another account's or service's object still does after a restore.
"""

from __future__ import annotations

import importlib
import os
import pickle
import sys
import tempfile
from pathlib import Path
from typing import Any

from moto.core.base_backend import AccountSpecificBackend, BackendDict, backend_lock

FORMAT = "hypergov-embedded-aws-snapshot/1"
_PACKAGES = ("moto.", "embedded_aws.")


def save_state(path: str | os.PathLike[str]) -> dict[str, int]:
    """Write every used backend of this process to `path` (atomically); returns counts."""
    with backend_lock:
        names = _global_names()
        backends: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        for backend_dict in BackendDict._instances:  # type: ignore[misc]
            where = names.get(id(backend_dict))
            if where is None:
                raise RuntimeError(f"a {backend_dict.service_name} backend is not a module global; "
                                   "a snapshot could not restore it")
            backends[where] = {account: dict(regions) for account, regions in backend_dict.items()}
        try:
            blob = pickle.dumps({"format": FORMAT, "backends": backends}, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, AttributeError, TypeError) as exc:  # a backend holding a lock, a closure...
            raise ValueError(f"the endpoint's state cannot be saved: {exc}") from exc
    target = Path(path)
    with tempfile.NamedTemporaryFile(dir=target.parent, prefix=f".{target.name}.", delete=False) as out:
        out.write(blob)
    os.replace(out.name, target)
    return {"services": len(backends), "bytes": len(blob)}


def restore_state(path: str | os.PathLike[str]) -> dict[str, int]:
    """Replace this process's state with the snapshot at `path` (what was there is forgotten)."""
    with open(path, "rb") as source:
        snapshot = pickle.load(source)
    if not isinstance(snapshot, dict) or snapshot.get("format") != FORMAT:
        raise ValueError(f"{path} is not an embedded endpoint snapshot ({FORMAT})")
    with backend_lock:
        BackendDict.reset()
        for (module, name), accounts in snapshot["backends"].items():
            backend_dict = getattr(importlib.import_module(module), name)
            for account, regions in accounts.items():
                holder: AccountSpecificBackend[Any] = backend_dict[account]  # registers the dict as used
                for region, backend in regions.items():
                    holder[region] = backend
    return {"services": len(snapshot["backends"])}


def _global_names() -> dict[int, tuple[str, str]]:
    """id of each BackendDict global of moto and this package -> (module, attribute)."""
    found: dict[int, tuple[str, str]] = {}
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith(_PACKAGES):
            continue
        for attribute, value in list(vars(module).items()):
            if isinstance(value, BackendDict) and id(value) not in found:
                found[id(value)] = (module_name, attribute)
    return found
