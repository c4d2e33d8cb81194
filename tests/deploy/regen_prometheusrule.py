"""Rewrite the chart's deploy/chart/templates/prometheusrule.yaml from deploy/prometheus/alerts.yaml:
`python -m tests.deploy.regen_prometheusrule` from the repository root (or `make prometheusrule`).

The Prometheus Operator loads alert rules from a PrometheusRule object whose `spec.groups` is a rule
file's `groups`. The template is alerts.yaml's text indented under `spec:` (its comments kept), so the
two read alike, with every `{{` and `}}` of the rules' own templates (`{{ $labels.job }}`, which
Prometheus expands) escaped for Helm (`{{`{{`}}`), so that Helm renders them back unchanged; `render`
checks that the groups survive the indenting. tests/deploy/test_prometheusrule.py fails when the
committed template is not what this writes, and renders it with the real helm to compare the groups."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
ALERTS = REPO / "deploy" / "prometheus" / "alerts.yaml"
PROMETHEUS_RULE = REPO / "deploy" / "chart" / "templates" / "prometheusrule.yaml"

HEADER = """\
{{- /* Generated from deploy/prometheus/alerts.yaml by `make prometheusrule` (tests/deploy/regen_prometheusrule.py):
edit alerts.yaml and regenerate. */}}
{{- if .Values.prometheusRule.enabled }}
# The Prometheus Operator gives these groups to every Prometheus whose ruleSelector and
# ruleNamespaceSelector match this object (prometheusRule.labels: e.g. kube-prometheus-stack's `release`).
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ include "hypergov.fullname" . }}
  namespace: {{ .Release.Namespace }}
  labels:
    {{- include "hypergov.labels" . | nindent 4 }}
    {{- with .Values.prometheusRule.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
"""
FOOTER = "{{- end }}\n"
_BRACES = re.compile(r"\{\{|\}\}")


def escaped(text: str) -> str:
    """`text` with each `{{` and `}}` written as a Helm raw string, which Helm renders back as is."""
    return _BRACES.sub(lambda found: "{{`" + found.group(0) + "`}}", text)


def render(alerts: str) -> str:
    """The PrometheusRule for a rule file's text: its `groups:` line and everything after it, indented
    under `spec:`. Raises ValueError for a rule file with any other top-level key, anything but
    comments before `groups:`, or its groups in flow style."""
    parsed = yaml.safe_load(alerts)
    if not isinstance(parsed, dict) or set(parsed) != {"groups"}:
        raise ValueError("the rule file must hold exactly one top-level key, `groups`")
    lines = alerts.splitlines()
    if "groups:" not in lines:
        raise ValueError("`groups:` must stand alone on its line, at the start of it")
    start = lines.index("groups:")
    if any(line.strip() and not line.lstrip().startswith("#") for line in lines[:start]):
        raise ValueError("only comments may stand before `groups:`")
    body = "".join(f"  {line}\n" if line else "\n" for line in lines[start:])
    if yaml.safe_load("spec:\n" + body)["spec"]["groups"] != parsed["groups"]:
        raise ValueError("the indented groups do not parse to the rule file's groups")
    return HEADER + escaped(body) + FOOTER


def main() -> None:
    PROMETHEUS_RULE.parent.mkdir(parents=True, exist_ok=True)
    PROMETHEUS_RULE.write_text(render(ALERTS.read_text(encoding="utf-8")), encoding="utf-8")
    print(PROMETHEUS_RULE.relative_to(REPO))


if __name__ == "__main__":
    main()
