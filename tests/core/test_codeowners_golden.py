"""The CODEOWNERS file of the example tree (config/, which sits in the folder `config` of the
repository), pinned as golden files: tests/core/golden/codeowners/example-github and example-gitlab.
The golden files were written by hand from config/org.yaml and the hosts' documentation, line by
line, as follows; they are never regenerated from the code.

What the example says. org.yaml's change_control:
  rule 1  paths ["org.yaml", "clusters/*.yaml"]       owners [platform-admins]
  rule 2  paths ["projects/<project>.yaml"]           owners [project-leads, platform-admins]
  rule 3  paths ["workloads/<project>/*.yaml"]        owners [project-members]
org.yaml's platform_admins_on_git_host: ['@acme/ml-platform']. The projects, sorted, and their
members_on_git_host (ProjectLead / Engineer / Viewer; "-" where not given):
  nlp       @acme/nlp-leads      / @acme/nlp-engineers                        / - (Viewer: [] members)
  recsys    @acme/recsys-leads   / @acme/recsys-engineers                     / - (no Viewer key)
  research  @acme/research-leads / @acme/research-scientists                  / @acme/research-interns
  speech    @acme/speech-leads   / @acme/speech-engineers                     / [] (no Git-host account)
  vision    @acme/vision-leads   / @acme/vision-engineers, alice@example.com  / [] (no Git-host account)

What the hosts say. GitHub ("About code owners"): gitignore patterns, a leading `/` anchors at
the repository root, `dir/` owns everything under dir, `*` and `?` stay inside a segment, owners
are `@user`, `@org/team` or e-mails, "the last matching pattern takes the most precedence",
comment lines start with `#`. GitLab ("Syntax of CODEOWNERS file", "Advanced CODEOWNERS
configuration"): the same for these patterns (File::fnmatch with FNM_PATHNAME, `/docs/` is
everything under docs), "the users from last pattern matching the file" are used, `@group/subgroup`
owners, full-line `#` comments. Both: the pattern first, then the owners separated by spaces.

The lines, top to bottom (the four header comment lines and the `#` comment above each block are
documentation; only the host's name in the first line differs between the two files):
1. change_control's fallback: a path no rule matches goes to the platform admins. The whole tree
   is the folder `config/`, anchored: `/config/ @acme/ml-platform`. It comes first, so that every
   rule below overrides it, as every rule overrides the fallback in change_control.
2. Rule 1, its globs last to first (within a rule change_control takes the first matching glob,
   the hosts the last line; both globs have the same owners here, so only the rule's position
   matters): `/config/clusters/*.yaml @acme/ml-platform`, `/config/org.yaml @acme/ml-platform`.
3. Rule 2 names project-leads, whose people depend on the project. For a project the tree does not
   have yet change_control falls back to the platform admins: `<project>` (one or more characters
   of one segment) is `?*` on both hosts, `/config/projects/?*.yaml @acme/ml-platform`. Then one
   line per project, the project's ProjectLead handles then the platform admins (the rule's owner
   order): `/config/projects/nlp.yaml @acme/nlp-leads @acme/ml-platform`, and so for recsys,
   research, speech and vision with their `-leads` team. They come after the `?*` line, which they
   override for the projects that exist.
4. Rule 3 names project-members (every persona). `/config/workloads/?*/*.yaml @acme/ml-platform`,
   then per project the handles of ProjectLead, Engineer, Viewer in that order: nlp
   `@acme/nlp-leads @acme/nlp-engineers` (its Viewer list is empty: nobody to name); recsys
   `@acme/recsys-leads @acme/recsys-engineers`; research `@acme/research-leads
   @acme/research-scientists @acme/research-interns`; speech `@acme/speech-leads
   @acme/speech-engineers` (Viewer: `[]`); vision `@acme/vision-leads @acme/vision-engineers
   alice@example.com` (Viewer: `[]`).
5. The file itself, last so that nothing overrides it: the owners of org.yaml, i.e. of the last
   line above matching `config/org.yaml` (rule 1's): `/.github/CODEOWNERS @acme/ml-platform` on
   GitHub, `/.gitlab/CODEOWNERS @acme/ml-platform` on GitLab (the default locations: GitHub reads
   `.github/` first; GitLab documents `.gitlab/CODEOWNERS`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hypergov.codeowners import DEFAULT_PATH, Host, codeowners
from tests.example_tree import example_tree

GOLDEN = Path(__file__).resolve().parent / "golden" / "codeowners"


@pytest.mark.parametrize("host", [pytest.param("github", id="github"), pytest.param("gitlab", id="gitlab")])
def test_example_tree_codeowners_is_the_hand_written_file(host: Host) -> None:
    written = codeowners(example_tree(), host=host, tree_dir="config", path=DEFAULT_PATH[host]).text()
    assert written == (GOLDEN / f"example-{host}").read_text(encoding="utf-8")


def test_the_two_hosts_differ_only_in_the_header_and_the_files_own_path() -> None:
    github = (GOLDEN / "example-github").read_text(encoding="utf-8").splitlines()
    gitlab = (GOLDEN / "example-gitlab").read_text(encoding="utf-8").splitlines()
    differing = [(a, b) for a, b in zip(github, gitlab, strict=True) if a != b]
    assert differing == [
        ("# CODEOWNERS for GitHub, written by `hypergov codeowners` from change_control in config/org.yaml.",
         "# CODEOWNERS for GitLab, written by `hypergov codeowners` from change_control in config/org.yaml."),
        ("/.github/CODEOWNERS @acme/ml-platform", "/.gitlab/CODEOWNERS @acme/ml-platform"),
    ]


def test_no_comment_line_names_an_owner() -> None:
    """GitLab parses owners in inline comments; full-line comments are ignored, but no handle is
    written in a comment either way, and no pattern line carries a comment."""
    for line in (GOLDEN / "example-gitlab").read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            assert "@" not in line, line
        elif line:
            assert "#" not in line, line
