"""`hypergov stacks ...`: generate the stack files, list stacks in dependency order, print a
stack's resource graph. User errors (invalid tree, unknown stack, unreadable stack file) exit 1
with a message, never a traceback."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from cli.options import config_option, require_tree_dir
from cli.output import echo
from hypergov.validate import InvalidTreeError, validate_dir
from stacks.files import STACK_CONFIG_DIR, StackFileError, generate_stacks
from stacks.spec import UnknownStackError, plan_stacks

DEFAULT_STACKS_DIR = STACK_CONFIG_DIR


def _load(config: Path):  # type: ignore[no-untyped-def]
    require_tree_dir(config)
    report = validate_dir(config)
    if not report.ok:
        raise click.ClickException(f"{InvalidTreeError(report)} {config}")
    return report.tree


@click.group("stacks")
def stacks() -> None:
    """One stack for the org, one per cluster, one per project."""


@stacks.command("generate")
@config_option()
@click.option("--out", type=click.Path(path_type=Path), default=DEFAULT_STACKS_DIR, show_default=True,
              help="Directory of the Pulumi.<stack>.yaml files (Pulumi.yaml's stackConfigDir).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if a file would change or is orphaned.")
def generate(config_dir: Path, out: Path, check: bool) -> None:
    """Write Pulumi.<stack>.yaml for every stack of the tree; report stacks without a source."""
    tree = _load(config_dir)
    try:
        report = generate_stacks(plan_stacks(tree), stacks_dir=out,
                                 config_dir=Path(os.path.normpath(config_dir)).as_posix(), write=not check)
    except StackFileError as exc:
        raise click.ClickException(str(exc)) from None
    verb = "would write" if check else "wrote"
    for name in report.written:
        echo(f"{verb}    {name}")
    echo(f"{len(report.unchanged)} stack file(s) unchanged", err=True)
    for name in report.orphaned:
        click.secho(f"orphaned {name}: no source in the tree any more; destroy it with "
                    f"'pulumi destroy --stack {name}', then delete {out}/Pulumi.{name}.yaml", fg="yellow")
    if check and (report.written or report.orphaned):
        sys.exit(1)


@stacks.command("list")
@config_option()
def list_stacks(config_dir: Path) -> None:
    """Stacks in the order they must be applied, with what each depends on."""
    for spec in plan_stacks(_load(config_dir)):
        deps = ", ".join(spec.depends_on) or "-"
        echo(f"{spec.name:<32} {spec.kind:<8} after: {deps}")


@stacks.command("graph")
@click.argument("stack")
@config_option()
def graph(stack: str, config_dir: Path) -> None:
    """Print STACK's resource graph (captured in-process under Pulumi mocks) as JSON."""
    from stacks.graph import capture_graph  # the Pulumi SDK loads slowly; only this command needs it

    tree = _load(config_dir)
    try:
        echo(capture_graph(tree, stack).to_json(), nl=False)
    except (UnknownStackError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
