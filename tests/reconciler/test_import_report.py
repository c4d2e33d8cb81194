"""`reconciler.import_report`: the import report as text, Markdown and JSON, and the exit status."""

from __future__ import annotations

import json

from engines.importing.report import ImportItem, ImportReport
from reconciler.import_report import import_exit, import_json, import_markdown, import_text

REPORT = ImportReport(written=("org.yaml", "projects/vision.yaml"), items=(
    ImportItem(kind="renamed", object="ComputeQuota gpu-west/speech (arn:q)",
               why="hypergov names it speech-on-gpu-west", live={"Name": "speech-quota"}, file="projects/speech.yaml"),
    ImportItem(kind="outside-personas", object="EKS access entry arn:aws:iam::1:user/bob on gpu-west",
               why="on team vision: access policies AmazonEKSEditPolicy (namespace: hyperpod-ns-vision)"),
))


def test_text_groups_the_items_by_kind_in_a_fixed_order() -> None:
    assert import_text(REPORT, out="imported") == [
        "wrote 2 file(s) to imported: org.yaml, projects/vision.yaml",
        "2 item(s) the tree does not say as the live org does:",
        "Access outside the personas (outside-personas):",
        "  EKS access entry arn:aws:iam::1:user/bob on gpu-west: on team vision: access policies "
        "AmazonEKSEditPolicy (namespace: hyperpod-ns-vision)",
        "Objects hypergov names otherwise (renamed):",
        "  ComputeQuota gpu-west/speech (arn:q) [projects/speech.yaml]: hypergov names it speech-on-gpu-west",
        '    live: {"Name": "speech-quota"}',
    ]


def test_markdown_has_a_table_per_kind() -> None:
    text = import_markdown(REPORT, out="imported")
    assert text.startswith("## hypergov import: 2 file(s) written to `imported`")
    assert text.count("| object | file | why | live |") == 2
    assert "### Objects hypergov names otherwise" in text and "### Access outside the personas" in text


def test_json_and_exit() -> None:
    found = json.loads(json.dumps(import_json(REPORT)))
    assert found["clean"] is False and found["written"] == ["org.yaml", "projects/vision.yaml"]
    assert [i["kind"] for i in found["items"]] == ["renamed", "outside-personas"]
    assert found["items"][0] == {"kind": "renamed", "object": "ComputeQuota gpu-west/speech (arn:q)",
                                 "why": "hypergov names it speech-on-gpu-west", "file": "projects/speech.yaml",
                                 "live": {"Name": "speech-quota"}}
    assert (import_exit(REPORT), import_exit(ImportReport())) == (2, 0)
    assert import_text(ImportReport(), out="x")[-1] == "nothing to report: the tree says everything the live org runs"
