"""deploy/kubernetes/base/prometheusrule.yaml: the Prometheus Operator's form of
deploy/prometheus/alerts.yaml. Its groups are alerts.yaml's, and the file is exactly what
`make prometheusrule` writes (tests/deploy/regen_prometheusrule.py), so an edit of either alone fails."""

from __future__ import annotations

import pytest
import yaml

from tests.deploy.regen_prometheusrule import ALERTS, PROMETHEUS_RULE, render


def test_the_prometheusrule_holds_the_groups_of_alerts_yaml() -> None:
    rule = yaml.safe_load(PROMETHEUS_RULE.read_text())
    assert (rule["apiVersion"], rule["kind"]) == ("monitoring.coreos.com/v1", "PrometheusRule")
    assert rule["metadata"] == {"name": "hypergov-reconciler", "namespace": "hypergov",
                                "labels": {"app.kubernetes.io/name": "hypergov-reconciler"}}
    assert set(rule) == {"apiVersion", "kind", "metadata", "spec"} and set(rule["spec"]) == {"groups"}
    assert rule["spec"]["groups"] == yaml.safe_load(ALERTS.read_text())["groups"]


def test_the_prometheusrule_is_what_make_prometheusrule_writes() -> None:
    assert PROMETHEUS_RULE.read_text() == render(ALERTS.read_text()), "run `make prometheusrule`"


@pytest.mark.parametrize(("text", "why"), [
    pytest.param("groups: []\nrule_files: []\n", "exactly one top-level key", id="another-top-level-key"),
    pytest.param("---\ngroups:\n  - name: a\n    rules: []\n", "only comments", id="a-document-marker-first"),
    pytest.param("{groups: []}\n", "must stand alone", id="flow-style"),
])
def test_render_refuses_a_rule_file_it_cannot_indent_faithfully(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        render(text)
