"""The tree is what Git holds: both readers refuse links, directories named like config files,
devices, FIFOs, sockets and submodules, never follow or open them, and report the same problems
for the same content.

Every SYN009/SYN010 case of the invalid-tree corpus (`tests/validation/cases/`, in memory there)
is written here as real entries: to a directory (links, directories, FIFOs) and into a real Git
commit (links as mode 120000 blobs, submodules as 160000 entries, directories with a file in
them, since Git keeps no empty directory). Each reader must report exactly what the in-memory
case reports."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import git
import pytest
from corpus_overlay import Case, build_files, example_tree, load_cases

from hypergov import gitsource
from hypergov.gitsource import RefNotFoundError, read_tree_at
from hypergov.problems import Problem
from hypergov.tree_files import (
    ROOT,
    NotAFile,
    TreeEntry,
    fold_path,
    read_tree_dir,
    special_kind,
    write_tree_dir,
)
from hypergov.validate import validate_files

EXAMPLE = example_tree()
TREE_CASES = [c for c in load_cases() if c.rule_prefix in ("SYN009", "SYN010")]
ON_DISK = {"symbolic link", "directory", "FIFO"}  # what a test can create without privileges
IN_GIT = {"symbolic link", "directory", "Git submodule"}  # what a commit can hold
PLACEHOLDER = "keep.txt"  # Git keeps no empty directory; the readers never look inside anyway


def _problems(files: dict[str, TreeEntry]) -> list[tuple[str, int, int, str, str, str]]:
    return [(p.pos.file, p.pos.line, p.pos.column, p.rule, p.message, p.hint)
            for p in validate_files(files, display_root="config").problems]


def _markers(files: dict[str, TreeEntry]) -> set[str]:
    return {e.kind for e in files.values() if isinstance(e, NotAFile)}


def _materialise(files: dict[str, TreeEntry], root: Path) -> Path:
    """Write the tree's files, links and FIFOs (and a placeholder inside each directory entry)."""
    write_tree_dir({k: v for k, v in files.items() if not _is_submodule(v)}, root)
    for rel, entry in files.items():
        if isinstance(entry, NotAFile) and entry.kind == "directory":
            (root / rel / PLACEHOLDER).write_text("not read\n")
    return root


def _is_submodule(entry: TreeEntry) -> bool:
    return isinstance(entry, NotAFile) and entry.kind == "Git submodule"


def _commit(files: dict[str, TreeEntry], repo_dir: Path, subdir: str = "config") -> git.Repo:
    """A real commit of the tree under `subdir`: `git add` of what is on disk, submodules as
    gitlink entries (mode 160000) added to the index by hand."""
    repo = git.Repo.init(repo_dir)
    _materialise({k: v for k, v in files.items() if not (isinstance(v, NotAFile) and v.kind == "FIFO")},
                 repo_dir / subdir)
    repo.git.add("--all")
    for rel, entry in files.items():
        if _is_submodule(entry):
            assert isinstance(entry, NotAFile)
            repo.git.update_index("--add", "--cacheinfo", f"160000,{entry.target},{subdir}/{rel}")
    repo.git.commit("-m", "tree", "--no-verify", author="t <t@example.com>",
                    env={"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})
    return repo


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in TREE_CASES])
def test_directory_reader_reports_what_the_case_reports(case: Case, tmp_path: Path) -> None:
    files = build_files(case, EXAMPLE)
    if not _markers(files) <= ON_DISK:
        pytest.skip(f"{sorted(_markers(files) - ON_DISK)} cannot be created in a directory here")
    read = read_tree_dir(_materialise(files, tmp_path / "config"))
    assert read == files
    assert _problems(read) == _problems(files)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in TREE_CASES])
def test_git_reader_reports_what_the_case_reports(case: Case, tmp_path: Path) -> None:
    files = build_files(case, EXAMPLE)
    if not _markers(files) <= IN_GIT:
        pytest.skip(f"a Git commit cannot hold {sorted(_markers(files) - IN_GIT)}")
    _commit(files, tmp_path)
    read = read_tree_at(tmp_path, "HEAD", "config")
    assert read == files
    assert _problems(read) == _problems(files)


def test_both_readers_agree_on_one_tree_with_every_kind(tmp_path: Path) -> None:
    """One commit with a link, a directory named like a project, a case collision and a
    submodule; its checkout (the submodule is an empty directory there, as git leaves it) reads
    the same except for the submodule, which only Git can see as one."""
    files = dict(EXAMPLE)
    files["projects/vision.yaml"] = NotAFile("symbolic link", "../../../etc/passwd")
    files["projects/extra.yaml"] = NotAFile("directory")
    files["README.md"], files["Readme.md"] = b"one\n", b"two\n"
    files["workloads/shared"] = NotAFile("Git submodule", "4b825dc642cb6eb9a060e54bf8d69288fbee4904")
    repo = _commit(files, tmp_path)
    from_git = read_tree_at(repo.working_dir, "HEAD", "config")
    from_dir = read_tree_dir(tmp_path / "config")
    assert from_git == files
    assert from_dir == {k: v for k, v in files.items() if k != "workloads/shared"}
    rules = [p[3] for p in _problems(from_git)]
    assert sorted(rules) == ["SYN009", "SYN009", "SYN009", "SYN010"], _problems(from_git)
    assert _problems(from_dir) == [p for p in _problems(from_git) if "workloads/shared" not in p[0]]


def test_a_link_is_never_followed_out_of_the_tree(tmp_path: Path) -> None:
    """Outside the tree sits a valid project and a directory of valid workload classes; links to
    them are reported, and neither is read (the project does not exist, its workloads neither)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    project = EXAMPLE["projects/vision.yaml"]
    assert isinstance(project, bytes)
    (outside / "vision.yaml").write_bytes(project)
    (outside / "classes").mkdir()
    (outside / "classes" / "large-training.yaml").write_bytes(b"this: would fail the schema if read\n")
    files = {k: v for k, v in EXAMPLE.items() if not k.startswith(("projects/vision", "workloads/vision/"))}
    root = write_tree_dir(files, tmp_path / "config")
    os.symlink(outside / "vision.yaml", root / "projects" / "vision.yaml")
    os.symlink(outside / "classes", root / "workloads" / "vision")
    read = read_tree_dir(root)
    assert read["projects/vision.yaml"] == NotAFile("symbolic link", str(outside / "vision.yaml"))
    assert read["workloads/vision"] == NotAFile("symbolic link", str(outside / "classes"))
    assert not any(k.startswith("workloads/vision/") for k in read)
    report = validate_files(read, display_root="config")
    assert [(p.rule, p.pos.file) for p in report.problems] == [
        ("SYN009", "config/projects/vision.yaml"), ("SYN009", "config/workloads/vision")]
    assert "vision" not in report.tree.projects and "vision" in report.tree.project_files


def test_a_linked_config_directory_is_one_problem(tmp_path: Path) -> None:
    real = write_tree_dir(EXAMPLE, tmp_path / "elsewhere")
    (tmp_path / "repo").mkdir()
    os.symlink(real, tmp_path / "repo" / "config")
    from_dir = read_tree_dir(tmp_path / "repo" / "config")
    assert from_dir == {ROOT: NotAFile("symbolic link", str(real))}
    repo = git.Repo.init(tmp_path / "repo")
    repo.git.add("config")
    repo.git.commit("-m", "linked tree", author="t <t@example.com>",
                    env={"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})
    from_git = read_tree_at(tmp_path / "repo", "HEAD", "config")
    assert from_git == from_dir
    problems = validate_files(from_git, display_root="config").problems
    assert [(p.rule, p.pos.file, p.pos.line) for p in problems] == [("SYN009", "config", 1)]
    assert "the config tree itself is a symbolic link" in problems[0].message


def test_git_subdir_that_is_a_file_is_not_a_tree(tmp_path: Path) -> None:
    repo = git.Repo.init(tmp_path)
    (tmp_path / "config").write_text("org: no\n")
    repo.git.add("config")
    repo.git.commit("-m", "file", author="t <t@example.com>",
                    env={"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"})
    with pytest.raises(RefNotFoundError, match="is a file, not a directory"):
        read_tree_at(tmp_path, "HEAD", "config")


def test_hidden_entries_are_outside_the_tree_for_both_readers(tmp_path: Path) -> None:
    files: dict[str, TreeEntry] = dict(EXAMPLE)
    files[".gitkeep"] = b""
    files[".github/workflow.yaml"] = b"on: push\n"
    files[".link"] = NotAFile("symbolic link", "/etc/shadow")
    _commit(files, tmp_path)
    assert read_tree_at(tmp_path, "HEAD", "config") == EXAMPLE
    assert read_tree_dir(tmp_path / "config") == EXAMPLE


def test_a_fifo_does_not_hang_the_reader(tmp_path: Path) -> None:
    root = write_tree_dir(EXAMPLE, tmp_path / "config")
    os.mkfifo(root / "projects" / "pipe.yaml")
    assert read_tree_dir(root)["projects/pipe.yaml"] == NotAFile("FIFO")


def test_a_socket_is_refused(tmp_path: Path) -> None:
    root = write_tree_dir(EXAMPLE, tmp_path / "c")
    path = root / "s.yaml"
    if len(os.fsencode(path)) > 100:
        pytest.skip("the temporary path is too long for a Unix socket")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(path))
        assert read_tree_dir(root)["s.yaml"] == NotAFile("socket")


def test_a_device_is_refused(tmp_path: Path) -> None:
    root = write_tree_dir(EXAMPLE, tmp_path / "config")
    try:
        os.mknod(root / "projects" / "null.yaml", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except (PermissionError, OSError):
        pytest.skip("creating a device file needs privileges")
    assert read_tree_dir(root)["projects/null.yaml"] == NotAFile("character device")


@pytest.mark.parametrize(("mode", "kind"), [
    pytest.param(stat.S_IFCHR, "character device", id="chr"), pytest.param(stat.S_IFBLK, "block device", id="blk"),
    pytest.param(stat.S_IFIFO, "FIFO", id="fifo"), pytest.param(stat.S_IFSOCK, "socket", id="sock"),
    pytest.param(0, "unknown file type", id="unknown")])
def test_special_kinds(mode: int, kind: str) -> None:
    assert special_kind(mode) == kind


@pytest.mark.parametrize(("a", "b", "collide"), [
    pytest.param("README.md", "Readme.md", True, id="ascii-case"),
    pytest.param("notes/caf\u00e9.md", "notes/cafe\u0301.md", True, id="nfc-nfd"),
    pytest.param("notes/CAF\u00c9.md", "notes/cafe\u0301.md", True, id="case-and-nfd"),
    pytest.param("\u03a3.md", "\u03c2.md", True, id="final-sigma"),
    pytest.param("\ufb01nance.md", "finance.md", False, id="ligature-is-a-lookalike-not-a-case"),
    pytest.param("stra\u00dfe.md", "strasse.md", False, id="sharp-s-is-not-ss"),
    pytest.param("\uff56ision.md", "vision.md", False, id="fullwidth-is-a-lookalike"),
    pytest.param("projects/a.yaml", "projects/b.yaml", False, id="different")])
def test_fold_path(a: str, b: str, collide: bool) -> None:
    assert (fold_path(a) == fold_path(b)) is collide


def test_problems_name_the_entry_and_say_what_to_do() -> None:
    files: dict[str, TreeEntry] = dict(EXAMPLE)
    files["projects/new.yaml"] = NotAFile("symbolic link", "/etc/\u202epasswd")
    found: list[Problem] = [p for p in validate_files(files, display_root="config").problems if p.rule == "SYN009"]
    assert len(found) == 1
    assert "\\u202e" in found[0].message  # the link's target is shown with its invisible characters escaped
    assert found[0].pos.file == "config/projects/new.yaml" and found[0].hint


def test_git_reader_keeps_every_byte_and_stops_where_the_walk_does(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Contents are read in one batch: empty files, NULs, CRs and trailing newlines come back
    byte for byte. Past the file bound the depth-first walk stops adding entries: with a bound
    of 4, the first 5 in Git's order (names sorted, a directory as its name + '/')."""
    odd = {"a.txt": b"", "b.txt": b"\x00\n\n", "c.txt": b"line\r\n", "d/e.txt": b"\n" * 3, "d/f.txt": b"x",
           "g.txt": b"last"}
    _commit(odd, tmp_path)
    assert read_tree_at(tmp_path, "HEAD", "config") == odd
    monkeypatch.setattr(gitsource, "MAX_TREE_FILES", 4)
    assert read_tree_at(tmp_path, "HEAD", "config") == {k: odd[k] for k in ("a.txt", "b.txt", "c.txt", "d/e.txt",
                                                                           "d/f.txt")}
