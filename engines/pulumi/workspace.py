"""The pulumi engine's workspace: the program and exactly the tree the engine was given.

The program (`__main__.py`, shipped in this package as `program/`) declares from a config
directory (`hypergov:configDir`). So the engine writes the tree it was given, object by object,
into the workspace's `tree/`: each object's document as it was validated, with the live ARN of
each managed cluster that names none (`with_cluster_arns`: a cluster the cluster phase created is
imported, never created again). Files rather than a new JSON format because the program then
loads and validates this tree exactly as `pulumi up` on a checkout does (one loader, one set of
rules), whatever commit, `--config` or bare clone the tree came from. The directory is named
after its content: the same tree reuses it, another tree never sees it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from engines.settings import Settings
from hypergov import naming
from hypergov.loader import classify
from hypergov.model.tree import GovernanceTree
from stacks.spec import StackSpec, plan_stacks

PROGRAM_DIR = Path(__file__).resolve().parent / "program"  # Pulumi.yaml and __main__.py (package data)
TREE_DIR = "tree"


def tree_files(tree: GovernanceTree) -> dict[str, bytes]:
    """The tree's object files (tree-relative path -> YAML) as the program reads them (pure)."""
    objects: dict[str, Any] = {"org.yaml": tree.org}
    objects |= {f"clusters/{name}.yaml": s for name, s in tree.clusters.items()}
    objects |= {f"projects/{name}.yaml": s for name, s in tree.projects.items()}
    objects |= {f"workloads/{team}/{name}.yaml": s for (team, name), s in tree.workloads.items()}
    files: dict[str, bytes] = {}
    for rel, sourced in sorted(objects.items()):
        if sourced is None or classify(rel)[0] in ("ignored", "unexpected"):
            continue
        data = copy.deepcopy(sourced.doc.data)
        if rel.startswith("clusters/") and sourced.model.hyperpod.arn is not None:
            data.setdefault("hyperpod", {})["arn"] = str(sourced.model.hyperpod.arn)  # the live ARN
        files[rel] = yaml.safe_dump(data, sort_keys=False, allow_unicode=True).encode()
    return files


@dataclass(frozen=True)
class ProgramInput:
    """What one run of the program is given: its working directory (Pulumi.yaml, __main__.py and
    the tree) and each stack's config (`hypergov:*`, strings as Pulumi's config holds them)."""

    work_dir: Path
    config_dir: Path
    configs: dict[str, dict[str, str]]  # stack -> hypergov:* config


def stack_config(spec: StackSpec, *, config_dir: Path, settings: Settings) -> dict[str, str]:
    """A stack's config as the engine sets it (pure): the tree written for this run, the
    configured kubeconfig of each cluster (`kubeconfigs`), and the account access role the
    terraform engine assumes too."""
    return {"hypergov:kind": spec.kind, "hypergov:name": spec.subject, "hypergov:configDir": str(config_dir),
            "hypergov:dependsOn": json.dumps(list(spec.depends_on)),
            "hypergov:kubeconfigs": json.dumps({c: str(p) for c, p in sorted(settings.kubeconfigs.items())}),
            "hypergov:assumeRoleName": settings.aws.account_access_role or naming.ACCOUNT_ACCESS_ROLE}


def project_file(python_prefix: str = sys.prefix) -> dict[str, Any]:
    """The workspace's Pulumi.yaml: the shipped one, its Python runtime the interpreter running
    hypergov (so the program imports this very hypergov, installed or checked out)."""
    project: dict[str, Any] = yaml.safe_load((PROGRAM_DIR / "Pulumi.yaml").read_text(encoding="utf-8"))
    project["runtime"] = {"name": "python", "options": {"virtualenv": python_prefix}}
    return project


def build_workspace(tree: GovernanceTree, settings: Settings, root: Path) -> ProgramInput:
    """Write the program and `tree` under `root/<content digest>/`; the input of every stack."""
    files = tree_files(tree)
    digest = hashlib.sha256(json.dumps({k: v.decode() for k, v in files.items()}, sort_keys=True).encode())
    work_dir = (root / digest.hexdigest()[:16]).resolve()
    config_dir = work_dir / TREE_DIR
    for rel, body in files.items():
        path = config_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    shutil.copyfile(PROGRAM_DIR / "__main__.py", work_dir / "__main__.py")
    (work_dir / "Pulumi.yaml").write_text(yaml.safe_dump(project_file(), sort_keys=False), encoding="utf-8")
    configs = {str(spec.name): stack_config(spec, config_dir=config_dir, settings=settings)
               for spec in plan_stacks(tree)}
    return ProgramInput(work_dir=work_dir, config_dir=config_dir, configs=configs)
