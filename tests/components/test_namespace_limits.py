"""A team namespace's LimitRange and ResourceQuota cover every name its accelerators can be asked
by: on Trainium, Neuron devices are `aws.amazon.com/neuron` and `aws.amazon.com/neurondevice` (one
unit, two names), so a pod cannot step around the quota by asking for the other name."""

from __future__ import annotations

from test_kubernetes_schemas import objects


def _on_trainium(kind: str, namespace: str) -> dict[str, str]:
    """The object of `kind` in `namespace` on the cluster whose accelerators are Neuron devices."""
    found = [dict(o.body["spec"]["hard"]) if kind == "ResourceQuota" else dict(o.body["spec"]["limits"][0]["max"])
             for o in objects("example") if o.kind == kind and o.namespace == namespace]
    trainium = [f for f in found if any("neuron" in k for k in f)]
    assert len(found) == 2 and len(trainium) == 1  # nlp is on gpu-west (p5) and trn-east (trn1)
    return trainium[0]


def test_neuron_devices_are_limited_under_both_names() -> None:
    # nlp on trn-east: 8 ml.trn1.32xlarge guaranteed x 16 Trainium devices = 128, LendAndBorrow with
    # borrow_limit_percent 100: 256 reachable, within the cluster's 16 x 16 = 256.
    hard = _on_trainium("ResourceQuota", "hyperpod-ns-nlp")
    assert hard["requests.aws.amazon.com/neuron"] == hard["requests.aws.amazon.com/neurondevice"]
    assert {k: v for k, v in hard.items() if "neuron" in k} == {
        "requests.aws.amazon.com/neuron": "256", "requests.aws.amazon.com/neurondevice": "256"}
    most = _on_trainium("LimitRange", "hyperpod-ns-nlp")
    assert most["aws.amazon.com/neuron"] == most["aws.amazon.com/neurondevice"] == "16"  # devices per trn1.32xlarge
