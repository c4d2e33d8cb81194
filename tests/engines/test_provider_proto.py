"""The committed protocol-5 message classes are what `make proto` generates from tfplugin5.proto,
and the declaration keeps the wire numbers hypergov relies on (checked against terraform's 5.10)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engines.provider.proto import tfplugin5_pb2 as pb
from tests.engines.regen_proto import GENERATED, PROTO_DIR, generate


def test_regenerating_gives_the_committed_files(tmp_path: Path) -> None:
    pytest.importorskip("grpc_tools", reason="grpcio-tools (a development dependency) is not installed")
    for path in generate(tmp_path):
        assert path.read_bytes() == (PROTO_DIR / path.name).read_bytes(), f"{path.name}: run `make proto`"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(GENERATED)


@pytest.mark.parametrize(("message", "field", "number"), [
    pytest.param(pb.DynamicValue, "msgpack", 1, id="dynamic-value-msgpack"),
    pytest.param(pb.Diagnostic, "attribute", 4, id="diagnostic-attribute"),
    pytest.param(pb.GetProviderSchema.Response, "server_capabilities", 6, id="schema-capabilities"),
    pytest.param(pb.PlanResourceChange.Request, "prior_private", 5, id="plan-prior-private"),
    pytest.param(pb.PlanResourceChange.Response, "planned_private", 3, id="plan-planned-private"),
    pytest.param(pb.ApplyResourceChange.Response, "private", 2, id="apply-private"),
    pytest.param(pb.ReadResource.Request, "private", 3, id="read-private"),
    pytest.param(pb.UpgradeResourceState.Request, "raw_state", 3, id="upgrade-raw-state"),
    pytest.param(pb.ImportResourceState.Response, "imported_resources", 1, id="import-resources"),
])
def test_wire_numbers(message: Any, field: str, number: int) -> None:
    assert message.DESCRIPTOR.fields_by_name[field].number == number


def test_the_service_paths_are_terraforms() -> None:
    service = pb.DESCRIPTOR.services_by_name["Provider"]
    assert service.full_name == "tfplugin5.Provider"
    assert {"GetSchema", "PlanResourceChange", "ApplyResourceChange", "Stop"} <= set(service.methods_by_name)
