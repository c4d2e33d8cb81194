"""Failpoints for crash tests: `HYPERGOV_FAILPOINTS=after-intent,mid-apply,...` makes the process
kill itself with SIGKILL when it reaches one of the named points, the way a node failure or the
OOM killer would (no `finally`, no flush, no atexit). Unset, `reached` is one dictionary lookup.

The points, in the order a pass reaches them:
- `after-intent`: the intent record is committed locally, nothing is applied yet;
- `mid-apply`: the first stack is applied, the next one is starting (live state half changed);
- `in-terraform-apply`: inside a stack's `terraform apply`, once terraform reported its first
  resource created: terraform, its provider and hypergov are killed together, other creates in
  flight (created in AWS, maybe not yet in the state: the restart adopts them);
- `after-apply`: every stack is applied, the outcome records are not written;
- `before-push`: the outcome records are committed locally, not pushed.
"""

from __future__ import annotations

import os
import signal

ENV = "HYPERGOV_FAILPOINTS"
POINTS = ("after-intent", "in-terraform-apply", "mid-apply", "after-apply", "before-push")


def enabled(environ: dict[str, str] | None = None) -> frozenset[str]:
    """The failpoints named in the environment (unknown names are ignored: a typo must not kill)."""
    raw = (os.environ if environ is None else environ).get(ENV, "")
    return frozenset(p.strip() for p in raw.split(",") if p.strip() in POINTS)


def armed(point: str) -> bool:
    """Whether `point` is enabled (for a failpoint that must prepare before it fires)."""
    if point not in POINTS:
        raise ValueError(f"unknown failpoint {point!r}; known: {', '.join(POINTS)}")
    return bool(os.environ.get(ENV)) and point in enabled()


def reached(point: str) -> None:
    """SIGKILL this process when `point` is enabled; nothing otherwise."""
    if armed(point):
        os.kill(os.getpid(), signal.SIGKILL)
