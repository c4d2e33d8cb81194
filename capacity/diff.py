"""The same trace under two configs, team by team: what a quota change does to everyone, and
which teams get worse (their guarantee shrinks, or they wait longer, start fewer jobs at once on
their own quota, or are preempted more). Pure: it compares results, it runs nothing."""

from __future__ import annotations

from dataclasses import dataclass, field

from capacity.results import ClusterResult, TeamResult
from capacity.runner import CapacityReport


@dataclass(frozen=True, slots=True)
class Thresholds:
    """How much worse counts as worse (small changes are simulation noise, not regressions)."""

    wait_seconds: int = 300
    """A wait percentile must grow by more than this many seconds..."""
    wait_ratio: float = 0.10
    """...and by more than this fraction of its base value."""
    share_points: float = 0.02
    """The share of jobs started at once on the team's own quota must drop by more than this."""
    preemptions_abs: int = 5
    preemptions_ratio: float = 0.25


@dataclass(frozen=True, slots=True)
class TeamDiff:
    team: str
    base: TeamResult | None
    head: TeamResult | None
    reasons: tuple[str, ...]
    """Why the team is worse off under head (empty: it is not)."""

    @property
    def worse(self) -> bool:
        return bool(self.reasons)


@dataclass(frozen=True, slots=True)
class ClusterDiff:
    cluster: str
    base: ClusterResult | None
    head: ClusterResult | None
    teams: tuple[TeamDiff, ...]

    @property
    def worse(self) -> tuple[TeamDiff, ...]:
        return tuple(t for t in self.teams if t.worse)


@dataclass(frozen=True, slots=True)
class CapacityDiff:
    base_ref: str
    head_ref: str
    trace: str
    jobs: int
    clusters: tuple[ClusterDiff, ...]
    thresholds: Thresholds = field(default_factory=Thresholds)

    @property
    def regressions(self) -> list[tuple[str, TeamDiff]]:
        return [(c.cluster, t) for c in self.clusters for t in c.worse]


def diff_reports(base: CapacityReport, head: CapacityReport, *, base_ref: str, head_ref: str, trace: str,
                 jobs: int, thresholds: Thresholds | None = None) -> CapacityDiff:
    limits = thresholds or Thresholds()
    names = sorted({c.cluster for c in base.clusters} | {c.cluster for c in head.clusters})
    return CapacityDiff(base_ref=base_ref, head_ref=head_ref, trace=trace, jobs=jobs, thresholds=limits,
                        clusters=tuple(_cluster(base.cluster(n), head.cluster(n), n, limits) for n in names))


def _cluster(base: ClusterResult | None, head: ClusterResult | None, name: str, limits: Thresholds) -> ClusterDiff:
    teams = sorted({t.team for t in (base.teams if base else ())} | {t.team for t in (head.teams if head else ())})
    diffs = []
    for team in teams:
        b = base.team(team) if base else None
        h = head.team(team) if head else None
        diffs.append(TeamDiff(team=team, base=b, head=h, reasons=tuple(team_regressions(b, h, limits))))
    return ClusterDiff(cluster=name, base=base, head=head, teams=tuple(diffs))


def team_regressions(base: TeamResult | None, head: TeamResult | None, limits: Thresholds) -> list[str]:
    """Every way in which `head` is worse for the team than `base`."""
    if base is None:
        return []
    if head is None:
        return [f"loses its quota on this cluster ({base.guaranteed_total} guaranteed GPUs)"] if base.guaranteed_total \
            else []
    reasons = _guarantee_regressions(base, head)
    for pct in (50, 90):
        before, after = base.wait(pct), head.wait(pct)
        if before is not None and after is not None and after - before > max(limits.wait_seconds,
                                                                              limits.wait_ratio * before):
            reasons.append(f"p{pct} wait {format_duration(before)} -> {format_duration(after)}")
    b_share, h_share = base.immediate_share, head.immediate_share
    if b_share is not None and h_share is not None and b_share - h_share > limits.share_points:
        reasons.append(f"jobs started at once on own quota {b_share:.0%} -> {h_share:.0%}")
    if head.never_admitted > base.never_admitted:
        reasons.append(f"jobs never admitted {base.never_admitted} -> {head.never_admitted}")
    grown = head.preemptions_suffered - base.preemptions_suffered
    if grown > max(limits.preemptions_abs, limits.preemptions_ratio * base.preemptions_suffered):
        reasons.append(f"preempted {base.preemptions_suffered} -> {head.preemptions_suffered} times")
    return reasons


def _guarantee_regressions(base: TeamResult, head: TeamResult) -> list[str]:
    reasons = []
    for itype in sorted(set(base.guaranteed_gpus) | set(head.guaranteed_gpus)):
        before, after = base.guaranteed_gpus.get(itype, 0), head.guaranteed_gpus.get(itype, 0)
        if after < before:
            reasons.append(f"guaranteed {itype} GPUs {before} -> {after}")
        b_limit, h_limit = base.borrow_limit_gpus.get(itype, 0), head.borrow_limit_gpus.get(itype, 0)
        if h_limit < b_limit:
            reasons.append(f"may borrow {itype} GPUs {b_limit} -> {h_limit}")
    return reasons


def format_duration(seconds: float | None) -> str:
    """Short human form: 45 s, 1.7 m, 12 m, 3.4 h, 2.1 d."""
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 600:
        return f"{seconds / 60:.1f} m"
    if seconds < 3600:
        return f"{seconds / 60:.0f} m"
    if seconds < 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"
