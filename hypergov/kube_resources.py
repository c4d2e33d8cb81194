"""The Kubernetes extended-resource names accelerators are asked for by, in one place: the Kueue
queues and namespace limits the components declare (`components.kueue`) and the usage accounting
that reads Kueue Workloads (`usage.resources`) both count them. Imports nothing, so the usage
core can read it without the config models."""

from __future__ import annotations

NVIDIA_GPU = "nvidia.com/gpu"
NEURON_DEVICE = "aws.amazon.com/neuron"
NEURON_DEVICE_ALIAS = "aws.amazon.com/neurondevice"
NEURON_CORE = "aws.amazon.com/neuroncore"
