"""What a Kueue resource name and quantity count as in the accounting: the accelerator kind (or
vCPUs) and a whole number of the kind's units. Counting in whole units keeps every sum of usage
exact (no floating-point drift over a month of events); hours are computed only at the end.

One source for the MIG rule (SEMANTICS.md U3): a MIG slice `nvidia.com/mig-<n>g.<memory>gb` is
n of the GPU's seven compute slices, so a GPU is counted in sevenths.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Final

from hypergov.kube_resources import NEURON_CORE, NEURON_DEVICE, NEURON_DEVICE_ALIAS, NVIDIA_GPU
from hypergov.model.partitions import COMPUTE_SLICES


class ResourceKind(StrEnum):
    """What a quantity counts: GPUs (whole or MIG slices), Neuron devices, NeuronCores, vCPUs."""

    GPU = "gpu"
    NEURON_DEVICE = "neuron_device"
    NEURONCORE = "neuroncore"
    VCPU = "vcpu"


GPU_UNITS: Final = COMPUTE_SLICES
"""Units per GPU: a MIG-capable GPU (A100, H100, H200, B200) has seven compute slices (NVIDIA MIG
user guide, "Supported MIG Profiles": a `<n>g` profile takes n of the 7 GPCs)."""
MILLICORES: Final = 1000
"""Units per vCPU: Kubernetes counts CPU in millicores (`500m`)."""

UNITS: Final[dict[ResourceKind, int]] = {
    ResourceKind.GPU: GPU_UNITS, ResourceKind.NEURON_DEVICE: 1, ResourceKind.NEURONCORE: 1,
    ResourceKind.VCPU: MILLICORES,
}
"""Units per one of each kind (a GPU, a Neuron device, a NeuronCore, a vCPU)."""

CPU = "cpu"
MIG_PREFIX = "nvidia.com/mig-"
_MIG_PROFILE = re.compile(r"mig-(?P<slices>[1-7])g\.[0-9]+gb")
_SUFFIXES: Final[dict[str, Decimal]] = {
    "": Decimal(1), "m": Decimal("0.001"), "k": Decimal(10**3), "M": Decimal(10**6), "G": Decimal(10**9),
    "Ki": Decimal(2**10), "Mi": Decimal(2**20), "Gi": Decimal(2**30),
}
_QUANTITY = re.compile(r"(?P<number>[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+))(?P<suffix>Ki|Mi|Gi|m|k|M|G)?")


class QuantityError(ValueError):
    """A quantity or resource name the accounting cannot count (the message says which)."""


def mig_compute_slices(profile: str) -> int:
    """The compute slices (of a GPU's seven) that a MIG profile (`mig-3g.40gb`) takes: its `<n>g`."""
    found = _MIG_PROFILE.fullmatch(profile)
    if found is None:
        raise QuantityError(f"'{profile}' is not a MIG profile of the form mig-<n>g.<memory>gb")
    return int(found["slices"])


def kind_of(resource: str) -> tuple[ResourceKind, int] | None:
    """The kind a Kueue resource name counts and the units one of it is; None for resources the
    accounting does not count (memory, storage, pods, other extended resources)."""
    if resource == NVIDIA_GPU:
        return ResourceKind.GPU, GPU_UNITS
    if resource.startswith(MIG_PREFIX):
        return ResourceKind.GPU, mig_compute_slices(resource.removeprefix("nvidia.com/"))
    if resource in (NEURON_DEVICE, NEURON_DEVICE_ALIAS):
        return ResourceKind.NEURON_DEVICE, 1
    if resource == NEURON_CORE:
        return ResourceKind.NEURONCORE, 1
    if resource == CPU:
        return ResourceKind.VCPU, MILLICORES
    return None


def parse_quantity(quantity: object) -> Decimal:
    """A Kubernetes quantity (`4`, `500m`, `1.5`, or a JSON number) as an exact decimal."""
    if isinstance(quantity, bool) or not isinstance(quantity, int | float | str):
        raise QuantityError(f"quantity {quantity!r} is neither a number nor a string")
    text = str(quantity).strip()
    found = _QUANTITY.fullmatch(text)
    if found is None:
        raise QuantityError(f"quantity '{text}' is not a Kubernetes quantity this accounting reads")
    try:
        return Decimal(found["number"]) * _SUFFIXES[found["suffix"] or ""]
    except InvalidOperation as error:  # pragma: no cover - the pattern admits only decimals
        raise QuantityError(f"quantity '{text}': {error}") from error


def units_of(resource: str, quantity: object) -> tuple[ResourceKind, int] | None:
    """`quantity` of `resource` in whole units of its kind; None when the resource is not counted.
    A quantity that is not a whole number of units (half a GPU, `0.5m` CPU) is refused: Kubernetes
    does not allocate it, so it means the object is wrong, not that half was used."""
    counted = kind_of(resource)
    if counted is None:
        return None
    kind, units_each = counted
    amount = parse_quantity(quantity) * units_each
    if amount != amount.to_integral_value():
        raise QuantityError(f"{resource}: {quantity} is not a whole number of {kind} units")
    return kind, int(amount)
