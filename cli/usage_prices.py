"""`hypergov usage prices`: org.yaml's instance prices checked against the AWS Price List API's
public HyperPod on-demand prices (`usage.price_list` reads, `usage.price_proposal` compares and
edits), for every instance type the tree's clusters run, in each cluster's region."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from cli.options import config_option, tree_diff
from cli.output import echo
from cli.plan import cli_errors, load_cli_settings, to_stderr

PRICES_EXIT = ("Exit status: 0 org.yaml's on-demand prices match the Price List; 2 changes proposed (written with "
               "--write); 1 any error (usage included; a tree that fails validation before or after the change; "
               "the Price List unreachable or refusing, named with whether the failure is temporary or permanent).")


@click.command("prices", epilog=PRICES_EXIT)
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Settings file (default: ./hypergov.yaml if present).")
@config_option(from_settings=True)
@click.option("--write", is_flag=True, help="Write the proposed prices into org.yaml (review with git diff); by "
              "default they are printed only.")
@click.option("--json", "as_json", is_flag=True, help="Print every type (org.yaml's price, the listed price per "
              "region, the action) and the diff as JSON.")
@cli_errors
def prices_cmd(settings_file: Path | None, config_dir: Path | None, write: bool, as_json: bool) -> None:
    """Compare org.yaml's `pricing` with the AWS Price List (pricing:GetProducts, service code
    AmazonSageMaker): for each instance type the tree's clusters run, the public on-demand price per
    hour of a HyperPod cluster instance (usage type `<region>-Cluster:<type>`, not a training job's)
    in each cluster's region.

    A type org.yaml prices on-demand at another price, or does not price, is proposed at the listed
    price (the highest where its regions differ: org.yaml holds one price per type); a reserved or
    training-plan rate is your contract's and is kept. The change is written where the prices stand
    in org.yaml and validated before anything is written. Rules: usage/SEMANTICS.md, "Prices from the
    Price List". Markdown for a merge request, or --json.
    """
    from engines.aws_clients import AwsClients
    from hypergov.tree_files import read_tree_dir
    from hypergov.validate import shown_root, validate_files
    from usage.adapter import instance_type_regions, org_rates
    from usage.price_list import PRICING_REGION, NotListed, read_prices
    from usage.price_proposal import PriceEditError, changes, compare, edited_org

    settings = load_cli_settings(settings_file, config_dir)
    root = Path(settings.config_dir)
    files = read_tree_dir(root)
    display = shown_root(root)
    current = validate_files(files, display_root=display)
    tree, org = current.tree, current.tree.org
    if not current.ok or org is None:
        raise click.ClickException(f"the tree fails validation ({len(current.problems)} problem(s)): run "
                                   "hypergov validate")
    original = files.get("org.yaml")
    if not isinstance(original, bytes):
        raise click.ClickException(f"{display}/org.yaml is not a file")
    currency, rates = org_rates(tree)
    wanted = instance_type_regions(tree)
    if not wanted:
        raise click.ClickException("the tree's clusters run no instance types: nothing to price")
    clients = AwsClients(settings=settings.aws, partition=org.model.partition)
    clients.require_credentials()
    listed = read_prices(clients.client("pricing", region=PRICING_REGION), wanted, currency=currency,
                         progress=to_stderr)
    foreign = sorted(key for key, answer in listed.items() if answer is NotListed.OTHER_CURRENCY)
    if foreign:
        itype, region = foreign[0]
        raise click.ClickException(f"the Price List prices {itype} in {region} (and {len(foreign) - 1} more) in "
                                   f"another currency than org.yaml's pricing.currency {currency}: convert the "
                                   "prices by hand, or set pricing.currency to the Price List's (USD outside China)")
    rows = compare(rates, listed)
    proposed = changes(rows)
    diff = ""
    if proposed:
        key = "org.yaml"
        try:
            text = edited_org(original.decode("utf-8"), org.doc, rows, currency=currency)
        except PriceEditError as exc:
            raise click.ClickException(str(exc)) from exc
        after = validate_files({**files, key: text.encode("utf-8")}, display_root=display)
        if not after.ok:
            problems = "; ".join(str(p) for p in after.problems[:3])
            raise click.ClickException(f"the proposed org.yaml fails validation, nothing written: {problems}")
        diff = tree_diff(files, {key: text.encode("utf-8")}, display)
        if write:
            (root / key).write_text(text, encoding="utf-8")
            to_stderr(f"wrote {root / key}")
    if as_json:
        echo(json.dumps({"currency": currency, "types": [_row_dict(r) for r in rows], "diff": diff}, indent=2))
    else:
        echo(_markdown(rows, currency, diff))
    sys.exit(2 if proposed else 0)


def _row_dict(row: Any) -> dict[str, Any]:
    from usage.price_list import ListedPrice

    return {
        "instance_type": row.instance_type, "action": str(row.action),
        "current": None if row.current is None else str(row.current), "purchase_option": row.purchase_option,
        "proposed": None if row.proposed is None else str(row.proposed),
        "listed": {region: ({"per_instance_hour": str(p.per_instance_hour), "sku": p.sku, "usage_type": p.usage_type,
                             "effective": p.effective} if isinstance(p, ListedPrice) else {"not_listed": str(p)})
                   for region, p in row.listed.items()},
    }


def _markdown(rows: list[Any], currency: str, diff: str) -> str:
    from usage.price_list import ListedPrice
    from usage.price_proposal import changes

    lines = [f"## Instance prices: org.yaml and the AWS Price List ({currency} per instance-hour)", "",
             "| Instance type | org.yaml | Price List (HyperPod, on-demand) | Action |", "|---|---:|---|---|"]
    for row in rows:
        current = "—" if row.current is None else f"{row.current} ({row.purchase_option})"
        listed = "; ".join(f"{region}: {p.per_instance_hour}" if isinstance(p, ListedPrice) else f"{region}: {p}"
                           for region, p in row.listed.items())
        action = str(row.action) if row.proposed is None or row.action.value == "same" else \
            f"{row.action} to {row.proposed}"
        if row.differs_by_region:
            action += " (the highest of its regions: org.yaml holds one price per type)"
        lines.append(f"| {row.instance_type} | {current} | {listed} | {action} |")
    found = changes(rows)
    lines += ["", f"{len(found)} price(s) to change." if found else "org.yaml's on-demand prices match the Price List."]
    if diff:
        lines += ["", "```diff", diff.rstrip("\n"), "```"]
    return "\n".join(lines)
