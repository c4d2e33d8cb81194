"""The CODEOWNERS file org.yaml's `change_control` implies, so that the Git host enforces the
approvals `hypergov plan --base` lists (issue 31).

`hypergov.change_control` decides who must approve each changed file and shows it in the merge
request; nothing binds the host to it. GitHub and GitLab both read a CODEOWNERS file and, once
branch protection asks for code-owner approval, refuse a merge its owners have not approved. This
module writes that file from the tree, purely: the tree, the tree's folder in the repository and
the host in; a `Codeowners` or every `Refusal` at once out. `hypergov codeowners` writes and checks it.

Sources (the hosts' documentation, read for these rules):
- GitHub, "About code owners" (docs.github.com/en/repositories/managing-your-repositorys-settings-
  and-features/customizing-your-repository/about-code-owners): gitignore patterns except `\\#`, `!`
  and `[ ]`; "the last matching pattern takes the most precedence"; owners `@username`,
  `@org/team-name` or an e-mail address of an account; a pattern whose owners are left empty has no
  owner; `.github/`, root, `docs/` searched in that order, the first file found used; under 3 MB.
- GitLab, "Code Owners" (docs.gitlab.com/user/project/codeowners/), "Syntax of CODEOWNERS file"
  (.../codeowners/reference.html), "Advanced CODEOWNERS configuration" (.../codeowners/advanced.html):
  `File::fnmatch` with FNM_DOTMATCH and FNM_PATHNAME (no brace alternation), `/` anchors at the
  root, a path without it matches at any depth, `dir/` is everything under dir, `**/` any depth;
  "the users from last pattern matching the file" are used; owners `@user`, `@group`,
  `@group/subgroup` or an e-mail; an entry with zero owners "can never be satisfied" and is
  auto-approved; root, `docs/`, `.gitlab/` searched in that order, the first found used.

Translation (the subset written reads the same on both hosts; only the header, the default path
and GitHub's one-slash teams differ):
1. Order. Both hosts take the last matching line, change_control the last matching rule and in it
   the first matching glob: rules are written in order, a rule's globs last to first.
2. Anchoring. Every pattern starts with `/` and the tree's folder (`/config/org.yaml`): a glob is
   relative to the tree, a CODEOWNERS pattern to the repository, and an unanchored one would match
   at any depth on GitLab.
3. Globs. `*` and `?` stay in one segment everywhere. change_control's `**` segment stands for one
   or more segments (`a/**/b` misses `a/b`), the hosts' `**/` for zero or more: it is written
   `*/**`; a final `**` becomes the directory pattern `a/` (everything under it); the glob `**` the
   tree's folder. `**` inside a segment crosses `/` in change_control and not on the hosts: refused.
   `{a,b}` is no CODEOWNERS syntax: one line per alternative; nested or unclosed braces and
   alternatives holding `*`, `?`, `<` or `>` (literal inside braces for change_control) are refused,
   as is a glob that can match no path (a leading or trailing `/`, an empty, `.` or `..` segment).
4. `<project>` (one or more characters of one segment) becomes `?*`, one line for every project
   new ones included, when the owners do not depend on the project. When they name project-leads
   or project-members, that `?*` line goes to the platform admins (change_control's answer for a
   project the tree does not have yet) and one line per project of the tree follows it. A glob
   without `<project>` in a rule naming project roles goes to the platform admins, as in
   change_control. Left as it is: a path one glob reads two existing projects out of
   (`<project>{a,}.yaml`, projects `vision` and `visiona`) gets the later line's project.
5. Owners. '@user', '@org/team' and e-mails pass through. The roles are AWS principals and
   Identity Center groups, which no Git host knows: 'platform-admins' is org.yaml's
   `platform_admins_on_git_host`, 'project-leads' the project's `members_on_git_host.ProjectLead`,
   'project-members' the handles of every persona. A persona with members and no handles given is
   refused (naming the rule and the file to fix), as is a role that maps to no handle at all: a line
   without owners removes ownership on GitHub and is auto-approved on GitLab. `[]` says a persona's
   people have no Git-host account (they cannot approve there; the others of the role still can).
6. The fallback. A path no rule matches goes to the platform admins in change_control: the first
   line gives the tree's folder to them.
7. The file itself, outside the tree, goes to the owners of org.yaml (the last line matching
   `org.yaml`): who may change change_control may change its enforcement.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Literal

from hypergov.change_control import glob_pattern
from hypergov.model.common import PERSONAS
from hypergov.model.org import ChangeRule
from hypergov.model.tree import GovernanceTree
from hypergov.problems import SourcePos

Host = Literal["github", "gitlab"]
HOSTS: tuple[Host, ...] = ("github", "gitlab")
HOST_NAMES: dict[Host, str] = {"github": "GitHub", "gitlab": "GitLab"}
# Where each host reads CODEOWNERS, in the order it looks; the first file found is the one used.
LOCATIONS: dict[Host, tuple[str, ...]] = {
    "github": (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"),
    "gitlab": ("CODEOWNERS", "docs/CODEOWNERS", ".gitlab/CODEOWNERS"),
}
DEFAULT_PATH: dict[Host, str] = {"github": ".github/CODEOWNERS", "gitlab": ".gitlab/CODEOWNERS"}
GITHUB_MAX_BYTES = 3 * 1024 * 1024  # "CODEOWNERS files must be under 3 MB in size"
PROJECT_ROLES = ("project-leads", "project-members")
PLACEHOLDER = "<project>"
ANY_PROJECT = "?*"  # `<project>`: one or more characters of one segment
_PLAIN = re.compile(r"[A-Za-z0-9._-]+")  # a folder or project name written as it is

RefusalKind = Literal["owner-not-on-git-host", "glob-not-expressible", "path-not-expressible", "too-large"]


@dataclass(frozen=True)
class Refusal:
    """Why the file cannot be written: where (None: not in the tree), what, and how to fix it."""

    kind: RefusalKind
    pos: SourcePos | None
    message: str
    fix: str

    def __str__(self) -> str:
        return f"{self.pos}: {self.message}; {self.fix}" if self.pos else f"{self.message}; {self.fix}"


class CodeownersRefused(Exception):
    """Every reason at once, so that one run shows everything to fix."""

    def __init__(self, refusals: list[Refusal]) -> None:
        self.refusals = tuple(dict.fromkeys(refusals))
        super().__init__("\n".join(str(r) for r in self.refusals))


@dataclass(frozen=True)
class Line:
    tree_glob: str  # the tree-relative glob the line stands for (braces expanded, <project> resolved)
    pattern: str  # as the host reads it
    owners: tuple[str, ...]


@dataclass(frozen=True)
class Block:
    comment: tuple[str, ...]
    lines: tuple[Line, ...]


@dataclass(frozen=True)
class Codeowners:
    host: Host
    path: str  # relative to the repository root
    tree_dir: str  # the tree's folder relative to the repository root ('' at the root)
    blocks: tuple[Block, ...]

    def text(self) -> str:
        where = f"{self.tree_dir}/org.yaml" if self.tree_dir else "org.yaml"
        host = HOST_NAMES[self.host]
        out = [f"# CODEOWNERS for {host}, written by `hypergov codeowners` from change_control in {where}.",
               "# Do not edit: change change_control or the Git-host handles (org.yaml's platform_admins_on_git_host,",
               "# each project's members_on_git_host) and run `hypergov codeowners` again; CI runs it with --check.",
               "# The last matching pattern decides, as the last matching rule of change_control does."]
        for block in self.blocks:
            out += ["", *(f"# {c}" for c in block.comment)]
            out += [f"{line.pattern} {' '.join(line.owners)}" for line in block.lines]
        return "\n".join(out) + "\n"


class NotExpressible(ValueError):
    """A glob or name CODEOWNERS cannot say exactly."""


def expand_braces(glob: str) -> list[str]:
    """`{a,b}` alternatives as separate globs, left to right (no host reads braces)."""
    start = glob.find("{")
    if start < 0:
        if "}" in glob:
            raise NotExpressible(f"'{glob}' has a '}}' without its '{{'")
        return [glob]
    end = glob.find("}", start)
    if end < 0 or "{" in glob[start + 1:end]:
        raise NotExpressible(f"'{glob}' has an unclosed or nested '{{'")
    choices = glob[start + 1:end].split(",")
    if any(c in choice for choice in choices for c in "*?<>"):
        raise NotExpressible(f"'{glob}': change_control reads '*', '?', '<' and '>' literally inside braces, "
                             "CODEOWNERS would not")
    return [glob[:start] + choice + rest for choice in choices for rest in expand_braces(glob[end + 1:])]


def host_pattern(tree_glob: str, tree_dir: str) -> str:
    """A brace-free tree-relative glob as a repository-anchored CODEOWNERS pattern."""
    root = f"/{tree_dir}/" if tree_dir else "/"
    if tree_glob == "**":
        return root if tree_dir else "*"
    segments = tree_glob.split("/")
    if any(s in ("", ".", "..") for s in segments):
        raise NotExpressible(f"'{tree_glob}' can match no path of the tree (a leading or trailing '/', or an "
                             "empty, '.' or '..' segment)")
    if any("**" in s and s != "**" for s in segments):
        raise NotExpressible(f"'{tree_glob}': '**' inside a segment crosses '/' in change_control but not in "
                             "CODEOWNERS; write it as a segment of its own ('a/**/b')")
    if segments[-1] == "**":  # everything under the folder: the directory pattern
        return root + "/".join("*/**" if s == "**" else s for s in segments[:-1]) + "/"
    return root + "/".join("*/**" if s == "**" else s for s in segments)


def _alternatives(glob: str) -> list[str]:
    alternatives = expand_braces(glob)
    if any(a.count(PLACEHOLDER) > 1 for a in alternatives):
        raise NotExpressible(f"'{glob}' names <project> twice")
    return alternatives


def _constant(pos: SourcePos, _index: int) -> SourcePos:
    return pos


def codeowners(tree: GovernanceTree, *, host: Host, tree_dir: str, path: str) -> Codeowners:
    """The CODEOWNERS file of a valid tree whose folder is `tree_dir` in the repository ('' at its
    root), to be written at `path` (relative to the repository root). Raises CodeownersRefused."""
    if tree.org is None:
        raise ValueError("a tree without org.yaml has no change_control")
    writer = _Writer(tree, host, tree_dir)
    writer.check_names(path)
    blocks = [Block(("change_control's fallback: a path of the tree no rule matches goes to the platform admins",),
                    (writer.line("**", writer.admins()),))]
    blocks += [writer.rule_block(number, rule) for number, rule in enumerate(tree.org.model.change_control, 1)]
    ruling = next(line.owners for block in reversed(blocks) for line in reversed(block.lines)
                  if glob_pattern(line.tree_glob).match("org.yaml"))
    blocks.append(Block(("This file: the owners of org.yaml (who may change change_control may change its "
                         "enforcement)",), (Line("", "/" + path, ruling),)))
    result = Codeowners(host=host, path=path, tree_dir=tree_dir, blocks=tuple(blocks))
    if host == "github" and len(result.text().encode()) >= GITHUB_MAX_BYTES:
        writer.refusals.append(Refusal("too-large", None, "the file would reach GitHub's 3 MB limit for CODEOWNERS",
                                       "use fewer, wider globs in change_control"))
    if writer.refusals:
        raise CodeownersRefused(writer.refusals)
    return result


@dataclass
class _Writer:
    """The lines of each rule, every refusal collected instead of stopping at the first."""

    tree: GovernanceTree
    host: Host
    tree_dir: str
    refusals: list[Refusal] = field(default_factory=list)

    def check_names(self, path: str) -> None:
        """The folder, the file's path and project names are written as they are: plain names only."""
        for what, value in (("the config tree's folder", self.tree_dir), ("the CODEOWNERS path", path)):
            if value and not all(_PLAIN.fullmatch(s) and s not in (".", "..") for s in value.split("/")):
                self.refusals.append(Refusal("path-not-expressible", None, f"{what} '{value}' is not a plain path",
                                             "use letters, digits, '.', '_' and '-' between the '/'"))
        for name, source in self.tree.projects.items():
            if not _PLAIN.fullmatch(name):
                self.refusals.append(Refusal("path-not-expressible", source.pos(), f"project '{name}' is not a plain "
                                             "name, which a CODEOWNERS pattern cannot hold", "rename the file"))

    def line(self, tree_glob: str, owners: tuple[str, ...]) -> Line:
        return Line(tree_glob, host_pattern(tree_glob, self.tree_dir), owners)

    def rule_block(self, number: int, rule: ChangeRule) -> Block:
        roles = any(o in PROJECT_ROLES for o in rule.owners)
        lines = [line for index in reversed(range(len(rule.paths))) for line in self._glob_lines(number, index, roles)]
        comment = [f"change_control rule {number}: {', '.join(rule.paths)} -> {', '.join(rule.owners)}"]
        if roles and any(PLACEHOLDER in glob for glob in rule.paths):
            comment.append("'?*': a project the tree does not have yet, approved by the platform admins")
        return Block(tuple(comment), tuple(lines))

    def _glob_lines(self, number: int, index: int, roles: bool) -> list[Line]:
        """First every alternative for any project (the platform admins when the owners depend on
        the project, which a new one does not have yet), then per project of the tree."""
        assert self.tree.org is not None
        rule = self.tree.org.model.change_control[number - 1]
        try:
            alternatives = _alternatives(rule.paths[index])
            lines = [self.line(a.replace(PLACEHOLDER, ANY_PROJECT), ()) for a in alternatives]
        except NotExpressible as exc:
            self.refusals.append(Refusal(
                "glob-not-expressible", self.tree.org.pos("change_control", number - 1, "paths", index), str(exc),
                "rewrite it: '**' as a whole segment, flat braces of plain names, at most one <project>"))
            return []
        anyone = self.admins() if roles else self.of_rule(number, None)
        lines = [Line(line.tree_glob, line.pattern, anyone) for line in lines]
        if roles:
            lines += [self.line(a.replace(PLACEHOLDER, name), self.of_rule(number, name))
                      for a in alternatives if PLACEHOLDER in a for name in sorted(self.tree.projects)]
        return lines

    def admins(self) -> tuple[str, ...]:
        assert self.tree.org is not None
        org = self.tree.org
        if not org.model.platform_admins_on_git_host:
            self.refusals.append(Refusal(
                "owner-not-on-git-host", org.pos("platform_admins", key=True),
                "the platform admins have no handle on the Git host (they approve every path no change_control "
                "rule matches, and every rule naming 'platform-admins')",
                "add `platform_admins_on_git_host: ['@org/team']` (a team, users or e-mails) to org.yaml"))
        return self._checked(org.model.platform_admins_on_git_host, partial(org.pos, "platform_admins_on_git_host"))

    def of_rule(self, number: int, project: str | None) -> tuple[str, ...]:
        """Rule `number`'s owners as handles (for the paths of `project`, when they name project roles)."""
        assert self.tree.org is not None
        org = self.tree.org
        handles: list[str] = []
        for index, owner in enumerate(org.model.change_control[number - 1].owners):
            if owner == "platform-admins":
                handles += self.admins()
            elif owner in PROJECT_ROLES:
                assert project is not None
                handles += self._project_role(org.pos("change_control", number - 1, "owners", index), owner, project)
            else:
                handles += self._checked([owner], partial(_constant, org.pos("change_control", number - 1,
                                                                              "owners", index)))
        return tuple(dict.fromkeys(handles))

    def _project_role(self, named_at: SourcePos, role: str, project: str) -> tuple[str, ...]:
        """The handles of `project`'s people in `role`, which change_control names at `named_at`."""
        source = self.tree.projects[project]
        personas = ("ProjectLead",) if role == "project-leads" else PERSONAS
        handles: list[str] = []
        missing = False
        for persona in personas:
            given = source.model.members_on_git_host.of(persona)
            if given is None and source.model.members.of(persona):
                missing = True
                self.refusals.append(Refusal(
                    "owner-not-on-git-host", source.pos("members", persona, key=True),
                    f"change_control names '{role}' ({named_at}), and {project}'s {persona} members have no "
                    "handle on the Git host",
                    f"add `members_on_git_host: {{{persona}: ['@org/team']}}` to this file (`[]` if they have "
                    "no Git-host account)"))
            handles += self._checked(given or [], partial(source.pos, "members_on_git_host", persona))
        if not handles and not missing:
            self.refusals.append(Refusal(
                "owner-not-on-git-host", source.pos("members_on_git_host", key=True),
                f"change_control names '{role}' ({named_at}), and none of {project}'s {role} has a handle on the "
                "Git host: its lines would have no owner (GitHub: unowned; GitLab: auto-approved)",
                "give them a handle in members_on_git_host, or take the role out of the rule"))
        return tuple(handles)

    def _checked(self, handles: Sequence[str], at: Callable[[int], SourcePos]) -> tuple[str, ...]:
        """GitHub names a team `@org/team`: a handle with more '/' is a GitLab subgroup only."""
        for index, handle in enumerate(handles):
            if self.host == "github" and handle.startswith("@") and handle.count("/") > 1:
                self.refusals.append(Refusal("owner-not-on-git-host", at(index),
                                             f"'{handle}' is a GitLab subgroup; GitHub names a team '@org/team'",
                                             "give the GitHub team, or write the file with --format gitlab"))
        return tuple(handles)
