"""deploy/: what can be checked without a Docker engine or a Kubernetes API server (neither runs
on the build machines). The manifests are validated strictly against the official Kubernetes
schemas (kubernetes-validate) of the oldest minor EKS supports and of the newest it ships, and
checked against each other (the Secret, volume and ports the Deployment names exist; the
probes hit the metrics port); the Dockerfile's build context paths exist and cover every package
the project installs; the systemd unit passes `systemd-analyze verify` (else its keys are read
with configparser); every option the three pass to `hypergov reconcile` is one it has."""

from __future__ import annotations

import configparser
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from kubernetes_validate.utils import all_versions, major_minor

from cli.reconcile import reconcile_cmd
from engines.settings import Settings
from engines.terraform.backend import S3State
from engines.terraform.workspace import PROVIDER_ADDR

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
OLDEST_EKS = "1.32"  # as tests/components/test_kubernetes_schemas.py: the oldest minor EKS supports
NEWEST = major_minor(all_versions()[-1])


def manifests() -> dict[str, dict[str, Any]]:
    """Every object under deploy/kubernetes by kind."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted((DEPLOY / "kubernetes").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            assert doc["kind"] not in found, f"{path.name}: a second {doc['kind']}"
            found[doc["kind"]] = doc
    return found


@pytest.mark.parametrize("version", [OLDEST_EKS, NEWEST])
@pytest.mark.parametrize("kind", ["Namespace", "ServiceAccount", "Secret", "PersistentVolumeClaim", "Deployment",
                                  "Service"])
def test_each_manifest_is_valid_for_kubernetes(kind: str, version: str) -> None:
    obj = manifests()[kind]
    used = kubernetes_validate.validate(obj, version, strict=True)  # raises with the path of the first error
    assert str(used) == version


def _container() -> dict[str, Any]:
    deployment = manifests()["Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return dict(container)


def test_the_deployment_is_one_reconciler_with_its_volume_secret_ports_and_probes() -> None:
    objs = manifests()
    deployment = objs["Deployment"]
    assert deployment["spec"]["replicas"] == 1 and deployment["spec"]["strategy"]["type"] == "Recreate"
    pod = deployment["spec"]["template"]["spec"]
    container = _container()
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert volumes["state"]["persistentVolumeClaim"]["claimName"] == objs["PersistentVolumeClaim"]["metadata"]["name"]
    env = {e["name"]: e for e in container["env"]}
    assert env["HYPERGOV_STATE_DIR"]["value"].startswith(mounts["state"] + "/")  # the state dir is on the volume
    secret = objs["Secret"]
    assert volumes["git-credentials"]["secret"]["secretName"] == secret["metadata"]["name"]
    assert {i["key"] for i in volumes["git-credentials"]["secret"]["items"]} <= set(secret["stringData"])
    webhook = env["HYPERGOV_WEBHOOK_SECRET"]["valueFrom"]["secretKeyRef"]
    assert webhook["name"] == secret["metadata"]["name"] and webhook["key"] in secret["stringData"]
    assert pod["serviceAccountName"] == objs["ServiceAccount"]["metadata"]["name"]

    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    args = dict(a.split("=", 1) for a in container["args"] if a.startswith("--") and "=" in a)
    assert int(args["--metrics-port"]) == ports["metrics"] and args["--metrics-host"] == "0.0.0.0"
    assert int(args["--webhook-port"]) == ports["webhook"]
    assert (container["livenessProbe"]["httpGet"]["path"], container["readinessProbe"]["httpGet"]["path"]) == (
        "/healthz", "/readyz")
    assert container["livenessProbe"]["httpGet"]["port"] == container["readinessProbe"]["httpGet"]["port"] == "metrics"
    service = objs["Service"]
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert {p["targetPort"] for p in service["spec"]["ports"]} == set(ports)
    namespaces = {o["metadata"].get("namespace") for k, o in objs.items() if k != "Namespace"}
    assert namespaces == {objs["Namespace"]["metadata"]["name"]}


def _dockerfile() -> str:
    return (DEPLOY / "Dockerfile").read_text()


def test_the_dockerfile_copies_what_exists_and_every_package() -> None:
    text = _dockerfile().replace("\\\n", " ")
    sources = [line.split()[1:-1] for line in text.splitlines()
               if line.startswith("COPY ") and "--from=" not in line]
    copied = [s for group in sources for s in group]
    missing = [s for s in copied if not (REPO / s).exists()]
    assert not missing, f"the Dockerfile copies paths the build context lacks: {missing}"
    include = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    packages = {p.removesuffix("*") for p in include}
    assert packages <= set(copied), f"packages pip would install but the image lacks: {packages - set(copied)}"
    assert {"requirements.lock", "pyproject.toml", "README.md"} <= set(copied)
    assert "--constraint requirements.lock" in text  # hypergov installed at the lock's versions


def test_the_image_holds_the_provider_hypergov_pins_in_the_mirror_layout_it_reads() -> None:
    text = _dockerfile()
    version = re.search(r"^ARG AWS_PROVIDER_VERSION=(\S+)$", text, re.M)
    assert version and version.group(1) == Settings().terraform.provider_version
    mirror = re.search(r"HYPERGOV_TERRAFORM_PLUGIN_MIRROR=(\S+)", text)
    assert mirror
    assert f'dest="{mirror.group(1)}/{"/".join(PROVIDER_ADDR)}/${{AWS_PROVIDER_VERSION}}/linux_${{TARGETARCH}}"' in text
    assert "HYPERGOV_TERRAFORM_PROVIDER_SOURCE=mirror" in text


def _unit(path: Path) -> configparser.ConfigParser:
    """A unit file's keys (systemd's are case-sensitive; a repeated key such as Environment= keeps
    its last value here, which is enough for these checks)."""
    unit = configparser.ConfigParser(interpolation=None, strict=False)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read_string(path.read_text())
    return unit


def _reconcile_args() -> dict[str, list[str]]:
    """The command line each deployment runs, after `hypergov`."""
    cmd = re.search(r"^CMD (\[.*?\])", _dockerfile().replace("\\\n", ""), re.M | re.S)
    assert cmd
    unit = _unit(DEPLOY / "hypergov-reconciler.service")
    exec_start = shlex.split(unit["Service"]["ExecStart"])
    assert exec_start[0].endswith("/hypergov")
    return {"Dockerfile": yaml.safe_load(cmd.group(1)), "systemd": exec_start[1:],
            "kubernetes": list(_container()["args"])}


def test_every_option_given_is_one_reconcile_has() -> None:
    known = {opt for param in reconcile_cmd.params for opt in param.opts}
    for where, args in _reconcile_args().items():
        assert args[0] == "reconcile", where
        given = {a.split("=", 1)[0] for a in args if a.startswith("--")}
        assert given <= known, f"{where}: unknown options {given - known}"
        assert {"--watch", "--metrics-port", "--log-format"} <= given, where


def test_the_systemd_unit() -> None:
    path = DEPLOY / "hypergov-reconciler.service"
    unit = _unit(path)
    service = unit["Service"]
    assert {"ExecStart", "User", "KillSignal", "TimeoutStopSec", "Restart"} <= set(service)
    assert service["KillSignal"] == "SIGTERM"  # lets the running stacks finish and records them
    assert int(service["TimeoutStopSec"]) >= 300
    assert unit["Install"]["WantedBy"] == "multi-user.target"
    if shutil.which("systemd-analyze") is None:
        return
    # verify checks ExecStart's binary exists: point it at this environment's hypergov.
    here = Path(sys.executable).parent / "hypergov"
    assert here.exists()
    copy = path.read_text().replace(shlex.split(service["ExecStart"])[0], str(here))
    checked = Path(f"/tmp/hypergov-verify-{id(copy)}") / path.name
    checked.parent.mkdir(exist_ok=True)
    checked.write_text(copy)
    result = subprocess.run(["systemd-analyze", "verify", str(checked)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and path.name not in result.stderr, result.stderr


def _statefulset() -> dict[str, Any]:
    obj: dict[str, Any] = yaml.safe_load((DEPLOY / "kubernetes" / "replicas" / "statefulset.yaml").read_text())
    return obj


@pytest.mark.parametrize("version", [OLDEST_EKS, NEWEST])
def test_the_replicas_statefulset_is_valid_for_kubernetes(version: str) -> None:
    assert str(kubernetes_validate.validate(_statefulset(), version, strict=True)) == version


def test_the_replicas_run_the_deployments_pod_with_the_state_bucket_and_a_volume_each() -> None:
    """deploy/kubernetes/replicas/statefulset.yaml is the Deployment's pod plus the state backend
    (leases need it), each replica with its own state volume, spread over nodes."""
    sts, deployment = _statefulset(), manifests()["Deployment"]
    assert sts["spec"]["replicas"] >= 2 and sts["spec"]["podManagementPolicy"] == "Parallel"
    assert sts["spec"]["selector"] == deployment["spec"]["selector"]
    assert sts["metadata"]["namespace"] == deployment["metadata"]["namespace"]
    assert sts["spec"]["serviceName"] == manifests()["Service"]["metadata"]["name"]
    pod, single = sts["spec"]["template"], deployment["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    backend = S3State.parse(str(env.pop("HYPERGOV_STATE_BACKEND")), region="us-west-2")
    assert backend.bucket and backend.prefix
    assert env == {e["name"]: e.get("value") for e in _container()["env"]}
    assert {k: v for k, v in container.items() if k != "env"} == {k: v for k, v in _container().items() if k != "env"}
    assert [c["metadata"]["name"] for c in sts["spec"]["volumeClaimTemplates"]] == ["state"]
    assert "state" in {m["name"] for m in container["volumeMounts"]}
    assert pod["spec"]["volumes"] == [v for v in single["spec"]["volumes"] if v["name"] != "state"]
    same = {k: v for k, v in pod["spec"].items() if k not in ("containers", "volumes", "topologySpreadConstraints")}
    assert same == {k: v for k, v in single["spec"].items() if k not in ("containers", "volumes")}
    [spread] = pod["spec"]["topologySpreadConstraints"]
    assert spread["topologyKey"] == "kubernetes.io/hostname"
    assert spread["labelSelector"]["matchLabels"] == sts["spec"]["selector"]["matchLabels"]
    assert pod["metadata"] == single["metadata"]
