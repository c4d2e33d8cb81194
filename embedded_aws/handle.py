"""What every running embedded endpoint offers, in this process or another: clients, faults,
reset, status progressions and seeding, all through the endpoint's URL.

Both `EmbeddedAws` (a server thread here) and `EmbeddedAwsProcess` (a child process) are
handles; they differ only in how the server is started and stopped.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

import boto3
from botocore.config import Config

from embedded_aws.faults import FaultKind, FaultSpec
from embedded_aws.seed import DEFAULT_INSTANCE_GROUPS, InstanceGroup, seed_hyperpod_cluster

DEFAULT_ACCOUNT = "123456789012"  # moto's default account
DEFAULT_REGION = "us-west-2"
SECRET_KEY = "embedded-aws"  # the endpoint does not check signatures


class EndpointError(RuntimeError):
    """The endpoint refused a control request or is not reachable."""


class EndpointHandle:
    """Shared behaviour of a started endpoint; subclasses set `_url` when started."""

    _url: str | None = None

    @property
    def endpoint_url(self) -> str:
        if self._url is None:
            raise EndpointError("the embedded AWS endpoint is not running; call start() first")
        return self._url

    def client(self, service: str, *, account: str = DEFAULT_ACCOUNT, region: str = DEFAULT_REGION,
               config: Config | None = None) -> Any:
        """A boto3 client for `service` acting in `account` (the access key id is the account id)."""
        return boto3.client(service, endpoint_url=self.endpoint_url, region_name=region, aws_access_key_id=account,
                            aws_secret_access_key=SECRET_KEY,
                            config=config or Config(retries={"mode": "standard", "total_max_attempts": 3}))

    def inject_fault(self, service: str, operation: str = "*", *, kind: FaultKind = "throttle", times: int | None = 1,
                     delay_s: float = 0.0, status: int = 500) -> None:
        """Make the next `times` calls of `operation` (or every call, times=None) on `service` fail
        (kind "throttle" or "5xx" with `status`) or wait `delay_s` seconds first ("latency")."""
        spec = FaultSpec(service=service, operation=operation, kind=kind, times=times, delay_s=delay_s, status=status)
        self._control("POST", "faults", spec.__dict__)

    def clear_faults(self) -> None:
        self._control("DELETE", "faults")

    def pending_faults(self) -> list[dict[str, Any]]:
        faults: list[dict[str, Any]] = self._control("GET", "faults")["faults"]
        return faults

    def calls(self) -> list[dict[str, Any]]:
        """The calls answered so far: [{"service", "operation", "status"}], oldest first."""
        calls: list[dict[str, Any]] = self._control("GET", "calls")["calls"]
        return calls

    def clear_calls(self) -> None:
        self._control("DELETE", "calls")

    def reset(self) -> None:
        """Forget all state (every service, account and region), faults and the call log."""
        self._control("POST", "reset")

    def save_state(self, path: str | os.PathLike[str]) -> None:
        """Write the endpoint's whole state (every service, account and region) to `path`, a file
        the endpoint's process can write; `restore_state` in this or another endpoint reads it."""
        self._control("POST", "state/save", {"path": os.fspath(path)})

    def restore_state(self, path: str | os.PathLike[str]) -> None:
        """Replace the endpoint's state with a snapshot `save_state` wrote; faults and the call
        log are cleared, as by `reset`."""
        self._control("POST", "state/restore", {"path": os.fspath(path)})

    def set_transition(self, model: str, *, progression: str, times: int | None = None,
                       seconds: float | None = None) -> None:
        """How a modelled resource's status progresses (moto's state manager): "immediate"
        (default), "manual" (after `times` describes) or "time" (after `seconds`). Models:
        sagemaker::hyperpod-cluster, sagemaker::compute-quota, sagemaker::cluster-scheduler-config."""
        transition: dict[str, Any] = {"progression": progression}
        if times is not None:
            transition["times"] = times
        if seconds is not None:
            transition["seconds"] = seconds
        self._control("POST", "transition", {"model": model, "transition": transition})

    def seed_hyperpod_cluster(self, name: str, eks_cluster_name: str, *, account: str = DEFAULT_ACCOUNT,
                              region: str = DEFAULT_REGION,
                              instance_groups: Sequence[InstanceGroup] = DEFAULT_INSTANCE_GROUPS,
                              cluster_id: str | None = None) -> str:
        """Create (or find) the EKS cluster and a HyperPod cluster orchestrated by it, through the
        endpoint's own API; returns the HyperPod cluster ARN (ending in `cluster_id` if given)."""
        return seed_hyperpod_cluster(self, name=name, eks_cluster_name=eks_cluster_name, account=account,
                                     region=region, instance_groups=instance_groups, cluster_id=cluster_id)

    def reserve_hyperpod_cluster_id(self, name: str, cluster_id: str, *, account: str = DEFAULT_ACCOUNT,
                                    region: str = DEFAULT_REGION) -> None:
        """The next CreateCluster of `name` in that account and region gets id `cluster_id`
        (AWS picks HyperPod cluster ids; a config tree that recorded one needs that one)."""
        self._control("POST", "hyperpod-cluster-id", {"account": account, "region": region, "name": name,
                                                      "id": cluster_id})

    def healthy(self) -> bool:
        try:
            return bool(self._control("GET", "health").get("status") == "ok")
        except EndpointError:
            return False

    def _control(self, method: str, route: str, payload: object = None) -> Any:
        data = json.dumps(payload).encode() if payload is not None else None
        request = urllib.request.Request(f"{self.endpoint_url}/_hypergov/{route}", data=data, method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")
            raise EndpointError(f"{method} {route} refused by the embedded AWS endpoint: {detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            raise EndpointError(f"the embedded AWS endpoint at {self.endpoint_url} is not reachable: {exc}") from None


__all__ = ["DEFAULT_ACCOUNT", "DEFAULT_REGION", "EndpointError", "EndpointHandle", "InstanceGroup"]
