"""`hypergov embedded-aws`: the embedded endpoint as a long-running process.

stdout carries exactly one line, the endpoint URL, printed once the server serves and the
requested clusters are seeded, so a parent process (see `EmbeddedAwsProcess`) can read it and
go. Everything for humans goes to stderr. SIGINT and SIGTERM stop the server cleanly (exit 0).
"""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any

import click

EXIT_PROBLEMS = 1
MISSING_EXTRA = ("the embedded AWS endpoint needs moto, which a production install leaves out: "
                 "pip install 'hypergov[embedded]' (make test and make demo install it)")


@click.command("embedded-aws")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port to listen on; 0 picks a free one.")
@click.option("--seed-config", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Config tree whose clusters (HyperPod + EKS) are created before serving.")
def embedded_aws_command(host: str, port: int, seed_config: Path | None) -> None:
    """Serve an embedded AWS endpoint (IAM, STS, Organizations, Budgets, EKS, SageMaker
    HyperPod, Identity Center, the Price List).

    Prints the endpoint URL on stdout and serves until SIGINT/SIGTERM. Use any 12-digit account
    id as the access key id to act in that account. With --seed-config, each cluster file's
    hyperpod.cluster_name and eks.cluster_name are created in the account and region it names.
    """
    # Imported here: this module is loaded by every hypergov command, moto only by this one.
    from embedded_aws.handle import EndpointError
    try:
        from embedded_aws.server import EmbeddedAws
    except ModuleNotFoundError as exc:
        if exc.name is None or not exc.name.startswith(("moto", "werkzeug")):
            raise
        raise click.ClickException(MISSING_EXTRA) from None
    from hypergov.validate import InvalidTreeError, load_valid_tree

    tree = None
    if seed_config is not None:
        if not seed_config.is_dir():
            raise click.UsageError(f"'{seed_config}' is not a directory; point --seed-config at the config tree "
                                   "(the folder holding org.yaml)")
        try:
            tree = load_valid_tree(seed_config)
        except InvalidTreeError as exc:
            click.secho(f"error: cannot seed from {seed_config}: {exc}", fg="red", err=True)
            sys.exit(EXIT_PROBLEMS)
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    aws = EmbeddedAws(host=host, port=port)
    try:
        aws.start()
    except EndpointError as exc:
        click.secho(f"error: {exc}", fg="red", err=True)
        sys.exit(EXIT_PROBLEMS)
    try:
        if tree is not None:
            for seeded in _seed(tree, aws):
                click.echo(f"seeded HyperPod cluster {seeded.name} on EKS cluster {seeded.eks_cluster_name} "
                           f"(account {seeded.account}, {seeded.region}): {seeded.arn}", err=True)
        click.echo(aws.endpoint_url)
        sys.stdout.flush()
        click.echo(f"embedded AWS endpoint serving at {aws.endpoint_url}; stop with Ctrl-C", err=True)
        while not stop.wait(0.5):
            pass
    finally:
        aws.stop()
    click.echo("embedded AWS endpoint stopped", err=True)


def _seed(tree: Any, aws: Any) -> list[Any]:
    from embedded_aws.handle import EndpointError
    from embedded_aws.seed import seed_tree_clusters
    from embedded_aws.seed_identity import seed_identity_center
    from embedded_aws.seed_org import seed_organization

    try:
        seeded_org = seed_organization(tree, aws)
        click.echo(f"seeded organization (management account {seeded_org.management_account}) "
                   f"with OU {seeded_org.ou_id}", err=True)
        identity = seed_identity_center(tree, aws)
        if identity is not None:
            click.echo(f"seeded IAM Identity Center {identity.instance_arn} (account {identity.account}, "
                       f"{identity.region}): {len(identity.groups)} groups, {len(identity.users)} users", err=True)
        return seed_tree_clusters(tree, aws)
    except (ValueError, EndpointError) as exc:
        click.secho(f"error: cannot seed: {exc}", fg="red", err=True)
        aws.stop()
        sys.exit(EXIT_PROBLEMS)
