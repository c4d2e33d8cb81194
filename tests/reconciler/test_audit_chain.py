"""The audit chain, pure: canonical bytes, sequence numbers, `prev` hashes, and the verdict on
each kind of tampering. Expected hashes are computed here with hashlib over the JSON the spec
describes (sorted keys, `,` and `:` without spaces), not taken from the code under test."""

from __future__ import annotations

import hashlib
import itertools
import json

import pytest

from reconciler.audit_chain import (
    GENESIS,
    START,
    Link,
    canonical,
    chained,
    check_checkpoint,
    explain_chain,
    file_bytes,
    flat_record_path,
    record_path,
    verify_chain,
)

PAYLOADS = [{"type": "intent", "stacks": [{"stack": "org"}], "intent": "i1"},
            {"type": "outcome", "stack": "org", "intent": "i1", "outcome": "applied"},
            {"type": "intent", "stacks": [{"stack": "project-vision"}], "intent": "i2"},
            {"type": "outcome", "stack": "project-vision", "intent": "i2", "outcome": "failed"}]


IN = "records/0000/00/"  # the directory of records 1-99


def _files(records: list[dict[str, object]]) -> list[tuple[str, bytes]]:
    return [(record_path(r), file_bytes(r)) for r in records]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data.rstrip(b"\n")).hexdigest()


def test_canonical_form_is_sorted_keys_without_whitespace() -> None:
    assert canonical({"b": 1, "a": [1, {"d": "é", "c": None}]}) == '{"a":[1,{"c":null,"d":"é"}],"b":1}'.encode()


def test_records_are_numbered_and_chained_from_the_genesis_value() -> None:
    records = chained(PAYLOADS, START)
    assert [r["seq"] for r in records] == [1, 2, 3, 4]
    assert records[0]["prev"] == "0" * 64 == GENESIS
    for before, after in itertools.pairwise(records):
        expected = hashlib.sha256(json.dumps(before, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        assert after["prev"] == expected
    assert [record_path(r) for r in records] == [
        "records/0000/00/00000001-intent-pass.json", "records/0000/00/00000002-outcome-org.json",
        "records/0000/00/00000003-intent-pass.json", "records/0000/00/00000004-outcome-project-vision.json"]


@pytest.mark.parametrize(("seq", "path"), [
    (99, "records/0000/00/00000099-intent-pass.json"), (100, "records/0000/01/00000100-intent-pass.json"),
    (9_999, "records/0000/99/00009999-intent-pass.json"), (10_000, "records/0001/00/00010000-intent-pass.json"),
    (1_234_567, "records/0123/45/01234567-intent-pass.json")])
def test_a_hundred_records_to_a_directory_and_a_hundred_directories_above(seq: int, path: str) -> None:
    """Each commit rewrites three small trees, never one that lists every record so far."""
    assert record_path({"seq": seq, "type": "intent"}) == path


def test_trails_of_the_flat_layout_verify_and_continue_sharded() -> None:
    """Records written before the sharded layout stay where they are: accepted in the flat
    `records/` directory before the first sharded record, refused after one."""
    records = chained(PAYLOADS, START)
    flat = [(flat_record_path(r), file_bytes(r)) for r in records]
    assert flat[0][0] == "records/00000001-intent-pass.json"
    assert verify_chain(flat).ok
    mixed = [*flat[:2], *_files(records[2:])]
    verdict = verify_chain(mixed)
    assert verdict.ok and verdict.records == 4 and verdict == explain_chain(mixed)
    late = [*_files(records[:2]), *flat[2:]]
    verdict = verify_chain(late)
    assert verdict.broken is not None and verdict.broken.path == "records/00000003-intent-pass.json"
    assert "legacy flat layout after records in the sharded one" in verdict.broken.why
    assert verdict == explain_chain(late)


def test_a_chain_continues_after_a_given_link() -> None:
    (record,) = chained([PAYLOADS[0]], Link(41, "ab" * 32))
    assert (record["seq"], record["prev"]) == (42, "ab" * 32)
    with pytest.raises(ValueError, match="not one of"):
        chained([{"type": "gossip"}], START)


def test_an_intact_chain_verifies() -> None:
    files = _files(chained(PAYLOADS, START))
    verdict = verify_chain(files)
    assert verdict.ok and verdict.records == 4
    assert verdict.last == Link(4, _sha(files[-1][1]))


def _edit(files: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    record = json.loads(files[1][1])
    record["outcome"] = "failed"  # rewritten, still canonical
    return [files[0], (files[1][0], file_bytes(record)), *files[2:]]


def _insert(files: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    forged = {**json.loads(files[1][1]), "stack": "org-forged"}
    return [*files, (record_path(forged), file_bytes(forged))]


def _reorder(files: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    return [files[0], (files[1][0], files[2][1]), (files[2][0], files[1][1]), files[3]]


def _renumber(files: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    a, b = json.loads(files[1][1]), json.loads(files[2][1])
    a["seq"], b["seq"] = 3, 2  # swapped and renamed to match: the prev hashes no longer line up
    return [files[0], (record_path(b), file_bytes(b)), (record_path(a), file_bytes(a)), files[3]]


@pytest.mark.parametrize(("tamper", "path", "why"), [
    pytest.param(_edit, f"{IN}00000003-intent-pass.json", f"record 2 ({IN}00000002-outcome-org.json) hashes to",
                 id="edited"),
    pytest.param(lambda f: [f[0], *f[2:]], f"{IN}00000003-intent-pass.json", "record 2 is missing", id="deleted"),
    pytest.param(_insert, f"{IN}00000002-outcome-org-forged.json", "a record was inserted", id="inserted"),
    pytest.param(_reorder, f"{IN}00000002-outcome-org.json", f"belongs at {IN}00000003-intent-pass.json",
                 id="reordered"),
    pytest.param(_renumber, f"{IN}00000002-intent-pass.json", "record 1 was edited, or this record was edited",
                 id="renumbered"),
    pytest.param(lambda f: [f[0], (f[1][0], f[1][1].replace(b",", b", ")), *f[2:]],
                 f"{IN}00000002-outcome-org.json", "not in canonical form", id="whitespace"),
    pytest.param(lambda f: [(f[0][0], b"{not json"), *f[1:]], f"{IN}00000001-intent-pass.json", "not JSON",
                 id="garbage"),
])
def test_each_kind_of_tampering_names_the_first_bad_record(tamper, path: str, why: str) -> None:  # type: ignore[no-untyped-def]
    verdict = verify_chain(tamper(_files(chained(PAYLOADS, START))))
    assert verdict.broken is not None
    assert verdict.broken.path == path, verdict.broken
    assert why in verdict.broken.why, verdict.broken


@pytest.mark.parametrize("tamper", [lambda f: f, _edit, lambda f: [f[0], *f[2:]], _insert, _reorder, _renumber,
                                    lambda f: [(f[0][0], b"{not json"), *f[1:]], lambda f: f[:0]],
                         ids=["intact", "edited", "deleted", "inserted", "reordered", "renumbered", "garbage", "empty"])
def test_the_one_pass_check_and_the_careful_walk_agree(tamper) -> None:  # type: ignore[no-untyped-def]
    """`verify_chain` parses each record once and hands any anomaly to `explain_chain`; the two
    give one verdict on every intact and tampered chain."""
    files = tamper(_files(chained(PAYLOADS, START)))
    assert verify_chain(files) == explain_chain(files)


def test_a_forged_first_record_must_start_from_the_genesis_value() -> None:
    (record,) = chained([PAYLOADS[0]], Link(0, "f" * 64))
    verdict = verify_chain(_files([record]))
    assert verdict.broken is not None and "genesis" in verdict.broken.why


def test_the_checkpoint_finds_a_removed_tail_and_a_consistently_rebuilt_branch() -> None:
    records = chained(PAYLOADS, START)
    written = Link(4, _sha(file_bytes(records[-1])))
    assert check_checkpoint(verify_chain(_files(records)), [written]) is None
    tail_gone = check_checkpoint(verify_chain(_files(records[:3])), [written])
    assert tail_gone is not None and "ends at record 3, but record 4 was written" in tail_gone.why
    rebuilt = chained([PAYLOADS[0], {**PAYLOADS[1], "outcome": "failed"}, *PAYLOADS[2:]], START)
    assert verify_chain(_files(rebuilt)).ok  # the chain alone cannot see it ...
    found = check_checkpoint(verify_chain(_files(rebuilt)), [written])
    assert found is not None and "record 4 is not the one written" in found.why  # ... the checkpoint can


def test_either_side_of_a_rebase_matches_the_checkpoint() -> None:
    records = chained(PAYLOADS, START)
    before, after = Link(2, "e" * 64), Link(4, _sha(file_bytes(records[-1])))
    assert check_checkpoint(verify_chain(_files(records)), [before, after]) is None
    assert check_checkpoint(verify_chain(_files(records)), []) is None  # no checkpoint: the chain alone
