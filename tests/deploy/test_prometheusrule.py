"""The chart's PrometheusRule (deploy/chart/templates/prometheusrule.yaml): the Prometheus Operator's
form of deploy/prometheus/alerts.yaml. Rendered by the real helm, its groups are alerts.yaml's (the
rules' own `{{ $labels.x }}` templates come through Helm unchanged), and the template is exactly
what `make prometheusrule` writes (tests/deploy/regen_prometheusrule.py), so an edit of either alone
fails. The ServiceMonitor names the scrape job as the rules' scrape alerts select it."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.deploy.regen_prometheusrule import ALERTS, PROMETHEUS_RULE, render
from tests.deploy.test_chart import Mode, of_kind, one
from tests.deploy.test_chart import render as helm_render

MONITORING = Mode(("single", "monitoring"))


def test_the_rendered_prometheusrule_holds_the_groups_of_alerts_yaml() -> None:
    rule = one(helm_render(MONITORING), "PrometheusRule")
    assert (rule["apiVersion"], rule["kind"]) == ("monitoring.coreos.com/v1", "PrometheusRule")
    assert rule["metadata"]["namespace"] == "hypergov" and rule["metadata"]["labels"]["release"] == \
        "kube-prometheus-stack"
    assert set(rule) == {"apiVersion", "kind", "metadata", "spec"} and set(rule["spec"]) == {"groups"}
    assert rule["spec"]["groups"] == yaml.safe_load(ALERTS.read_text())["groups"]
    assert not of_kind(helm_render(Mode(("single",))), "PrometheusRule")  # off unless asked for


def test_the_scrape_job_is_the_one_the_rules_select_whatever_the_release_is_called() -> None:
    """A ServiceMonitor's job label is the value of the Service label its `jobLabel` names (the
    Prometheus Operator's API reference); the rules' scrape alerts select job="hypergov-reconciler"."""
    expected = {m.group(1) for m in re.finditer(r'job="([^"]+)"', ALERTS.read_text())}
    objects = helm_render(Mode(("single", "monitoring"), sets=("fullnameOverride=platform-reconciler",)))
    monitor, service = one(objects, "ServiceMonitor"), one(objects, "Service")
    assert expected == {service["metadata"]["labels"][monitor["spec"]["jobLabel"]]} == {"hypergov-reconciler"}


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
