"""deploy/monitoring/hearts-alerts.yaml: well-formed Prometheus rules that name only metrics and
label values the server exports, or the few kube-state-metrics series a rule needs because with no
replica ready the server's own metrics show nothing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import grpc
import prometheus_client
import pytest
import yaml

from hearts.v1 import table_service_pb2
from hearts_server import rpc  # noqa: F401  # registers the server's metrics
from hearts_server.server import WEBHOOK_OUTCOMES

RULES = Path(__file__).parents[2] / "deploy" / "monitoring" / "hearts-alerts.yaml"
SEVERITIES = {"critical", "warning", "info"}
# The kube-state-metrics series a rule may name, each with the labels it may match on, and what.
KUBE_STATE_METRICS = {"kube_deployment_status_replicas_available": {"deployment": "hearts-server"}}
# The samples of a histogram family besides its declared name.
_SUFFIXES = ("_bucket", "_count", "_sum")


def _rules() -> list[dict[str, Any]]:
    document = yaml.safe_load(RULES.read_text())
    return [rule for group in document["groups"] for rule in group["rules"]]


def _families() -> dict[str, str]:
    """The server's metric families and their types, as its /metrics endpoint declares them."""
    text = prometheus_client.generate_latest().decode()
    return dict(re.findall(r"^# TYPE (hearts_\w+) (\w+)$", text, re.MULTILINE))


def test_every_rule_is_a_complete_alert() -> None:
    rules = _rules()
    assert rules
    names = [rule["alert"] for rule in rules]
    assert len(set(names)) == len(names)
    for rule in rules:
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule["alert"]
        assert rule["labels"]["severity"] in SEVERITIES, rule["alert"]
        assert rule["annotations"]["summary"]
        assert rule["annotations"]["description"]
        if "for" in rule:
            assert re.fullmatch(r"\d+[smh]", rule["for"]), rule["alert"]


@pytest.mark.parametrize("rule", _rules(), ids=lambda rule: rule["alert"])
def test_a_rule_names_only_what_the_server_exports(rule: dict[str, Any]) -> None:
    families = _families()
    expr = rule["expr"]
    names = set(re.findall(r"\bhearts_\w+", expr))
    kube = set(re.findall(r"\bkube_\w+", expr))
    assert kube <= set(KUBE_STATE_METRICS), kube - set(KUBE_STATE_METRICS)
    assert names or kube, "an alert on nothing of the server's"
    for name in names:
        kind = families.get(name)
        if kind is None:  # a histogram's samples: <family>_bucket, _count, _sum
            family = next((name.removesuffix(s) for s in _SUFFIXES if name.endswith(s)), name)
            assert families.get(family) == "histogram", f"{name}: no such metric"
        elif kind == "counter":
            assert re.search(rf"(rate|increase)\({name}\b", expr), f"{name}: a raw counter"
        else:
            assert kind == "gauge", f"{name}: a {kind}"
    methods = {
        method.name
        for method in table_service_pb2.DESCRIPTOR.services_by_name["TableService"].methods
    }
    for label, values in re.findall(r'(\w+)=~?"([^"]*)"', expr):
        for value in values.split("|"):
            if label == "code":
                assert value in grpc.StatusCode.__members__, value
            elif label == "method":
                assert value in methods, value
            elif label == "outcome":
                assert value in WEBHOOK_OUTCOMES, value
            elif label == "reason":
                assert value in ("OVERLOADED", "TOO_MANY_STREAMS"), value
            elif any(label in KUBE_STATE_METRICS[series] for series in kube):
                assert any(KUBE_STATE_METRICS[s].get(label) == value for s in kube), value
            else:
                raise AssertionError(f"a label the server does not set: {label}")
