"""Following a remote: what `--repo` names (git's own rules, from the `git clone` manual's URLS
section), credentials masked in every message, what happens to an existing clone, and the
reconciler's bare clone against real bare repositories with real `git` (file:// URLs: no network
needed, the same fetch code path as any other transport). The passes over git daemon, with
terraform, are in tests/integration/test_reconcile_remote.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import git
import pytest

from engines.outcomes import classify
from reconciler.remote import (
    AUDIT_BRANCH,
    CloneMismatchError,
    LocalRepo,
    RemoteClone,
    RemoteGitError,
    RemoteRepo,
    RepoArgumentError,
    clone_verdict,
    fetch_refspecs,
    is_ancestor,
    mask_url,
    parse_repo,
    rewrite_refusal,
    valid_branch,
)

ACTOR = git.Actor("dev", "dev@example.com")


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param("https://github.com/acme/gov.git", RemoteRepo("https://github.com/acme/gov.git"), id="https"),
    pytest.param("ssh://git@host:2222/acme/gov.git", RemoteRepo("ssh://git@host:2222/acme/gov.git"), id="ssh"),
    pytest.param("git://127.0.0.1:9418/gov.git", RemoteRepo("git://127.0.0.1:9418/gov.git"), id="git-daemon"),
    pytest.param("file:///srv/gov.git", RemoteRepo("file:///srv/gov.git"), id="file"),
    # "This syntax is only recognized if there are no slashes before the first colon" (git clone, URLS).
    pytest.param("git@github.com:acme/gov.git", RemoteRepo("git@github.com:acme/gov.git"), id="scp-like"),
    pytest.param("host:gov.git", RemoteRepo("host:gov.git"), id="scp-like-no-user"),
    pytest.param("./foo:bar", LocalRepo(Path("./foo:bar")), id="slash-before-colon-is-a-path"),
    pytest.param("/srv/gov", LocalRepo(Path("/srv/gov")), id="absolute-path"),
    pytest.param("gov", LocalRepo(Path("gov")), id="relative-path"),
])
def test_what_repo_names(text: str, expected: LocalRepo | RemoteRepo) -> None:
    assert parse_repo(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    pytest.param("ftp://host/gov.git", "the scheme 'ftp' is not supported", id="unknown-scheme"),
    pytest.param("ext::sh -c touch% /tmp/pwned", "remote helpers", id="ext-helper-runs-commands"),
    pytest.param("  ", "--repo is empty", id="empty"),
    pytest.param("-oProxyCommand=touch% pwned:x", "cannot begin with '-'", id="ssh-option-as-host"),
    pytest.param("ftp://me:s3cret@host/x", "ftp://***@host", id="refused-url-is-masked-too"),
])
def test_what_repo_refuses(text: str, message: str) -> None:
    with pytest.raises(RepoArgumentError, match=message.replace("*", r"\*")) as caught:
        parse_repo(text)
    assert "s3cret" not in str(caught.value)


@pytest.mark.parametrize(("text", "url", "expected"), [
    pytest.param("https://user:tok3n@host/gov.git", None, "https://***@host/gov.git", id="user-and-token"),
    pytest.param("fatal: unable to access 'https://x-access-token:ghp_abc@github.com/a/b.git/': 403", None,
                 "fatal: unable to access 'https://***@github.com/a/b.git/': 403", id="inside-git-output"),
    pytest.param("https://host/path@v2/gov.git", None, "https://host/path@v2/gov.git", id="at-sign-in-path-kept"),
    pytest.param("https://us:p@ss@host/x", None, "https://***@host/x", id="at-sign-in-password"),
    pytest.param("fatal: unable to look up user:tok3n@127.0.0.1:9 (port 9418)", "git://user:tok3n@127.0.0.1:9/x",
                 "fatal: unable to look up user:***@127.0.0.1:9 (port 9418)", id="userinfo-without-scheme"),
    pytest.param("git fetch from ssh://git@host/x", "ssh://git@host/x", "git fetch from ssh://***@host/x",
                 id="short-user-name-not-replaced-elsewhere"),
])
def test_credentials_are_masked(text: str, url: str | None, expected: str) -> None:
    assert mask_url(text, url) == expected


@pytest.mark.parametrize(("existing", "wanted", "has_refs", "verdict"), [
    pytest.param(None, "https://h/gov.git", False, "create", id="no-clone"),
    pytest.param("https://h/gov.git", "https://h/gov.git", True, "use", id="same-url"),
    pytest.param("https://u:old@h/gov.git", "https://u:new@h/gov.git", True, "repoint", id="token-rotated"),
    pytest.param("https://h/typo.git", "https://h/gov.git", False, "repoint", id="never-fetched"),
    pytest.param("https://h/other.git", "https://h/gov.git", True, "refuse", id="another-repository"),
])
def test_what_happens_to_an_existing_clone(existing: str | None, wanted: str, has_refs: bool, verdict: str) -> None:
    assert clone_verdict(existing_url=existing, wanted=wanted, has_refs=has_refs) == verdict


def test_refspecs_fetch_the_branch_forced_and_the_audit_branch_as_a_tracking_ref_never_forced() -> None:
    assert fetch_refspecs("main", "hypergov/audit") == (
        "+refs/heads/main:refs/heads/main", "refs/heads/hypergov/audit*:refs/remotes/origin/hypergov/audit*")


@pytest.mark.parametrize(("name", "ok"), [
    pytest.param("main", True, id="main"), pytest.param("release/2026", True, id="with-slash"),
    pytest.param("a..b", False, id="double-dot"), pytest.param("-x", False, id="option-like"),
    pytest.param("feat*", False, id="pattern"), pytest.param("a:b", False, id="colon"),
])
def test_branch_names_follow_gits_rule(name: str, ok: bool) -> None:
    assert valid_branch(name) is ok


def test_the_rewrite_refusal_names_both_commits_and_the_way_out() -> None:
    text = rewrite_refusal(branch="main", applied="a" * 40, head="b" * 40)
    assert "a" * 12 in text and "b" * 12 in text and "--allow-rewrite" in text and "'main'" in text


def _remote(tmp_path: Path) -> tuple[Path, git.Repo]:
    """A bare remote and a developer's clone of it with one commit pushed."""
    bare = tmp_path / "remote.git"
    git.Repo.init(bare, bare=True, initial_branch="main")
    dev = git.Repo.clone_from(str(bare), tmp_path / "dev")
    _push(dev, "a.txt", "one")
    return bare, dev


def _push(dev: git.Repo, name: str, content: str, *, branch: str = "main") -> str:
    (Path(dev.working_dir) / name).write_text(content)
    dev.index.add([name])
    sha = str(dev.index.commit(f"{name}: {content}", author=ACTOR, committer=ACTOR).hexsha)
    dev.git.push("origin", f"HEAD:refs/heads/{branch}")
    return sha


def _refs(path: Path) -> set[str]:
    return set(git.Repo(path).git.for_each_ref("--format=%(refname)").split())


def test_the_clone_follows_pushes_and_holds_only_the_branch_and_the_audit_branch(tmp_path: Path) -> None:
    bare, dev = _remote(tmp_path)
    dev.git.push("origin", "HEAD:refs/heads/feature", "HEAD:refs/heads/hypergov/audit")
    dev.git.tag("v1")
    dev.git.push("origin", "v1")
    clone = RemoteClone(url=bare.as_uri(), branch="main", path=tmp_path / "state" / "repo")
    assert clone.fetch() == dev.head.commit.hexsha
    assert git.Repo(clone.path).bare
    assert _refs(clone.path) == {"refs/heads/main", f"refs/remotes/origin/{AUDIT_BRANCH}"}  # no feature, no tag

    second = _push(dev, "a.txt", "two")  # a merge lands
    assert clone.fetch() == second
    git.Repo(clone.path).git.update_ref(f"refs/heads/{AUDIT_BRANCH}", second)  # records not pushed yet
    dev.git.push("origin", f":refs/heads/{AUDIT_BRANCH}")  # the remote's audit branch goes away
    clone.fetch()
    assert _refs(clone.path) == {"refs/heads/main", f"refs/heads/{AUDIT_BRANCH}"}  # pruned; local records kept


def test_a_forced_push_is_fetched_and_seen_as_a_rewrite(tmp_path: Path) -> None:
    bare, dev = _remote(tmp_path)
    clone = RemoteClone(url=bare.as_uri(), branch="main", path=tmp_path / "repo")
    applied = clone.fetch()
    later = _push(dev, "a.txt", "two")
    assert is_ancestor(clone.path, applied, clone.fetch())
    dev.git.reset("--hard", "HEAD~1")
    (Path(dev.working_dir) / "a.txt").write_text("other")
    dev.index.add(["a.txt"])
    dev.index.commit("rewritten", author=ACTOR, committer=ACTOR)
    dev.git.push("--force", "origin", "HEAD:main")
    head = clone.fetch()
    assert head == dev.head.commit.hexsha and not is_ancestor(clone.path, later, head)
    assert not is_ancestor(clone.path, "0" * 40, head)  # a commit the clone does not have: nothing shows it


def test_a_missing_branch_and_a_missing_remote_are_clear(tmp_path: Path) -> None:
    bare, _ = _remote(tmp_path)
    from hypergov.gitsource import RefNotFoundError

    with pytest.raises(RefNotFoundError, match="no branch 'release' on file://"):
        RemoteClone(url=bare.as_uri(), branch="release", path=tmp_path / "a").fetch()
    gone = RemoteClone(url=(tmp_path / "nowhere.git").as_uri(), branch="main", path=tmp_path / "b")
    with pytest.raises(RemoteGitError) as caught:
        gone.fetch()
    failure = classify(caught.value)
    assert failure.kind == "permanent" and "does not appear to be a git repository" in failure.message


def test_a_clone_of_another_repository_is_refused_and_a_fresh_one_repointed(tmp_path: Path) -> None:
    bare, _ = _remote(tmp_path / "one")
    other, _ = _remote(tmp_path / "two")
    path = tmp_path / "state" / "repo"
    RemoteClone(url=bare.as_uri(), branch="main", path=path).fetch()
    with pytest.raises(CloneMismatchError) as caught:
        RemoteClone(url=other.as_uri(), branch="main", path=path).fetch()
    assert f"follows {bare.as_uri()}, not {other.as_uri()}" in str(caught.value) and "move" in str(caught.value)
    assert classify(caught.value).kind == "permanent"

    typo = tmp_path / "typo"
    with pytest.raises(RemoteGitError):
        RemoteClone(url=(tmp_path / "nowhere.git").as_uri(), branch="main", path=typo).fetch()
    fixed = RemoteClone(url=bare.as_uri(), branch="main", path=typo)
    assert fixed.fetch() == git.Repo(bare).commit("main").hexsha  # never fetched anything: re-pointed


def test_a_directory_that_is_not_the_clone_is_refused(tmp_path: Path) -> None:
    bare, _ = _remote(tmp_path)
    (tmp_path / "stuff").mkdir()
    (tmp_path / "stuff" / "notes.txt").write_text("mine")
    with pytest.raises(CloneMismatchError, match="is not the reconciler's clone"):
        RemoteClone(url=bare.as_uri(), branch="main", path=tmp_path / "stuff").fetch()
    with pytest.raises(CloneMismatchError, match="with a working copy"):
        RemoteClone(url=bare.as_uri(), branch="main", path=tmp_path / "dev").fetch()


def test_the_url_is_written_to_the_config_never_to_gits_command_line(tmp_path: Path) -> None:
    """The URL (and its token) is set in the clone's config file, so `ps` never shows it."""
    bare, _ = _remote(tmp_path)
    url = bare.as_uri()
    clone = RemoteClone(url=url, branch="main", path=tmp_path / "repo")
    seen: list[list[str]] = []
    real_run = subprocess.run

    def spy(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        seen.append(list(command))
        return real_run(command, **kwargs)  # type: ignore[call-overload, no-any-return]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess, "run", spy)
        clone.fetch()
    assert seen and not any(url in " ".join(command) for command in seen)
    assert git.Repo(clone.path).remote("origin").url == url


def test_a_rewritten_remote_audit_branch_is_not_taken_over_and_the_branch_still_follows(tmp_path: Path) -> None:
    """The audit trail's tracking ref only moves forward (its push refuses a rewritten remote
    audit branch and says so); the followed branch is fetched all the same."""
    bare, dev = _remote(tmp_path)
    dev.git.push("origin", f"HEAD:refs/heads/{AUDIT_BRANCH}")
    clone = RemoteClone(url=bare.as_uri(), branch="main", path=tmp_path / "repo")
    clone.fetch()
    tracked = git.Repo(clone.path).commit(f"refs/remotes/origin/{AUDIT_BRANCH}").hexsha
    dev.git.checkout("--orphan", "forged")
    forged = _push(dev, "records.txt", "forged", branch=AUDIT_BRANCH + "-tmp")
    dev.git.push("--force", "origin", f"{forged}:refs/heads/{AUDIT_BRANCH}")
    dev.git.checkout("main")
    merged = _push(dev, "a.txt", "two")
    assert clone.fetch() == merged
    assert git.Repo(clone.path).commit(f"refs/remotes/origin/{AUDIT_BRANCH}").hexsha == tracked
