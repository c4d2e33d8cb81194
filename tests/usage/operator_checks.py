"""The import's common steps for its tests: import the operator's data into gpu-west's store as
`hypergov usage import` does (under the store's lock), account it as the collector's own
(`usage.ingest.account_cluster`), read the warehouse, and the example's hand-derived figures."""

from __future__ import annotations

import shutil
from functools import cache
from pathlib import Path

import yaml

from hypergov.model.tree import GovernanceTree
from tests.example_tree import CONFIG, example_tree
from tests.usage.operator_fixtures import OPERATOR_CLUSTER, P5, seconds
from usage.adapter import cluster_pools
from usage.collector_store import CollectorStore
from usage.ingest import ClusterJob, account_cluster
from usage.operator_import import ImportedCluster, first_own_start, import_cluster
from usage.operator_layout import RawSource, read_raw
from usage.operator_write import Written, collector_attempts, write_import
from usage.resources import ResourceKind
from usage.summary import UsagePeriod
from usage.warehouse import Warehouse, warehouse_dir

CLUSTER = "gpu-west"


@cache
def tree() -> GovernanceTree:
    return example_tree()


def settings_file(tmp_path: Path) -> Path:
    """A settings file over a copy of the example tree, the state under `tmp_path / "state"`."""
    shutil.copytree(CONFIG, tmp_path / "config", dirs_exist_ok=True)
    path = tmp_path / "hypergov.yaml"
    path.write_text(yaml.safe_dump({"config_dir": str(tmp_path / "config"), "state_dir": str(tmp_path / "state")}))
    return path


def import_into(state_dir: Path, source: RawSource) -> tuple[ImportedCluster, Written]:
    """What `hypergov usage import` does for one cluster, under the store's lock."""
    raw = read_raw(source)
    assert raw.unreadable == []
    store = CollectorStore.of(state_dir, CLUSTER)
    pools = {(p.instance_type, p.kind) for p in cluster_pools(tree(), CLUSTER)}
    with store.held():
        imported = import_cluster(raw.workloads, raw.heartbeats, cluster=CLUSTER, operator_cluster=OPERATOR_CLUSTER,
                                  pools=pools, before=first_own_start(store.checkpoint().coverage),
                                  known=collector_attempts(store))
        return imported, write_import(store, imported)


def accounted_period(state_dir: Path) -> UsagePeriod:
    account_cluster(ClusterJob(CLUSTER, tuple(cluster_pools(tree(), CLUSTER)), state_dir, warehouse_dir(state_dir),
                               now=seconds(24)))
    return Warehouse(warehouse_dir(state_dir)).period(seconds(9), seconds(13), clusters=[CLUSTER])


def p5_figures(period: UsagePeriod, kind: ResourceKind = ResourceKind.GPU) -> dict[str, tuple[float, ...]]:
    """Per team using the pool: hours used, own, borrowed, lent, idle guarantee, lost (summed
    intervals of floats: rounded to 1e-9 h)."""
    return {t.team: tuple(round(f, 9) for f in (t.used, t.own, t.borrowed, t.lent, t.idle_guarantee,
                                                 t.lost_to_preemption))
            for t in period.teams if t.instance_type == P5 and t.kind is kind and t.used > 0}


def assert_example_figures(period: UsagePeriod) -> None:
    """gpu-west's ml.p5.48xlarge GPU pool: 32 instances x 8 = 256 GPUs; guarantees (12, 4, 12 instances)
    nlp 96, recsys 32, vision 96 = 224, so 32 GPUs nobody is guaranteed (idle sharing on).
    Covered (heartbeats in the hours 09, 10, 12): [09:00, 11:00) and [12:00, 13:00); 11:00-12:00 missing.

    vision: 64 GPUs from 09:30; its 12:05 row holds the same (one attempt); the last row lies in the
    covered range [12:00, 13:00), which ends the attempt at 13:00 (I5). Used in covered time:
    (11:00 - 09:30) + (13:00 - 12:00) = 2.5 h x 64 = 160 GPU-h, all own (64 <= 96). Idle guarantee:
    96 x 0.5 h (09:00-09:30) + 32 x 1.5 h + 32 x 1 h = 48 + 48 + 32 = 128 GPU-h.
    nlp: the 10:00 rows are resourceVersions 1100 (not admitted) and 1105 (admitted): 1105 is
    read (I4): 128 GPUs from 10:00 to the `Evicted-True` row at 10:45, preempted (I5).
    Used 128 x 0.75 h = 96 GPU-h; own min(128, 96) x 0.75 = 72; borrowed 32 x 0.75 = 24; lost to
    preemption 96. Its 32 borrowed GPUs come from the 32 nobody is guaranteed first (A2): from
    nobody 24 GPU-h, nobody lends. Idle guarantee: 96 x 3 covered hours - 72 = 216 GPU-h.
    vCPU (ml.p5.48xlarge's pool): vision's 95.5 vCPUs x 2.5 h = 238.75 vCPU-h.
    The `default` namespace's shell is no team's: not imported (reported)."""
    assert p5_figures(period) == {"vision": (160.0, 160.0, 0.0, 0.0, 128.0, 0.0),
                           "nlp": (96.0, 72.0, 24.0, 0.0, 216.0, 96.0)}
    assert p5_figures(period, ResourceKind.VCPU) == {"vision": (238.75, 238.75, 0.0, 0.0, 12 * 192 * 3 - 238.75, 0.0)}
    [pool] = [p for p in period.pools if p.instance_type == P5 and p.kind is ResourceKind.GPU]
    assert tuple(round(f, 9) for f in (pool.used, pool.from_nobody, pool.capacity_hours)) == (256.0, 24.0, 768.0)
    assert [(m.cluster, m.start, m.end) for m in period.missing] == [(CLUSTER, seconds(11), seconds(12))]
