"""`hypergov plan --base REF --post`: the plan posted to its merge request (wiring only: what to
post is decided in `reconciler.git_host`, sent by `reconciler.git_host_client`).

The commit status is pending (GitHub) / running (GitLab) while planning, then success ("No
changes" or "N stacks to change") or failure with the reason. A failure to post never hides the
plan: the plan is printed and written to --markdown as without --post, and the command says that
the plan itself succeeded (with the exit status it would have had) and where its Markdown is,
then exits 1.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from cli.output import echo
from engines.outcomes import Failure
from engines.plan import Plan, StackName, failure_lines
from hypergov.redaction import redact
from reconciler.git_host import (
    GitHostConfigError,
    HostKind,
    MergeRequestTarget,
    failure_comment,
    merge_request_target,
    one_line,
    status_for,
    token_from,
    verdict_of,
)
from reconciler.git_host_client import GitHostError, HostApi, host_api, post_plan

POST_OPTIONS = [
    click.option("--post", is_flag=True, help="With --base: post the plan to the merge request as one comment "
                 "(found again by a hidden marker and updated on every re-plan, never duplicated) and set a commit "
                 "status (`hypergov/plan`) on its head commit. Needs --markdown. The host and merge request come "
                 "from GitHub Actions' or GitLab CI's variables unless given below; the token from GITHUB_TOKEN / "
                 "GITLAB_TOKEN or --token-file."),
    click.option("--git-host", type=click.Choice(["github", "gitlab"]), help="With --post: the Git host "
                 "(default: detected from GITHUB_ACTIONS / GITLAB_CI)."),
    click.option("--api-url", help="With --post: the host's API root (default: GITHUB_API_URL or "
                 "https://api.github.com; GitLab: CI_API_V4_URL, e.g. https://gitlab.example.com/api/v4)."),
    click.option("--project", "host_project", help="With --post: owner/repo (GitHub; default GITHUB_REPOSITORY) "
                 "or the project's id or path (GitLab; default CI_PROJECT_ID)."),
    click.option("--merge-request", "merge_request", type=click.IntRange(min=1), help="With --post: the pull "
                 "request's number (default: from GITHUB_EVENT_PATH) or the merge request's iid (default: "
                 "CI_MERGE_REQUEST_IID)."),
    click.option("--head-sha", help="With --post: the commit the status is set on (default: the pull request's "
                 "head; GitLab: CI_MERGE_REQUEST_SOURCE_BRANCH_SHA, else CI_COMMIT_SHA)."),
    click.option("--token-file", type=click.Path(dir_okay=False, path_type=Path), help="With --post: read the "
                 "token from this file (a mounted secret) instead of GITHUB_TOKEN / GITLAB_TOKEN."),
]


def post_options(fn: Any) -> Any:
    for option in reversed(POST_OPTIONS):
        fn = option(fn)
    return fn


@dataclass
class PlanPoster:
    """The merge request a `plan --post` posts to, and what went wrong posting (None: nothing)."""

    api: HostApi
    markdown_file: Path
    error: Failure | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def target(self) -> MergeRequestTarget:
        return self.api.target

    def planning(self) -> None:
        """The pending status; a failure is only a warning here (the final post says it again)."""
        try:
            self.api.set_status(status_for(self.target.host, "planning"))
        except GitHostError as exc:
            echo(f"warning: could not set the pending status on {self.target.label}: {exc}", err=True)

    def planned(self, plans: list[Plan], failures: Mapping[StackName, Failure], markdown: str) -> None:
        changed = sum(1 for p in plans if not p.is_empty)
        verdict = verdict_of(changed_stacks=changed, failed_stacks=len(failures))
        reason = f"{len(failures)} stack(s) could not be planned: {'; '.join(failure_lines(dict(failures)))}"
        self._post(markdown, status_for(self.target.host, verdict, changed_stacks=changed,
                                         reason=reason if failures else ""))

    def failed(self, reason: str, *, comment: str | None = None) -> None:
        """Nothing was planned (an invalid tree: `comment` lists its problems; or an error)."""
        self._post(comment or failure_comment(reason), status_for(self.target.host, "failed", reason=reason))

    def _post(self, markdown: str, status: Any) -> None:
        try:
            done = post_plan(self.api, markdown=markdown, status=status, where=str(self.markdown_file))
        except GitHostError as exc:
            self.error = exc.failure
            return
        echo(f"posted to {self.target.label}: comment {done.comment_id} "
             f"{'created' if done.created else 'updated'}, status {done.status.state} "
             f"({done.status.description})", err=True)

    def report(self, exit_status: int) -> int:
        """The exit status after posting: the plan's own, or 1 with a line saying why."""
        if self.error is None:
            return exit_status
        meaning = {0: "no changes", 2: "changes planned"}.get(exit_status)
        outcome = (f"the plan itself succeeded (exit status {exit_status} without --post: {meaning})"
                   if meaning else "the plan's own result is above (exit status 1 without --post)")
        echo(f"ERROR posting to {self.target.label} failed ({self.error.kind}): {self.error.message}. "
             f"Nothing else went wrong: {outcome}; its Markdown is at {self.markdown_file}.", err=True)
        return 1


def plan_poster(*, base_ref: str | None, markdown_file: Path | None, git_host: str | None, api_url: str | None,
                project: str | None, merge_request: int | None, head_sha: str | None, token_file: Path | None,
                environ: Mapping[str, str] | None = None, **api_options: Any) -> PlanPoster:
    """The poster, or a usage error naming what is missing (before anything is planned)."""
    if not base_ref:
        raise click.UsageError("--post needs --base (it posts a merge request's plan)")
    if markdown_file is None:
        raise click.UsageError("--post needs --markdown FILE (the plan is written there too, so that it is not "
                               "lost when posting fails)")
    env = os.environ if environ is None else environ
    host: HostKind | None = "github" if git_host == "github" else "gitlab" if git_host == "gitlab" else None
    try:
        target = merge_request_target(env, host=host, api_url=api_url, project=project, number=merge_request,
                                      head_sha=head_sha)
        token = token_from(target.host, env, token_file)
    except GitHostConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    return PlanPoster(api=host_api(target, token, **api_options), markdown_file=markdown_file)


def failure_reason(exc: BaseException, token: str | None = None) -> str:
    from engines.outcomes import classify

    return redact(one_line(classify(exc).message), (token,) if token else ())
