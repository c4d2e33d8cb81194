"""The botocore shape facts kept between processes (`hypergov.model.aws_limits._KeptFacts`): what
a later process reads from the file is exactly what botocore's service models say, a damaged file
is read from botocore again, and nothing is kept when botocore may read models of its own
(`AWS_DATA_PATH`). Each case runs hypergov in a fresh process (the facts are read at import);
the expected values come from botocore's models, read here directly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import botocore
import botocore.session
from botocore.model import StructureShape

ROOT = Path(__file__).resolve().parents[2]
LOAD = ("import json, hypergov.model.project, hypergov.rules; from hypergov.model.aws_limits import LIMITS; "
        "print(json.dumps({k: [v.min, v.max] for k, v in LIMITS.items()}))")


def _hypergov(cache: Path, **env: str) -> dict[str, list[int | None]]:
    environ = {k: v for k, v in os.environ.items() if k != "AWS_DATA_PATH"}
    environ.update(HYPERGOV_CACHE_DIR=str(cache), **env)
    done = subprocess.run([sys.executable, "-c", LOAD], cwd=ROOT, env=environ, capture_output=True, text=True,
                          check=True)
    limits: dict[str, list[int | None]] = json.loads(done.stdout)
    return limits


def _kept(cache: Path) -> Path:
    return cache / f"aws-shapes-{botocore.__version__}-v1.json"


def test_what_a_later_process_reads_is_what_botocore_says(tmp_path: Path) -> None:
    first = _hypergov(tmp_path)
    kept = json.loads(_kept(tmp_path).read_text())
    assert len(kept) > 20  # every shape the models and rules read
    session = botocore.session.get_session()
    for key, facts in kept.items():
        service, shape_name, *member = key.split("/")
        found = session.get_service_model(service).shape_for(shape_name)
        if member:
            assert isinstance(found, StructureShape)
            found = found.members[member[0]]
        assert facts == {"metadata": dict(found.metadata), "enum": list(getattr(found, "enum", []))}, key
    assert _hypergov(tmp_path) == first  # read from the file this time


def test_a_damaged_file_is_read_from_botocore_again(tmp_path: Path) -> None:
    expected = _hypergov(tmp_path / "clean")
    _kept(tmp_path).parent.mkdir(parents=True, exist_ok=True)
    _kept(tmp_path).write_text('{"iam/roleNameType": {"metadata"')
    assert _hypergov(tmp_path) == expected
    assert json.loads(_kept(tmp_path).read_text()) == json.loads(_kept(tmp_path / "clean").read_text())


def test_nothing_is_kept_when_botocore_may_read_other_models(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    _hypergov(tmp_path / "cache", AWS_DATA_PATH=str(models))
    assert not (tmp_path / "cache").exists()
