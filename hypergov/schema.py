"""JSON Schemas of the config files, generated from the models (never written by hand), so
editors complete and check the same format `hypergov validate` enforces."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from hypergov.model.cluster import Cluster
from hypergov.model.org import Organization
from hypergov.model.project import Project
from hypergov.model.workload import WorkloadClass

SCHEMAS: dict[str, tuple[type[BaseModel], str]] = {
    "org.schema.json": (Organization, "config/org.yaml"),
    "cluster.schema.json": (Cluster, "config/clusters/<name>.yaml"),
    "project.schema.json": (Project, "config/projects/<team>.yaml"),
    "workload-class.schema.json": (WorkloadClass, "config/workloads/<team>/<class>.yaml"),
}


def schema_documents() -> dict[str, str]:
    docs = {}
    for filename, (model, applies_to) in SCHEMAS.items():
        schema = model.model_json_schema()
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                  "$id": f"https://hypergov.dev/schema/{filename}",
                  "description": f"hypergov {applies_to}", **schema}
        docs[filename] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    return docs


def write_schemas(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for filename, text in schema_documents().items():
        target = out / filename
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written
