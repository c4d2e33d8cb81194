"""deploy/chart/: the Helm chart rendered by the real Helm (`helm template`, the pinned binary of
`install_helm.py`) in every mode an operator picks, and every rendered object checked as an API
server and the running reconciler would check it, since neither runs on the build machines:

- core kinds strictly against the official Kubernetes schemas (kubernetes-validate) of 1.32 (the
  oldest minor EKS supports) and of the newest it ships; ServiceMonitor and PrometheusRule against
  the Prometheus Operator's CRD schemas (`monitoring_crds`); names and labels as the API server
  checks them;
- the webhook is reachable: bound to every address of the pod (`--webhook-host=0.0.0.0`, the
  CLI's default 127.0.0.1 is not), on the container port the Service's webhook port targets. The
  manifests before issue 31 were not (`test_the_webhook_check_refuses_the_manifests_before_issue_31`);
- the ServiceMonitor selects the Service and scrapes a port the Service has, the metrics port;
- the container's command line parses with the real CLI (`cli.main`, then the reconcile command's
  own cross-option checks) after Kubernetes' `$(VAR)` substitution, every environment variable is
  one hypergov (engines/settings.py, the webhook), terraform, git or the AWS SDKs read, and the
  settings they and the settings file make load;
- each mode's workload (a Deployment of one with Recreate, or a StatefulSet with a volume each and
  the state bucket), the pod's AWS identity (IRSA annotation or none for Pod Identity), the
  Secret's keys, the combinations the chart refuses, and the image's contract (deploy/Dockerfile).

In CI (CI=true) a missing helm fails; elsewhere these tests are skipped with the install command."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, cast

import click
import kubernetes_validate
import pytest
import yaml
from install_helm import HELM_VERSION, find_helm
from kubernetes_validate.utils import all_versions, major_minor
from monitoring_crds import errors as monitoring_errors
from monitoring_crds import is_monitoring

from cli.main import main as hypergov_cli
from cli.reconcile import DaemonOptions, reconcile_cmd
from engines.settings import _ENV_KEYS, load_settings
from engines.terraform.backend import S3State
from reconciler.webhook import SECRET_ENV

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "chart"
EXAMPLES = CHART / "examples"
RELEASE = "hypergov-reconciler"
NAMESPACE = "hypergov"
OLDEST_EKS = "1.32"  # as tests/components/test_kubernetes_schemas.py: the oldest minor EKS supports
NEWEST = major_minor(all_versions()[-1])
IN_CI = os.environ.get("CI", "").lower() in ("true", "1")
INSTALL = "python tests/deploy/install_helm.py .tools/bin   (or: make tools)"

# Environment variables the pod may set that are read by something other than hypergov's settings.
READ_ELSEWHERE = {
    "AWS_REGION": "boto3 and terraform's AWS provider: the region",
    "HOME": "git, ssh and terraform write their dot-files there (the root filesystem is read-only)",
    "CHECKPOINT_DISABLE": "terraform: no version check calls",
    "GIT_CONFIG_COUNT": "git: configuration from the environment (the credential helper)",
    "GIT_CONFIG_KEY_0": "git",
    "GIT_CONFIG_VALUE_0": "git",
    "GIT_SSH_COMMAND": "git: the ssh command line (key and known hosts)",
}
HYPERGOV_READS = {*_ENV_KEYS, "HYPERGOV_SETTINGS", SECRET_ENV}
CREATED_SECRET = ("secret.create=true", "secret.gitCredentials=https://hypergov-bot:t0ken@git.example.com",
                  "secret.webhookSecret=0123456789abcdef0123456789abcdef")
SETTINGS_JSON = ('settings={"engine": "terraform", "require_reviewed": true, "audit_branch": "hypergov/audit", '
                 '"aws": {"account_access_role": "OrganizationAccountAccessRole", "max_retries": 8}, '
                 '"terraform": {"parallelism": 4}}')


@dataclass(frozen=True)
class Mode:
    files: tuple[str, ...]  # examples/<name>.yaml, in order
    sets: tuple[str, ...] = ()
    set_json: tuple[str, ...] = ()


MODES = [
    pytest.param(Mode(("single",)), id="single"),
    pytest.param(Mode(("single", "s3-state")), id="single-s3-state"),
    pytest.param(Mode(("single", "pod-identity")), id="single-pod-identity"),
    pytest.param(Mode(("single", "ssh", "monitoring")), id="single-ssh-monitoring"),
    pytest.param(Mode(("single",), ("webhook.enabled=false",)), id="single-no-webhook"),
    pytest.param(Mode(("single", "s3-state"), ("state.volume.enabled=false", *CREATED_SECRET), (SETTINGS_JSON,)),
                 id="single-s3-no-volume-own-secret-settings"),
    pytest.param(Mode(("single", "s3-state"), ("audit.signingKeyFromSecret=true",)), id="single-audit-key-out-of-band"),
    pytest.param(Mode(("single",), ("audit.signingKeyFromSecret=true", *CREATED_SECRET,
                                    "secret.auditSigningKey=-----BEGIN OPENSSH PRIVATE KEY-----")),
                 id="single-audit-key-own-secret"),
    pytest.param(Mode(("replicas",)), id="replicas"),
    pytest.param(Mode(("replicas", "pod-identity", "ssh", "monitoring")), id="replicas-pod-identity-ssh-monitoring"),
    pytest.param(Mode(("replicas", "monitoring"), ("state.volume.enabled=false", "replicas=5")),
                 id="replicas-no-volume"),
]


class RenderError(Exception):
    """`helm template` refused; the message is helm's."""


@cache
def helm_binary() -> Path:
    found = find_helm()
    if found is None or not os.access(found, os.X_OK):
        message = f"helm is not installed: {INSTALL}"
        if IN_CI:
            pytest.fail(f"CI: {message}", pytrace=False)
        pytest.skip(message)
    return found


def _helm(*args: str) -> subprocess.CompletedProcess[str]:
    home = REPO / ".tools" / "helm-home"  # helm's config, cache and data dirs: never the user's
    env = {**os.environ, "HELM_CONFIG_HOME": str(home / "config"), "HELM_CACHE_HOME": str(home / "cache"),
           "HELM_DATA_HOME": str(home / "data")}
    return subprocess.run([str(helm_binary()), *args], capture_output=True, text=True, timeout=120, env=env)


@cache
def render(mode: Mode) -> tuple[dict[str, Any], ...]:
    args = ["template", RELEASE, str(CHART), "--namespace", NAMESPACE]
    for name in mode.files:
        args += ["--values", str(EXAMPLES / f"{name}.yaml")]
    for value in mode.sets:
        args += ["--set", value]
    for value in mode.set_json:
        args += ["--set-json", value]
    result = _helm(*args)
    if result.returncode != 0:
        raise RenderError(result.stderr.strip())
    return tuple(doc for doc in yaml.safe_load_all(result.stdout) if doc)


def values(mode: Mode) -> dict[str, Any]:
    """The values the mode's files give (later files win), what the assertions compare with."""
    merged: dict[str, Any] = yaml.safe_load((CHART / "values.yaml").read_text())

    def merge(into: dict[str, Any], new: Mapping[str, Any]) -> None:
        for key, value in new.items():
            if isinstance(value, Mapping) and isinstance(into.get(key), dict):
                merge(into[key], value)
            else:
                into[key] = value

    for name in mode.files:
        merge(merged, yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text()))
    return merged


def of_kind(objs: Sequence[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objs if o["kind"] == kind]


def one(objs: Sequence[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = of_kind(objs, kind)
    assert len(found) == 1, f"{len(found)} objects of kind {kind}"
    return found[0]


def workload(objs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    (found,) = [o for o in objs if o["kind"] in ("Deployment", "StatefulSet")]
    return found


def container(objs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    (found,) = workload(objs)["spec"]["template"]["spec"]["containers"]
    return dict(found)


def options(args: Sequence[str]) -> dict[str, str]:
    return dict(a.split("=", 1) for a in args if a.startswith("--") and "=" in a)


# ----------------------------------------------------------------------------- reachability checks

ALL_ADDRESSES = ("0.0.0.0", "::")


def resolve_target(port: Mapping[str, Any], container_ports: Mapping[str, int]) -> int | None:
    """The container port a Service port reaches: targetPort by name or number (default: port)."""
    target = port.get("targetPort", port["port"])
    if isinstance(target, int):
        return target if target in container_ports.values() else None
    return container_ports.get(target)


def listener_problems(ctr: Mapping[str, Any], service: Mapping[str, Any], *, listener: str) -> list[str]:
    """Why the Service cannot reach what the container's `--<listener>-port` serves ([] if it can).
    The server binds `--<listener>-host` (the CLI's default is 127.0.0.1, reachable from inside the
    container only), on a container port the Service's port of the same name must target."""
    args = options(ctr.get("args", []))
    problems = []
    host = args.get(f"--{listener}-host")
    if host not in ALL_ADDRESSES:
        problems.append(f"--{listener}-host is {host or 'not given (default 127.0.0.1)'}: the pod's IP does "
                        f"not reach it; pass --{listener}-host=0.0.0.0")
    if f"--{listener}-port" not in args:
        return [*problems, f"no --{listener}-port"]
    listening = int(args[f"--{listener}-port"])
    container_ports = {p["name"]: p["containerPort"] for p in ctr.get("ports", [])}
    if listening not in container_ports.values():
        problems.append(f"--{listener}-port={listening} is not a containerPort ({container_ports})")
    named = [p for p in service["spec"]["ports"] if p.get("name") == listener]
    if not named:
        problems.append(f"the Service has no port named {listener}")
    elif resolve_target(named[0], container_ports) != listening:
        problems.append(f"the Service's {listener} port targets {named[0].get('targetPort')}, "
                        f"not the container port {listening}")
    return problems


# The container and Service of deploy/kubernetes/ before issue 31 (deployment.yaml and service.yaml
# of commit 2bc97e8, trimmed to what the check reads): --webhook-port without --webhook-host.
BEFORE_ISSUE_31_CONTAINER = {
    "args": ["reconcile", "--repo=$(HYPERGOV_REPO_URL)", "--branch=main", "--watch=60", "--metrics-port=9108",
             "--metrics-host=0.0.0.0", "--webhook-port=9109", "--log-format=json", "--drift-every=1h",
             "--drift-report=/var/lib/hypergov/drift.md"],
    "ports": [{"name": "metrics", "containerPort": 9108}, {"name": "webhook", "containerPort": 9109}],
}
BEFORE_ISSUE_31_SERVICE = {"spec": {"ports": [{"name": "metrics", "port": 9108, "targetPort": "metrics"},
                                              {"name": "webhook", "port": 9109, "targetPort": "webhook"}]}}


def test_the_webhook_check_refuses_the_manifests_before_issue_31() -> None:
    """The bug the chart fixes: the old manifests passed --webhook-port=9109 without --webhook-host,
    so the webhook listened on 127.0.0.1 and the Service's webhook port reached nothing."""
    problems = listener_problems(BEFORE_ISSUE_31_CONTAINER, BEFORE_ISSUE_31_SERVICE, listener="webhook")
    assert problems == ["--webhook-host is not given (default 127.0.0.1): the pod's IP does not reach it; "
                        "pass --webhook-host=0.0.0.0"]
    assert listener_problems(BEFORE_ISSUE_31_CONTAINER, BEFORE_ISSUE_31_SERVICE, listener="metrics") == []
    default = next(p for p in reconcile_cmd.params if p.name == "webhook_host")
    assert default.default == "127.0.0.1"  # what an absent --webhook-host means


# ----------------------------------------------------------------------------- every mode


@pytest.mark.parametrize("version", [OLDEST_EKS, NEWEST])
@pytest.mark.parametrize("mode", MODES)
def test_every_rendered_object_is_valid(mode: Mode, version: str) -> None:
    objs = render(mode)
    assert objs
    for obj in objs:
        where = f"{obj['kind']}/{obj['metadata']['name']}"
        if is_monitoring(obj):
            assert monitoring_errors(obj, kubernetes=version) == [], where
        else:
            assert str(kubernetes_validate.validate(obj, version, strict=True)) == version, where
        assert metadata_problems(obj) == [], where
        assert obj["metadata"]["namespace"] == NAMESPACE, where
    names = [(o["kind"], o["metadata"]["name"]) for o in objs]
    assert len(names) == len(set(names))


_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_SUBDOMAIN = re.compile(rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def metadata_problems(obj: Mapping[str, Any]) -> list[str]:
    """The API server's name and label checks, which no OpenAPI schema carries."""
    meta, problems = obj["metadata"], []
    if not DNS_SUBDOMAIN.match(meta["name"]) or len(meta["name"]) > 253:
        problems.append(f"name {meta['name']!r} is not a DNS subdomain")
    labels = {**meta.get("labels", {})}
    template = obj.get("spec", {}).get("template", {}).get("metadata", {})
    labels.update(template.get("labels", {}))
    for key, value in labels.items():
        if len(value) > 63 or not LABEL_VALUE.match(value):
            problems.append(f"label {key}={value!r} is not a valid label value")
    if obj["kind"] in ("Service", "StatefulSet") and len(meta["name"]) > 63:
        problems.append(f"{obj['kind']} name {meta['name']!r} is longer than 63 characters")
    return problems


@pytest.mark.parametrize("mode", MODES)
def test_the_webhook_and_the_metrics_are_reachable_through_the_service(mode: Mode) -> None:
    objs = render(mode)
    ctr, service = container(objs), one(objs, "Service")
    assert listener_problems(ctr, service, listener="metrics") == []
    if values(mode)["webhook"]["enabled"] and "webhook.enabled=false" not in mode.sets:
        assert listener_problems(ctr, service, listener="webhook") == []
        assert options(ctr["args"])["--webhook-host"] == "0.0.0.0"
        for ingress in of_kind(objs, "Ingress"):  # the Git host's way in reaches the webhook port only
            backends = [p["backend"]["service"] for r in ingress["spec"]["rules"] for p in r["http"]["paths"]]
            assert backends == [{"name": service["metadata"]["name"], "port": {"name": "webhook"}}]
    else:
        assert "--webhook-port" not in options(ctr["args"])
        assert {p["name"] for p in service["spec"]["ports"]} == {"metrics"}
        assert "webhook" not in {p["name"] for p in ctr["ports"]}
        assert SECRET_ENV not in {e["name"] for e in ctr["env"]}
    # The Service and the workload select the pods the workload makes.
    pod_labels = workload(objs)["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert workload(objs)["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert service["spec"]["publishNotReadyAddresses"] is True  # a not-ready reconciler still gets the fix
    probes = [ctr["livenessProbe"]["httpGet"], ctr["readinessProbe"]["httpGet"]]
    assert [(p["path"], p["port"]) for p in probes] == [("/healthz", "metrics"), ("/readyz", "metrics")]


@pytest.mark.parametrize("mode", MODES)
def test_the_service_monitor_scrapes_the_services_metrics_port(mode: Mode) -> None:
    objs = render(mode)
    if "monitoring" not in mode.files:
        assert of_kind(objs, "ServiceMonitor") == []  # off by default: the CRD may not be installed
        return
    monitor, service = one(objs, "ServiceMonitor"), one(objs, "Service")
    selected = [s for s in of_kind(objs, "Service")
                if monitor["spec"]["selector"]["matchLabels"].items() <= s["metadata"]["labels"].items()]
    assert selected == [service]
    assert service["metadata"]["namespace"] in monitor["spec"]["namespaceSelector"]["matchNames"]
    (endpoint,) = monitor["spec"]["endpoints"]
    ports = {p["name"]: p for p in service["spec"]["ports"]}
    assert endpoint["port"] in ports
    ctr = container(objs)
    container_ports = {p["name"]: p["containerPort"] for p in ctr["ports"]}
    assert resolve_target(ports[endpoint["port"]], container_ports) == int(options(ctr["args"])["--metrics-port"])
    assert endpoint["path"] == "/metrics"
    assert monitor["metadata"]["labels"]["release"] == values(mode)["serviceMonitor"]["labels"]["release"]


def substituted(args: Sequence[str], env: Sequence[Mapping[str, Any]]) -> list[str]:
    """Kubernetes' expansion of `$(VAR)` in args with the container's env (values from a Secret are
    unknown here: a placeholder); `$$(VAR)` stays `$(VAR)`; an unknown variable stays as written."""
    known = {e["name"]: e.get("value", f"<{e['name']} from a Secret>") for e in env}

    def expand(arg: str) -> str:
        return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                      lambda m: "$" if m.group(0) == "$$" else known.get(m.group(1), m.group(0)), arg)

    return [expand(a) for a in args]


def subcommand(name: str) -> click.Command:
    """The command `hypergov NAME` runs, as the CLI's entry point group resolves it."""
    command = hypergov_cli.get_command(click.Context(hypergov_cli, info_name="hypergov"), name)
    assert command is not None, f"hypergov has no command {name!r}"
    return command


@pytest.mark.parametrize("mode", MODES)
def test_the_command_line_parses_with_the_real_cli(mode: Mode) -> None:
    """The image's ENTRYPOINT is `hypergov`: the first arg names the command cli.main resolves, the
    rest is parsed by click as that command parses it (an unknown option or a bad value is a usage
    error), then checked as the command checks options that belong together (--metrics-port and
    --drift-every need --watch, --webhook-port needs --watch)."""
    ctr = container(render(mode))
    assert "command" not in ctr  # the image's ENTRYPOINT, hypergov
    args = substituted(ctr["args"], ctr["env"])
    assert not [a for a in args if "$(" in a]
    command = subcommand(args[0])
    assert command.name == "reconcile"
    with command.make_context(args[0], list(args[1:]), parent=click.Context(hypergov_cli, info_name="hypergov")) as ctx:
        params = ctx.params
    DaemonOptions.checked(interval=params["interval"], metrics_port=params["metrics_port"],
                          metrics_host=params["metrics_host"], drift_every=params["drift_every"],
                          remediate=params["remediate_drift"], report=params["drift_report"])
    given = values(mode)
    assert params["repo_arg"] == given["repository"]["url"] and params["branch"] == given["repository"]["branch"]
    assert params["interval"] == given["reconciler"]["watch"] and params["log_format"] == "json"
    assert (params["metrics_port"], params["metrics_host"]) == (given["metrics"]["port"], "0.0.0.0")
    if params["webhook_port"] is not None:  # the command's own rule: a webhook needs the loop
        assert params["interval"] is not None and params["webhook_secret_file"] is None
        assert SECRET_ENV in {e["name"] for e in ctr["env"]}
    if params["drift_report"] is not None:  # written where the process can write: the state volume
        mounts = {m["name"]: m["mountPath"] for m in ctr["volumeMounts"]}
        assert str(params["drift_report"]).startswith(mounts["state"] + "/")


def test_the_cli_check_catches_an_unknown_option() -> None:
    """The parsing above is strict: an option the command lacks is a usage error, not ignored."""
    with pytest.raises(click.NoSuchOption):
        subcommand("reconcile").make_context("reconcile", ["--watch=60", "--webhook-hostt=0.0.0.0"])


@pytest.mark.parametrize("mode", MODES)
def test_the_environment_is_what_hypergov_and_its_tools_read(mode: Mode, tmp_path: Path) -> None:
    objs = render(mode)
    ctr = container(objs)
    names = [e["name"] for e in ctr["env"]]
    assert len(names) == len(set(names))
    unread = [n for n in names if n not in (HYPERGOV_READS if n.startswith("HYPERGOV_") else READ_ELSEWHERE)]
    assert unread == [], "set in the pod but read by nothing (engines/settings.py _ENV_KEYS, the webhook's secret)"
    env = {e["name"]: e["value"] for e in ctr["env"] if "value" in e}
    if "HYPERGOV_SETTINGS" in env:  # the ConfigMap's file, where the pod mounts it
        configmap = one(objs, "ConfigMap")
        mounted = {m["name"]: m["mountPath"] for m in ctr["volumeMounts"]}
        volumes = {v["name"]: v for v in workload(objs)["spec"]["template"]["spec"]["volumes"]}
        (volume,) = [n for n, v in volumes.items()
                     if v.get("configMap", {}).get("name") == configmap["metadata"]["name"]]
        (key,) = configmap["data"]
        assert env["HYPERGOV_SETTINGS"] == f"{mounted[volume]}/{key}"
        (tmp_path / key).write_text(configmap["data"][key])
        env["HYPERGOV_SETTINGS"] = str(tmp_path / key)
    settings = load_settings(environ=env)  # raises SettingsError on any value settings refuse
    assert str(settings.state_dir) == env["HYPERGOV_STATE_DIR"] == "/var/lib/hypergov/state"
    assert str(settings.config_dir) == values(mode)["repository"]["configDir"]
    assert settings.state_backend == (values(mode)["state"]["backend"] or None)
    if settings.state_backend:
        backend = S3State.parse(settings.state_backend, region=env["AWS_REGION"])
        assert backend.bucket and backend.prefix
    if "HYPERGOV_SETTINGS" in env:
        assert settings.require_reviewed is True and settings.terraform.parallelism == 4


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_runs_its_workload(mode: Mode) -> None:
    objs = render(mode)
    given, kind = values(mode), workload(objs)["kind"]
    pod = workload(objs)["spec"]["template"]["spec"]
    ctr = container(objs)
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["name"]: m["mountPath"] for m in ctr["volumeMounts"]}
    env = {e["name"]: e.get("value") for e in ctr["env"]}
    assert env["HYPERGOV_STATE_DIR"].startswith(mounts["state"] + "/")  # the state directory is on the volume
    volume_enabled = "state.volume.enabled=false" not in mode.sets
    if given["mode"] == "single":
        deployment = workload(objs)
        assert kind == "Deployment" and of_kind(objs, "StatefulSet") == []
        # One reconciler per state directory; the old pod lets go of the volume before the new starts.
        assert deployment["spec"]["replicas"] == 1 and deployment["spec"]["strategy"] == {"type": "Recreate"}
        if volume_enabled:
            claim = one(objs, "PersistentVolumeClaim")
            assert volumes["state"]["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]
            assert claim["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
        else:
            assert volumes["state"] == {"name": "state", "emptyDir": {}} and env["HYPERGOV_STATE_BACKEND"]
            assert of_kind(objs, "PersistentVolumeClaim") == []
    else:
        sts = workload(objs)
        assert kind == "StatefulSet" and of_kind(objs, "Deployment") == of_kind(objs, "PersistentVolumeClaim") == []
        expected = int(next((s.split("=")[1] for s in mode.sets if s.startswith("replicas=")), given["replicas"]))
        assert sts["spec"]["replicas"] == expected >= 2 and sts["spec"]["podManagementPolicy"] == "Parallel"
        assert sts["spec"]["serviceName"] == one(objs, "Service")["metadata"]["name"]
        assert S3State.parse(str(env["HYPERGOV_STATE_BACKEND"]), region="us-west-2").bucket  # the leases' bucket
        if volume_enabled:
            assert [c["metadata"]["name"] for c in sts["spec"]["volumeClaimTemplates"]] == ["state"]
            assert "state" not in volumes
        else:
            assert "volumeClaimTemplates" not in sts["spec"] and volumes["state"]["emptyDir"] == {}
        [spread] = pod["topologySpreadConstraints"]
        assert spread["topologyKey"] == "kubernetes.io/hostname"
        assert spread["labelSelector"]["matchLabels"] == sts["spec"]["selector"]["matchLabels"]
    assert pod["terminationGracePeriodSeconds"] >= 300  # the running stacks finish on SIGTERM
    assert ctr["securityContext"]["readOnlyRootFilesystem"] is True and {"tmp", "state"} <= set(mounts)


@pytest.mark.parametrize("mode", MODES)
def test_the_pods_aws_identity(mode: Mode) -> None:
    objs = render(mode)
    account = one(objs, "ServiceAccount")
    pod = workload(objs)["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == account["metadata"]["name"]
    annotations = account["metadata"].get("annotations", {})
    given = values(mode)["aws"]
    if given["identity"] == "irsa":
        assert annotations["eks.amazonaws.com/role-arn"] == given["roleArn"]
    else:  # Pod Identity: the association names the namespace and ServiceAccount, nothing on the object
        assert given["identity"] == "pod-identity"
        assert "eks.amazonaws.com/role-arn" not in annotations
    env = {e["name"] for e in container(objs)["env"]}
    assert not env & {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_ROLE_ARN"}  # injected by EKS, never set here
    assert pod["automountServiceAccountToken"] is False  # IRSA and Pod Identity project their own token


@pytest.mark.parametrize("mode", MODES)
def test_the_secret_holds_every_key_the_pod_reads(mode: Mode) -> None:
    objs = render(mode)
    ctr, pod = container(objs), workload(objs)["spec"]["template"]["spec"]
    read: dict[str, set[str]] = {}
    for e in ctr["env"]:
        if ref := e.get("valueFrom", {}).get("secretKeyRef"):
            read.setdefault(ref["name"], set()).add(ref["key"])
    for v in pod["volumes"]:
        if "secret" in v:
            read.setdefault(v["secret"]["secretName"], set()).update(i["key"] for i in v["secret"]["items"])
    (name,) = read
    ssh = values(mode)["git"]["protocol"] == "ssh"
    expected = {"ssh-privatekey", "known_hosts"} if ssh else {"git-credentials"}
    if "webhook.enabled=false" not in mode.sets:
        expected.add("webhook-secret")
    if "audit.signingKeyFromSecret=true" in mode.sets:
        expected.add("audit-signing-key")
        key = next(e["value"] for e in ctr["env"] if e["name"] == "HYPERGOV_AUDIT_SIGNING_KEY")
        mount = next(m["mountPath"] for m in ctr["volumeMounts"] if m["name"] == "git")
        assert key == f"{mount}/audit-signing-key"
    assert read[name] == expected  # the keys the README and NOTES.txt name
    created = of_kind(objs, "Secret")
    if created:
        assert created[0]["metadata"]["name"] == name and set(created[0]["stringData"]) == expected
    else:
        assert name == RELEASE  # made out of band with `kubectl create secret generic hypergov-reconciler`
    if ssh:
        ssh_command = next(e["value"] for e in ctr["env"] if e["name"] == "GIT_SSH_COMMAND")
        mount = next(m["mountPath"] for m in ctr["volumeMounts"] if m["name"] == "git")
        assert f"-i {mount}/ssh-privatekey" in ssh_command and f"UserKnownHostsFile={mount}/known_hosts" in ssh_command


def test_every_example_values_file_is_rendered() -> None:
    used = {name for param in MODES for name in cast(Mode, param.values[0]).files}
    assert used == {p.stem for p in EXAMPLES.glob("*.yaml")}


# ----------------------------------------------------------------------------- refusals and lint


@pytest.mark.parametrize(("mode", "message"), [
    pytest.param(Mode(("single",), ("repository.url=",)), "repository.url is required", id="no-repository"),
    pytest.param(Mode(("single",), ("mode=replicas",)), "mode replicas needs state.backend", id="replicas-local-state"),
    pytest.param(Mode(("single",), ("aws.roleArn=",)), "aws.identity irsa needs aws.roleArn", id="irsa-no-role"),
    pytest.param(Mode(("single", "pod-identity"), ("aws.roleArn=arn:aws:iam::123456789012:role/x",)),
                 "aws.roleArn is only used with aws.identity irsa", id="pod-identity-with-role"),
    pytest.param(Mode(("single",), ("state.volume.enabled=false",)), "state.volume.enabled false needs state.backend",
                 id="emptydir-local-state"),
    pytest.param(Mode(("single",), ("secret.create=true",)), "needs secret.gitCredentials", id="empty-secret"),
    pytest.param(Mode(("single", "monitoring"), ("webhook.enabled=false",)), "webhook.ingress.enabled needs",
                 id="ingress-without-webhook"),
    pytest.param(Mode(("single",), ("webhook.port=9108",)), "must differ", id="one-port-twice"),
    pytest.param(Mode(("single",), ("webhok.port=9109",)), "additional properties 'webhok' not allowed",
                 id="typo-in-a-key"),
    pytest.param(Mode(("single",), ("state.backend=s3:/acme",)), "state", id="not-a-state-url"),
    pytest.param(Mode(("single",), ("mode=ha",)), "mode", id="unknown-mode"),
    pytest.param(Mode(("replicas",), ("replicas=1",)), "replicas", id="one-replica"),
])
def test_the_chart_refuses(mode: Mode, message: str) -> None:
    with pytest.raises(RenderError, match=re.escape(message)):
        render(mode)


def test_the_install_notes_say_what_to_do_out_of_band() -> None:
    """What `helm install` prints: the Secret to create and, with Pod Identity, the association."""
    result = _helm("install", RELEASE, str(CHART), "--dry-run=client", "--namespace", NAMESPACE,
                   "--values", str(EXAMPLES / "single.yaml"), "--values", str(EXAMPLES / "pod-identity.yaml"))
    assert result.returncode == 0, result.stderr
    notes = " ".join(result.stdout.split("NOTES:", 1)[1].replace("\\\n", " ").split())
    assert f"The Secret {RELEASE} must exist in {NAMESPACE} with the keys git-credentials, webhook-secret" in notes
    assert (f"aws eks create-pod-identity-association --cluster-name <cluster> --namespace {NAMESPACE} "
            f"--service-account {RELEASE} --role-arn") in notes


def test_helm_lint_passes_strictly() -> None:
    result = _helm("lint", "--strict", str(CHART), "--namespace", NAMESPACE,
                   "--values", str(EXAMPLES / "replicas.yaml"), "--values", str(EXAMPLES / "monitoring.yaml"))
    assert result.returncode == 0, result.stdout + result.stderr
    version = _helm("version", "--template", "{{.Version}}").stdout
    assert version.split(".")[0] in ("v3", "v4"), f"helm {version} (pinned: {HELM_VERSION})"


# ----------------------------------------------------------------------------- the image's contract


def _dockerfile() -> str:
    return (REPO / "deploy" / "Dockerfile").read_text().replace("\\\n", " ")


def test_the_chart_runs_the_image_as_the_dockerfile_builds_it() -> None:
    """The chart's args replace the image's CMD: they keep every option the CMD gives, with the same
    value, and the ports, user, state volume and state directory are the image's."""
    text = _dockerfile()
    objs = render(Mode(("single",)))
    ctr, pod = container(objs), workload(objs)["spec"]["template"]["spec"]
    cmd = re.search(r"^CMD (\[.*?\])", text, re.M)
    assert cmd
    image_args: list[str] = yaml.safe_load(cmd.group(1))
    pairs = dict(zip(image_args[1::2], image_args[2::2], strict=True))
    assert image_args[0] == ctr["args"][0] == "reconcile"
    assert pairs.items() <= options(ctr["args"]).items()
    assert re.search(r'^ENTRYPOINT \["hypergov"\]$', text, re.M)
    exposed = re.search(r"^EXPOSE (.+)$", text, re.M)
    assert exposed and {int(p) for p in exposed.group(1).split()} == {p["containerPort"] for p in ctr["ports"]}
    user = re.search(r"^USER (\d+)$", text, re.M)
    assert user and int(user.group(1)) == pod["securityContext"]["runAsUser"] == pod["securityContext"]["fsGroup"]
    volume = re.search(r'^VOLUME \["(.+)"\]$', text, re.M)
    mounts = {m["name"]: m["mountPath"] for m in ctr["volumeMounts"]}
    assert volume and volume.group(1) == mounts["state"]
    env = {e["name"]: e.get("value") for e in ctr["env"]}
    assert f"HYPERGOV_STATE_DIR={env['HYPERGOV_STATE_DIR']}" in text
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert chart["appVersion"] == version and f"-t hypergov:{version} ." in text
    assert ctr["image"] == f"registry.example.com/platform/hypergov:{version}"


# ----------------------------------------------------------------------------- the CRD check itself

PROMETHEUS_RULE = {
    "apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
    "metadata": {"name": "hypergov-reconciler", "namespace": NAMESPACE, "labels": {"release": "kube-prometheus-stack"}},
    "spec": {"groups": [{"name": "hypergov", "rules": [{
        "alert": "HypergovReconcilerStale", "expr": "time() - hypergov_reconcile_last_success_timestamp_seconds > 3600",
        "for": "10m", "labels": {"severity": "warning"}, "annotations": {"summary": "no pass applied for an hour"}}]}]},
}


def test_the_crd_check_is_strict() -> None:
    """What validates the chart's ServiceMonitor (and the PrometheusRule issue 31 adds beside it)
    refuses what the API server would prune or refuse: an unknown field, a wrong type, a duplicate
    key in a map-type list, a wrong duration."""
    assert monitoring_errors(PROMETHEUS_RULE, kubernetes=OLDEST_EKS) == []
    monitor = one(render(Mode(("single", "monitoring"))), "ServiceMonitor")
    assert monitoring_errors(monitor, kubernetes=OLDEST_EKS) == []
    typo = yaml.safe_load(yaml.safe_dump(monitor))
    typo["spec"]["endpoints"][0]["prot"] = typo["spec"]["endpoints"][0].pop("port")
    assert any("'prot' was unexpected" in e for e in monitoring_errors(typo, kubernetes=OLDEST_EKS))
    twice = yaml.safe_load(yaml.safe_dump(PROMETHEUS_RULE))
    twice["spec"]["groups"].append(twice["spec"]["groups"][0])
    assert any("duplicate entry for ['name']" in e for e in monitoring_errors(twice, kubernetes=OLDEST_EKS))
    late = yaml.safe_load(yaml.safe_dump(PROMETHEUS_RULE))
    late["spec"]["groups"][0]["rules"][0]["for"] = "ten minutes"
    assert any(e.startswith("spec.groups.0.rules.0.for:") for e in monitoring_errors(late, kubernetes=OLDEST_EKS))
    nameless = {**PROMETHEUS_RULE, "metadata": {"namespace": NAMESPACE}}
    assert any("'name' is a required property" in e for e in monitoring_errors(nameless, kubernetes=OLDEST_EKS))


def test_every_monitoring_manifest_kept_outside_the_chart_is_valid() -> None:
    """Prometheus Operator objects kept as plain YAML under deploy/ (outside the chart, e.g. alerting
    rules written before they become a template) meet the same CRD schemas; none is also fine."""
    for path in sorted((REPO / "deploy").rglob("*.yaml")):
        if CHART in path.parents:
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and is_monitoring(doc):
                for version in (OLDEST_EKS, NEWEST):
                    assert monitoring_errors(doc, kubernetes=version) == [], f"{path.relative_to(REPO)}"
