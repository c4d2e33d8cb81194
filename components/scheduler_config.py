"""The HyperPod cluster scheduler config as a Pulumi resource (a dynamic resource: no Pulumi or
Terraform provider has this type). The component only declares it; the provider that carries it out
(`engines.pulumi.scheduler_config_provider`) is passed in by whoever runs the program, so the
components never depend on the engines. Graph capture never runs a provider.
"""

from __future__ import annotations

from typing import Any

import pulumi
from pulumi.dynamic import Resource, ResourceProvider

TYPE_TOKEN = "pulumi-python:dynamic/hyperpod:ClusterSchedulerConfig"


class CaptureOnlyProvider(ResourceProvider):
    """The provider of a program run under graph capture's mocks, where no provider is ever called;
    a real run (pulumi up) passes `SchedulerConfigProvider`. Any call is a bug, so it says so."""

    def create(self, props: dict[str, Any]) -> Any:
        raise RuntimeError("a captured program's scheduler config provider was called: pass the engine's "
                           "SchedulerConfigProvider to stacks.program.main/declare for a real run")


class ClusterSchedulerConfig(Resource, module="hyperpod", name="ClusterSchedulerConfig"):
    """One cluster's scheduler config; `request` is the CreateClusterSchedulerConfig request."""

    def __init__(self, resource_name: str, *, provider: ResourceProvider, request: dict[str, Any],
                 tags: dict[str, str], region: str, assume_role_arn: str = "",
                 opts: pulumi.ResourceOptions | None = None) -> None:
        props = {"request": request, "tags": tags, "region": region, "assumeRoleArn": assume_role_arn}
        super().__init__(provider, resource_name, props, opts)
