"""Shared records (`engines.objects`): a compare-and-swap on a local file and on an S3 object in
the embedded endpoint's S3 (moto's server, which serves PutObject's If-Match / If-None-Match as
S3 documents them: a failed condition is 412 PreconditionFailed). A lost write is a WriteConflict;
`update` re-reads and changes what the other writer wrote, never overwriting it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from embedded_aws import EmbeddedAws
from engines.objects import LocalRecords, RecordStore, RecordUnreadable, S3Records, WriteConflict, update

BUCKET = "acme-hypergov-state"


def record_store(kind: str, aws: EmbeddedAws, tmp_path: Path, *, bucket: str = BUCKET) -> RecordStore:
    """The state directory's store ("local") or the state bucket's ("s3", a bucket of its own per test)."""
    if kind == "local":
        return LocalRecords(tmp_path / "records")
    s3 = aws.client("s3", region="us-east-1")
    name = f"{bucket}-{tmp_path.name[-20:].lower().replace('_', '-')}".rstrip("-")
    s3.create_bucket(Bucket=name)
    return S3Records(s3, bucket=name, prefix="prod/reconciler")


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, aws: EmbeddedAws, tmp_path: Path) -> Iterator[RecordStore]:
    yield record_store(request.param, aws, tmp_path)


def test_a_first_write_happens_once(store: RecordStore) -> None:
    etag = store.write("reconciler.json", {"branches": {}}, expected=None)
    with pytest.raises(WriteConflict):
        store.write("reconciler.json", {"branches": {"main": {}}}, expected=None)
    found = store.read("reconciler.json")
    assert found is not None and found.data == {"branches": {}} and found.etag.strip('"') == etag.strip('"')


def test_a_write_with_the_version_read_wins_and_a_stale_one_loses(store: RecordStore) -> None:
    first = store.write("r.json", {"n": 1}, expected=None)
    second = store.write("r.json", {"n": 2}, expected=first)
    with pytest.raises(WriteConflict):
        store.write("r.json", {"n": 3}, expected=first)  # the version read is gone
    found = store.read("r.json")
    assert found is not None and found.data == {"n": 2} and found.etag.strip('"') == second.strip('"')


def test_a_missing_record_reads_as_none(store: RecordStore) -> None:
    assert store.read("nothing.json") is None


def test_update_applies_the_change_to_what_another_writer_wrote(store: RecordStore) -> None:
    store.write("r.json", {"stacks": ["org"]}, expected=None)
    raced = []

    def change(data: dict[str, Any]) -> dict[str, Any]:
        if not raced:  # another replica writes between this read and this write
            current = store.read("r.json")
            assert current is not None
            store.write("r.json", {"stacks": [*current.data["stacks"], "project-vision"]}, expected=current.etag)
            raced.append(True)
        return {"stacks": sorted({*data["stacks"], "project-speech"})}

    update(store, "r.json", change)
    found = store.read("r.json")
    assert found is not None and found.data == {"stacks": ["org", "project-speech", "project-vision"]}


def test_update_gives_up_with_a_conflict_when_every_write_loses(store: RecordStore) -> None:
    store.write("r.json", {"n": 0}, expected=None)

    def change(data: dict[str, Any]) -> dict[str, Any]:
        current = store.read("r.json")
        assert current is not None
        store.write("r.json", {"n": current.data["n"] + 1}, expected=current.etag)  # always someone first
        return {"n": -1}

    with pytest.raises(WriteConflict, match="changed under each of 3 writes"):
        update(store, "r.json", change, attempts=3)
    found = store.read("r.json")
    assert found is not None and found.data == {"n": 3}  # the others' writes, none clobbered


def test_an_unreadable_record_is_named(store: RecordStore, aws: EmbeddedAws) -> None:
    if isinstance(store, LocalRecords):
        (store.root / "bad.json").parent.mkdir(parents=True, exist_ok=True)
        (store.root / "bad.json").write_text("{not json")
    else:
        assert isinstance(store, S3Records)
        store.s3.put_object(Bucket=store.bucket, Key=store.key("bad.json"), Body=b"[1, 2]")
    with pytest.raises(RecordUnreadable, match=r"bad\.json is unreadable"):
        store.read("bad.json")


def test_s3_says_precondition_failed_for_a_lost_conditional_write(aws: EmbeddedAws) -> None:
    """The S3 behaviour the store relies on, straight from boto3 (S3 API reference, PutObject:
    If-None-Match `*` and If-Match; 412 Precondition Failed when the condition fails)."""
    s3 = aws.client("s3", region="us-east-1")
    s3.create_bucket(Bucket="conditional-writes")
    put = s3.put_object(Bucket="conditional-writes", Key="k", Body=b"1", IfNoneMatch="*")
    with pytest.raises(ClientError) as again:
        s3.put_object(Bucket="conditional-writes", Key="k", Body=b"2", IfNoneMatch="*")
    assert again.value.response["Error"]["Code"] == "PreconditionFailed"
    s3.put_object(Bucket="conditional-writes", Key="k", Body=b"3", IfMatch=put["ETag"])
    with pytest.raises(ClientError) as stale:
        s3.put_object(Bucket="conditional-writes", Key="k", Body=b"4", IfMatch=put["ETag"])
    assert stale.value.response["Error"]["Code"] == "PreconditionFailed"
