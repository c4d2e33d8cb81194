"""`validate`: load a tree and run every rule; the single entry point the CLI, the stack
generator and the reconciler use, so none of them can act on a tree that fails validation."""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from hypergov.loader import LoadedFiles, load_tree
from hypergov.model.tree import GovernanceTree
from hypergov.problems import Problem, has_errors, sorted_problems
from hypergov.rules import run_rules
from hypergov.tree_files import TreeFiles, read_tree_dir


@dataclass(frozen=True)
class ValidationReport:
    tree: GovernanceTree
    problems: list[Problem]

    @property
    def ok(self) -> bool:
        return not has_errors(self.problems)


class InvalidTreeError(Exception):
    """Raised by callers that must not proceed with an invalid tree."""

    def __init__(self, report: ValidationReport) -> None:
        self.report = report
        errors = [p for p in report.problems if p.severity.value == "error"]
        shown = "".join(f"\n  {p.pos}  {p.rule}  {p.message}" for p in errors[:5])
        more = f"\n  ... and {len(errors) - 5} more" if len(errors) > 5 else ""
        super().__init__(f"the config tree has {len(errors)} error(s); run 'hypergov validate':{shown}{more}")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Loading builds ~100 small acyclic objects per file; the cyclic collector re-scanning them
    while they are being built doubled the time of a 1,000-project tree. Pause it, then restore."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def held_until_exit() -> Iterator[None]:
    """For a command that loads trees and holds them until it exits: the collector is paused
    while they are built, then everything alive leaves its reach (`gc.freeze`). Else, once
    resumed, its passes rescan the trees (a merge request's two 1,000-project trees: ~0.6 s of
    collections during the later imports and graph capture). Frozen objects are still freed by
    reference counting; only cyclic garbage made meanwhile stays until the process exits."""
    with gc_paused():
        yield
        gc.freeze()


def validate_files(files: TreeFiles, *, display_root: str = "config", reuse: LoadedFiles | None = None,
                   rules_passed: bool = False) -> ValidationReport:
    """Load and run every rule; `reuse` (`hypergov.loader.LoadedFiles`) skips loading files
    already loaded for another tree (the rules always run on the whole tree). `rules_passed`:
    these very files passed every rule with this very code before (`reconciler.valid_trees`),
    so only loading is done again."""
    with gc_paused():
        tree, problems = load_tree(files, display_root=display_root, reuse=reuse)
        problems = problems if rules_passed else problems + run_rules(tree)
    return ValidationReport(tree=tree, problems=sorted_problems(problems))


def shown_root(path: str | os.PathLike[str]) -> str:
    """How problems name the files of a tree directory given as `path`."""
    return os.path.normpath(os.fspath(path))


def validate_dir(path: str | os.PathLike[str]) -> ValidationReport:
    return validate_files(read_tree_dir(path), display_root=shown_root(path))


def require_valid(report: ValidationReport) -> GovernanceTree:
    """The report's tree, or InvalidTreeError: the gate before any plan or apply."""
    if not report.ok:
        raise InvalidTreeError(report)
    return report.tree


def load_valid_tree(path: str | os.PathLike[str]) -> GovernanceTree:
    """The tree at `path`, or InvalidTreeError."""
    return require_valid(validate_dir(path))
