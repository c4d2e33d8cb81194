"""`hypergov audit verify` at scale (issue 33): an audit branch of 100,000 records verified in
under 10 s, measured against 10,000 records in the same run (the baseline; the ratio 100k/10k
is 10 where verification is linear).

The branch is generated as the reconciler writes it, but without running git per commit (the
daemon's `AuditStore.append` runs several git processes per record: hours for 100,000 records):
each pass an `intent` commit (one record naming its stacks) then one commit of the stacks'
`outcome` records (1-5 stacks, 3 on average: about 2 records per commit), now and then a
`rejected` or `refused` record of its own; payloads shaped like `reconciler.audit`'s, with small
realistic content. The records are exactly what `chained()` makes and `file_bytes()` writes, at
`record_path()` (the sharded layout), the commit messages and identity `AuditStore`'s: `git
fast-import` writes them (linear in the sharded layout: about 20 s for 100,000 records), then
every commit is made again signed by a generated writer key as `AuditStore` signs and written
into one pack (`Pack`). `--check-generator` checks that git takes the result (`git fsck
--strict`, `git verify-commit` of the tip) and that it verifies.

Timed separately (best of `--repeat`), at each size:
- `files`: `AuditStore.files(tip)`, `ls-tree -r` and one `cat-file --batch` of every record;
- `chain`: `verify_chain` over those files (canonical form, names, sequence, hashes);
- `history`: `history_break(store, tip)`, `git log --first-parent --name-status` over `records/`
  (every commit only adds records, each after the newest);
- `commits`: `git rev-list` and one `cat-file --batch` of every commit;
- `signatures`: `check_commits` of every commit against the writer's key;
- `verify_branch`: the whole of `audit verify --allowed-signers` with no witness, the worst case:
  every commit's signature checked;
- `verify_checkpointed`: the whole of `audit verify` as it runs by default, with the witness
  holding the writer's signed checkpoint of the push before the last (the last 10 commits' are
  checked; the checkpoint vouches for the rest).
A phase that has not finished after `--timeout` seconds is stopped and reported as such.

Run: `python -m benchmarks.bench_audit [--small 10000] [--big 100000] [--repeat 1]`
(`--big 0` skips the big run). The repositories are made in a temporary directory and deleted.
"""

from __future__ import annotations

import argparse
import calendar
import contextlib
import hashlib
import multiprocessing
import os
import queue
import random
import shutil
import signal
import subprocess
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.common import print_table, write_results
from reconciler.audit import stamp
from reconciler.audit_chain import (
    START,
    Link,
    chained,
    file_bytes,
    record_path,
    record_sha256,
    verify_chain,
)
from reconciler.audit_checkpoints import Statement
from reconciler.audit_signing import SigningKey, allowed_signers_text, signed_commit
from reconciler.audit_store import DEFAULT_BRANCH, IDENTITY, AuditStore
from reconciler.audit_verify import Verification, check_commits, history_break, verify_branch
from reconciler.audit_witness import DirectoryWitness, publish

GOAL_S = 10.0
GOAL_RECORDS = 100_000
EPOCH = 1767225600  # 2026-01-01T00:00:00Z
PROJECTS = [f"project-{n:03d}" for n in range(300)]
TEAMS = [f"team-{n:03d}" for n in range(60)]
RESOURCES = ("aws_iam_role.workload", "aws_iam_role_policy.workload", "aws_s3_bucket.data",
             "aws_s3_bucket_policy.data", "aws_sagemaker_cluster_scheduler_config.policy",
             "aws_sagemaker_compute_quota.team", "kubernetes_namespace.project", "kubernetes_resource_quota.project",
             "aws_kms_key.data", "aws_ecr_repository.images")
ACTIONS = ("create", "update", "update", "update", "replace", "delete")
PHASES = ("files", "chain", "history", "commits", "signatures", "verify_branch", "verify_checkpointed")
UNVOUCHED_COMMITS = 10  # commits after the newest checkpoint: one push's worth, whose checkpoint is not out yet


def _hex(rng: random.Random, n: int) -> str:
    return f"{rng.getrandbits(4 * n):0{n}x}"


def _stamp(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z"


class Passes:
    """The reconciler's passes over an org, as the payload groups it commits (one commit each),
    oldest first; each payload with the writer and time `AuditLog.write` adds."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.writers = [_hex(self.rng, 32) for _ in range(3)]
        self.now = float(EPOCH)

    def _stack(self) -> str:
        return self.rng.choice(PROJECTS) if self.rng.random() < 0.8 else self.rng.choice(TEAMS)

    def _plan(self, stack: str) -> dict[str, Any]:
        actions = sorted({f"{self.rng.choice(ACTIONS)} {self.rng.choice(RESOURCES)}"
                          for _ in range(self.rng.randint(1, 4))})
        counts = {a: 0 for a in ("create", "update", "replace", "delete", "import")}
        for action in actions:
            counts[action.split()[0]] += 1
        return {"stack": stack, "plan_fingerprint": _hex(self.rng, 64), "plan_artifact_sha256": _hex(self.rng, 64),
                "planned": counts, "actions": actions}

    def _stamped(self, payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
        self.now += self.rng.uniform(20, 600)
        writer = self.rng.choice(self.writers)
        return [{**p, "writer": writer, "at": _stamp(self.now)} for p in payloads]

    def __iter__(self) -> Iterator[tuple[str, list[dict[str, Any]]]]:
        while True:
            source, author = _hex(self.rng, 40), f"dev{self.rng.randint(1, 40)} <dev@example.com>"
            if self.rng.random() < 0.04:  # a tree refused by validation, or a pass refused
                kind = self.rng.choice(("rejected", "refused"))
                payload: dict[str, Any] = {"type": kind, "branch": "main", "source_commit": source,
                                           "source_author": author, "outcome": kind}
                if kind == "rejected":
                    payload["problems"] = [{"file": f"projects/{self._stack()}.yaml", "line": self.rng.randint(1, 80),
                                            "rule": "quota-exceeds-cluster", "severity": "error"}]
                else:
                    payload["reason"] = "the plan changed since it was reviewed"
                yield f"{kind} {source[:12]}", self._stamped([payload])
                continue
            plans = [self._plan(s) for s in dict.fromkeys(self._stack() for _ in range(self.rng.randint(1, 5)))]
            intent = _hex(self.rng, 32)
            yield (f"intent: {len(plans)} stack(s)", self._stamped([{
                "type": "intent", "intent": intent, "source_commit": source, "source_author": author,
                "engine": "terraform", "reason": "apply", "review": "reviewed", "stacks": plans}]))
            outcomes = []
            for plan in plans:
                ok = self.rng.random() < 0.95
                started = self.now + self.rng.uniform(0, 5)
                seconds = round(self.rng.uniform(4, 90), 3)
                failed = [] if ok else [{"change": plan["actions"][0], "error": "AccessDenied: not authorized",
                                         "kind": "permission"}]
                outcomes.append({
                    "type": "outcome", "intent": intent, "stack": plan["stack"], "engine": "terraform",
                    "source_commit": source, "source_author": author, "plan_fingerprint": plan["plan_fingerprint"],
                    "plan_artifact_sha256": plan["plan_artifact_sha256"], "planned": plan["planned"],
                    "actions": plan["actions"], "applied": plan["actions"] if ok else plan["actions"][1:],
                    "failed": failed, "skipped": [], "refusal": None, "refusal_kind": None,
                    "error": None if ok else "1 change failed", "error_kind": None if ok else "permission",
                    "outcome": "applied" if ok else "failed",
                    "timing": {"started": _stamp(started), "finished": _stamp(started + seconds), "seconds": seconds},
                    "reason": "apply"})
            failed_n = sum(1 for o in outcomes if o["outcome"] != "applied")
            yield (f"outcome: {len(outcomes)} stack(s){f', {failed_n} not applied cleanly' if failed_n else ''}",
                   self._stamped(outcomes))


def _object_header(kind: int, size: int) -> bytes:
    byte, size = (kind << 4) | (size & 15), size >> 4
    out = bytearray()
    while size:
        out.append(byte | 0x80)
        byte, size = size & 0x7F, size >> 7
    out.append(byte)
    return bytes(out)


class Pack:
    """Objects written straight into one pack file and its index (version 2), as `git index-pack`
    would name and index them: one process and no git in the loop (the signed commits, which
    `git fast-import` of git 2.39 cannot write)."""

    COMMIT = 1

    def __init__(self, repo: Path) -> None:
        self.dir = repo / "objects" / "pack"
        self.tmp = self.dir / "tmp_bench_audit.pack"
        self.file = self.tmp.open("wb")
        self.file.write(b"PACK" + (2).to_bytes(4, "big") + (0).to_bytes(4, "big"))
        self.offset = 12
        self.index: list[tuple[bytes, int, int]] = []  # (id, crc32, offset)

    @staticmethod
    def object_id(kind: str, data: bytes | memoryview) -> bytes:
        digest = hashlib.sha1(b"%s %d\0" % (kind.encode(), len(data)))
        digest.update(data)
        return digest.digest()

    def _write(self, oid: bytes, packed: bytes) -> int:
        at = self.offset
        self.file.write(packed)
        self.offset += len(packed)
        self.index.append((oid, zlib.crc32(packed), at))
        return at

    def add(self, kind: int, data: bytes | memoryview, oid: bytes) -> int:
        return self._write(oid, _object_header(kind, len(data)) + zlib.compress(data, 1))

    def close(self) -> None:
        self.file.seek(8)
        self.file.write(len(self.index).to_bytes(4, "big"))
        self.file.close()
        digest = hashlib.sha1()
        with self.tmp.open("rb") as f:
            while block := f.read(1 << 24):
                digest.update(block)
        trailer = digest.digest()
        with self.tmp.open("ab") as f:
            f.write(trailer)
        rows = sorted(self.index)
        fanout, n = [], 0
        for first in range(256):
            while n < len(rows) and rows[n][0][0] == first:
                n += 1
            fanout.append(n)
        big = [at for _, _, at in rows if at >= 1 << 31]
        small, large = bytearray(), bytearray()
        for _, _, at in rows:
            if at >= 1 << 31:
                small += (0x80000000 | len(large) // 8).to_bytes(4, "big")
                large += at.to_bytes(8, "big")
            else:
                small += at.to_bytes(4, "big")
        assert len(large) // 8 == len(big)
        idx = (b"\377tOc" + (2).to_bytes(4, "big") + b"".join(c.to_bytes(4, "big") for c in fanout)
               + b"".join(oid for oid, _, _ in rows) + b"".join(crc.to_bytes(4, "big") for _, crc, _ in rows)
               + bytes(small) + bytes(large) + trailer)
        name = f"pack-{trailer.hex()}"
        (self.dir / f"{name}.idx").write_bytes(idx + hashlib.sha1(idx).digest())
        self.tmp.rename(self.dir / f"{name}.pack")


def _data(payload: bytes) -> bytes:
    return b"data %d\n%s\n" % (len(payload), payload)


def commit_message(records: list[dict[str, Any]], subject: str) -> str:
    """`AuditStore._commit`'s message."""
    body = "".join(f"- {r['seq']} {r['type']} {r.get('stack') or r.get('subject') or 'pass'}"
                   f"{': ' + str(r['outcome']) if r.get('outcome') else ''}\n" for r in records)
    first, last = records[0]["seq"], records[-1]["seq"]
    return f"hypergov audit {first}{f'-{last}' if last != first else ''}: {subject}\n\n{body}"


def generate(repo: Path, records: int, *, seed: int, key: SigningKey, branch: str = DEFAULT_BRANCH) -> dict[str, Any]:
    """A bare repository at `repo` whose `branch` holds `records` records (the last pass cut short
    to make the count exact): `git fast-import` writes the records, their trees and unsigned
    commits (`generate_fast_import`), then every commit is made again signed by `key`, as
    `AuditStore._commit` signs (`signed_commit`: the `gpgsig` header), on the signed parent, and
    written into one pack; the branch points at the signed tip."""
    started = time.perf_counter()
    made = generate_fast_import(repo, records, seed=seed, branch=branch)
    store = AuditStore(repo, branch=branch)
    pack, parent = Pack(repo), b""
    for unsigned in store.objects(store.git("rev-list", "--reverse", made["tip"]).stdout.decode().split()):
        headers, message = unsigned.split(b"\n\n", 1)
        lines = [line for line in headers.split(b"\n") if not line.startswith(b"parent ")]
        if parent:
            lines.insert(1, b"parent " + parent.hex().encode())
        body = signed_commit(b"\n".join(lines) + b"\n\n" + message, key)
        parent = Pack.object_id("commit", body)
        pack.add(Pack.COMMIT, body, parent)
    pack.close()
    store.git("update-ref", f"refs/heads/{branch}", parent.hex())
    return {**made, "tip": parent.hex(), "seconds": time.perf_counter() - started, "repo_bytes": _size(repo)}


def _when(record: dict[str, Any]) -> int:
    return calendar.timegm(time.strptime(record["at"][:19], "%Y-%m-%dT%H:%M:%S"))


def _size(repo: Path) -> int:
    return sum(p.stat().st_size for p in (repo / "objects").rglob("*") if p.is_file())


def generate_fast_import(repo: Path, records: int, *, seed: int, path_of: Callable[[dict[str, Any]], str] = record_path,
                         branch: str = DEFAULT_BRANCH) -> dict[str, Any]:
    """The branch, unsigned, written by one `git fast-import` (about 20 s for 100,000 records in
    the sharded layout; half an hour in the flat one it replaced); `path_of` places a record (the
    product's `record_path`, or an experimental layout)."""
    started = time.perf_counter()
    subprocess.run(["git", "init", "--quiet", "--bare", str(repo)], check=True)
    importer = subprocess.Popen(["git", "-C", str(repo), "fast-import", "--quiet", "--done"], stdin=subprocess.PIPE)
    assert importer.stdin is not None
    name, email = IDENTITY
    last, commits, chunk = START, 0, []
    for subject, payloads in Passes(seed):
        written = chained(payloads[:records - last.seq], last)
        last = Link(written[-1]["seq"], record_sha256(written[-1]))
        ident = b"%s <%s> %d +0000" % (name.encode(), email.encode(), _when(written[-1]))
        chunk.append(b"commit refs/heads/%s\nauthor %s\ncommitter %s\n" % (branch.encode(), ident, ident))
        chunk.append(_data(commit_message(written, subject).encode()))
        for record in written:
            chunk.append(b"M 100644 inline %s\n" % path_of(record).encode())
            chunk.append(_data(file_bytes(record)))
        commits += 1
        if len(chunk) > 2000:
            importer.stdin.write(b"".join(chunk))
            chunk = []
        if last.seq >= records:
            break
    chunk.append(b"done\n")
    importer.stdin.write(b"".join(chunk))
    importer.stdin.close()
    if importer.wait():
        raise RuntimeError(f"git fast-import failed in {repo}")
    tip = subprocess.run(["git", "-C", str(repo), "rev-parse", f"refs/heads/{branch}"], capture_output=True, text=True,
                         check=True).stdout.strip()
    return {"records": last.seq, "commits": commits, "tip": tip, "last": {"seq": last.seq, "sha256": last.sha256},
            "seconds": time.perf_counter() - started, "repo_bytes": _size(repo)}


def _run_phase(fn: Callable[[], object], timeout_s: float) -> tuple[float | None, str]:
    """`fn` timed in a forked child in its own process group (so the git processes it starts go
    with it when it overruns): (seconds, what it returned, briefly), or (None, why) when it did
    not finish within `timeout_s` or failed."""
    context = multiprocessing.get_context("fork")
    results: Any = context.Queue()

    def child() -> None:
        os.setsid()
        try:
            started = time.perf_counter()
            value = fn()
            results.put((time.perf_counter() - started, repr(value)[:120]))
        except Exception as exc:  # reported, not raised: the other phases still run
            results.put((None, f"failed: {exc!r}"[:300]))

    process = context.Process(target=child)
    process.start()
    try:
        said: tuple[float | None, str] = results.get(timeout=timeout_s)
        return said
    except queue.Empty:
        return None, f"not finished after {timeout_s:.0f} s (stopped)"
    finally:
        if process.is_alive() and process.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        process.join()


def read_commits(store: AuditStore, tip: str) -> int:
    """Every commit of the branch, as the signature check reads them: one `rev-list`, one
    `cat-file --batch`; how many."""
    commits = store.git("rev-list", tip).stdout.decode().split()
    return len(store.objects(commits))


def _checkpoint_before(store: AuditStore, witness: DirectoryWitness, key: SigningKey, head: str) -> int:
    """The writer's signed records checkpoint of `head` published to `witness`, as `AuditLog`
    publishes one after a push; its sequence number."""
    link = store.link_at(head)
    publish([witness], Statement(writer="bench", branch=store.branch, seq=link.seq, sha256=link.sha256, head=head,
                                 at=stamp(datetime.now(UTC)), public_key=key.public_line), key)
    return link.seq


def _intact(verification: Verification) -> str:
    if not verification.ok:
        raise RuntimeError(f"the generated branch does not verify: {verification.broken}")
    return f"{verification.records} records; signatures: {verification.signatures}"


def measure(records: int, *, seed: int, repeat: int, timeout_s: float, workdir: Path) -> dict[str, Any]:
    repo = workdir / f"audit-{records}"
    print(f"generating {records:,} records ...", flush=True)
    key = SigningKey.generate()
    made = generate(repo, records, seed=seed, key=key)
    print(f"  {made['commits']:,} signed commits in {made['seconds']:.1f} s, {made['repo_bytes'] / 1e6:.0f} MB",
          flush=True)
    store = AuditStore(repo)
    tip = made["tip"]
    files = store.files(tip)  # for the chain phase, read once here (the `files` phase times reading them)
    verdict = verify_chain(files)
    if not verdict.ok or verdict.records != records or verdict.last.sha256 != made["last"]["sha256"]:
        raise RuntimeError(f"the generated branch does not verify: {verdict}")
    witness = DirectoryWitness(workdir / f"witness-{records}")
    vouched = _checkpoint_before(store, witness, key, store.git("rev-parse", f"{tip}~{UNVOUCHED_COMMITS}")
                                 .stdout.decode().strip())

    def signatures() -> int:
        checked, bad = check_commits(store, tip, {key.blob})
        if bad is not None:
            raise RuntimeError(f"a generated commit does not verify: {bad}")
        return checked

    work: dict[str, Callable[[], object]] = {
        "files": lambda: len(store.files(tip)),
        "chain": lambda: verify_chain(files).records,
        "history": lambda: history_break(store, tip),
        "commits": lambda: read_commits(store, tip),
        "signatures": signatures,
        "verify_branch": lambda: _intact(verify_branch(store, allowed={key.blob})),
        "verify_checkpointed": lambda: _intact(verify_branch(store, witnesses=[witness])),
    }
    phases: dict[str, Any] = {}
    for name in PHASES:
        times, said = [], ""
        for _ in range(repeat):
            seconds, said = _run_phase(work[name], timeout_s)
            if seconds is None:
                break
            times.append(seconds)
        phases[name] = {"seconds": min(times) if len(times) == repeat else None, "result": said}
        shown = f"{phases[name]['seconds']:.2f} s" if phases[name]["seconds"] is not None else said
        print(f"  {name}: {shown}", flush=True)
    shutil.rmtree(repo)
    return {**made, "phases": phases, "vouched_seq": vouched}


def check_generator(seed: int, records: int = 3000) -> None:
    """The generated branch is one git takes: `git fsck --strict` finds nothing wrong, `git
    verify-commit` accepts the tip's signature with the key in an allowed-signers file, and
    `verify_branch` finds it intact."""
    key = SigningKey.generate()
    with tempfile.TemporaryDirectory(prefix="bench-audit-check-") as tmp:
        repo = Path(tmp) / "signed"
        made = generate(repo, records, seed=seed, key=key)
        fsck = subprocess.run(["git", "-C", str(repo), "fsck", "--full", "--strict", "--no-dangling"],
                              capture_output=True, text=True, check=False)
        signers = Path(tmp) / "allowed_signers"
        signers.write_text(allowed_signers_text({key.blob}))
        verified = subprocess.run(["git", "-C", str(repo), "-c", f"gpg.ssh.allowedSignersFile={signers}",
                                   "verify-commit", made["tip"]], capture_output=True, text=True, check=False)
        intact = verify_branch(AuditStore(repo), allowed={key.blob})
    print(f"git fsck: {'clean' if fsck.returncode == 0 else fsck.stderr.strip()}; git verify-commit of the tip: "
          f"{'good' if verified.returncode == 0 else verified.stderr.strip()}; verify_branch: "
          f"{'intact' if intact.ok else intact.broken}, {intact.signed} signatures checked")
    if fsck.returncode or verified.returncode or not intact.ok or intact.signed != made["commits"]:
        raise SystemExit(1)


def _ratio(big: float | None, small: float | None) -> float | None:
    return big / small if big is not None and small else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", type=int, default=10_000, help="records of the baseline branch")
    parser.add_argument("--big", type=int, default=GOAL_RECORDS, help="records of the big branch (0: skip it)")
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each phase (the best is kept)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds after which a phase is stopped")
    parser.add_argument("--check-generator", action="store_true",
                        help="only check that git takes the generated branch (fsck, verify-commit) and it verifies")
    args = parser.parse_args()
    if args.check_generator:
        check_generator(args.seed)
        return
    sizes = [args.small] + ([args.big] if args.big else [])
    with tempfile.TemporaryDirectory(prefix="bench-audit-") as tmp:
        runs = [measure(n, seed=args.seed, repeat=args.repeat, timeout_s=args.timeout, workdir=Path(tmp))
                for n in sizes]
    small, big = runs[0], runs[-1] if len(runs) > 1 else None
    headers = ["phase", *(f"{r['records']:,} records s" for r in runs)] + (["ratio"] if big else [])
    rows = []
    for name in PHASES:
        cells: list[object] = [r["phases"][name]["seconds"] if r["phases"][name]["seconds"] is not None
                               else "stopped" for r in runs]
        if big:
            ratio = _ratio(big["phases"][name]["seconds"], small["phases"][name]["seconds"])
            cells.append(f"{ratio:.1f}x" if ratio is not None else "-")
        rows.append([name, *cells])
    rows.append(["(commits)", *(r["commits"] for r in runs)] + ([""] if big else []))
    rows.append(["(repository MB)", *(round(r["repo_bytes"] / 1e6) for r in runs)] + ([""] if big else []))
    rows.append(["(generating s)", *(r["seconds"] for r in runs)] + ([""] if big else []))
    print_table("audit verify: each phase (best of "
                f"{args.repeat}; ratio {sizes[-1] // sizes[0]}x the records would be linear)", headers, rows)
    payload: dict[str, Any] = {"goal": {"records": GOAL_RECORDS, "seconds": GOAL_S}, "runs": runs}
    at_goal = next((r for r in runs if r["records"] == GOAL_RECORDS), None)
    if at_goal is not None:
        worst, default = (at_goal["phases"][n]["seconds"] for n in ("verify_branch", "verify_checkpointed"))
        seconds = max(worst, default) if worst is not None and default is not None else None
        payload["goal_met"] = seconds is not None and seconds < GOAL_S
        payload["ratios"] = {n: _ratio(big["phases"][n]["seconds"], small["phases"][n]["seconds"]) for n in PHASES} \
            if big else {}
        shown = f"{seconds:.1f} s" if seconds is not None else "not finished"
        print(f"\ngoal ({GOAL_RECORDS:,} records verified in under {GOAL_S:.0f} s): "
              f"{'met' if payload['goal_met'] else 'NOT met'} (the slower of verify_branch and verify_checkpointed: "
              f"{shown})")
    write_results("audit", payload)


if __name__ == "__main__":
    main()
