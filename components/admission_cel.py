"""A ValidatingAdmissionPolicy evaluated as the API server evaluates it, with a real CEL engine
(`cel-python`), so that the policies hypergov declares are compiled and run in the tests instead of
being trusted as text (no API server runs on the build machines).

What it follows (https://kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/):

- `matchConstraints.resourceRules` select the request by API group, resource and operation;
- `matchConditions` (all must be true, else the policy does not apply) see `object`, `oldObject`,
  `request`; `variables` are computed in order, each seeing the ones before it as `variables.<name>`
  (a variable that fails is an error only where it is used: CEL errors are values here, as the
  API server's lazy evaluation makes them);
- every validation must be true; the first one that is not refuses the request with its
  `message`; an expression that fails refuses it too under `failurePolicy: Fail`.

Kubernetes' own CEL libraries are not CEL's standard library. The two list functions hypergov's
expressions use are provided exactly as Kubernetes documents them
(https://kubernetes.io/docs/reference/using-api/cel/#kubernetes-list-library): `sum()` (the sum of a
list of int, uint or double; `[].sum()` is 0) and `max()` (the largest element; an error on an empty
list). An expression calling any other Kubernetes-only function fails to evaluate here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import celpy
from celpy import celtypes
from celpy.adapter import json_to_cel
from celpy.evaluation import CELEvalError


def _numbers(values: Any, function: str) -> list[Any]:
    if not isinstance(values, list):  # ListType, or the plain list a CEL `+` of lists gives
        raise TypeError(f"{function}() applies to a list")
    kinds = {type(v) for v in values}
    if len(kinds) > 1 or not kinds <= {celtypes.IntType, celtypes.UintType, celtypes.DoubleType}:
        raise TypeError(f"{function}() needs elements of one numeric type, got {sorted(k.__name__ for k in kinds)}")
    return list(values)


def list_sum(values: Any) -> Any:
    """Kubernetes' `<list<T>>.sum() <T>`: `[1, 3].sum() == 4`, `[].sum() == 0`."""
    items = _numbers(values, "sum")
    if not items:
        return celtypes.IntType(0)
    kind = type(items[0])
    return kind(sum(items))


def list_max(values: Any) -> Any:
    """Kubernetes' `<list<T>>.max() <T>`: the largest element, an error on an empty list."""
    items = _numbers(values, "max")
    if not items:
        return CELEvalError("max() of an empty list")
    return max(items)


KUBERNETES_FUNCTIONS = {"sum": list_sum, "max": list_max}
_ENVIRONMENT = celpy.Environment()


@cache
def compiled(expression: str) -> celpy.Runner:
    """The program of one expression; a syntax error raises `celpy.CELParseError`."""
    return _ENVIRONMENT.program(_ENVIRONMENT.compile(expression), functions=KUBERNETES_FUNCTIONS)


@dataclass(frozen=True)
class Verdict:
    applies: bool  # the policy's match constraints and match conditions select the request
    refusal: str | None  # None: admitted; else what the API server answers (the failed message)

    @property
    def allowed(self) -> bool:
        return self.refusal is None


@dataclass(frozen=True)
class AdmissionRequest:
    object: Mapping[str, Any]
    group: str  # API group of the resource ("" for the core group)
    resource: str  # plural resource name, as the URL has it ("jobs")
    operation: str = "CREATE"
    namespace: str = ""


def _rule_matches(rule: Mapping[str, Any], request: AdmissionRequest) -> bool:
    def has(key: str, value: str) -> bool:
        return "*" in rule.get(key, []) or value in rule.get(key, [])
    return has("apiGroups", request.group) and has("resources", request.resource) \
        and has("operations", request.operation)


def _evaluate(expression: str, activation: Mapping[str, Any]) -> Any:
    try:
        return compiled(expression).evaluate(dict(activation))
    except CELEvalError as error:
        return error


def _activation(request: AdmissionRequest) -> dict[str, Any]:
    req = {"operation": request.operation, "namespace": request.namespace,
           "resource": {"group": request.group, "resource": request.resource}}
    return {"object": json_to_cel(dict(request.object)), "oldObject": None,
            "request": json_to_cel(req)}


def _outcome(name: str, expression: str, value: Any) -> bool | str:
    """True or False as CEL answered, or why the expression gave no bool (an error)."""
    if isinstance(value, CELEvalError):
        return f"{name}: expression '{expression}' resulted in error: {value.args[0] if value.args else value}"
    if not isinstance(value, celtypes.BoolType):
        return f"{name}: expression '{expression}' is not a bool"
    return bool(value)


def evaluate_policy(spec: Mapping[str, Any], request: AdmissionRequest) -> Verdict:
    """What the API server decides for `request` under a policy (bound with `validationActions:
    [Deny]` to the request's namespace) of this spec."""
    rules: Sequence[Mapping[str, Any]] = spec.get("matchConstraints", {}).get("resourceRules", [])
    if not any(_rule_matches(r, request) for r in rules):
        return Verdict(applies=False, refusal=None)
    activation = _activation(request)
    for condition in spec.get("matchConditions", []):
        matched = _outcome(f"match condition {condition['name']}", condition["expression"],
                           _evaluate(condition["expression"], activation))
        if matched is False:
            return Verdict(applies=False, refusal=None)
        if isinstance(matched, str):
            return Verdict(applies=True, refusal=matched)
    variables: dict[Any, Any] = {}
    for variable in spec.get("variables", []):
        activation["variables"] = celtypes.MapType(variables)
        variables[celtypes.StringType(variable["name"])] = _evaluate(variable["expression"], activation)
    activation["variables"] = celtypes.MapType(variables)
    for validation in spec.get("validations", []):
        valid = _outcome("validation", validation["expression"], _evaluate(validation["expression"], activation))
        if valid is False:
            return Verdict(applies=True, refusal=validation.get("message", validation["expression"]))
        if isinstance(valid, str):
            return Verdict(applies=True, refusal=valid)
    return Verdict(applies=True, refusal=None)


def expressions(spec: Mapping[str, Any]) -> list[str]:
    """Every CEL expression of a policy spec, for compiling them all."""
    found = [c["expression"] for c in spec.get("matchConditions", [])]
    found += [v["expression"] for v in spec.get("variables", [])]
    found += [v["expression"] for v in spec.get("validations", [])]
    found += [v["messageExpression"] for v in spec.get("validations", []) if "messageExpression" in v]
    return found
