"""Accelerators (GPUs, Trainium chips) per HyperPod instance type, from the Amazon EC2 and
SageMaker instance-type pages. Quotas are counted in instances, as HyperPod counts them; GPU
figures are derived from this table (a cluster may override it per instance type)."""

from __future__ import annotations

_BY_TYPE: dict[str, int] = {
    "ml.p4d.24xlarge": 8, "ml.p4de.24xlarge": 8, "ml.p5.48xlarge": 8, "ml.p5e.48xlarge": 8,
    "ml.p5en.48xlarge": 8, "ml.p5.4xlarge": 1, "ml.p6-b200.48xlarge": 8, "ml.p6-b300.48xlarge": 8,
    "ml.p6e-gb200.36xlarge": 4, "ml.trn1.32xlarge": 16, "ml.trn1n.32xlarge": 16,
    "ml.trn2.48xlarge": 16, "ml.trn2.3xlarge": 1, "ml.gr6.4xlarge": 1, "ml.gr6.8xlarge": 1,
}
# g4dn / g5 / g6 / g6e share one layout: 1 GPU up to 16xlarge, 4 on 12x and 24x, 8 on 48x.
for _family in ("g4dn", "g5", "g6", "g6e"):
    for _size, _gpus in (("xlarge", 1), ("2xlarge", 1), ("4xlarge", 1), ("8xlarge", 1), ("16xlarge", 1),
                         ("12xlarge", 4), ("24xlarge", 4), ("48xlarge", 8)):
        _BY_TYPE[f"ml.{_family}.{_size}"] = _gpus

_CPU_FAMILIES = ("ml.c", "ml.m", "ml.r", "ml.t", "ml.i")

NEURONCORES_PER_DEVICE: dict[str, int] = {"ml.trn1.32xlarge": 2, "ml.trn1n.32xlarge": 2}
"""NeuronCores per Neuron device, where a pod's `aws.amazon.com/neuroncore` request is a fixed
share of a device: each Trainium (Trn1) chip holds two NeuronCore-v2 (AWS Neuron documentation,
"Trainium Architecture"). Trainium2 chips hold eight physical NeuronCore-v3, but the cores a node
advertises depend on its logical NeuronCore configuration (LNC), so Trn2 is left out: a request in
NeuronCores there has no known share of a device."""


def neuroncores_per_device(instance_type: str) -> int | None:
    return NEURONCORES_PER_DEVICE.get(instance_type)


def accelerators_per_instance(instance_type: str, override: int | None = None) -> int | None:
    """GPUs per instance, 0 for CPU instance types, None when unknown (the cluster must say)."""
    if override is not None:
        return override
    if instance_type in _BY_TYPE:
        return _BY_TYPE[instance_type]
    if instance_type.startswith(_CPU_FAMILIES):
        return 0
    return None
