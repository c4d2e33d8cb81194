"""Every Kubernetes object the components declare is valid against the real schemas, so that a
wrong field fails here instead of on a customer's cluster (no API server can run on the build
machines).

The objects are the exact manifests the engine applies: every stack of the example tree
(`config/`), of a variant of it whose clusters all run in plain-EKS (Kueue) mode, and of a small
synthetic org, captured under Pulumi's mocks and turned into manifests by
`engines.kube.object_from_pulumi` (hypergov's pruning labels included).

- Core kinds: the official Kubernetes OpenAPI schemas shipped by `kubernetes-validate`, in their
  strict form (an unknown field is an error: server-side apply without strict field validation
  would silently drop it). Version: `KUBERNETES_VERSION`.
- Kueue kinds: the `openAPIV3Schema` of the object's apiVersion in Kueue's CRDs
  (`tests/schemas/kueue/`), validated with jsonschema as the API server treats a structural
  schema: an object without `additionalProperties` or `x-kubernetes-preserve-unknown-fields`
  accepts no unknown field (the server would prune it), `metadata` is the strict ObjectMeta of
  the same Kubernetes version, `x-kubernetes-list-type` set/map means unique items / unique map
  keys, and each `x-kubernetes-validations` CEL rule on a node our objects reach is evaluated by
  its Python equivalent in `CEL_EQUIVALENTS` (keyed by the exact rule text, so a rule Kueue adds
  or rewrites fails the test until it has one). Transition rules (those reading `oldSelf`, e.g.
  "LocalQueue spec.clusterQueue is immutable") compare with a previous object and do not apply
  to a single manifest. `x-kubernetes-int-or-string` nodes carry their `anyOf`; `-map-type` and
  `-embedded-resource` only govern merging and are not needed here.
- Names and labels: the API server's own checks (DNS names, label syntax), which no OpenAPI
  schema carries.
"""

from __future__ import annotations

import copy
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from jsonschema.protocols import Validator
from kubernetes_validate.utils import all_versions, major_minor, schema_contents
from referencing import Registry, Resource

from tests.crd_schemas import OBJECT_META, list_type, structural

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from example_tree import example_files

from benchmarks.synthetic import generate_org
from engines.kube import KubeObject, object_from_pulumi
from hypergov.model.tree import GovernanceTree
from hypergov.validate import validate_files
from stacks.graph import capture_graph
from stacks.spec import plan_stacks

# The oldest Kubernetes minor Amazon EKS still supports in December 2026: 1.32, in extended support
# until 2027-03-23 (EKS version calendar; 1.33 extended until 2027-07-29, 1.34 and 1.35 in standard
# support). Customers' clusters may still run it, and an object valid there stays valid on newer
# minors (GA APIs only gain optional fields). Move it up when EKS retires 1.32.
KUBERNETES_VERSION = "1.32"

KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_SCHEMAS = Path(__file__).resolve().parents[1] / "schemas" / "kueue"
COMPONENTS = Path(__file__).resolve().parents[2] / "components"


# ----------------------------------------------------------------------------- the objects


def _plain_eks_variant() -> dict[str, bytes]:
    """The example tree with every cluster in plain-EKS mode (gpu-west's teams as Kueue queues)."""
    files: dict[str, bytes] = example_files()
    for rel in [r for r in files if r.startswith("clusters/")]:
        data = yaml.safe_load(files[rel])
        data["task_governance"] = False
        files[rel] = yaml.safe_dump(data, sort_keys=False).encode()
    return files


SOURCES: dict[str, Callable[[], dict[str, bytes]]] = {
    "example": example_files,
    "plain-eks": _plain_eks_variant,
    "synthetic": lambda: generate_org(projects=12, clusters=4, seed=5),
}


@cache
def _tree(source: str) -> GovernanceTree:
    report = validate_files(SOURCES[source]())
    assert report.ok, report.problems
    return report.tree


@cache
def objects(source: str) -> tuple[KubeObject, ...]:
    """Every Kubernetes object of every stack of `source`, as the engine would apply it."""
    tree = _tree(source)
    found: list[KubeObject] = []
    for spec in plan_stacks(tree):
        for r in capture_graph(tree, spec.name).resources:
            if r.type.startswith("kubernetes:"):
                found.append(object_from_pulumi(r.type, r.inputs, stack=spec.name))
    return tuple(found)


# ----------------------------------------------------------------------------- core kinds


def core_errors(obj: Mapping[str, Any]) -> list[str]:
    """Errors of a core object under the strict schema of `KUBERNETES_VERSION` (the first one:
    kubernetes-validate stops there)."""
    try:
        used = kubernetes_validate.validate(dict(obj), KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        return [f"{'.'.join(map(str, exc.path))}: {exc.message}"]
    except kubernetes_validate.SchemaNotFoundError:
        return [f"kind: kubernetes-validate has no {KUBERNETES_VERSION} schema for {obj['kind']} {obj['apiVersion']}"]
    assert str(used) == KUBERNETES_VERSION  # not silently an older schema
    return []


# ----------------------------------------------------------------------------- Kueue kinds


def _preemption_ok(p: Mapping[str, Any]) -> bool:
    # CRD defaults apply before CEL: reclaimWithinCohort and borrowWithinCohort.policy default to Never.
    borrow = p.get("borrowWithinCohort")
    return not (p.get("reclaimWithinCohort", "Never") == "Never" and borrow is not None
                and borrow.get("policy", "Never") != "Never")


def _no_borrowing_without(cohort_field: str) -> Callable[[Mapping[str, Any]], bool]:
    def check(spec: Mapping[str, Any]) -> bool:
        if cohort_field in spec or "resourceGroups" not in spec:
            return True
        return all("borrowingLimit" not in r for rg in spec["resourceGroups"] for f in rg["flavors"]
                   for r in f["resources"])
    return check


CEL_EQUIVALENTS: dict[str, Callable[[Any], bool]] = {
    "!has(self.cohort) && has(self.resourceGroups) ? self.resourceGroups.all(rg, rg.flavors.all(f, "
    "f.resources.all(r, !has(r.borrowingLimit)))) : true": _no_borrowing_without("cohort"),
    "!has(self.cohortName) && has(self.resourceGroups) ? self.resourceGroups.all(rg, rg.flavors.all(f, "
    "f.resources.all(r, !has(r.borrowingLimit)))) : true": _no_borrowing_without("cohortName"),
    "!(self.reclaimWithinCohort == 'Never' && has(self.borrowWithinCohort) &&  "
    "self.borrowWithinCohort.policy != 'Never')": _preemption_ok,
    "self.flavors.all(x, size(x.resources) == size(self.coveredResources))":
        lambda rg: all(len(f["resources"]) == len(rg["coveredResources"]) for f in rg["flavors"]),
    "!has(self.topologyName) || self.nodeLabels.size() >= 1":
        lambda spec: "topologyName" not in spec or len(spec.get("nodeLabels", {})) >= 1,
}


def _cel(validator: Validator, rules: list[dict[str, Any]], instance: Any,
         schema: Mapping[str, Any]) -> Iterator[jsonschema.ValidationError]:
    for rule in rules:
        text = rule["rule"]
        if "oldSelf" in text:
            continue  # a transition rule: compares with the previous object, not applicable here
        check = CEL_EQUIVALENTS.get(text)
        if check is None:
            yield jsonschema.ValidationError(f"CEL rule without a Python equivalent in CEL_EQUIVALENTS: {text}")
        elif not check(instance):
            yield jsonschema.ValidationError(f"{rule.get('message', text)} (CEL: {text})")




KueueValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"x-kubernetes-validations": _cel, "x-kubernetes-list-type": list_type})




@cache
def _kueue_crds() -> dict[str, dict[str, Any]]:
    crds = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in sorted(KUEUE_SCHEMAS.glob("*.yaml"))]
    return {c["spec"]["names"]["kind"]: c for c in crds if c["spec"]["group"] == KUEUE_GROUP}


@cache
def _definitions() -> Registry[Any]:
    contents = schema_contents(f"kubernetes-json-schema/v{KUBERNETES_VERSION}.0-local-strict/_definitions.json",
                               KUBERNETES_VERSION)
    return Resource.from_contents(contents) @ Registry()


@cache
def kueue_validator(kind: str, version: str) -> Validator:
    crd = _kueue_crds()[kind]
    schema = copy.deepcopy(next(v for v in crd["spec"]["versions"] if v["name"] == version)
                           ["schema"]["openAPIV3Schema"])
    root = structural(schema)
    root["properties"]["apiVersion"] = {"const": f"{KUEUE_GROUP}/{version}"}
    root["properties"]["kind"] = {"const": kind}
    root["properties"]["metadata"] = {"$ref": OBJECT_META, "required": ["name"]}
    root["required"] = sorted({*root.get("required", []), "apiVersion", "kind", "metadata"})
    validator: Validator = KueueValidator(root, registry=_definitions())
    return validator


def kueue_errors(obj: Mapping[str, Any], *, version: str | None = None) -> list[str]:
    """Errors of a Kueue object under its own apiVersion, or under `version` (apiVersion replaced)."""
    body = dict(obj)
    if version is not None:
        body["apiVersion"] = f"{KUEUE_GROUP}/{version}"
    version, kind = body["apiVersion"].split("/", 1)[1], body["kind"]
    if kind not in _kueue_crds():
        return [f"kind: no Kueue CRD in {KUEUE_SCHEMAS} for {kind}"]
    served = [v["name"] for v in _kueue_crds()[kind]["spec"]["versions"] if v["served"]]
    if version not in served:
        return [f"apiVersion: {KUEUE_GROUP}/{version} is not served for {kind} (served: {', '.join(served)})"]
    errors = kueue_validator(kind, version).iter_errors(body)
    return sorted(f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in errors)


# ----------------------------------------------------------------------------- names and labels

_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_LABEL = re.compile(rf"^{_DNS_LABEL}$")
DNS_SUBDOMAIN = re.compile(rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


def metadata_errors(obj: Mapping[str, Any]) -> list[str]:
    """The API server's name and label validation (apimachinery), not part of any OpenAPI schema."""
    meta, errors = obj["metadata"], []
    name, kind = meta["name"], obj["kind"]
    if kind == "Namespace":
        ok = len(name) <= 63 and DNS_LABEL.match(name) is not None
    elif obj["apiVersion"].startswith("rbac.authorization.k8s.io/"):
        ok = name not in (".", "..") and "/" not in name and "%" not in name  # path-segment names
    else:
        ok = len(name) <= 253 and DNS_SUBDOMAIN.match(name) is not None
    if not ok:
        errors.append(f"metadata.name: '{name}' is not a valid {kind} name")
    for key, value in meta.get("labels", {}).items():
        prefix, _, label = key.rpartition("/")
        if (prefix and (len(prefix) > 253 or not DNS_SUBDOMAIN.match(prefix))) \
                or len(label) > 63 or not LABEL_NAME.match(label):
            errors.append(f"metadata.labels: invalid key '{key}'")
        if value and (len(value) > 63 or not LABEL_NAME.match(value)):
            errors.append(f"metadata.labels: invalid value '{value}' of '{key}'")
    return errors


def errors_of(obj: Mapping[str, Any]) -> list[str]:
    group = obj["apiVersion"].rpartition("/")[0]
    schema = kueue_errors(obj) if group == KUEUE_GROUP else core_errors(obj)
    return schema + metadata_errors(obj)


# ----------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("source", [pytest.param(s, id=s) for s in SOURCES])
def test_every_declared_object_is_valid(source: str) -> None:
    found = objects(source)
    assert found
    problems = [f"{o.address}: {e}" for o in found for e in errors_of(o.body)]
    assert not problems, "\n".join(problems)


def _declared_kinds() -> set[str]:
    """Every Kubernetes kind the components' source names: typed pulumi-kubernetes classes
    (`k8s.<group>.<version>.<Kind>`) anywhere, and the `"kind"`s of the Kueue manifests."""
    kinds: set[str] = set()
    for path in COMPONENTS.rglob("*.py"):
        kinds |= set(re.findall(r"\bk8s\.\w+\.v\w+\.([A-Z]\w+)\b", path.read_text(encoding="utf-8")))
    kinds |= set(re.findall(r'"kind": "([A-Z]\w+)"', (COMPONENTS / "kueue.py").read_text(encoding="utf-8")))
    return kinds


def test_the_objects_cover_every_kind_the_components_declare() -> None:
    """A kind a component starts to declare fails here until these trees exercise it (and then
    until it has a schema: the validators refuse kinds they have none for)."""
    found = {o.kind for s in SOURCES for o in objects(s)}
    assert _declared_kinds() <= found, "declared but never validated"
    assert found == {"Role", "RoleBinding", "LimitRange", "ResourceQuota", "ValidatingAdmissionPolicy",
                     "ValidatingAdmissionPolicyBinding", "Namespace", "ResourceFlavor", "WorkloadPriorityClass",
                     "ClusterQueue", "LocalQueue"}


def test_the_kubernetes_version_is_one_the_package_ships() -> None:
    """kubernetes-validate falls back to the newest schema not newer than the one asked for: the
    chosen version must be shipped itself, or the check would quietly run against an older one."""
    assert KUBERNETES_VERSION in {str(major_minor(v)) for v in all_versions()}


# v1beta2 (Kueue's storage version; v1beta1 is served but deprecated) renames one field hypergov
# sets: ClusterQueue `spec.cohort` is `spec.cohortName`. Everything else hypergov declares has the
# same shape in both, which the test proves object by object.
V1BETA2_RENAMES: dict[str, tuple[tuple[str, str], ...]] = {"ClusterQueue": (("cohort", "cohortName"),)}


def as_v1beta2(obj: Mapping[str, Any]) -> dict[str, Any]:
    body = copy.deepcopy(dict(obj))
    body["apiVersion"] = f"{KUEUE_GROUP}/v1beta2"
    for old, new in V1BETA2_RENAMES.get(body["kind"], ()):
        if old in body["spec"]:
            body["spec"][new] = body["spec"].pop(old)
    return body


@pytest.mark.parametrize("source", [pytest.param(s, id=s) for s in SOURCES])
def test_kueue_objects_differ_from_v1beta2_only_by_the_documented_renames(source: str) -> None:
    kueue = [o for o in objects(source) if o.api_version.startswith(f"{KUEUE_GROUP}/")]
    if source != "example":
        assert kueue
    for obj in kueue:
        assert obj.api_version == f"{KUEUE_GROUP}/v1beta1", obj.address
        assert kueue_errors(as_v1beta2(obj.body)) == [], obj.address
        unconverted = kueue_errors(obj.body, version="v1beta2")
        renamed = [old for old, _ in V1BETA2_RENAMES.get(obj.kind, ()) if old in obj.body["spec"]]
        assert bool(unconverted) == bool(renamed), (obj.address, unconverted)  # the renames are all needed
        for old in renamed:
            assert f"spec: Additional properties are not allowed ('{old}' was unexpected)" in unconverted


def _first(kind: str) -> dict[str, Any]:
    return copy.deepcopy(dict(next(o.body for o in objects("plain-eks") if o.kind == kind)))


def _set(path: tuple[str | int, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(body: dict[str, Any]) -> None:
        *parents, last = path
        node: Any = body
        for part in parents:
            node = node[part]
        node[last] = value
    return mutate


def _drop_cohort(body: dict[str, Any]) -> None:
    del body["spec"]["cohort"]


def _duplicate_flavor(body: dict[str, Any]) -> None:
    flavors = body["spec"]["resourceGroups"][0]["flavors"]
    flavors.append(copy.deepcopy(flavors[0]))


@pytest.mark.parametrize(("kind", "mutate", "expected"), [
    pytest.param("Role", _set(("rules", 0, "verb"), ["get"]), "'verb' was unexpected", id="core-unknown-field"),
    pytest.param("LimitRange", _set(("spec", "limits", 0, "type"), 3), "is not of type", id="core-wrong-type"),
    pytest.param("Namespace", _set(("metadata", "lables"), {}), "'lables' was unexpected", id="core-unknown-metadata"),
    pytest.param("ValidatingAdmissionPolicyBinding", _set(("spec", "policy"), "x"), "'policy' was unexpected",
                 id="core-unknown-spec-field"),
    pytest.param("ClusterQueue", _set(("spec", "resourceGroups", 0, "flavors", 0, "resources", 0, "nominalQuotas"), 1),
                 "'nominalQuotas' was unexpected", id="kueue-unknown-field"),
    pytest.param("ClusterQueue", _set(("spec", "queueingStrategy"), "FIFO"), "is not one of", id="kueue-enum"),
    pytest.param("WorkloadPriorityClass", _set(("value",), "high"), "is not of type 'integer'", id="kueue-wrong-type"),
    pytest.param("LocalQueue", _set(("metadata", "label"), {}), "'label' was unexpected", id="kueue-unknown-metadata"),
    pytest.param("ResourceFlavor", _set(("apiVersion",), f"{KUEUE_GROUP}/v1beta1x"), "is not served",
                 id="kueue-wrong-api-version"),
    pytest.param("ClusterQueue", _drop_cohort, "borrowingLimit must be nil when cohort is empty", id="kueue-cel-rule"),
    pytest.param("ClusterQueue", _set(("spec", "preemption", "reclaimWithinCohort"), "Never"),
                 "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never", id="kueue-cel-preemption"),
    pytest.param("ClusterQueue", _set(("spec", "resourceGroups", 0, "coveredResources"), ["a", "b"]),
                 "flavors must have the same number of resources", id="kueue-cel-covered-resources"),
    pytest.param("ClusterQueue", _duplicate_flavor, "duplicate entry for ['name']", id="kueue-list-map-keys"),
    pytest.param("ResourceFlavor", _set(("spec", "tolerations"), [{"key": "a", "operator": "Exists"}]),
                 "CEL rule without a Python equivalent", id="kueue-cel-rule-not-translated"),
    pytest.param("Namespace", _set(("kind",), "Namespaces"), f"has no {KUBERNETES_VERSION} schema",
                 id="core-unknown-kind"),
    pytest.param("ClusterQueue", _set(("kind",), "Cohorts"), "no Kueue CRD", id="kueue-unknown-kind"),
    pytest.param("Namespace", _set(("metadata", "name"), "Hyperpod_NS"), "not a valid Namespace name", id="name"),
    pytest.param("Role", _set(("metadata", "labels", "hypergov.io/x"), "a b"), "invalid value 'a b'", id="label-value"),
    pytest.param("ClusterQueue", _set(("metadata", "labels", "-x"), "y"), "invalid key '-x'", id="label-key"),
])
def test_each_check_rejects_a_wrong_field(kind: str, mutate: Callable[[dict[str, Any]], None],
                                          expected: str) -> None:
    """A check that cannot fail is a defect: each one refuses a real object with one field wrong."""
    body = _first(kind)
    assert errors_of(body) == []
    mutate(body)
    errors = errors_of(body)
    assert any(expected in e for e in errors), errors
