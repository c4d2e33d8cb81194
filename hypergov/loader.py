"""Load a config tree into a `GovernanceTree`, turning every syntax and schema mistake into a
located `Problem`.

The tree is given as a mapping of tree-relative paths to bytes, or to a `NotAFile` marker for an
entry that is not a regular file (`read_tree_dir` builds it from a directory, the reconciler from
a git commit), so loading itself does no I/O.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from types import UnionType
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from hypergov.model.cluster import Cluster
from hypergov.model.org import Organization
from hypergov.model.project import Project
from hypergov.model.tree import GovernanceTree, Sourced
from hypergov.model.workload import WorkloadClass
from hypergov.problems import Problem, RuleId, SourcePos
from hypergov.source import Document, Path, parse_document, show
from hypergov.tree_files import ROOT, NotAFile, TreeFiles, case_collisions, entry_problem, is_hidden

M = TypeVar("M", bound=BaseModel)

ORG_FILE = "org.yaml"
IGNORED_SUFFIXES = (".md", ".txt", ".json")


@dataclass(frozen=True)
class FileLoad:
    """What one object file gave: its validated object (None when unusable) and its problems."""

    obj: Sourced[Any] | None
    problems: tuple[Problem, ...]


class LoadedFiles:
    """The loads of the files of one tree, to reuse for a file with the same path, display name
    and bytes in another: a merge request's base and head share all but a few files, and parsing
    and schema-checking them is most of a load (~0.3 s of a 1,000-project tree). Sharing is
    safe: documents are not changed once parsed and the models are frozen."""

    def __init__(self) -> None:
        self._by_file: dict[tuple[str, str], tuple[bytes, FileLoad]] = {}

    def get(self, rel: str, shown: str, data: bytes) -> FileLoad | None:
        found = self._by_file.get((rel, shown))
        return found[1] if found is not None and found[0] == data else None

    def put(self, rel: str, shown: str, data: bytes, load: FileLoad) -> None:
        self._by_file[(rel, shown)] = (data, load)


_MODELS: dict[str, type[BaseModel]] = {"org": Organization, "cluster": Cluster, "project": Project,
                                       "workload": WorkloadClass}


def load_tree(files: TreeFiles, *, display_root: str = "config",
              reuse: LoadedFiles | None = None) -> tuple[GovernanceTree, list[Problem]]:
    """Parse and schema-check every object file of the tree; with `reuse`, files loaded there
    before are not loaded again, and the files loaded now are added to it."""
    tree = GovernanceTree()
    problems: list[Problem] = []

    def display(rel: str) -> str:
        return f"{display_root.rstrip('/')}/{rel}" if display_root else rel

    root = files.get(ROOT)
    if isinstance(root, NotAFile):  # the tree's directory itself is a link: nothing was read
        return tree, [entry_problem(ROOT, root, display_root or ".")]
    problems.extend(case_collisions([rel for rel in files if not is_hidden(rel)], display))
    if ORG_FILE not in files:
        problems.append(Problem(SourcePos(display(ORG_FILE)), RuleId("SYN007"),
                                "the organization file is missing",
                                f"create {display(ORG_FILE)}; every tree starts with the org layer "
                                "(see config/org.yaml in the hypergov repository)"))
    for rel in sorted(files):
        kind, name = classify(rel)
        shown = display(rel)
        tree.files[rel] = shown
        data = files[rel]
        if isinstance(data, NotAFile):
            problems.extend(_not_a_file(tree, rel, data, shown))
            continue
        if kind == "ignored":
            continue
        if kind == "unexpected":
            problems.append(Problem(SourcePos(shown), RuleId("SYN008"),
                                    f"unexpected file '{rel}' in the config tree",
                                    "objects live in org.yaml, clusters/<name>.yaml, projects/<team>.yaml "
                                    "and workloads/<team>/<class>.yaml (extension .yaml); move or delete it"))
            continue
        if kind == "cluster":
            tree.cluster_files.add(name)
        elif kind == "project":
            tree.project_files.add(name)
        loaded = reuse.get(rel, shown, data) if reuse is not None else None
        if loaded is None:
            loaded = _load_file(kind, name, data, shown)
            if reuse is not None:
                reuse.put(rel, shown, data, loaded)
        problems.extend(loaded.problems)
        if loaded.obj is None:
            continue
        if kind == "org":
            tree.org = loaded.obj
        elif kind == "cluster":
            tree.clusters[name] = loaded.obj
        elif kind == "project":
            tree.projects[name] = loaded.obj
        else:
            team, cls = name.split("/", 1)
            tree.workloads[(team, cls)] = loaded.obj
    return tree, problems


def _load_file(kind: str, name: str, data: bytes, shown: str) -> FileLoad:
    doc, problems = parse_document(data, shown)
    if doc.data is None:
        return FileLoad(None, tuple(problems))
    obj = _validate(_MODELS[kind], name, doc, problems)
    return FileLoad(obj, tuple(problems))


def _not_a_file(tree: GovernanceTree, rel: str, entry: NotAFile, shown: str) -> list[Problem]:
    """SYN009, unless hidden. The object's name is still known, as for a file that fails the
    schema, so references to it are not also reported as unknown."""
    if is_hidden(rel):
        return []
    kind, name = classify(rel)
    if kind == "cluster":
        tree.cluster_files.add(name)
    elif kind == "project":
        tree.project_files.add(name)
    return [entry_problem(rel, entry, shown)]


def classify(rel: str) -> tuple[str, str]:
    """What a tree-relative path holds: ('org'|'cluster'|'project'|'workload'|'ignored'|'unexpected', name)."""
    parts = rel.split("/")
    if rel.endswith(IGNORED_SUFFIXES) or any(p.startswith(".") for p in parts):
        return "ignored", ""
    if rel == ORG_FILE:
        return "org", "org"
    if not rel.endswith(".yaml"):
        return "unexpected", ""
    stem = parts[-1][: -len(".yaml")]
    if len(parts) == 2 and parts[0] == "clusters":
        return "cluster", stem
    if len(parts) == 2 and parts[0] == "projects":
        return "project", stem
    if len(parts) == 3 and parts[0] == "workloads":
        return "workload", f"{parts[1]}/{stem}"
    return "unexpected", ""


def _validate(model: type[M], name: str, doc: Document, problems: list[Problem]) -> Sourced[M] | None:
    try:
        return Sourced(name=name, model=model.model_validate(doc.data), doc=doc)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        problems.extend(schema_problem(model, doc, err) for err in errors if not _is_echo(err, errors, doc))
        return None


def _is_echo(err: Any, errors: list[Any], doc: Document) -> bool:
    """A mapping whose only (invalid) key was dropped is then also "too short" (or, a quota whose
    only instance type was dropped, empty): say it once."""
    if err["type"] != "too_short":
        return False
    loc = tuple(err["loc"])
    if any(dropped[: len(loc)] == loc for dropped in doc.dropped):
        return True
    return any(len(o["loc"]) > len(loc) and tuple(o["loc"][: len(loc)]) == loc for o in errors)


# --- pydantic error -> Problem -------------------------------------------------------------------

_TYPE_NAMES = {
    "string_type": "a string", "int_type": "an integer", "bool_type": "true or false",
    "list_type": "a list", "dict_type": "a mapping", "model_type": "a mapping",
    "model_attributes_type": "a mapping", "float_type": "a number", "decimal_type": "a number",
    "int_from_float": "an integer",
    "none_required": "null",
}


def format_path(path: Path) -> str:
    """`quotas.gpu-west.instances["ml.p5.48xlarge"]`: dotted keys stay readable."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif "." in part or " " in part or not part:
            out += f'["{part}"]'
        else:
            out += f".{part}" if out else part
    return out or "(top level)"


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"number {value}"
    if isinstance(value, str):
        return f"string '{show(value, 60)}'"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _data_path(loc: tuple[Any, ...]) -> tuple[Path, bool]:
    """pydantic's location -> our document path; `True` when the error is about a mapping key."""
    path: list[str | int] = []
    is_key = False
    for part in loc:
        if part == "[key]":
            is_key = True
            continue
        if isinstance(part, str) and part.startswith(("function-", "literal[", "nullable[")):
            continue
        path.append(part)
    return tuple(path), is_key


def _strip(annotation: Any) -> tuple[Any, str]:
    """Unwrap Annotated[...] and `X | None`, keeping the description carried in the metadata."""
    description = ""
    while True:
        if get_origin(annotation) is Annotated:
            base, *metadata = get_args(annotation)
            for meta in metadata:
                description = description or str(getattr(meta, "description", None) or "")
            annotation = base
            continue
        if get_origin(annotation) in (Union, UnionType):
            args = [a for a in get_args(annotation) if a is not type(None)]
            if len(args) == 1:
                annotation = args[0]
                continue
        return annotation, description


def _target(model: type[BaseModel], path: Path) -> tuple[Any, str]:
    """The type (and its description) that `path` points at inside `model`; (None, "") if unknown."""
    annotation: Any = model
    description = ""
    for part in path:
        annotation, meta_description = _strip(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            info = annotation.model_fields.get(part) if isinstance(part, str) else None
            if info is None:
                return None, ""
            annotation, description = info.annotation, info.description or ""
        elif get_origin(annotation) is dict:
            annotation, description = get_args(annotation)[1], ""
        elif get_origin(annotation) is list:
            annotation, description = get_args(annotation)[0], ""
        else:
            return None, ""
    annotation, meta_description = _strip(annotation)
    return annotation, description or meta_description


def _field_names_at(model: type[BaseModel], path: Path) -> list[str]:
    target, _ = _target(model, path)
    return list(target.model_fields) if isinstance(target, type) and issubclass(target, BaseModel) else []


def _is_platform_admin_key(key: object) -> bool:
    return isinstance(key, str) and "platformadmin" in key.replace("_", "").replace("-", "").lower()


def schema_problem(model: type[BaseModel], doc: Document, err: Any) -> Problem:
    path, is_key = _data_path(tuple(err["loc"]))
    kind: str = err["type"]
    value = err.get("input")
    where = format_path(path)
    if kind == "extra_forbidden":
        key = path[-1] if path else "?"
        pos = doc.pos(path, key=True)
        if _is_platform_admin_key(key) and model is not Organization:
            return Problem(pos, RuleId("IDN006"), f"'{key}': platform administrators exist only at the org layer",
                           "list platform administrators under platform_admins in org.yaml")
        known = _field_names_at(model, path[:-1])
        close = difflib.get_close_matches(str(key), known, n=1)
        hint = f"did you mean '{close[0]}'?" if close else (
            f"allowed keys here: {', '.join(known)}" if known else "remove this key")
        return Problem(pos, RuleId("SCH001"), f"unknown key '{show(str(key))}'", hint)
    if kind == "missing":
        field = path[-1] if path else "?"
        parent = path[:-1]
        return Problem(doc.pos(parent, key=bool(parent)), RuleId("SCH003"),
                       f"missing required key '{field}'" + (f" in '{'.'.join(map(str, parent))}'" if parent else ""),
                       f"add '{field}:' here (see the JSON Schema in schema/ or config/ for an example)")
    pos = doc.pos(path, key=is_key)
    if kind in _TYPE_NAMES or kind.endswith("_type"):
        expected = _TYPE_NAMES.get(kind, kind.removesuffix("_type"))
        written = doc.raw.get(path)
        hint = f"quote the value to make it a string: \"{show(written)}\"" if kind == "string_type" and written \
            else f"write {expected} here"
        return Problem(pos, RuleId("SCH002"), f"'{where}' must be {expected}, not {_describe(value)}", hint)
    if kind == "literal_error":
        expected_text: str = err.get("ctx", {}).get("expected", "")
        options = [o.strip().strip("'") for o in expected_text.replace(" or ", ", ").split(",") if o.strip()]
        close = difflib.get_close_matches(str(value), options, n=3)
        allowed = ", ".join(options) if len(options) <= 8 else f"{len(options)} allowed values"
        hint = f"did you mean {' or '.join(repr(c) for c in close)}?" if close else f"use one of: {allowed}"
        target = "key" if is_key else "value"
        return Problem(pos, RuleId("SCH004"), f"'{where}': {_describe(value)} is not an allowed {target}", hint)
    description = _field_description(model, path)
    message = f"'{where}': {err['msg'][0].lower()}{err['msg'][1:]}"
    if kind == "string_pattern_mismatch":
        message = f"'{where}': {_describe(value)} is not valid"
    bound = _bound_hint(kind, err.get("ctx") or {})
    parts = (f"expected {description}" if description else "", f"use {bound}" if bound else "")
    hint = "; ".join(h for h in parts if h)
    return Problem(pos, RuleId("SCH004"), _short(message, 200), hint or "fix the value")


def _field_description(model: type[BaseModel], path: Path) -> str:
    return _target(model, path)[1]


_BOUNDS = {"greater_than_equal": ("ge", "at least {}"), "less_than_equal": ("le", "at most {}"),
           "greater_than": ("gt", "more than {}"), "less_than": ("lt", "less than {}"),
           "too_long": ("max_length", "at most {} items"), "too_short": ("min_length", "at least {} item(s)"),
           "string_too_long": ("max_length", "at most {} characters"),
           "string_too_short": ("min_length", "at least {} character(s)")}


def _bound_hint(kind: str, ctx: Mapping[str, Any]) -> str:
    if kind not in _BOUNDS:
        return ""
    key, text = _BOUNDS[kind]
    return text.format(ctx[key]) if key in ctx else ""
