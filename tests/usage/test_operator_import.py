"""The usage-report operator's raw data imported into a cluster's collector store, then accounted
as the collector's own (`usage.ingest.account_cluster`) and read from the warehouse: the figures
are the hand-derived ones; importing twice adds nothing; what the records cannot say in
hypergov's terms is reported, located; the collector's own record wins (SEMANTICS.md I1-I8)."""

from __future__ import annotations

from pathlib import Path

from tests.usage.operator_checks import CLUSTER, accounted_period, assert_example_figures, import_into
from tests.usage.operator_fixtures import (
    FILE,
    OPERATOR_CLUSTER,
    P5,
    at,
    example_rows,
    partition,
    seconds,
    workload_row,
    write_example,
    write_heartbeats,
    write_workloads,
)
from usage.collector_state import IMPORTED_RULES, Checkpoint, ClosedAttempt, KeptWorkload, RetiredWorkload
from usage.collector_store import FINISHED_DIR, CollectorStore
from usage.coverage import CoveredRange
from usage.operator_import import ImportedCluster, import_cluster, merged_coverage, uid_of
from usage.operator_layout import DirectorySource, read_raw
from usage.operator_write import Written
from usage.resources import ResourceKind


def test_the_example_accounts_to_the_hand_derived_figures(tmp_path: Path) -> None:
    imported, written = import_into(tmp_path / "state", DirectorySource(write_example(tmp_path / "bucket")))
    assert imported.attempts == 2 and written == Written(lines=2, segment="2025-04-16", coverage_changed=True)
    coverage = CollectorStore.of(tmp_path / "state", CLUSTER).checkpoint().coverage
    assert [(r.start, r.end, r.began) for r in coverage] == [(at(9), at(11), "import"), (at(12), at(13), "import")]
    assert_example_figures(accounted_period(tmp_path / "state"))


def test_importing_twice_adds_nothing_and_gives_the_same_figures(tmp_path: Path) -> None:
    source = DirectorySource(write_example(tmp_path / "bucket"))
    import_into(tmp_path / "state", source)
    segment = CollectorStore.of(tmp_path / "state", CLUSTER).root / FINISHED_DIR / "attempts-2025-04-16.jsonl"
    before = segment.read_bytes()
    _, again = import_into(tmp_path / "state", source)
    assert again == Written(lines=0, segment=None, coverage_changed=False) and not again.anything
    assert segment.read_bytes() == before
    assert_example_figures(accounted_period(tmp_path / "state"))


def test_lines_appended_again_change_nothing(tmp_path: Path) -> None:
    """The readers merge a uid's lines: an import appended twice (by hand, say) reads as once."""
    imported, _ = import_into(tmp_path / "state", DirectorySource(write_example(tmp_path / "bucket")))
    store = CollectorStore.of(tmp_path / "state", CLUSTER)
    for workload in imported.workloads:
        store.add_retired(workload, "2025-04-20")
    assert {w.uid: w for w in imported.workloads} == store.retired()
    assert_example_figures(accounted_period(tmp_path / "state"))


def test_an_unknown_namespace_is_reported_where_it_is(tmp_path: Path) -> None:
    imported, _ = import_into(tmp_path / "state", DirectorySource(write_example(tmp_path / "bucket")))
    where = partition(tmp_path / "bucket", "workload", at(10), OPERATOR_CLUSTER) / FILE
    [entry] = imported.entries
    assert entry.at == f"{where} row 4" and not entry.error  # the hour's rows: nlp's two, nlp's eviction, the shell
    assert entry.reason == ("namespace default is no team's (hyperpod-ns-<team>): workload debug-shell's 1 row(s) "
                            "not imported")
    assert uid_of(OPERATOR_CLUSTER, "default", "debug-shell", P5) not in CollectorStore.of(
        tmp_path / "state", CLUSTER).retired()


def test_imported_records_are_read_as_they_are_never_from_a_body(tmp_path: Path) -> None:
    attempt = ClosedAttempt("vision", "training", 100, 200, False, ((P5, ResourceKind.GPU, 56),))
    record = RetiredWorkload("op-1", (attempt,), None, IMPORTED_RULES)
    assert record.spans(CLUSTER) == attempt.spans(CLUSTER)
    assert RetiredWorkload("op-1", (attempt,), None, 0).spans(CLUSTER) is None  # other rules: read the body again


def test_the_collector_wins_where_it_watched_or_kept_the_workload(tmp_path: Path) -> None:
    """The collector began at 12:30 and listed vision's Workload, admitted at 09:31: the imported
    coverage stops at 12:30, and vision's imported attempt (which overlaps the collector's) is left
    out, reported; nlp's (not seen by the collector) is imported."""
    from tests.usage.collector_fixtures import workload

    store = CollectorStore.of(tmp_path / "state", CLUSTER)
    own = CoveredRange(at(12, 30), at(14), "list")
    store.save(Checkpoint(resource_version="42", coverage=(own,)))
    body = workload("vit-pretrain-7f2c", team="vision", created=at(9), admitted=at(9, 31), gpus=64)
    store.put(KeptWorkload(uid=str(body.body["metadata"]["uid"]), body=body.body))
    imported, _ = import_into(tmp_path / "state", DirectorySource(write_example(tmp_path / "bucket")))
    assert [w.attempts[0].team for w in imported.workloads] == ["nlp"]
    assert any("the collector's is used" in e.reason and "vit-pretrain-7f2c" in e.reason for e in imported.entries)
    checkpoint = store.checkpoint()
    assert checkpoint.resource_version == "42"
    assert [(r.start, r.end, r.began) for r in checkpoint.coverage] == [
        (at(9), at(11), "import"), (at(12), at(12, 30), "import"), (own.start, own.end, "list")]


def test_merged_coverage_joins_imports_and_keeps_the_collectors_ranges() -> None:
    own = (CoveredRange(at(12), at(13), "list"), CoveredRange(at(13), at(14), "resume"))
    earlier = (CoveredRange(at(8), at(9), "import"), *own)
    merged = merged_coverage(earlier, (CoveredRange(at(9), at(10), "import"), CoveredRange(at(11), at(13), "import")))
    assert merged == (CoveredRange(at(8), at(10), "import"), CoveredRange(at(11), at(12), "import"), *own)
    assert merged_coverage(merged, (CoveredRange(at(9), at(10), "import"),)) == merged  # idempotent


def _one(tmp_path: Path, rows: list[dict[str, object]], hours: tuple[int, ...] = (9, 10, 11),
         pools: set[tuple[str, ResourceKind]] | None = None) -> ImportedCluster:
    write_workloads(tmp_path, rows)
    write_heartbeats(tmp_path, hours)
    raw = read_raw(DirectorySource(tmp_path))
    return import_cluster(raw.workloads, raw.heartbeats, cluster=CLUSTER, operator_cluster=OPERATOR_CLUSTER,
                          pools=pools)


def test_what_hypergov_cannot_count_is_reported_and_the_rest_imported(tmp_path: Path) -> None:
    """Half a GPU (a MIG slice the record cannot name) and NeuronCores on a GPU instance type (no
    share of a Neuron device): each reported once; the vCPUs are imported; a finished row ends the
    attempt."""
    imported = _one(tmp_path, [
        workload_row("mig", "vision", at(9), 1, "QuotaReserved-True", gpu=0.5, cpu=4, neuron_core=2),
        workload_row("mig", "vision", at(9, 30), 2, "QuotaReserved-True", gpu=0.5, cpu=4, neuron_core=2),
        workload_row("mig", "vision", at(10), 3, "Finished-True", gpu=0.5, cpu=4, finished=True)],
        pools={(P5, ResourceKind.GPU), (P5, ResourceKind.VCPU)})
    assert [w.attempts for w in imported.workloads] == [(ClosedAttempt(
        "vision", "training", seconds(9), seconds(10), False, ((P5, ResourceKind.VCPU, 4000),)),)]
    assert sorted(e.reason.split(": ", 1)[1] for e in imported.entries) == [
        "NeuronCores per Neuron device of ml.p5.48xlarge are unknown (known: ml.trn1.32xlarge, ml.trn1n.32xlarge); "
        "a request in NeuronCores there has no known share of a device; not imported",
        "nvidia.com/gpu: 0.5 is not a whole number of what Kubernetes allocates (a MIG slice is not named in the "
        "operator's data); not imported"]


def test_a_last_row_outside_the_covered_hours_has_no_end(tmp_path: Path) -> None:
    imported = _one(tmp_path, [workload_row("late", "nlp", at(13), 1, "QuotaReserved-True", gpu=8)])
    assert imported.workloads == () and len(imported.entries) == 1
    assert "its end is unknown" in imported.entries[0].reason and not imported.entries[0].error


def test_a_change_of_amount_starts_a_new_attempt_and_rows_of_one_version_must_agree(tmp_path: Path) -> None:
    imported = _one(tmp_path, [
        workload_row("grow", "nlp", at(9), 1, "QuotaReserved-True", gpu=8),
        workload_row("grow", "nlp", at(10), 2, "QuotaReserved-True", gpu=16),
        workload_row("grow", "nlp", at(10), 2, "QuotaReserved-True", gpu=24)])
    [workload] = imported.workloads
    assert [(a.start, a.end, a.units[0][2]) for a in workload.attempts] == [
        (seconds(9), seconds(10), 8 * 56), (seconds(10), seconds(12), 24 * 56)]
    assert [e.error for e in imported.entries] == [True]
    assert "resourceVersion 2 of workload hyperpod-ns-nlp/grow" in imported.entries[0].reason


def test_an_unreadable_row_names_its_object_and_row(tmp_path: Path) -> None:
    rows = example_rows()
    rows[1]["resource_version"] = "v1650"
    write_workloads(tmp_path, rows)
    [problem] = read_raw(DirectorySource(tmp_path)).unreadable
    assert problem.at.object == str(partition(tmp_path, "workload", at(12), OPERATOR_CLUSTER) / FILE)
    assert problem.at.row == 1 and "resource_version 'v1650'" in problem.problem


def test_an_object_outside_the_layout_is_unreadable(tmp_path: Path) -> None:
    stray = tmp_path / "raw" / "workload" / "2025-04-16" / FILE
    stray.parent.mkdir(parents=True)
    stray.write_bytes(b"not parquet")
    (stray.parent / "_SUCCESS").write_bytes(b"")  # Athena and Hive skip names starting with _ or .
    [problem] = read_raw(DirectorySource(tmp_path)).unreadable
    assert problem.at.object == str(stray) and "not in the operator's layout" in problem.problem


def test_an_eviction_row_still_admitted_marks_the_attempt_preempted(tmp_path: Path) -> None:
    """Kueue may write `Evicted` True before it releases the quota: the operator's report calls the
    attempt preempted all the same (a `QuotaReserved-True` row followed by `Evicted-True`)."""
    imported = _one(tmp_path, [
        workload_row("evicted", "nlp", at(9), 1, "QuotaReserved-True", gpu=8),
        workload_row("evicted", "nlp", at(9, 20), 2, "Evicted-True", gpu=8),
        workload_row("evicted", "nlp", at(9, 25), 3, "QuotaReserved-False", gpu=8, admitted=False),
        workload_row("evicted", "nlp", at(10), 4, "QuotaReserved-True", gpu=8),
        workload_row("evicted", "nlp", at(10, 30), 5, "Finished-True", gpu=8, finished=True)])
    [workload] = imported.workloads
    assert [(a.start, a.end, a.preempted) for a in workload.attempts] == [
        (seconds(9), seconds(9, 25), True), (seconds(10), seconds(10, 30), False)]
