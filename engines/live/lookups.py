"""The reads of the stacks' programs (`stacks.resource_graph.LOOKUPS`: an identity-store group's or user's
id, the role Identity Center provisioned for a permission set) made against live state, and the
desired objects with their placeholders replaced by what was read: what the scan compares live
objects with, as terraform's data sources are read before it plans.

A read that finds nothing (a role not provisioned yet, a group deleted from the identity store)
leaves its placeholder: the objects made from it cannot exist live either, and show as missing.
A read that fails is a scan failure, never "nothing there".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from engines.desired import DesiredLookup, DesiredObject
from engines.identity_store import MEMBER_ID_READ
from engines.live.items import ScanFailure
from engines.live.runner import DEFAULT_CONCURRENCY, CallCounter, ServiceClientFor
from engines.outcomes import Failure, guarded
from stacks.resource_graph import LOOKUP_PLACEHOLDER

Results = Mapping[str, Any]  # a lookup's result path ("groupId", "arns[0]") -> its value


def _unique_id(client: Any, calls: CallCounter, kind: str, inputs: Mapping[str, Any]) -> Results:
    """The data source's `<kind>Id` (`groupId`, `userId`), read by the attribute the program names."""
    operation, key = MEMBER_ID_READ[kind]
    unique = inputs["alternateIdentifier"]["uniqueAttribute"]
    try:
        found = calls(client, operation, IdentityStoreId=inputs["identityStoreId"], AlternateIdentifier={
            "UniqueAttribute": {"AttributePath": unique["attributePath"], "AttributeValue": unique["attributeValue"]}})
    except client.exceptions.ResourceNotFoundException:
        return {}
    return {key[0].lower() + key[1:]: found[key]}


def _roles(roles: Sequence[Mapping[str, Any]], inputs: Mapping[str, Any]) -> Results:
    """Terraform's `aws_iam_roles`: the roles whose name matches; `arns[0]` only when exactly one
    does (the data source's `one()`)."""
    pattern = re.compile(inputs["nameRegex"])
    arns = sorted(role["Arn"] for role in roles if pattern.search(role["RoleName"]))
    return {"arns[0]": arns[0]} if len(arns) == 1 else {}


ROLES = "aws:iam/getRoles:getRoles"
# lookup type -> (boto3 service, read); role lookups are read per place instead (`_role_lists`)
READS: Mapping[str, tuple[str, Callable[[Any, CallCounter, Mapping[str, Any]], Results]]] = {
    "aws:identitystore/getGroup:getGroup": (
        "identitystore", lambda c, calls, i: _unique_id(c, calls, "group", i)),
    "aws:identitystore/getUser:getUser": (
        "identitystore", lambda c, calls, i: _unique_id(c, calls, "user", i)),
}


def read_lookups(lookups: Sequence[DesiredLookup], client_for: ServiceClientFor, calls: CallCounter, *,
                 concurrency: int = DEFAULT_CONCURRENCY) -> tuple[dict[str, Results], list[ScanFailure]]:
    """Each lookup read once (by name: the same read in two stacks is one), `concurrency` at a
    time (an org of a thousand projects names a few thousand groups: one GetGroupId each, which
    in a row would dominate the scan); the role lookups of one account and path with one listing
    of its roles (one per permission set would list them all again for each). `client_for` is
    called from several threads: one client per place (`one_client_per_place`) is the caller's."""
    unique = list({lk.name: lk for lk in lookups}.values())
    places = sorted({(lk.account, lk.region, lk.inputs["pathPrefix"]) for lk in unique if lk.type == ROLES}, key=str)
    reads = [lk for lk in unique if lk.type != ROLES]

    def listed_roles(place: tuple[str | None, str, str]) -> Sequence[Mapping[str, Any]]:
        return [role for page in calls.pages(client_for("iam", place[0], place[1]), "list_roles",
                                             PathPrefix=place[2]) for role in page["Roles"]]

    with ThreadPoolExecutor(max_workers=max(1, min(concurrency, len(places) + len(reads)))) as pool:
        listed = dict(zip(places, pool.map(lambda p: guarded(listed_roles, p), places), strict=True))
        read = dict(zip([lk.name for lk in reads], pool.map(
            lambda lk: guarded(lambda one: _read_one(one, client_for, calls), lk), reads), strict=True))
    results: dict[str, Results] = {}
    failures: list[ScanFailure] = []
    for lookup in unique:
        if lookup.type == ROLES:
            roles = listed[(lookup.account, lookup.region, lookup.inputs["pathPrefix"])]
            outcome: Results | Failure = roles if isinstance(roles, Failure) else _roles(roles, lookup.inputs)
        else:
            outcome = read[lookup.name]
        if isinstance(outcome, Failure):
            failures.append(ScanFailure(lookup.stack, f"{lookup.type} {dict(lookup.inputs)}", outcome))
        else:
            results[lookup.name] = outcome
    return results, failures


def _read_one(lookup: DesiredLookup, client_for: ServiceClientFor, calls: CallCounter) -> Results:
    service, read = READS[lookup.type]
    return read(client_for(service, lookup.account, lookup.region), calls, lookup.inputs)


def resolved(objects: Sequence[DesiredObject], results: Mapping[str, Results]) -> tuple[DesiredObject, ...]:
    """The objects with every placeholder whose lookup found something replaced (pure)."""
    return tuple(replace(o, inputs=_substituted(o.inputs, results)) if _has_placeholder(o.inputs) else o
                 for o in objects)


def _has_placeholder(value: Any) -> bool:
    if isinstance(value, str):
        return "${lookup:" in value
    if isinstance(value, Mapping):
        return any(_has_placeholder(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_placeholder(v) for v in value)
    return False


def _substituted(value: Any, results: Mapping[str, Results]) -> Any:
    if isinstance(value, Mapping):
        return {k: _substituted(v, results) for k, v in value.items()}
    if isinstance(value, list):
        return [_substituted(v, results) for v in value]
    if not isinstance(value, str):
        return value
    whole = LOOKUP_PLACEHOLDER.fullmatch(value)
    if whole:  # the value is the result itself (not always a string)
        found = results.get(whole["name"], {})
        return found.get(whole["path"], value)
    return LOOKUP_PLACEHOLDER.sub(lambda m: str(results.get(m["name"], {}).get(m["path"], m[0])), value)
