"""The whole governance tree after loading: every object with the document it came from, so
that rules can point at the exact line of what they object to."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pydantic import BaseModel

from hypergov.model.cluster import Cluster
from hypergov.model.org import Organization
from hypergov.model.project import Project
from hypergov.model.workload import WorkloadClass
from hypergov.problems import SourcePos
from hypergov.source import Document, Path

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Sourced(Generic[M]):
    """A validated object, its name in the tree and the document it was read from."""

    name: str
    model: M
    doc: Document

    def pos(self, *path: str | int, key: bool = False) -> SourcePos:
        return self.doc.pos(tuple(path), key=key)

    def at(self, path: Path, *, key: bool = False) -> SourcePos:
        return self.doc.pos(path, key=key)


@dataclass
class GovernanceTree:
    """Objects that passed schema validation, plus the names of every object file found (valid
    or not), so that a broken file does not also produce a cascade of "unknown reference" errors."""

    org: Sourced[Organization] | None = None
    clusters: dict[str, Sourced[Cluster]] = field(default_factory=dict)
    projects: dict[str, Sourced[Project]] = field(default_factory=dict)
    workloads: dict[tuple[str, str], Sourced[WorkloadClass]] = field(default_factory=dict)
    cluster_files: set[str] = field(default_factory=set)
    project_files: set[str] = field(default_factory=set)
    files: dict[str, str] = field(default_factory=dict)  # tree-relative path -> display path

    @property
    def complete(self) -> bool:
        """True when every object file parsed and validated (rules see the whole tree)."""
        return (self.org is not None and self.cluster_files == set(self.clusters)
                and self.project_files == set(self.projects))
