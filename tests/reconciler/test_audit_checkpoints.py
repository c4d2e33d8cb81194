"""Signed checkpoints and their judgement, pure (the S3 witness and the whole trail from a clone
are tests/integration/test_audit_from_a_clone.py): a checkpoint proves itself only with its own
signature and namespace; `judge` names a rollback, a checkpoint that does not prove itself and an
alive checkpoint naming a record the branch lacks; a directory witness round trip."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from reconciler.audit_checkpoints import HeadRelation, Listed, Opened, Statement, branch_dir, judge, opened, sealed
from reconciler.audit_signing import CHECKPOINT_NAMESPACE, GIT_NAMESPACE, SigningKey, check
from reconciler.audit_witness import DirectoryWitness, opener, publish

BRANCH = "hypergov/audit"
KEY = SigningKey.generate()
NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
HASHES = {1: "a" * 64, 2: "b" * 64, 3: "c" * 64}


def _statement(seq: int = 3, *, kind: str = "records", head: str = "f" * 40, at: datetime = NOW) -> Statement:
    return Statement(writer="w1", branch=BRANCH, seq=seq, sha256=HASHES.get(seq, "d" * 64), head=head,
                     at=at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), kind=kind,  # type: ignore[arg-type]
                     interval_s=60 if kind == "alive" else None, public_key=KEY.public_line)


def _judge(statements: list[Statement], relation: HeadRelation = "tip", now: datetime = NOW,
           tampered: bytes | None = None) -> str | None:
    bodies = {s.name: tampered or sealed(s, KEY) for s in statements}
    verdict = judge(where="w", branch=BRANCH, hashes=HASHES, last_seq=3, listed=[Listed(n) for n in bodies],
                    read=lambda name: opened(name, bodies[name]), head_relation=lambda head: relation, now=now)
    return verdict.broken.why if verdict.broken else None


def test_a_checkpoint_proves_itself_only_with_its_own_signature_and_namespace() -> None:
    statement = _statement()
    good = opened(statement.name, sealed(statement, KEY))
    assert good.signed_by == KEY.blob and good.problem == ""
    data = json.loads(sealed(statement, KEY))
    data["checkpoint"]["seq"] = 2  # one field changed after signing
    assert "bad signature" in opened(statement.name, json.dumps(data).encode()).problem
    signature = KEY.sign(statement.body(), CHECKPOINT_NAMESPACE)
    assert check(signature, statement.body(), GIT_NAMESPACE).signer is None  # never passes as a commit signature
    assert "not an allowed signer" in check(signature, statement.body(), CHECKPOINT_NAMESPACE,
                                            allowed=[SigningKey.generate().blob]).why


def test_judge_names_a_rollback_a_forged_checkpoint_and_a_late_alive() -> None:
    assert _judge([_statement()]) is None
    rolled = _judge([_statement()], relation="missing")
    assert rolled is not None and "rolled back or rewritten" in rolled
    forged = json.loads(sealed(_statement(), KEY))
    forged["checkpoint"]["head"] = "e" * 40
    why = _judge([_statement()], tampered=json.dumps(forged).encode())
    assert why is not None and "does not prove itself" in why
    alive = _statement(3, kind="alive")
    assert _judge([_statement(), alive]) is None
    late = _judge([_statement(), alive], now=NOW + timedelta(minutes=4))
    assert late is not None and "stale" in late
    ahead = Statement(**{**alive.__dict__, "seq": 4})
    missing = _judge([_statement(), ahead])
    assert missing is not None and "record 4 is missing" in missing and "alive checkpoint" in missing


def test_a_directory_witness_round_trip(tmp_path: Path) -> None:
    witness = DirectoryWitness(tmp_path)
    statement = _statement()
    assert publish([witness], statement, KEY) == []
    listed = witness.listing(branch_dir(BRANCH))
    assert [item.record for item in listed] == [("w1", 3, "c" * 64)]
    read: Opened = opener(witness)(listed[0].name)
    assert read.statement == statement and read.signed_by == KEY.blob
    first = (tmp_path / listed[0].name).read_bytes()
    later = Statement(**{**statement.__dict__, "at": "2026-12-06T13:00:00.000000Z"})
    assert publish([witness], later, KEY) == []  # a later pass that pushed nothing new: vouched for already
    assert (tmp_path / listed[0].name).read_bytes() == first  # the first stays
