"""What an import could not put in the tree, as values: each item names the live object, says why
the tree cannot hold it (or why a value written had to come from elsewhere), and carries the live
value. Nothing the import read is dropped without an item here; nothing is guessed without one.

The renderers (text, Markdown, JSON) are `reconciler.import_report`; this module only holds the
shape, so the pure decisions (`engines.importing.decide`) can build it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

ItemKind = Literal[
    "not-expressible",  # a live value the schema cannot say (a quota shape, weights differing per cluster)
    "outside-personas",  # an access policy or group no persona grants
    "unmatched-principal",  # a principal whose access matches no persona
    "unmatched-budget",  # a budget that maps to no project
    "renamed",  # a live object whose name is not the one hypergov gives it (planning would replace it)
    "not-read",  # what the import does not read (Kubernetes objects), and where the value came from instead
    "kept",  # a governed value the live org does not hold, kept from the tree given with --keep-from
    "invalid",  # a validation problem of the imported tree, and why the live org has it
]

KINDS: tuple[ItemKind, ...] = ("not-expressible", "outside-personas", "unmatched-principal", "unmatched-budget",
                               "renamed", "not-read", "kept", "invalid")


@dataclass(frozen=True)
class ImportItem:
    """One thing the tree does not say as the live org does."""

    kind: ItemKind
    object: str  # the live object, as an operator finds it: "ComputeQuota gpu-west/nlp (arn:...)"
    why: str
    live: Mapping[str, Any] = field(default_factory=dict)  # the live value(s), JSON-able
    file: str | None = None  # the imported file the item concerns, when there is one


@dataclass(frozen=True)
class ImportReport:
    """Every item of one import, in the order found (per cluster, then budgets, then validation)."""

    items: tuple[ImportItem, ...] = ()
    written: tuple[str, ...] = ()  # the files the import wrote, relative to --out

    def with_items(self, more: tuple[ImportItem, ...]) -> ImportReport:
        return ImportReport(items=self.items + more, written=self.written)

    @property
    def clean(self) -> bool:
        return not self.items
