"""Build the engine the settings ask for (`engine: auto | pulumi | terraform | provider`), with every client
it needs, in one place. Every command, the reconciler and the demo get their engine here."""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from engines import ownership
from engines.aws_clients import AwsClients
from engines.hyperpod.cluster_executor import ClusterExecutor
from engines.hyperpod.executor import HyperPodExecutor
from engines.kube import DynamicKubeApi, KubeApi
from engines.objects import LocalRecords, RecordStore, S3Records
from engines.outcomes import HypergovError
from engines.plan import ApplyResult, Plan
from engines.protocol import Engine
from engines.provider.pool import ProviderPool, provider_binary
from engines.pulumi.engine import PulumiEngine
from engines.settings import Settings
from engines.terraform.backend import S3State, check_bucket
from engines.terraform.engine import TerraformEngine
from engines.terraform.provider_runner import ProviderRunner
from engines.terraform.runner import TerraformRunner
from engines.terraform.workspace import (
    PROVIDER_ADDR,
    PROVIDER_ENGINE_CACHE,
    Workspace,
    os_arch,
    prepare_workspace,
    resolve_provider_source,
)
from hypergov.model.tree import GovernanceTree


def kube_api_factory(settings: Settings) -> Callable[[str], KubeApi | None]:
    cache: dict[str, KubeApi | None] = {}
    lock = threading.Lock()  # stacks plan and apply from worker threads; one client per cluster

    def for_cluster(cluster: str) -> KubeApi | None:
        with lock:
            if cluster not in cache:
                path = settings.kubeconfigs.get(cluster)
                cache[cluster] = DynamicKubeApi.from_kubeconfig(path) if path else None
            return cache[cluster]

    return for_cluster


def terraform_engine(settings: Settings, tree: GovernanceTree, *, source_commit: str | None = None,
                     environ: dict[str, str] | None = None) -> TerraformEngine:
    tf = settings.terraform
    workspace = settings_workspace(settings)
    runner = TerraformRunner(binary=tf.binary, env=workspace.env(environ or dict(os.environ)),
                             provider_lock=workspace.provider_lock)
    partition = tree.org.model.partition if tree.org else "aws"
    clients = AwsClients(settings=settings.aws, partition=partition)
    clients.require_credentials()
    hyperpod = HyperPodExecutor(client_for=lambda account, region: clients.client(
        "sagemaker", region=region, account=account))
    state, s3 = None, None
    if settings.state_backend:
        region = tree.org.model.home_region if tree.org else "us-east-1"  # the org's home region holds the bucket
        state = S3State.parse(settings.state_backend, region=region)
        s3 = clients.client("s3", region=region)
        check_bucket(s3, state)
    return TerraformEngine(settings=settings, tree=tree, workspace=workspace, runner=runner, hyperpod=hyperpod,
                           kube_api_for=kube_api_factory(settings), source_commit=source_commit,
                           adopt_with=clients, state=state, s3=s3)


# Processes a merge request's plan starts before it knows its stacks: a project stack's provider
# blocks are the org's home account's and the project's own account's.
WARM_PROCESSES = 2


def provider_engine(settings: Settings, tree: GovernanceTree, *, source_commit: str | None = None,
                    environ: dict[str, str] | None = None, pool: ProviderPool | None = None) -> TerraformEngine:
    """The terraform engine with the provider runner beneath it (`engine: provider`): the same
    configuration, state, adoption and executors, the AWS provider spoken to directly from one
    pool of processes for the whole run instead of a terraform process per step. `pool`: one made
    before (`provider_pool`), e.g. with a process already starting."""
    engine = terraform_engine(settings, tree, source_commit=source_commit, environ=environ)
    pool = pool if pool is not None else provider_pool(settings, engine.workspace, environ=environ)
    return dataclasses.replace(engine, runner=ProviderRunner(pool, home=engine.home), name="provider")


def settings_workspace(settings: Settings) -> Workspace:
    """The state directory's shared terraform files for the settings' provider source."""
    tf = settings.terraform
    source = resolve_provider_source(tf.provider_source, version=tf.provider_version, configured=tf.plugin_mirror)
    return prepare_workspace(Path(settings.state_dir).resolve(), source)


def provider_pool(settings: Settings, workspace: Workspace, *, environ: dict[str, str] | None = None) -> ProviderPool:
    """The pool of AWS provider processes a provider engine runs on: the provider build the
    workspace's provider source holds, with the workspace's environment."""
    place = Path(*PROVIDER_ADDR) / settings.terraform.provider_version / os_arch()
    roots = [workspace.source.mirror] if workspace.source.mirror is not None else []
    binary = provider_binary([root / place for root in [*roots, workspace.plugin_cache]])
    return ProviderPool(binary=binary, environ=workspace.env(environ or dict(os.environ)),
                        prepared_dir=workspace.root / PROVIDER_ENGINE_CACHE / "prepared")


def warm_provider_pool(settings: Settings, *, environ: dict[str, str] | None = None) -> ProviderPool | None:
    """With `engine: provider`, its pool with `WARM_PROCESSES` processes already starting
    (`ProviderPool.start_spares`), for `build_engine(pool=)`; None for any other engine, or when no
    provider build is found (the engine, made later, says so where it is made)."""
    if settings.engine != "provider":
        return None
    try:
        pool = provider_pool(settings, settings_workspace(settings), environ=environ)
    except HypergovError:
        return None
    pool.start_spares(WARM_PROCESSES)
    return pool


def reconciler_records(settings: Settings, *, region: str | None = None) -> RecordStore:
    """Where the reconciler keeps its shared records (the applied commit, the audit checkpoints,
    the leases): the state bucket under `<prefix>/reconciler/` with `state_backend: s3://...`,
    else the state directory. `region`: the bucket's (default: AWS_REGION, else us-east-1; boto3
    follows S3's redirect to the bucket's own region)."""
    if not settings.state_backend:
        return LocalRecords(Path(settings.state_dir).resolve())
    state, s3 = state_bucket(settings, region=region)
    return S3Records(s3, bucket=state.bucket, prefix=state.records_prefix)


def state_bucket(settings: Settings, *, region: str | None = None) -> tuple[S3State, Any]:
    """The state bucket (`state_backend`, which must be set) and an S3 client for it."""
    if not settings.state_backend:
        raise ValueError("state_bucket needs state_backend")
    where = bucket_region(region)
    return S3State.parse(settings.state_backend, region=where), s3_client(settings, region=where)


def bucket_region(region: str | None = None) -> str:
    """The region S3 clients for hypergov's buckets use: `region`, else AWS_REGION, else
    AWS_DEFAULT_REGION, else us-east-1 (boto3 follows S3's redirect to a bucket's own region)."""
    return region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"


def s3_client(settings: Settings, *, region: str | None = None) -> Any:
    return AwsClients(settings=settings.aws).client("s3", region=bucket_region(region))


def cluster_executor(settings: Settings, tree: GovernanceTree, *,
                     progress: Callable[[str], None] | None = None) -> ClusterExecutor:
    """The executor of the HyperPod clusters a tree declares, with the engine's AWS clients;
    `progress` hears each status the driver waits through."""
    clients = AwsClients(settings=settings.aws, partition=tree.org.model.partition if tree.org else "aws")
    executor = ClusterExecutor(client_for=lambda account, region: clients.client("sagemaker", region=region,
                                                                                 account=account),
                               eks_for=lambda account, region: clients.client("eks", region=region, account=account))
    if progress is not None:
        executor.progress = progress
    return executor


def build_engine(settings: Settings, tree: GovernanceTree, *, source_commit: str | None = None,
                 environ: dict[str, str] | None = None, records: RecordStore | None = None,
                 pool: ProviderPool | None = None) -> Engine:
    """The engine `settings.engine` selects (`auto`: the engine that owns the org's objects, else
    terraform). Refuses (`EngineOwnedElsewhereError`) when the org's ownership record names the
    other engine; the engine records itself as the owner on its first apply. `records`: the shared
    record store (default: `reconciler_records`). The pulumi engine refuses clearly (permanently)
    where its CLI is missing. `pool`: the provider engine's (`warm_provider_pool`), closed when
    another engine is chosen."""
    if records is None:
        records = reconciler_records(settings, region=tree.org.model.home_region if tree.org else None)
    owner = ownership.owner_of(records)
    choice = settings.resolved_engine(owner=owner.engine if owner else None)
    kind: ownership.EngineKind = "pulumi" if choice == "pulumi" else "terraform"  # provider: terraform's state
    if pool is not None and choice != "provider":
        pool.close()
    ownership.require_owner(records, kind)
    engine: Engine
    if choice == "pulumi":
        engine = PulumiEngine(settings=settings, tree=tree, source_commit=source_commit, environ=environ)
    elif choice == "provider":
        engine = provider_engine(settings, tree, source_commit=source_commit, environ=environ, pool=pool)
    else:
        engine = terraform_engine(settings, tree, source_commit=source_commit, environ=environ)
    return _claiming_on_first_apply(engine, records, kind)


def _claiming_on_first_apply(engine: Engine, records: RecordStore, kind: ownership.EngineKind) -> Engine:
    """The engine, recording itself as the org's owner before it first applies a change. Wrapped on
    the instance (not in a proxy) so callers still see the engine's own type."""
    apply_many = engine.apply_many

    def claiming(plans: Sequence[Plan], **kwargs: Any) -> list[ApplyResult]:
        if any(not plan.is_empty for plan in plans):
            ownership.claim(records, kind)
        return apply_many(plans, **kwargs)

    object.__setattr__(engine, "apply_many", claiming)
    return engine
