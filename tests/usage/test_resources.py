"""One MIG rule (SEMANTICS.md U3): a partition counts as `hypergov.model.partitions.gpu_share` of a
GPU, the rule the guarantees use, in whole 56ths of a GPU."""

from __future__ import annotations

from fractions import Fraction

import pytest

from hypergov.model import partitions
from usage.resources import GPU_UNITS, QuantityError, ResourceKind, mig_units, units_of

EVERY_PROFILE = sorted((itype, name) for itype, offered in partitions.PROFILES_BY_TYPE.items() for name in offered)


@pytest.mark.parametrize(("instance_type", "profile"), EVERY_PROFILE)
def test_every_known_profile_is_a_whole_number_of_units_equal_to_its_gpu_share(instance_type: str,
                                                                               profile: str) -> None:
    """For every profile the partitions table knows, the units are exactly its share of a GPU (no
    rounding) and agree with `gpu_fraction`, which the guarantees' GPU-equivalents use."""
    found = partitions.profile(instance_type, profile)
    assert found is not None
    units = mig_units(instance_type, profile)

    assert Fraction(units, GPU_UNITS) == partitions.gpu_share(found)
    assert units / GPU_UNITS == partitions.gpu_fraction(found)


def test_the_same_profile_name_can_be_a_different_share_on_another_gpu() -> None:
    """mig-1g.10gb: on A100 40 GB (p4d) 1 of 7 compute and 2 of 8 memory slices, max(8/56, 14/56) =
    14 units (1/4 GPU); on H100 (p5) 1 of 7 and 1 of 8, max(8/56, 7/56) = 8 units (1/7 GPU).
    3 of them on p5 are 24 units."""
    assert mig_units("ml.p4d.24xlarge", "mig-1g.10gb") == 14
    assert mig_units("ml.p5.48xlarge", "mig-1g.10gb") == 8
    assert units_of("nvidia.com/mig-1g.10gb", "3", "ml.p5.48xlarge") == (ResourceKind.GPU, 24)


@pytest.mark.parametrize("instance_type", ["ml.g5.12xlarge", None])
def test_a_partition_on_a_type_without_that_profile_is_refused(instance_type: str | None) -> None:
    """Its share depends on the GPU: on a type the table does not know (or none), it is unknown."""
    with pytest.raises(QuantityError, match="share of a GPU is unknown"):
        units_of("nvidia.com/mig-3g.40gb", "1", instance_type)


@pytest.mark.parametrize(("resource", "quantity"), [("nvidia.com/gpu", "1.5"), ("nvidia.com/mig-1g.10gb", "0.5"),
                                                    ("cpu", "0.5m")])
def test_what_kubernetes_cannot_allocate_is_refused(resource: str, quantity: str) -> None:
    """1.5 GPUs is 84 units, but Kubernetes allocates extended resources whole and CPU in millicores."""
    with pytest.raises(QuantityError, match="not a whole number of what Kubernetes allocates"):
        units_of(resource, quantity, "ml.p5.48xlarge")


def test_a_neuroncore_is_its_share_of_a_trainium_device() -> None:
    """A Trainium (Trn1) chip holds two NeuronCore-v2 (AWS Neuron documentation, "Trainium
    Architecture"): 3 NeuronCores are 1.5 devices, 4 are 2 devices, whatever the request names."""
    cores = units_of("aws.amazon.com/neuroncore", "3", "ml.trn1.32xlarge")
    devices = units_of("aws.amazon.com/neuron", "2", "ml.trn1.32xlarge")
    assert cores is not None and devices is not None
    assert cores[0] is devices[0] is ResourceKind.NEURON_DEVICE
    assert cores[1] * 4 == devices[1] * 3  # 3 cores : 2 devices = 1.5 : 2
    assert units_of("aws.amazon.com/neuroncore", "4", "ml.trn1.32xlarge") == devices


def test_neuroncores_where_their_share_of_a_device_is_unknown_are_refused() -> None:
    with pytest.raises(QuantityError, match=r"NeuronCores per Neuron device of ml\.trn2\.48xlarge are unknown"):
        units_of("aws.amazon.com/neuroncore", "8", "ml.trn2.48xlarge")
