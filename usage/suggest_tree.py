"""Proposals (`usage.suggest`) and the tree: the current guarantees read from it, and the proposed
amounts written into the project files exactly where they stand (the number on its line is
replaced; comments, order and layout are kept), so the change reads as a person would have made
it and validates before anyone sees it."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from hypergov.model.tree import GovernanceTree
from hypergov.source import Path as DocPath
from hypergov.tree_files import TreeEntry
from usage.suggest import Guarantee, Proposal

_NUMBER = re.compile(r"[0-9]+")


class SuggestionError(Exception):
    """A proposal that cannot be written into the tree (the message says where and why)."""


def guarantees_for_tree(tree: GovernanceTree) -> tuple[list[Guarantee], dict[tuple[str, str], int]]:
    """Every team's guarantee of whole instances or accelerators (MIG partitions and vCPU- or
    memory-only amounts are not proposed on), and the accelerators of each pool."""
    guarantees: list[Guarantee] = []
    capacity: dict[tuple[str, str], int] = {}
    for cluster_name, sourced in sorted(tree.clusters.items()):
        cluster = sourced.model
        for itype, amount in sorted(cluster.capacity.items()):
            per = cluster.accelerators(itype) or 0
            if per:
                capacity[(cluster_name, itype)] = amount.instances * per
    for team, project in sorted(tree.projects.items()):
        for cluster_name, quota in sorted(project.model.quotas.items()):
            sourced_cluster = tree.clusters.get(cluster_name)
            if sourced_cluster is None:
                continue
            model = sourced_cluster.model
            for itype, count in sorted(quota.instances.items()):
                per = model.accelerators(itype) or 0
                if per:
                    guarantees.append(Guarantee(team, cluster_name, itype, "instances", count, per))
            for itype, resource in sorted(quota.resources.items()):
                per = model.accelerators(itype) or 0
                if per and resource.accelerators and resource.partition is None:
                    guarantees.append(Guarantee(team, cluster_name, itype, "accelerators", resource.accelerators, per))
    return guarantees, capacity


def _path(guarantee: Guarantee) -> DocPath:
    if guarantee.unit == "instances":
        return ("quotas", guarantee.cluster, "instances", guarantee.instance_type)
    return ("quotas", guarantee.cluster, "resources", guarantee.instance_type, "accelerators")


def edited_files(tree: GovernanceTree, files: Mapping[str, TreeEntry], proposals: Sequence[Proposal], *,
                 display_root: str) -> dict[str, bytes]:
    """The project files the proposals change, by their path in `files`, with each amount replaced."""
    edits: dict[str, list[tuple[int, int, int]]] = {}
    for proposal in proposals:
        g = proposal.guarantee
        doc = tree.projects[g.team].doc
        at = doc.value_pos.get(_path(g))
        if at is None:
            raise SuggestionError(f"{doc.file}: no {'.'.join(map(str, _path(g)))} to change")
        key = str(PurePosixPath(doc.file).relative_to(display_root)) if display_root else doc.file
        edits.setdefault(key, []).append((*at, proposal.proposed))
    changed: dict[str, bytes] = {}
    for key, places in edits.items():
        entry = files.get(key)
        if not isinstance(entry, bytes):
            raise SuggestionError(f"{display_root}/{key} is not a file of the tree")
        lines = entry.decode("utf-8").splitlines(keepends=True)
        for line, column, amount in places:
            text = lines[line - 1]
            number = _NUMBER.match(text, column - 1)
            if number is None:
                raise SuggestionError(f"{display_root}/{key}:{line}:{column}: not a whole number")
            lines[line - 1] = text[:number.start()] + str(amount) + text[number.end():]
        changed[key] = "".join(lines).encode("utf-8")
    return changed
