"""Regenerate engines/provider/proto/tfplugin5_pb2.py and .pyi from tfplugin5.proto (`make proto`).

grpcio-tools is a development dependency: the generated files are committed, and
tests/engines/test_provider_proto.py checks they are what this gives.
"""

from __future__ import annotations

import sys
from pathlib import Path

PROTO_DIR = Path(__file__).resolve().parents[2] / "engines" / "provider" / "proto"
GENERATED = ("tfplugin5_pb2.py", "tfplugin5_pb2.pyi")


def generate(out_dir: Path, proto_dir: Path = PROTO_DIR) -> list[Path]:
    """Run protoc (grpcio-tools' own) on tfplugin5.proto into `out_dir`; the files written."""
    from grpc_tools import protoc

    args = ["protoc", f"-I{proto_dir}", f"--python_out={out_dir}", f"--pyi_out={out_dir}",
            str(proto_dir / "tfplugin5.proto")]
    if protoc.main(args) != 0:
        raise RuntimeError("protoc failed on tfplugin5.proto")
    return [out_dir / name for name in GENERATED]


if __name__ == "__main__":
    written = generate(PROTO_DIR)
    sys.stdout.write("".join(f"wrote {path}\n" for path in written))
