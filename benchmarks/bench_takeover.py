"""How soon another reconciler leads once the leader stops: three replicas
(`reconciler.replicas.Replica`, each with its lease keeper) in threads on the in-process embedded
endpoint's S3, the lease decisions and timings of the real ones, no terraform.

- baseline, measured in the same run: the leader steps down (it releases its lease, as on
  SIGTERM): a candidate takes it at its next try, within a retry period;
- the leader dies (its keeper stops: no renewal, no release, as a SIGKILLed process): a candidate
  may take the lease only once it saw the record unchanged for a lease duration, so the takeover
  comes about a lease duration after the last renewal, give or take a retry period.

tests/integration/test_replicas.py kills a real leader process and checks what happens after;
how long the takeover takes is measured here, never asserted in a test.
Run: `python -m benchmarks.bench_takeover [--quick] [--rounds 3]` (client-go's 15 / 10 / 2 s
timings; `--quick`: 6 / 4 / 0.5 s, as tests/reconciler/test_replicas_share_a_pass.py scales them).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from benchmarks.common import print_table, write_results
from embedded_aws import EmbeddedAws
from engines.leases import LEADER, HolderId, Leases, LeaseTiming
from engines.objects import S3Records
from reconciler.replicas import Replica

QUICK = LeaseTiming(duration_s=6.0, renew_deadline_s=4.0, retry_s=0.5)
POLL_S = 0.02


def _until(what: str, found: Callable[[], str | None], *, timeout_s: float) -> str:
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        holder = found()
        if holder:
            return holder
        time.sleep(POLL_S)
    raise SystemExit(f"{what}: not within {timeout_s:.0f} s")


def one_round(records: S3Records, timing: LeaseTiming) -> dict[str, float]:
    """Seconds from the leader stepping down, then from the next leader dying, to a new leader."""
    observer = Leases(records, me=HolderId("bench:observer"), timing=timing)
    replicas = [Replica.start(records, parallelism=1, timing=timing) for _ in range(3)]
    by_holder: dict[str, Replica] = {r.leases.me: r for r in replicas}
    timeout_s = 4 * timing.duration_s

    def leader_other_than(gone: str | None) -> Callable[[], str | None]:
        def found() -> str | None:
            lease = observer.current(LEADER)
            return lease.holder if lease is not None and lease.holder not in ("", gone) else None
        return found

    try:
        first = by_holder[_until("a first leader", leader_other_than(None), timeout_s=timeout_s)]
        first.keeper.stop()  # it campaigns no more: the lease goes to another
        start = time.perf_counter()
        first.step_down()
        second = by_holder[_until("a leader after the step-down", leader_other_than(first.leases.me),
                                  timeout_s=timeout_s)]
        stepped_down = time.perf_counter() - start
        second.keeper.stop()  # no renewal, no release: dead
        start = time.perf_counter()
        _until("a leader after the death", leader_other_than(second.leases.me), timeout_s=timeout_s)
        died = time.perf_counter() - start
    finally:
        for replica in replicas:
            replica.keeper.stop()
    return {"stepped_down_s": stepped_down, "died_s": died}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="6 / 4 / 0.5 s lease timings instead of 15 / 10 / 2 s")
    args = parser.parse_args()
    timing = QUICK if args.quick else LeaseTiming()
    rounds = []
    with EmbeddedAws() as aws:
        s3 = aws.client("s3", region="us-east-1")
        for n in range(args.rounds):
            bucket = f"bench-takeover-{n}"
            s3.create_bucket(Bucket=bucket)
            rounds.append(one_round(S3Records(s3, bucket=bucket, prefix="prod/reconciler"), timing))
            print(f"round {n + 1}: step-down {rounds[-1]['stepped_down_s']:.2f} s, death {rounds[-1]['died_s']:.2f} s",
                  flush=True)
    baseline = statistics.median(r["stepped_down_s"] for r in rounds)
    rows = []
    for scenario, key in (("leader steps down (baseline)", "stepped_down_s"), ("leader dies", "died_s")):
        seconds = [r[key] for r in rounds]
        rows.append([scenario, statistics.median(seconds), min(seconds), max(seconds),
                     statistics.median(seconds) / max(baseline, 1e-9), timing.duration_s, timing.retry_s])
    print_table(f"a new leader after the leader stops, 3 replicas, {args.rounds} round(s)",
                ["leader", "median s", "min s", "max s", "x baseline", "lease s", "retry s"], rows)
    write_results("takeover", {"timing": {"duration_s": timing.duration_s, "renew_deadline_s": timing.renew_deadline_s,
                                          "retry_s": timing.retry_s}, "rounds": rounds,
                               "median_stepped_down_s": baseline, "median_died_s": rows[1][1],
                               "died_vs_stepped_down": rows[1][4]})


if __name__ == "__main__":
    main()
