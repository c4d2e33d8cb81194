"""What a Kueue resource name and quantity count as in the accounting: the accelerator kind (or
vCPUs) and a whole number of the kind's units. Counting in whole units keeps every sum of usage
exact (no floating-point drift over a month of events); hours are computed only at the end.

One source for the MIG rule (SEMANTICS.md U3): a MIG partition is the share of a GPU that
`hypergov.model.partitions.gpu_share` gives for its profile on its instance type (the larger of
its compute share, n/7, and its memory share, m/8), the rule the guarantees use too. A GPU is
counted in 56ths (lcm(7, 8)), so every such share is a whole number of units.
"""

from __future__ import annotations

import functools
import math
import re
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Final

from hypergov.kube_resources import NEURON_CORE, NEURON_DEVICE, NEURON_DEVICE_ALIAS, NVIDIA_GPU
from hypergov.model import partitions
from hypergov.model.accelerators import NEURONCORES_PER_DEVICE, neuroncores_per_device


class ResourceKind(StrEnum):
    """What a quantity counts: GPUs (whole or MIG slices), Neuron devices, NeuronCores, vCPUs."""

    GPU = "gpu"
    NEURON_DEVICE = "neuron_device"
    NEURONCORE = "neuroncore"
    VCPU = "vcpu"


GPU_UNITS: Final = math.lcm(partitions.COMPUTE_SLICES, partitions.MEMORY_SLICES)
"""Units per GPU: 56, so that a MIG partition's share of a GPU (n of the 7 compute slices or m of
the 8 memory slices, NVIDIA MIG user guide, "Supported MIG Profiles") is a whole number of units."""
NEURON_UNITS: Final = math.lcm(*NEURONCORES_PER_DEVICE.values())
"""Units per Neuron device: a multiple of the NeuronCores per device of every chip whose share is
known (`hypergov.model.accelerators.NEURONCORES_PER_DEVICE`), so that a NeuronCore request is a
whole number of units of its device (as a MIG slice is of its GPU)."""
MILLICORES: Final = 1000
"""Units per vCPU: Kubernetes counts CPU in millicores (`500m`)."""

UNITS: Final[dict[ResourceKind, int]] = {
    ResourceKind.GPU: GPU_UNITS, ResourceKind.NEURON_DEVICE: NEURON_UNITS, ResourceKind.NEURONCORE: 1,
    ResourceKind.VCPU: MILLICORES,
}
"""Units per one of each kind (a GPU, a Neuron device, a NeuronCore, a vCPU)."""

CPU = "cpu"
MIG_PREFIX = "nvidia.com/mig-"
_SUFFIXES: Final[dict[str, Decimal]] = {
    "": Decimal(1), "m": Decimal("0.001"), "k": Decimal(10**3), "M": Decimal(10**6), "G": Decimal(10**9),
    "Ki": Decimal(2**10), "Mi": Decimal(2**20), "Gi": Decimal(2**30),
}
_QUANTITY = re.compile(r"(?P<number>[+]?([0-9]+(\.[0-9]*)?|\.[0-9]+))(?P<suffix>Ki|Mi|Gi|m|k|M|G)?")


class QuantityError(ValueError):
    """A quantity or resource name the accounting cannot count (the message says which)."""


def mig_units(instance_type: str | None, profile: str) -> int:
    """The GPU units one MIG partition (`mig-3g.40gb`) of `instance_type` is: its share of a GPU
    (`partitions.gpu_share`) in 56ths. The same profile name can take different slices on
    different GPUs (A100 40 GB's 1g.10gb holds 2 memory slices, H100's 1), hence the type."""
    found = partitions.profile(instance_type, profile) if instance_type else None
    if found is None:
        offered = ", ".join(sorted(partitions.profiles(instance_type or ""))) or "none"
        raise QuantityError(f"MIG profile {profile} is not one {instance_type or 'an unknown instance type'} offers "
                            f"(its profiles: {offered}); its share of a GPU is unknown")
    units = partitions.gpu_share(found) * GPU_UNITS
    if units.denominator != 1:  # pragma: no cover - GPU_UNITS is a multiple of both slice counts
        raise QuantityError(f"{profile}: {partitions.gpu_share(found)} GPU is no whole number of units")
    return int(units)


def kind_of(resource: str, instance_type: str | None = None) -> tuple[ResourceKind, int] | None:
    """The kind a Kueue resource name counts and the units one of it is on `instance_type` (the
    flavor's; a MIG partition's units depend on it); None for resources the accounting does not
    count (memory, storage, pods, other extended resources)."""
    if resource == NVIDIA_GPU:
        return ResourceKind.GPU, GPU_UNITS
    if resource.startswith(MIG_PREFIX):
        return ResourceKind.GPU, mig_units(instance_type, resource.removeprefix("nvidia.com/"))
    if resource in (NEURON_DEVICE, NEURON_DEVICE_ALIAS):
        return ResourceKind.NEURON_DEVICE, NEURON_UNITS
    if resource == NEURON_CORE:
        cores = neuroncores_per_device(instance_type) if instance_type else None
        if cores is None:
            raise QuantityError(f"NeuronCores per Neuron device of {instance_type or 'an unknown instance type'} are "
                                "unknown (known: " + ", ".join(sorted(NEURONCORES_PER_DEVICE)) + "); a request in "
                                "NeuronCores there has no known share of a device")
        return ResourceKind.NEURON_DEVICE, NEURON_UNITS // cores
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


def units_of(resource: str, quantity: object, instance_type: str | None = None) -> tuple[ResourceKind, int] | None:
    """`quantity` of `resource` on `instance_type` in whole units of its kind (see `_units_of`).
    The same few quantities recur in every workload of a cluster, so answers are kept."""
    if isinstance(quantity, str | int) and not isinstance(quantity, bool):
        return _kept_units_of(resource, quantity, instance_type)
    return _units_of(resource, quantity, instance_type)


@functools.lru_cache(maxsize=4096)
def _kept_units_of(resource: str, quantity: str | int, instance_type: str | None) -> tuple[ResourceKind, int] | None:
    return _units_of(resource, quantity, instance_type)


def _units_of(resource: str, quantity: object, instance_type: str | None) -> tuple[ResourceKind, int] | None:
    """`quantity` of `resource` on `instance_type` in whole units of its kind; None when the
    resource is not counted. A quantity Kubernetes cannot allocate (1.5 GPUs or MIG partitions:
    extended resources are whole; `0.5m` CPU: the least is a millicore) is refused: it means the
    object is wrong, not that half was used."""
    counted = kind_of(resource, instance_type)
    if counted is None:
        return None
    kind, units_each = counted
    allocatable = MILLICORES if resource == CPU else 1  # the least Kubernetes allocates, per one of the resource
    amount = parse_quantity(quantity)
    if amount * allocatable != (amount * allocatable).to_integral_value():
        raise QuantityError(f"{resource}: {quantity} is not a whole number of what Kubernetes allocates"
                            + (" (millicores)" if resource == CPU else ""))
    return kind, int(amount * units_each)
