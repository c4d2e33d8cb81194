"""Exactly one code path pushes the audit branch: `reconciler.rollout.publish` (issue 28: the
branch was pushed from three places, each with its own idea of when). Read from the source with
`ast`: no other function of `cli/`, `reconciler/` or `engines/` calls `.push(` on anything but a
Git remote of a repository (the demo seeds its governance remote), nor runs `git push` itself;
only `reconciler/audit*.py` (where `AuditLog.push` and `AuditStore.push` are defined) may.

And what it does, with real Git (a bare remote and a clone, the real `AuditLog`): `carry_out` of
a prepared rollout writes the intent and the outcome and pushes them once; `carry_out` of a
rollout one of whose stacks failed to plan applies nothing and pushes nothing, not even a record
waiting from before. The engine is a stand-in (the `Engine` Protocol is our own seam; the real
terraform is in tests/integration)."""

from __future__ import annotations

import ast
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import git

from engines.outcomes import permanent
from engines.plan import Action, ApplyResult, Plan, ResourceChange, StackName
from reconciler.audit import AuditLog
from reconciler.rollout import Carrying, Prepared, Source, carry_out
from tests.audit_trail import records_at
from tests.example_tree import example_tree

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("cli", "reconciler", "engines")
PUBLISH = ("reconciler/rollout.py", "publish")  # the one place
BRANCH = "hypergov/audit"
ACTOR = git.Actor("admin", "admin@example.com")


@dataclass(frozen=True)
class Push:
    path: str
    line: int
    function: str  # the enclosing function's qualified name ("<module>" at the top level)
    code: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} in {self.function}: {self.code}"


def _is_git_remote_push(call: ast.Call) -> bool:
    """`<repo>.remote(...).push("main:main")` / `<repo>.create_remote(...).push(...)`: GitPython
    pushing a repository's branch, spelled out in constants that name no audit branch."""
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    remote = (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute)
              and receiver.func.attr in ("remote", "create_remote"))
    refspecs = [a.value for a in call.args if isinstance(a, ast.Constant)]
    return remote and len(refspecs) == len(call.args) and all(
        isinstance(r, str) and "audit" not in r for r in refspecs)


def _runs_git_push(call: ast.Call) -> bool:
    """`git("push", ...)`, `run(["git", "push", ...])` and the like: a push without `.push(`."""
    words = [a.value for a in call.args if isinstance(a, ast.Constant)]
    for arg in call.args:
        if isinstance(arg, ast.List | ast.Tuple):
            words += [e.value for e in arg.elts if isinstance(e, ast.Constant)]
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    return "push" in words and (name == "git" or "git" in words)


def pushes(path: Path, root: Path = ROOT) -> Iterator[Push]:
    """Every call in `path` (under `root`) that pushes something, with the function it is in."""
    source = path.read_text()
    rel = path.relative_to(root).as_posix()

    def visit(node: ast.AST, scope: tuple[str, ...]) -> Iterator[Push]:
        for child in ast.iter_child_nodes(node):
            inner = (*scope, child.name) if isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else scope
            if isinstance(child, ast.Call) and (
                    (isinstance(child.func, ast.Attribute) and child.func.attr == "push"
                     and not _is_git_remote_push(child)) or _runs_git_push(child)):
                yield Push(rel, child.lineno, ".".join(scope) or "<module>",
                           ast.get_source_segment(source, child) or "")
            yield from visit(child, inner)

    yield from visit(ast.parse(source, filename=rel), ())


def _sources(root: Path) -> list[Path]:
    found = [p for package in PACKAGES for p in sorted((root / package).rglob("*.py"))]
    assert len(found) > 50, found  # the packages were found where this test expects them
    return found


def offenders(root: Path = ROOT) -> list[Push]:
    """The pushes outside `publish` and the audit modules' own definitions."""
    everywhere = [push for path in _sources(root) for push in pushes(path, root)]
    defined_here = [p for p in everywhere if Path(p.path).parent.name == "reconciler"
                    and Path(p.path).name.startswith("audit")]
    return [p for p in everywhere if p not in defined_here and (p.path, p.function) != PUBLISH]


def test_only_publish_pushes_the_audit_branch() -> None:
    found = offenders()
    assert found == [], "the audit branch is pushed outside reconciler.rollout.publish:\n" + "\n".join(map(str, found))
    [one] = [p for p in pushes(ROOT / PUBLISH[0]) if p.function == PUBLISH[1]]
    assert one.code == "audit.push()"


def test_the_scan_finds_a_push_however_it_is_spelled(tmp_path: Path) -> None:
    """The scan itself: it would see an offender (so an empty list above means something)."""
    sample = tmp_path / "reconciler" / "report.py"
    sample.parent.mkdir()
    sample.write_text(
        "def report(audit, log, store, repo):\n"
        "    audit.push()\n"
        "    log.store.push(attempts=1)\n"
        "    store.git('push', '--porcelain', 'origin')\n"
        "    repo.remote('origin').push('hypergov/audit')\n"
        "    repo.remote('origin').push('main:main')\n")
    found = [(p.line, p.function) for p in pushes(sample, tmp_path)]
    assert found == [(2, "report"), (3, "report"), (4, "report"), (5, "report")]  # not the repository's main


class Engine:
    """The stand-in: applies every plan it is given, and says which."""

    name = "terraform"

    def __init__(self) -> None:
        self.applied: list[StackName] = []

    def apply_many(self, plans: Sequence[Plan], *, on_start: Callable[[StackName], None] | None = None,
                   on_done: Callable[[ApplyResult], None] | None = None,
                   stop: threading.Event | None = None) -> list[ApplyResult]:
        results = []
        for plan in plans:
            if on_start:
                on_start(plan.stack)
            self.applied.append(plan.stack)
            results.append(ApplyResult(stack=plan.stack, applied=plan.changes))
            if on_done:
                on_done(results[-1])
        return results


def _plan(stack: str, head: str) -> Plan:
    return Plan(stack=StackName(stack), engine="terraform", source_commit=head, changes=(
        ResourceChange(f"aws_iam_role.{stack}", "aws_iam_role", stack, Action.CREATE, "terraform"),))


def _clone_of_a_bare_remote(tmp_path: Path) -> tuple[Path, Path]:
    """A bare governance remote that logs every update of its refs (a push is one), and a clone."""
    remote = tmp_path / "remote.git"
    git.Repo.init(remote, bare=True, initial_branch="main")
    git.Repo(remote).git.config("core.logAllRefUpdates", "always")
    seed = git.Repo.init(tmp_path / "seed", initial_branch="main")
    (tmp_path / "seed" / "README").write_text("governance\n")
    seed.index.add(["README"])
    seed.index.commit("seed", author=ACTOR, committer=ACTOR)
    seed.git.push(str(remote), "main")
    git.Repo.clone_from(str(remote), str(tmp_path / "clone"))
    return remote, tmp_path / "clone"


def _on_remote(remote: Path) -> list[dict[str, Any]]:
    """The records on the remote's audit branch, read with git itself."""
    return records_at(remote, BRANCH)


def _updates(remote: Path) -> int:
    """How many times the remote's audit branch was updated (by a push)."""
    logged = subprocess.run(["git", "-C", str(remote), "reflog", "show", f"refs/heads/{BRANCH}"],
                            capture_output=True, text=True, check=False)
    return len(logged.stdout.splitlines()) if logged.returncode == 0 else 0


def test_carry_out_pushes_the_intent_and_outcome_once(tmp_path: Path) -> None:
    remote, clone = _clone_of_a_bare_remote(tmp_path)
    head = git.Repo(clone).head.commit.hexsha
    audit = AuditLog.open(clone, state_dir=tmp_path / "state", branch=BRANCH)
    engine = Engine()
    prepared = Prepared(Source(example_tree(), head, "dev@example.com"), plans=[_plan("org", head)])
    applied = carry_out(engine, prepared, Carrying(audit=audit))  # type: ignore[arg-type]
    assert engine.applied == ["org"] and [r.ok for r in applied.results] == [True]
    assert [(r["type"], r.get("stack")) for r in _on_remote(remote)] == [("intent", None), ("outcome", "org")]
    assert _updates(remote) == 1  # both records in one push
    assert audit.unpushed() == 0


def test_carry_out_of_a_rollout_that_could_not_be_planned_applies_and_pushes_nothing(tmp_path: Path) -> None:
    remote, clone = _clone_of_a_bare_remote(tmp_path)
    head = git.Repo(clone).head.commit.hexsha
    audit = AuditLog.open(clone, state_dir=tmp_path / "state", branch=BRANCH)
    audit.write([{"type": "rejected", "outcome": "rejected"}], subject="waiting from before")
    engine = Engine()
    prepared = Prepared(Source(example_tree(), head), plans=[_plan("org", head)],
                        failures={StackName("project-nlp"): permanent("project-nlp: access denied", "access-denied")})
    assert not prepared.ready
    applied = carry_out(engine, prepared, Carrying(audit=audit))  # type: ignore[arg-type]
    assert engine.applied == [] and applied.results == [] and applied.records == []
    assert _on_remote(remote) == [] and _updates(remote) == 0  # nothing pushed, not even the waiting record
    assert audit.unpushed() == 1
