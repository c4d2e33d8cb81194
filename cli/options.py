"""Options every command spells the same way. The config tree is always `--config DIR` (the
folder holding org.yaml): a working-tree path; commands that read Git refs find the repository
that holds it."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])
DEFAULT_CONFIG = Path("config")
_HELP = "The config tree (the folder holding org.yaml)"


def config_option(*, from_settings: bool = False) -> Callable[[F], F]:
    """`--config DIR` into the parameter `config_dir`. Commands that read a settings file take its
    `config_dir` when the option is absent (None); the others default to ./config."""
    if from_settings:
        return click.option("--config", "config_dir", type=click.Path(file_okay=False, path_type=Path),
                            default=None, help=f"{_HELP}; default: the settings' config_dir, else ./config.")
    return click.option("--config", "config_dir", type=click.Path(file_okay=False, path_type=Path),
                        default=DEFAULT_CONFIG, show_default=True, help=f"{_HELP}.")


def require_tree_dir(config_dir: Path) -> None:
    if not config_dir.is_dir():
        raise click.UsageError(f"'{config_dir}' is not a directory; point --config at the config tree "
                               "(the folder holding org.yaml)")


def check_months(_ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
    """A click callback for `--month YYYY-MM` (one value, several, or none): each a valid UTC month."""
    from usage.warehouse import month_window

    for month in (value,) if isinstance(value, str) else value or ():
        try:
            month_window(month)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from exc
    return value


def tree_diff(files: Mapping[str, Any], changed: Mapping[str, bytes], display: str) -> str:
    """The unified diff of the tree files `changed` against `files`, named as `git diff` names them:
    from the config tree's folder (its own name, e.g. config/)."""
    folder = Path(display).name
    lines: list[str] = []
    for key in sorted(changed):
        before = files[key].decode("utf-8").splitlines(keepends=True)
        after = changed[key].decode("utf-8").splitlines(keepends=True)
        lines += difflib.unified_diff(before, after, f"a/{folder}/{key}", f"b/{folder}/{key}")
    return "".join(lines)
