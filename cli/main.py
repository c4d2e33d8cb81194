"""The `hypergov` command line. Exit codes are for CI, the same for every command:
0 nothing to do / success (audit verify: intact), 2 changes planned or drift found (plan, drift),
1 any error (audit verify: broken; usage errors included: a typo in an option must never read as
"changes"), 75 busy (apply, reconcile, usage collect).
User errors never print a traceback."""

from __future__ import annotations

import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from cli.options import config_option, require_tree_dir
from cli.output import echo
from hypergov import __version__
from hypergov.identity_people import tree_identity_center_members
from hypergov.problems import Severity, format_problem
from hypergov.redaction import redact
from hypergov.rules.catalog import RULES
from hypergov.schema import write_schemas
from hypergov.validate import validate_dir

EXIT_PROBLEMS = 1
EXIT_USAGE = 1  # not click's 2: 2 means "changes" to CI (terraform's -detailed-exitcode)


# The commands of the layers above hypergov's models and rules (stacks, engines, reconciler,
# usage, the embedded endpoint), each imported when it is run or listed: `hypergov plan` does not
# load the reconciler's audit trail, the capacity simulator or the usage collector (about half a
# second of imports for every command; a merge-request plan is meant to take under two).
LAZY_COMMANDS = {
    "stacks": "cli.stacks:stacks",
    "plan": "cli.plan:plan_cmd",
    "apply": "cli.apply:apply_cmd",
    "drift": "cli.drift:drift_cmd",
    "reconcile": "cli.reconcile:reconcile_cmd",
    "status": "cli.status:status_cmd",
    "audit": "cli.audit:audit",
    "access": "cli.access:access_cmd",
    "import": "cli.import_tree:import_cmd",
    "codeowners": "cli.codeowners:codeowners_cmd",
    "embedded-aws": "embedded_aws.command:embedded_aws_command",
    "capacity": "cli.capacity:capacity",
    "usage": "cli.usage:usage",
}


class HypergovGroup(click.Group):
    """Click exits 2 on usage errors; hypergov exits 1, so that 2 only ever means changes. Error
    messages are redacted as every other output is (`cli.output`). The commands of
    `LAZY_COMMANDS` are imported when asked for (click's documented lazy-loading group)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            module, attribute = LAZY_COMMANDS[cmd_name].split(":")
            command = getattr(importlib.import_module(module), attribute)
            if not isinstance(command, click.Command) or command.name != cmd_name:
                raise RuntimeError(f"{LAZY_COMMANDS[cmd_name]} is not the command {cmd_name!r}")
            self.add_command(command)
        return super().get_command(ctx, cmd_name)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            rv = super().main(*args, **kwargs)
        except click.UsageError as exc:
            click.UsageError(redact(exc.format_message()), exc.ctx).show()
            sys.exit(EXIT_USAGE)
        except click.ClickException as exc:
            click.ClickException(redact(exc.format_message())).show()
            sys.exit(exc.exit_code if exc.exit_code != 2 else EXIT_PROBLEMS)
        except click.Abort:
            echo("Aborted!", err=True)
            sys.exit(EXIT_PROBLEMS)
        sys.exit(rv if isinstance(rv, int) else 0)


EXIT_CODES_HELP = ("Exit status (every command): 0 success or nothing to do; 2 changes planned or drift "
                   "found (plan, drift); 1 any error, usage errors included; 75 busy (apply, reconcile, "
                   "usage collect); 130 interrupted.")


@click.group(cls=HypergovGroup, epilog=EXIT_CODES_HELP,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="hypergov")
def main() -> None:
    """GitOps governance for shared SageMaker HyperPod GPU clusters.

    A Git tree (org.yaml, clusters/, projects/, workloads/) describes the organization, its
    clusters, its teams and their workload rules. hypergov validates it, generates one stack per
    org, cluster and project, plans and applies them, and detects drift.
    """


@main.command()
@config_option()
@click.option("--json", "as_json", is_flag=True, help="Print problems as JSON (for machines).")
def validate(config_dir: Path, as_json: bool) -> None:
    """Check the config tree (--config, default ./config) against the schema and every rule.

    Prints every problem at once, sorted by file and line, as
    'file:line:column  RULE-ID  message' with a hint how to fix it.
    Exit status: 0 valid (warnings allowed), 1 problems found or the tree unusable.
    """
    require_tree_dir(config_dir)
    path = config_dir
    report = validate_dir(path)
    errors = sum(1 for p in report.problems if p.severity is Severity.ERROR)
    warnings = len(report.problems) - errors
    # Offline: the identity store is not asked, so a member's existence is never claimed.
    identity_center = len(tree_identity_center_members(report.tree))
    if as_json:
        echo(json.dumps({"valid": report.ok, "errors": errors, "warnings": warnings,
                         "identity_center_members": {"named": identity_center, "checked": False},
                         "problems": [p.as_dict() for p in report.problems]}, indent=2))
    else:
        for p in report.problems:
            echo(format_problem(p))
        tree = report.tree
        summary = (f"{len(tree.project_files)} projects, {len(tree.cluster_files)} clusters, "
                   f"{len(tree.workloads)} workload classes")
        unchecked = (f"; {identity_center} Identity Center member(s) not checked against the identity store "
                     "(hypergov plan looks them up)") if identity_center else ""
        if report.ok:
            click.secho(f"valid: {path} ({summary}; {warnings} warning(s){unchecked})", fg="green", err=True)
        else:
            click.secho(f"invalid: {errors} error(s), {warnings} warning(s) in {path} ({summary})",
                        fg="red", err=True)
    sys.exit(0 if report.ok else EXIT_PROBLEMS)


@main.command("rules")
@click.option("--json", "as_json", is_flag=True, help="Print the rule catalogue as JSON.")
def list_rules(as_json: bool) -> None:
    """List every rule id hypergov reports, with what it checks."""
    if as_json:
        echo(json.dumps([r.__dict__ for r in RULES], indent=2))
        return
    for r in RULES:
        echo(f"{r.id:<8} {r.family:<12} {r.title}")


@main.command("schema")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("schema"),
              show_default=True, help="Directory to write the JSON Schema files to.")
def schema_cmd(out: Path) -> None:
    """Write JSON Schemas of the config files (for editor completion and checks)."""
    for written in write_schemas(out):
        echo(os.fspath(written))


def run() -> None:
    """Console entry point: user errors exit cleanly; only real bugs show a traceback."""
    try:
        main(standalone_mode=True)
    except KeyboardInterrupt:
        echo("interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    run()
