"""The workload admission policy gives, through a real CEL engine, exactly the verdicts written by
hand for the admission corpus (`admission_corpus/`, see its README), and every corpus object is
valid against the official schema of its kind, so that the policy is tested on objects a real API
server would accept:

- core kinds: Kubernetes' OpenAPI (kubernetes-validate, strict, the version the schema test uses);
- Kueue Workload: Kueue's CRD (`tests/schemas/kueue/`), PyTorchJob: Kubeflow's
  (`tests/schemas/kubeflow/`), RayJob and RayCluster: KubeRay's (`tests/schemas/kuberay/`), with
  the CRDs' own CEL rules evaluated by the same CEL engine (transition rules, reading `oldSelf`,
  compare two versions of an object and do not apply to one);
- HyperPodPyTorchJob: AWS publishes no CRD for it (the training operator is a closed EKS add-on),
  so those objects follow AWS's documented sample only.

The policy under test is the one the components declare: captured from each team's project stack
of the example tree (`config/`), with gpu-west in task-governance mode and trn-east in plain-EKS
mode as the tree says.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.evaluation import CELEvalError
from example_tree import example_tree
from jsonschema.protocols import Validator
from test_kubernetes_schemas import _definitions, core_errors, metadata_errors

from components.admission_cel import AdmissionRequest, Verdict, compiled, evaluate_policy
from engines.kube import object_from_pulumi
from hypergov import naming
from stacks.graph import capture_graph
from tests.crd_schemas import OBJECT_META, list_type, structural

CORPUS = Path(__file__).resolve().parent / "admission_corpus"
SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"
CRDS = {
    "kueue.x-k8s.io": SCHEMAS / "kueue" / "kueue.x-k8s.io_workloads.yaml",
    "kubeflow.org": SCHEMAS / "kubeflow" / "kubeflow.org_pytorchjobs.yaml",
    "ray.io/RayJob": SCHEMAS / "kuberay" / "ray.io_rayjobs.yaml",
    "ray.io/RayCluster": SCHEMAS / "kuberay" / "ray.io_rayclusters.yaml",
}
NO_PUBLISHED_SCHEMA = {"sagemaker.amazonaws.com"}

# The REST resource of each kind (Kubernetes API reference; the CRDs' spec.names.plural).
RESOURCE = {
    "Pod": ("", "pods"), "Deployment": ("apps", "deployments"), "StatefulSet": ("apps", "statefulsets"),
    "ReplicaSet": ("apps", "replicasets"), "Job": ("batch", "jobs"), "PyTorchJob": ("kubeflow.org", "pytorchjobs"),
    "RayJob": ("ray.io", "rayjobs"), "RayCluster": ("ray.io", "rayclusters"),
    "HyperPodPyTorchJob": ("sagemaker.amazonaws.com", "hyperpodpytorchjobs"),
    "HyperPodPytorchJob": ("sagemaker.amazonaws.com", "hyperpodpytorchjobs"),  # AWS's pages spell it so
    "Workload": ("kueue.x-k8s.io", "workloads"),
}


def corpus() -> list[dict[str, Any]]:
    cases = [doc for path in sorted(CORPUS.glob("*.yaml"))
             for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]
    return cases


CASES = corpus()


# ----------------------------------------------------------------------------- schemas


def _crd_rules(validator: Validator, rules: list[dict[str, Any]], instance: Any,
               schema: Mapping[str, Any]) -> Iterator[jsonschema.ValidationError]:
    for rule in rules:
        if "oldSelf" in rule["rule"]:
            continue  # a transition rule
        ok: object
        try:
            ok = compiled(rule["rule"]).evaluate({"self": json_to_cel(instance)})
        except CELEvalError as error:
            ok = error
        if not (isinstance(ok, celtypes.BoolType) and bool(ok)):
            yield jsonschema.ValidationError(f"{rule.get('message', rule['rule'])} (CEL: {rule['rule']}: {ok!r})")


CrdValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"x-kubernetes-validations": _crd_rules, "x-kubernetes-list-type": list_type})


@cache
def crd_validator(key: str, api_version: str) -> Validator:
    crd = yaml.load(CRDS[key].read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
    version = api_version.rpartition("/")[2]
    served = {v["name"]: v for v in crd["spec"]["versions"] if v["served"]}
    root = structural(copy.deepcopy(served[version]["schema"]["openAPIV3Schema"]))
    root["properties"]["apiVersion"] = {"const": api_version}
    root["properties"]["kind"] = {"const": crd["spec"]["names"]["kind"]}
    root["properties"]["metadata"] = {"$ref": OBJECT_META, "required": ["name"]}
    validator: Validator = CrdValidator(root, registry=_definitions())
    return validator


def schema_errors(obj: Mapping[str, Any]) -> list[str]:
    group = obj["apiVersion"].rpartition("/")[0]
    if group in NO_PUBLISHED_SCHEMA:
        return []
    if group in ("", "apps", "batch"):
        return core_errors(obj) + metadata_errors(obj)
    key = group if group in CRDS else f"{group}/{obj['kind']}"
    errors = crd_validator(key, obj["apiVersion"]).iter_errors(dict(obj))
    return sorted(f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in errors) + metadata_errors(obj)


# ----------------------------------------------------------------------------- the declared policies


@cache
def declared_policy(team: str, cluster: str) -> dict[str, Any]:
    """The spec of the ValidatingAdmissionPolicy the team's project stack declares on `cluster`."""
    stack = naming.project_stack(team)
    resource = capture_graph(example_tree(), stack).named(f"admission-policy@{cluster}")
    spec: dict[str, Any] = object_from_pulumi(resource.type, resource.inputs, stack=stack).body["spec"]
    return spec


def verdict(case: Mapping[str, Any]) -> Verdict:
    obj = case["object"]
    group, resource = RESOURCE[obj["kind"]]
    request = AdmissionRequest(object=obj, group=group, resource=resource, namespace=obj["metadata"]["namespace"])
    return evaluate_policy(declared_policy(case["team"], case["cluster"]), request)


# ----------------------------------------------------------------------------- the tests


def test_the_corpus_covers_every_kind_and_verdict() -> None:
    assert len(CASES) >= 30
    assert {c["object"]["kind"] for c in CASES} == set(RESOURCE)
    assert {c["expect"] for c in CASES} == {"admitted", "refused", "not-checked"}
    assert len({c["case"] for c in CASES}) == len(CASES), "case names are unique"
    for case in CASES:
        assert case["object"]["metadata"]["namespace"] == naming.namespace(case["team"]), case["case"]
        assert ("reason" in case) == (case["expect"] == "refused"), case["case"]


@pytest.mark.parametrize("case", [pytest.param(c, id=c["case"]) for c in CASES])
def test_each_corpus_object_is_valid_against_its_schema(case: dict[str, Any]) -> None:
    assert schema_errors(case["object"]) == []


@pytest.mark.parametrize("case", [pytest.param(c, id=c["case"]) for c in CASES])
def test_the_declared_policy_gives_the_expected_verdict(case: dict[str, Any]) -> None:
    result = verdict(case)
    if case["expect"] == "not-checked":
        assert result == Verdict(applies=False, refusal=None)
    elif case["expect"] == "admitted":
        assert result == Verdict(applies=True, refusal=None)
    else:
        assert result.applies and result.refusal is not None
        assert case["reason"] in result.refusal, result.refusal


def test_the_schema_check_refuses_a_wrong_field() -> None:
    """The schema check is not vacuous: one wrong field in a valid object of each schema fails it."""
    firsts = {c["object"]["kind"]: c["object"] for c in reversed(CASES)}
    for kind in ("Job", "Workload", "PyTorchJob", "RayJob"):
        body = copy.deepcopy(firsts[kind])
        body["spec"]["parallelsm"] = 1
        assert any("parallelsm" in e for e in schema_errors(body)), kind
