"""`held_until_exit`: the collector is paused while a command builds its trees, and what is alive
afterwards is frozen out of its reach (so later full collections do not rescan the trees);
an error on the way freezes nothing."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from hypergov.validate import held_until_exit


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()  # the rest of the test session keeps collecting everything


def test_objects_built_inside_are_frozen_and_collection_resumes(unfrozen: None) -> None:
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with held_until_exit():
        assert not gc.isenabled()
        tree = [{"project": f"p{i:04d}"} for i in range(1000)]
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(tree)
    collected = {id(o) for o in gc.get_objects(generation=2)}  # the oldest generation a collection scans
    assert not any(id(t) in collected for t in tree)


def test_an_error_while_loading_freezes_nothing(unfrozen: None) -> None:
    with pytest.raises(ValueError), held_until_exit():
        raise ValueError("invalid tree")
    assert gc.isenabled() and gc.get_freeze_count() == 0
