"""Drift on a schedule (`hypergov reconcile --watch --drift-every DURATION`): when a scan is due,
and what the daemon remembers of the last one for `hypergov status`.

The scan itself is `hypergov drift --against applied`'s (cli/drift.py); it runs in the gaps
between passes, never during one, so a scan never compares live state with a tree half applied.
The summary (`<state_dir>/drift-last.json`, written atomically) holds when, against which
commit, the counts per kind, whether the scan was complete, and what a repair left.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from engines.live.items import LiveScan
from reconciler.metrics import drift_counts

SUMMARY_FILE = "drift-last.json"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"(\d+)([smhd])")
DURATION_HELP = "a whole number followed by s, m, h or d, e.g. 30s, 10m, 1h, 1h30m"


def parse_duration(text: str) -> float:
    """Seconds in `text` ("30s", "10m", "1h", "1h30m"); ValueError saying how to write one."""
    spelled = text.strip()
    parts = _DURATION.findall(spelled)
    if not parts or "".join(n + u for n, u in parts) != spelled:
        raise ValueError(f"'{text}' is not a duration: write {DURATION_HELP}")
    units = [u for _, u in parts]
    if len(set(units)) != len(units) or units != sorted(units, key=lambda u: -_UNITS[u]):
        raise ValueError(f"'{text}' is not a duration: give each unit once, largest first ({DURATION_HELP})")
    seconds = sum(int(n) * _UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise ValueError(f"'{text}' is not a duration: it must be longer than zero ({DURATION_HELP})")
    return float(seconds)


def drift_due(last_at: float | None, now: float, every_s: float) -> bool:
    """A scan is due when none ran yet or `every_s` passed since the last one started."""
    return last_at is None or now - last_at >= every_s


@dataclass(frozen=True)
class DriftSummary:
    at: str  # ISO 8601, when the scan started
    commit: str  # the applied commit whose tree was compared
    complete: bool
    counts: Mapping[str, int]  # items per kind the scan found
    api_calls: int
    seconds: float
    repaired: bool | None = None  # None: no repair asked or nothing to repair
    left: Mapping[str, int] | None = None  # per kind, what the scan after the repair found
    error: str | None = None  # why the scan could not run at all (then the counts are empty)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def summary_of(scan: LiveScan, *, commit: str, after_repair: LiveScan | None = None,
               repaired: bool | None = None) -> DriftSummary:
    return DriftSummary(at=scan.scanned_at, commit=commit, complete=scan.complete, counts=drift_counts(scan),
                        api_calls=scan.api_calls, seconds=round(scan.seconds, 3), repaired=repaired,
                        left=drift_counts(after_repair) if after_repair is not None else None)


def save_summary(state_dir: Path, summary: DriftSummary) -> None:
    path = state_dir / SUMMARY_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(summary.as_dict(), indent=2, sort_keys=True) + "\n")
    tmp.replace(path)  # atomic: `status` reads the old summary or the new one, never half of one


def load_summary(state_dir: Path) -> dict[str, Any] | None:
    """The last summary as written (None when no scan ran); ValueError when unreadable."""
    path = state_dir / SUMMARY_FILE
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a drift summary; delete it (the next scheduled scan writes it)")
    return data


def write_atomically(path: Path, text: str) -> None:
    """A report a reader may open at any time: a temporary file beside it, then one rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)
