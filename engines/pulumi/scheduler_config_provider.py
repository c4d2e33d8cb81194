"""The Pulumi dynamic provider of the HyperPod cluster scheduler config: create / diff / update /
delete / read through the boto3 driver in `engines.hyperpod.driver` (no Pulumi or Terraform provider
has this type). The component `components.scheduler_config.ClusterSchedulerConfig` takes it as an
argument: the component declares, this engine-side code is what runs.

It runs inside the Pulumi engine's dynamic-provider host. It builds its SageMaker client from the
resource's `region` and optional `assumeRoleArn`; the endpoint follows boto3's usual configuration
(`AWS_ENDPOINT_URL_SAGEMAKER` points it at an embedded endpoint).
"""

from __future__ import annotations

from typing import Any

from pulumi.dynamic import CreateResult, DiffResult, ReadResult, ResourceProvider, UpdateResult

from engines.hyperpod import driver


def _client(props: dict[str, Any]) -> driver.SageMakerClient:
    import boto3  # imported late: only the engine's provider host needs it

    session = boto3.Session(region_name=props["region"])
    role = props.get("assumeRoleArn") or ""
    if role:
        creds = session.client("sts").assume_role(RoleArn=role, RoleSessionName="hypergov")["Credentials"]
        session = boto3.Session(region_name=props["region"], aws_access_key_id=creds["AccessKeyId"],
                                aws_secret_access_key=creds["SecretAccessKey"], aws_session_token=creds["SessionToken"])
    client: driver.SageMakerClient = session.client("sagemaker")
    return client


def _observe(client: driver.SageMakerClient, props: dict[str, Any]) -> driver.Observed | None:
    return driver.observe(client, driver.SCHEDULER_CONFIG, name=props["request"]["Name"],
                          cluster_arn=props["request"]["ClusterArn"])


def prop_change(olds: dict[str, Any], news: dict[str, Any]) -> driver.Change:
    """The driver's decision between two sets of resource properties, without I/O."""
    old = driver.Observed(id="", arn="", version=None,
                          fields={k: v for k, v in olds.get("request", {}).items() if k not in ("Name", "Tags")},
                          tags=dict(olds.get("tags", {})))
    change = driver.plan_change(driver.SCHEDULER_CONFIG, desired=news["request"], desired_tags=news.get("tags", {}),
                                observed=old)
    if olds.get("request", {}).get("Name") != news["request"]["Name"]:
        return driver.Change("replace", changed=(*change.changed, "Name"))
    return change


class SchedulerConfigProvider(ResourceProvider):
    """create / diff / update / delete / read through the driver."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        client = _client(props)
        observed = _observe(client, props)
        change = driver.plan_change(driver.SCHEDULER_CONFIG, desired=props["request"],
                                    desired_tags=props.get("tags", {}), observed=observed)
        object_id = driver.apply_change(client, driver.SCHEDULER_CONFIG, change=change, desired=props["request"],
                                        desired_tags=props.get("tags", {}), observed=observed)
        return CreateResult(id_=str(object_id), outs=props)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        change = prop_change(olds, news)
        return DiffResult(changes=change.action != "none", replaces=list(change.changed) if change.action == "replace"
                          else [], delete_before_replace=True)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        client = _client(news)
        observed = _observe(client, news)
        change = driver.plan_change(driver.SCHEDULER_CONFIG, desired=news["request"],
                                    desired_tags=news.get("tags", {}), observed=observed)
        driver.apply_change(client, driver.SCHEDULER_CONFIG, change=change, desired=news["request"],
                            desired_tags=news.get("tags", {}), observed=observed)
        return UpdateResult(outs=news)

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        client = _client(props)
        observed = _observe(client, props)
        driver.apply_change(client, driver.SCHEDULER_CONFIG, change=driver.plan_change(
            driver.SCHEDULER_CONFIG, desired=None, desired_tags={}, observed=observed),
            desired=None, desired_tags={}, observed=observed)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        observed = _observe(_client(props), props)
        if observed is None:
            return ReadResult(id_="", outs={})
        request = {**props["request"], **observed.fields}
        return ReadResult(id_=observed.id, outs={**props, "request": request, "tags": observed.tags})
