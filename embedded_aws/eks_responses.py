"""moto's EKS service extended with access entries, access policy associations and the
cluster's access configuration (authentication mode), which moto ignores.

EKS speaks REST-JSON: the operation is identified by method and path, so besides the methods
the extension registers URL rules (`URL_PATHS`) for the new paths.
"""

from __future__ import annotations

from typing import Any, ClassVar

from moto.core.responses import ActionResult, EmptyResult
from moto.eks.responses import EKSResponse

from embedded_aws.eks_access import (
    ACCESS_POLICIES,
    DEFAULT_AUTH_MODE,
    AccessBackend,
    access_backends,
    authentication_mode,
)
from embedded_aws.errors import eks_invalid_parameter
from embedded_aws.extension import ModelValidatedResponse, page

ACCESS_OPERATIONS = frozenset({
    "CreateAccessEntry", "DescribeAccessEntry", "UpdateAccessEntry", "DeleteAccessEntry", "ListAccessEntries",
    "AssociateAccessPolicy", "DisassociateAccessPolicy", "ListAssociatedAccessPolicies", "ListAccessPolicies",
})
# Authentication modes only move towards API (AWS cannot switch a cluster back to CONFIG_MAP).
MODE_ORDER = ("CONFIG_MAP", "API_AND_CONFIG_MAP", "API")


class ExtendedEKSResponse(ModelValidatedResponse, EKSResponse):
    VALIDATED: ClassVar[frozenset[str]] = ACCESS_OPERATIONS | {"CreateCluster"}

    @property
    def access(self) -> AccessBackend:
        return access_backends[self.current_account][self.region]

    # Cluster access configuration -----------------------------------------------------------
    def create_cluster(self) -> ActionResult:
        result = super().create_cluster()
        requested = self.param("accessConfig", {})
        mode = requested.get("authenticationMode", DEFAULT_AUTH_MODE)
        cluster: Any = self.eks_backend.clusters[self.param("name")]
        cluster.access_config = {
            "authenticationMode": mode,
            "bootstrapClusterCreatorAdminPermissions": requested.get("bootstrapClusterCreatorAdminPermissions", True),
        }
        return result

    def update_cluster_config(self) -> ActionResult:
        requested = self._get_param("accessConfig") or {}
        wanted = requested.get("authenticationMode")
        if wanted is not None:
            cluster: Any = self.eks_backend.describe_cluster(name=self._get_param("name"))
            current = authentication_mode(cluster)
            if wanted not in MODE_ORDER or MODE_ORDER.index(wanted) < MODE_ORDER.index(current):
                raise eks_invalid_parameter(f"Unsupported authentication mode update from {current} to {wanted}.",
                                            cluster=cluster.name)
            cluster.access_config = {**getattr(cluster, "access_config", {}), "authenticationMode": wanted}
        return super().update_cluster_config()

    def delete_cluster(self) -> ActionResult:
        result = super().delete_cluster()
        self.access.forget_cluster(self._get_param("name"))
        return result

    # Access entries -------------------------------------------------------------------------
    def create_access_entry(self) -> ActionResult:
        entry = self.access.create_entry(self.params)
        return self.shaped({"accessEntry": entry.describe()})

    def describe_access_entry(self) -> ActionResult:
        entry = self.access.entry(self.param("clusterName"), self.param("principalArn"))
        return self.shaped({"accessEntry": entry.describe()})

    def update_access_entry(self) -> ActionResult:
        entry = self.access.update_entry(self.params)
        return self.shaped({"accessEntry": entry.describe()})

    def delete_access_entry(self) -> ActionResult:
        self.access.delete_entry(self.param("clusterName"), self.param("principalArn"))
        return self.shaped({})

    def list_access_entries(self) -> ActionResult:
        principals = self.access.listed(self.param("clusterName"), self.param("associatedPolicyArn"))
        chunk, token = page(principals, max_results=self.param("maxResults"), next_token=self.param("nextToken"),
                            invalid=eks_invalid_parameter("The nextToken is not valid."))
        return self.shaped({"accessEntries": chunk, "nextToken": token})

    # Access policies -------------------------------------------------------------------------
    def associate_access_policy(self) -> ActionResult:
        entry, association = self.access.associate(self.params)
        return self.shaped({"clusterName": entry.cluster_name, "principalArn": entry.principal_arn,
                            "associatedAccessPolicy": association.describe()})

    def disassociate_access_policy(self) -> ActionResult:
        self.access.disassociate(self.param("clusterName"), self.param("principalArn"), self.param("policyArn"))
        return self.shaped({})

    def list_associated_access_policies(self) -> ActionResult:
        entry = self.access.entry(self.param("clusterName"), self.param("principalArn"))
        policies = [p.describe() for _, p in sorted(entry.policies.items())]
        chunk, token = page(policies, max_results=self.param("maxResults"), next_token=self.param("nextToken"),
                            invalid=eks_invalid_parameter("The nextToken is not valid."))
        return self.shaped({"clusterName": entry.cluster_name, "principalArn": entry.principal_arn,
                            "associatedAccessPolicies": chunk, "nextToken": token})

    def list_access_policies(self) -> ActionResult:
        policies = [{"name": name, "arn": f"arn:aws:eks::aws:cluster-access-policy/{name}"}
                    for name in ACCESS_POLICIES]
        chunk, token = page(policies, max_results=self.param("maxResults"), next_token=self.param("nextToken"),
                            invalid=eks_invalid_parameter("The nextToken is not valid."))
        return self.shaped({"accessPolicies": chunk, "nextToken": token})

    # Tags of access entries (moto's tagging knows clusters only) -----------------------------
    def tag_resource(self) -> ActionResult:
        entry = self.access.entry_by_arn(self._extract_arn_from_path())
        if entry is None:
            return super().tag_resource()
        entry.tags.update(self._get_param("tags") or {})
        return EmptyResult()

    def untag_resource(self) -> ActionResult:
        entry = self.access.entry_by_arn(self._extract_arn_from_path())
        if entry is None:
            return super().untag_resource()
        for key in self.querystring.get("tagKeys", []):
            entry.tags.pop(key, None)
        return EmptyResult()

    def list_tags_for_resource(self) -> ActionResult:
        entry = self.access.entry_by_arn(self._extract_arn_from_path())
        if entry is None:
            return super().list_tags_for_resource()
        return ActionResult({"tags": dict(entry.tags)})


def url_paths(existing: dict[str, Any]) -> dict[str, Any]:
    """moto's EKS URL rules served by the extended class, plus the access-entry and policy paths."""
    dispatch = ExtendedEKSResponse.dispatch
    paths = {path: dispatch for path in existing}
    paths.update({
        "{0}/clusters/(?P<name>[^/]+)/access-entries$": dispatch,
        "{0}/clusters/(?P<name>[^/]+)/access-entries/(?P<entry>.+)$": dispatch,
        "{0}/access-policies$": dispatch,
    })
    return paths

