"""The table of what HyperPod task governance's add-on makes in a cluster (`hypergov.hyperpod_addon`)
says where each fact comes from, lists the kinds AWS says the add-on makes, and names their objects
as AWS's own examples show them.

Expected values are typed from the documents the table cites:
- aws-samples/awsome-distributed-training, 1.architectures/7.sagemaker-hyperpod-eks/task-governance/README.md:
  "HyperPod creates and modifies SageMaker AI-managed Kubernetes resources such as: KueueManagerConfig,
  ClusterQueues, LocalQueues, WorkloadPriorityClasses, ResourceFlavors, ValidatingAdmissionPolicies";
  "hyperpod-ns-team-b-localqueue   hyperpod-ns-team-b-clusterqueue"; its job for team-a carries
  "kueue.x-k8s.io/priority-class: training-priority" for the scheduler config's class 'training'.
- aws/sagemaker-hyperpod-cli: namespaces `hyperpod-ns-team-a`, labelled
  sagemaker.amazonaws.com/sagemaker-managed-queue "true" and quota-allocation-id <team>; the flavor
  "ml.g5.12xlarge" in a team's ClusterQueue.
- awslabs ai-on-sagemaker-hyperpod: "hyperpod-task-governance-admission-policy".
"""

from __future__ import annotations

from hypergov.hyperpod_addon import ADD_ON_OBJECTS, SOURCES, add_on_refs, made_by_add_on


def test_every_row_cites_a_quoted_source() -> None:
    for row in ADD_ON_OBJECTS:
        assert row.sources and set(row.sources) <= set(SOURCES), row.kind
    for key, text in SOURCES.items():
        assert "https://" in text and "'" in text, key  # an address and a quoted line


def test_the_kinds_are_the_ones_aws_lists_plus_the_team_namespace() -> None:
    listed = {"ClusterQueue", "LocalQueue", "WorkloadPriorityClass", "ResourceFlavor", "ValidatingAdmissionPolicy"}
    assert {row.kind for row in ADD_ON_OBJECTS} == listed | {"Namespace"}  # KueueManagerConfig: not named


def test_the_names_are_the_ones_in_aws_examples() -> None:
    refs = add_on_refs(teams=["team-a"], priority_classes=["training"], instance_types=["ml.g5.12xlarge"])
    assert set(refs) == {
        ("", "Namespace", None, "hyperpod-ns-team-a"),
        ("kueue.x-k8s.io", "ClusterQueue", None, "hyperpod-ns-team-a-clusterqueue"),
        ("kueue.x-k8s.io", "LocalQueue", "hyperpod-ns-team-a", "hyperpod-ns-team-a-localqueue"),
        ("kueue.x-k8s.io", "WorkloadPriorityClass", None, "training-priority"),
        ("kueue.x-k8s.io", "ResourceFlavor", None, "ml.g5.12xlarge"),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy", None,
         "hyperpod-task-governance-admission-policy"),
    }


def test_a_namespace_is_the_add_ons_only_with_the_labels_it_carries() -> None:
    refs = add_on_refs(teams=["team-a"], priority_classes=[], instance_types=[])
    labels = {"sagemaker.amazonaws.com/sagemaker-managed-queue": "true",
              "sagemaker.amazonaws.com/quota-allocation-id": "team-a"}

    def namespace(with_labels: dict[str, str]) -> bool:
        return made_by_add_on(refs, api_version="v1", kind="Namespace", namespace=None, name="hyperpod-ns-team-a",
                              labels=with_labels)

    assert namespace(labels)
    assert not namespace({})
    assert not namespace({"sagemaker.amazonaws.com/quota-allocation-id": "team-a"})
    assert namespace({"sagemaker.amazonaws.com/sagemaker-managed-queue": "true"})  # the add-on's mark alone
    assert made_by_add_on(refs, api_version="kueue.x-k8s.io/v1beta2", kind="LocalQueue", namespace="hyperpod-ns-team-a",
                          name="hyperpod-ns-team-a-localqueue", labels={})  # any version of the group
    assert not made_by_add_on(refs, api_version="kueue.x-k8s.io/v1beta1", kind="LocalQueue",
                              namespace="hyperpod-ns-team-a", name="side-queue", labels={})
