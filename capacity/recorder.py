"""Collects the measurements during a simulation in O(1) per event (integrals are advanced only
for the queue whose usage changes) and turns them into a `ClusterResult` at the end."""

from __future__ import annotations

import math
from collections.abc import Sequence

from capacity.ledger import Ledger
from capacity.results import Attempt, ClusterResult, TeamResult, UtilisationSeries
from capacity.spec import ClusterCapacity, Job, SimulationSettings

TARGET_SAMPLES = 500


class Recorder:
    def __init__(self, *, capacity: ClusterCapacity, ledger: Ledger, jobs: Sequence[Job], q_of: Sequence[int],
                 settings: SimulationSettings) -> None:
        self.capacity, self.led, self.jobs, self.settings = capacity, ledger, jobs, settings
        teams = len(ledger.team_names)
        self.team_of = [q // ledger.types for q in q_of]
        self.first_admit = [-1] * len(jobs)
        self.finished_ok = [False] * len(jobs)
        self.n_jobs = [0] * teams
        self.immediate = [0] * teams
        self.fit_at_submit = [0] * teams
        self.honoured = [0] * teams
        self.fits_flag = [False] * len(jobs)
        self.suffered = [0] * teams
        self.caused = [0] * teams
        self.lost_gpu_s = [0] * teams
        self.events = 0
        self.preemptions = 0
        self.cutoffs = 0
        self.unroutable_by_team: dict[str, int] = {}
        self.start = jobs[0].submit if jobs else 0
        self.last_t = self.start
        self.used_s = 0
        queues = len(ledger.nominal)
        self.own_s = [0] * queues
        self.borrowed_s = [0] * queues
        self.q_last = [self.start] * queues
        span = max((j.submit + j.duration for j in jobs), default=self.start) - self.start
        self.interval = settings.sample_interval or max(60, math.ceil(span / TARGET_SAMPLES))
        self.next_sample = self.start
        self.sample_times: list[int] = []
        self.sample_rows: list[tuple[int, ...]] = []
        self.record_attempts = settings.record_attempts
        self.running_since: dict[int, int] = {}
        self.attempts: list[Attempt] = []

    def cutoff(self) -> None:
        self.cutoffs += 1

    def unroutable(self, job: Job) -> None:
        self.unroutable_by_team[job.team] = self.unroutable_by_team.get(job.team, 0) + 1

    def advance(self, now: int) -> None:
        """Move the clock to `now`, before its events: samples strictly before `now` see the usage
        in force since the last event."""
        while self.next_sample < now:
            self._sample()
        self.used_s += (now - self.last_t) * sum(self.led.phys_used)
        self.last_t = now

    def settled(self, now: int) -> None:
        """The events of `now` are done: a sample due exactly now sees their outcome."""
        if self.next_sample == now:
            self._sample()

    def _sample(self) -> None:
        self.sample_times.append(self.next_sample)
        self.sample_rows.append(tuple(self.led.team_usage))
        self.next_sample += self.interval

    def accrue(self, q: int, now: int) -> None:
        """Integrate queue `q`'s own and borrowed GPU-seconds up to `now` (before its usage changes)."""
        dt = now - self.q_last[q]
        if dt:
            used, nominal = self.led.usage[q], self.led.nominal[q]
            self.own_s[q] += dt * min(used, nominal)
            self.borrowed_s[q] += dt * max(0, used - nominal)
            self.q_last[q] = now

    def submitted(self, j: int, *, q: int, fits_guarantee: bool) -> None:
        team = self.team_of[j]
        self.events += 1
        self.n_jobs[team] += 1
        if fits_guarantee:
            self.fit_at_submit[team] += 1
            self.fits_flag[j] = True

    def admitted(self, j: int, *, q: int, now: int, within_guarantee: bool) -> None:
        self.events += 1
        if self.first_admit[j] >= 0:
            self._started(j, now)
            return
        self.first_admit[j] = now
        self._started(j, now)
        if now == self.jobs[j].submit:
            team = self.team_of[j]
            if within_guarantee:
                self.immediate[team] += 1
            if self.fits_flag[j]:
                self.honoured[team] += 1

    def finished(self, j: int, *, now: int) -> None:
        self.events += 1
        self.finished_ok[j] = True
        self._ended(j, now, preempted=False)

    def preempted(self, j: int, *, by_queue: int, lost_gpu_seconds: int, now: int) -> None:
        self.events += 1
        self._ended(j, now, preempted=True)
        self.preemptions += 1
        self.suffered[self.team_of[j]] += 1
        self.caused[by_queue // self.led.types] += 1
        self.lost_gpu_s[self.team_of[j]] += lost_gpu_seconds

    def _started(self, j: int, now: int) -> None:
        if self.record_attempts:
            self.running_since[j] = now

    def _ended(self, j: int, now: int, *, preempted: bool) -> None:
        if self.record_attempts:
            self.attempts.append(Attempt(self.jobs[j].id, self.running_since.pop(j), now, preempted))

    def result(self, *, end: int, pending: Sequence[int]) -> ClusterResult:
        for q in range(len(self.q_last)):
            self.accrue(q, end)
        for j in sorted(self.running_since):  # still running at the end of the run
            self._ended(j, max(end, self.running_since[j]), preempted=False)
        led = self.led
        waits: list[list[int]] = [[] for _ in led.team_names]
        completed = [0] * len(led.team_names)
        never = [0] * len(led.team_names)
        for j, job in enumerate(self.jobs):
            team = self.team_of[j]
            if self.first_admit[j] >= 0:
                waits[team].append(self.first_admit[j] - job.submit)
            else:
                never[team] += 1
            completed[team] += self.finished_ok[j]
        return ClusterResult(
            cluster=self.capacity.name, capacity_gpus=dict(sorted(self.capacity.capacity_gpus.items())),
            teams=tuple(self._team(i, sorted(waits[i]), completed[i], never[i]) for i in range(len(led.team_names))),
            start=self.start, end=max(end, self.start), used_gpu_hours=self.used_s / 3600, jobs=len(self.jobs),
            unroutable=dict(sorted(self.unroutable_by_team.items())), events=self.events,
            preemptions=self.preemptions, scheduler_cutoffs=self.cutoffs,
            first_admission={job.id: t for job, t in zip(self.jobs, self.first_admit, strict=True) if t >= 0},
            series=UtilisationSeries(times=tuple(self.sample_times), teams=tuple(led.team_names),
                                     used=tuple(self.sample_rows)),
            settings={"progress": self.settings.progress, "checkpoint_interval_s": self.settings.checkpoint_interval,
                      "sample_interval_s": self.interval, "fair_share": self.capacity.fair_share,
                      "idle_resource_sharing": self.capacity.idle_resource_sharing, **self.settings.extra},
            attempts=tuple(self.attempts))

    def _team(self, i: int, waits: list[int], completed: int, never: int) -> TeamResult:
        led = self.led
        name = led.team_names[i]
        quota = self.capacity.team(name)
        assert quota is not None
        queues = range(i * led.types, (i + 1) * led.types)
        return TeamResult(
            team=name, sharing=quota.sharing, fair_share_weight=quota.fair_share_weight,
            guaranteed_gpus={led.type_names[q % led.types]: led.nominal[q] for q in queues if led.nominal[q]},
            borrow_limit_gpus={led.type_names[q % led.types]: led.limit[q] - led.nominal[q]
                               for q in queues if led.limit[q] > led.nominal[q]},
            jobs=self.n_jobs[i], completed=completed, never_admitted=never,
            gpu_hours_own=sum(self.own_s[q] for q in queues) / 3600,
            gpu_hours_borrowed=sum(self.borrowed_s[q] for q in queues) / 3600,
            lost_gpu_hours=self.lost_gpu_s[i] / 3600,
            admitted_immediately_within_guarantee=self.immediate[i], fit_guarantee_at_submit=self.fit_at_submit[i],
            guarantee_honoured=self.honoured[i], preemptions_suffered=self.suffered[i],
            preemptions_caused=self.caused[i], waits=tuple(waits))
