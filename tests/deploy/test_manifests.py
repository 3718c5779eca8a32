"""The Kubernetes manifests agree with the server they deploy.

No cluster runs here, so these tests check what can drift silently: every HEARTS_* variable is a
real setting, probes ask the health service the server registers, ports and selectors line up,
and the pod's grace period outlasts the server's own drain.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
import yaml

from hearts_server.config import Settings
from hearts_server.server import SERVICE_NAME

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _manifest_files() -> list[Path]:
    return sorted(
        path for path in (DEPLOY / "kubernetes").glob("*.yaml") if path.name != "kustomization.yaml"
    )


def _documents() -> list[dict[str, Any]]:
    docs = []
    for path in _manifest_files():
        docs.extend(doc for doc in yaml.safe_load_all(path.read_text()) if doc)
    return docs


def _one(kind: str, name: str) -> dict[str, Any]:
    (found,) = [d for d in _documents() if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def _server_container() -> dict[str, Any]:
    (container,) = _one("Deployment", "hearts-server")["spec"]["template"]["spec"]["containers"]
    return container


def test_every_manifest_names_its_kind_and_resource() -> None:
    docs = _documents()
    assert len(docs) >= 7
    for doc in docs:
        assert doc["apiVersion"]
        assert doc["kind"]
        assert doc["metadata"]["name"]


def test_kustomization_lists_every_manifest() -> None:
    kustomization = yaml.safe_load((DEPLOY / "kubernetes" / "kustomization.yaml").read_text())
    assert sorted(kustomization["resources"]) == [path.name for path in _manifest_files()]


def test_every_server_variable_is_a_real_setting() -> None:
    settings = {f"HEARTS_{field.name.upper()}" for field in dataclasses.fields(Settings)}
    names = {env["name"] for env in _server_container()["env"]}
    assert names <= settings, names - settings


def test_probes_ask_the_health_service_the_server_registers() -> None:
    container = _server_container()
    assert container["readinessProbe"]["grpc"]["service"] == SERVICE_NAME
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert container["readinessProbe"]["grpc"]["port"] == ports["grpc"] == Settings().port
    assert ports["metrics"] == Settings().metrics_port


def test_the_pod_grace_period_outlasts_the_servers_drain() -> None:
    deployment = _one("Deployment", "hearts-server")
    env = {item["name"]: item.get("value") for item in _server_container()["env"]}
    grace = float(env["HEARTS_GRACE_SECONDS"])
    assert deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > grace


@pytest.mark.parametrize("name", ["hearts-server", "hearts-redis"])
def test_services_select_their_pods(name: str) -> None:
    service = _one("Service", name)
    workload = next(
        d
        for d in _documents()
        if d["kind"] in ("Deployment", "StatefulSet") and d["metadata"]["name"] == name
    )
    labels = workload["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()


def test_the_server_reaches_redis_through_its_service() -> None:
    env = {item["name"]: item.get("value") for item in _server_container()["env"]}
    redis_port = _one("Service", "hearts-redis")["spec"]["ports"][0]["port"]
    assert env["HEARTS_REDIS_URL"] == f"redis://hearts-redis:{redis_port}/0"


def test_replicas_share_one_token_secret() -> None:
    (secret_env,) = [e for e in _server_container()["env"] if e["name"] == "HEARTS_TOKEN_SECRET"]
    ref = secret_env["valueFrom"]["secretKeyRef"]
    secret = _one("Secret", ref["name"])
    assert ref["key"] in secret["stringData"]
