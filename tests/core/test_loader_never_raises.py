"""Property: whatever bytes land in a config tree, loading and validating returns problems and
never raises. Random YAML, random bytes and mutations of the real example files are fed in."""

from __future__ import annotations

from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hypergov.problems import Problem
from hypergov.tree_files import read_tree_dir
from hypergov.validate import validate_files

EXAMPLE = read_tree_dir(Path(__file__).resolve().parents[2] / "config")
EXAMPLE_PATHS = sorted(EXAMPLE)

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
                    st.text(max_size=40))
yaml_values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4),
                               st.dictionaries(st.text(max_size=12), children, max_size=4)),
    max_leaves=25,
)


def _check(files: dict[str, bytes]) -> None:
    report = validate_files(files)
    assert all(isinstance(p, Problem) for p in report.problems)
    for p in report.problems:
        assert p.rule and p.message and p.hint and p.pos.line >= 1 and p.pos.column >= 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(EXAMPLE_PATHS), value=yaml_values)
def test_random_yaml_documents_only_give_problems(path: str, value: object) -> None:
    files = dict(EXAMPLE)
    files[path] = yaml.safe_dump(value, allow_unicode=True).encode()
    _check(files)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(EXAMPLE_PATHS), data=st.binary(max_size=300))
def test_random_bytes_only_give_problems(path: str, data: bytes) -> None:
    files = dict(EXAMPLE)
    files[path] = data
    _check(files)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(EXAMPLE_PATHS), data=st.data())
def test_mutated_example_files_only_give_problems(path: str, data: st.DataObject) -> None:
    """Delete, duplicate or replace a slice of a real file: the shapes real typos take."""
    original = EXAMPLE[path]
    start = data.draw(st.integers(0, len(original)))
    end = data.draw(st.integers(start, min(len(original), start + 40)))
    insert = data.draw(st.one_of(
        st.sampled_from([b"", b":", b"- ", b"  ", b"\n", b"&a", b"*a", b"<<: *a", b"{", b"[", b"'",
                         b"!!python/object:x", b"\t", b"\xef\xbb\xbf", b"\xe2\x80\xae", b"1e999", b"0x1F",
                         b"~", b"yes", b"2024-01-01"]),
        st.binary(max_size=8),
        st.just(original[start:end] * 2),
    ))
    files = dict(EXAMPLE)
    files[path] = original[:start] + insert + original[end:]
    _check(files)


@settings(max_examples=60, deadline=None)
@given(paths=st.lists(st.text(alphabet="abc/._-yamlé\u200b", min_size=1, max_size=20), max_size=4),
       data=st.binary(max_size=50))
def test_arbitrary_file_names_only_give_problems(paths: list[str], data: bytes) -> None:
    files = dict(EXAMPLE)
    for p in paths:
        files[p.strip("/") or "x"] = data
    _check(files)
