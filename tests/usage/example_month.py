"""The example org's example month: March 2026 on gpu-west, as its collector would have kept it
(watching from 2026-03-01T00:00Z to 2026-04-01T00:00Z without a gap), five jobs, each a Kueue
Workload valid against the v1beta1 CRD, retired through the collector's store when it ended:

| job | team | pods x GPUs | instance type | from (UTC) | to (UTC) | hours | ended |
|---|---|---|---|---|---|---:|---|
| train-base | vision | 12 x 8 = 96 | ml.p5.48xlarge | 03-02 00:00 | 03-06 04:00 | 100 | finished |
| train-burst | vision | 6 x 8 = 48 | ml.p5.48xlarge | 03-03 00:00 | 03-03 10:00 | 10 | finished |
| pretrain | nlp | 6 x 8 = 48 | ml.p5.48xlarge | 03-10 00:00 | 03-18 08:00 | 200 | finished |
| ranker | recsys | 5 x 8 = 40 | ml.p5.48xlarge | 03-20 00:00 | 03-20 05:00 | 5 | preempted |
| asr | speech | 4 x 4 = 16 | ml.g5.12xlarge | 03-05 00:00 | 03-07 00:00 | 48 | finished |

Each pod asks 24 vCPUs. `tests/usage/test_example_month.py` derives the month's hours and
chargeback from this table by hand; `python -m tests.usage.example_month` rewrites the golden
report (review the diff: the test checks the figures by hand too)."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from tests.example_tree import CONFIG
from tests.usage.workload_fixtures import condition, validate, workload
from usage.collector_state import Checkpoint, KeptWorkload
from usage.collector_store import CollectorStore
from usage.coverage import CoveredRange

MONTH = "2026-03"
CLUSTER = "gpu-west"
P5, G5 = "ml.p5.48xlarge", "ml.g5.12xlarge"
GOLDEN = Path(__file__).resolve().parent / "golden" / "example-month.md"
JOBS: tuple[tuple[str, str, int, int, str, str, str, str, str], ...] = (
    # name, team, pods, GPUs per pod, instance type, priority class, start, end, ending
    ("train-base", "vision", 12, 8, P5, "training", "2026-03-02T00:00:00Z", "2026-03-06T04:00:00Z", "Finished"),
    ("train-burst", "vision", 6, 8, P5, "experimentation", "2026-03-03T00:00:00Z", "2026-03-03T10:00:00Z",
     "Finished"),
    ("pretrain", "nlp", 6, 8, P5, "training", "2026-03-10T00:00:00Z", "2026-03-18T08:00:00Z", "Finished"),
    ("ranker", "recsys", 5, 8, P5, "training", "2026-03-20T00:00:00Z", "2026-03-20T05:00:00Z", "Preempted"),
    ("asr", "speech", 4, 4, G5, "inference", "2026-03-05T00:00:00Z", "2026-03-07T00:00:00Z", "Finished"),
)


def _utc(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


def job_workload(name: str, team: str, pods: int, gpus: int, itype: str, priority: str, start: str, end: str,
                 ending: str) -> dict[str, Any]:
    """The job's Workload as Kueue leaves it: admitted at `start`, then finished or evicted by
    preemption at `end`."""
    last = condition("Finished", "True", end, "Succeeded") if ending == "Finished" else \
        condition("Evicted", "True", end, "Preempted")
    body = workload(team=team, name=name, gpus=gpus, pods=pods, cpu="24", flavor=itype,
                    priority=f"{priority}-priority", conditions=[
                        condition("QuotaReserved", "True", start), condition("Admitted", "True", start), last])
    body["metadata"]["uid"] = f"{team}-{name}"
    return validate(body)


def write_store(state_dir: Path) -> CollectorStore:
    store = CollectorStore.of(state_dir, CLUSTER)
    for job in JOBS:
        body = job_workload(*job)
        store.retire(KeptWorkload(uid=body["metadata"]["uid"], body=body, deleted=True), _utc(job[7]))
    store.save(Checkpoint(resource_version="4711", coverage=(
        CoveredRange(_utc("2026-03-01T00:00:00Z"), _utc("2026-04-01T00:00:00Z"), "list"),)))
    return store


def settings_env(root: Path) -> dict[str, str]:
    """The example tree and a state directory holding the example month, under `root`."""
    shutil.copytree(CONFIG, root / "config", dirs_exist_ok=True)
    (root / "hypergov.yaml").write_text(yaml.safe_dump({"config_dir": str(root / "config"),
                                                         "state_dir": str(root / "state")}))
    write_store(root / "state")
    return {"HYPERGOV_SETTINGS": str(root / "hypergov.yaml")}


def report(root: Path, *args: str) -> Any:
    from cli.main import main

    return CliRunner().invoke(main, ["usage", "report", "--month", MONTH, *args], env=settings_env(root))


def main() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        result = report(Path(scratch))
        if result.exit_code != 0:
            raise SystemExit(result.output)
        GOLDEN.write_text(result.stdout, encoding="utf-8")
    print(GOLDEN)


if __name__ == "__main__":
    main()
