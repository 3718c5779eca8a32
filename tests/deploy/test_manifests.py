"""The Kubernetes manifests agree with the server they deploy.

No cluster runs here, so these tests check what can drift silently: every HEARTS_* variable is a
real setting, probes ask the health service the server registers, ports and selectors line up,
the pod leaves the Service before the server stops listening and its grace period outlasts the
drain, the autoscaler alone sets the replica count, Redis refuses writes before it is killed,
and the token secret comes from a file that git ignores (rendered with kustomize where kubectl
is installed). For the web gateway: every HEARTS_GATEWAY_* variable is one of its flags, its
probes use its own endpoints, it reaches every server replica through the headless Service, its
grace period outlasts its drain, and its image listens where the manifests expect.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from hearts_server.config import Settings
from hearts_server.server import SERVICE_NAME

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
GATEWAY = DEPLOY / "gateway"
# The gateway's own time limit for one backend health check (healthTimeout in gateway.go).
GATEWAY_HEALTH_CHECK_SECONDS = 2


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


def _gateway_container() -> dict[str, Any]:
    (container,) = _one("Deployment", "hearts-gateway")["spec"]["template"]["spec"]["containers"]
    return container


def _env(container: dict[str, Any]) -> dict[str, str | None]:
    return {item["name"]: item.get("value") for item in container["env"]}


def test_every_manifest_names_its_kind_and_resource() -> None:
    docs = _documents()
    assert len(docs) >= 6
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


def test_the_pod_leaves_the_service_before_it_stops_listening() -> None:
    # The server closes its port at SIGTERM; the preStop wait comes first, while the endpoint
    # is removed, and the pod's grace period covers that wait and the server's own drain.
    deployment = _one("Deployment", "hearts-server")
    env = {item["name"]: item.get("value") for item in _server_container()["env"]}
    command = _server_container()["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep"
    wait = float(command[1])
    assert wait >= 5
    grace = float(env["HEARTS_GRACE_SECONDS"])
    assert deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > wait + grace


def test_the_autoscaler_alone_sets_the_replica_count() -> None:
    # A replicas field would reset the autoscaler's count on every `kubectl apply`.
    deployment = _one("Deployment", "hearts-server")
    assert "replicas" not in deployment["spec"]
    autoscaler = _one("HorizontalPodAutoscaler", "hearts-server")
    assert autoscaler["spec"]["scaleTargetRef"]["name"] == "hearts-server"
    assert autoscaler["spec"]["minReplicas"] >= 2


def test_redis_refuses_writes_at_a_memory_limit_below_its_containers() -> None:
    (container,) = _one("StatefulSet", "hearts-redis")["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    policy = args[args.index("--maxmemory-policy") + 1]
    maxmemory = args[args.index("--maxmemory") + 1]
    assert policy == "noeviction"
    assert maxmemory.endswith("mb")
    limit = container["resources"]["limits"]["memory"]
    assert limit.endswith("Gi")
    # At most half: an AOF rewrite forks Redis, and copy-on-write can double its memory.
    assert "--appendonly" in args
    assert int(maxmemory[:-2]) * 2**20 <= int(limit[:-2]) * 2**30 // 2


@pytest.mark.parametrize("name", ["hearts-server", "hearts-redis", "hearts-gateway"])
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


def test_every_gateway_variable_is_one_of_its_flags() -> None:
    # main.go names each flag's variable in its settings table, as a string literal.
    flags = set(re.findall(r'"(HEARTS_GATEWAY_[A-Z_]+)"', (GATEWAY / "main.go").read_text()))
    names = set(_env(_gateway_container()))
    assert flags
    assert names <= flags, names - flags


def test_gateway_probes_use_its_health_endpoints() -> None:
    container = _gateway_container()
    (port,) = container["ports"]
    readiness = container["readinessProbe"]
    liveness = container["livenessProbe"]
    # Ready: the backend is SERVING; alive: the process answers (a backend outage restarts nothing).
    assert readiness["httpGet"] == {"path": "/healthz", "port": port["name"]}
    assert liveness["httpGet"] == {"path": "/livez", "port": port["name"]}
    # Kubernetes' default probe timeout (1 s) is shorter than the gateway's own backend check.
    assert readiness["timeoutSeconds"] > GATEWAY_HEALTH_CHECK_SECONDS


def test_gateway_reaches_every_server_replica() -> None:
    # A dns:/// target of a headless Service: the gateway's gRPC client balances calls over
    # every ready server pod, instead of one connection through the ClusterIP.
    env = _env(_gateway_container())
    headless = _one("Service", "hearts-server-pods")
    assert headless["spec"]["clusterIP"] == "None"
    (port,) = headless["spec"]["ports"]
    assert env["HEARTS_GATEWAY_BACKEND"] == f"dns:///hearts-server-pods:{port['port']}"
    server_ports = {p["name"]: p["containerPort"] for p in _server_container()["ports"]}
    assert port["port"] == server_ports[port["targetPort"]] == Settings().port
    labels = _one("Deployment", "hearts-server")["spec"]["template"]["metadata"]["labels"]
    assert headless["spec"]["selector"].items() <= labels.items()


def test_the_gateway_drains_within_its_grace_period() -> None:
    # No shell in the image, so no preStop sleep: the gateway waits itself, /healthz failing,
    # then ends streams and gives unary calls their grace; the pod's grace period covers both.
    deployment = _one("Deployment", "hearts-gateway")
    container = _gateway_container()
    env = _env(container)
    assert "lifecycle" not in container
    delay = float(env["HEARTS_GATEWAY_SHUTDOWN_DELAY_SECONDS"] or 0)
    grace = float(env["HEARTS_GATEWAY_GRACE_SECONDS"] or 0)
    assert delay >= 5
    assert deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] > delay + grace
    assert deployment["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0


def test_the_gateway_image_listens_where_the_manifests_expect() -> None:
    dockerfile = (GATEWAY / "Dockerfile").read_text()
    (listen,) = re.findall(r"HEARTS_GATEWAY_LISTEN=(\S+)", dockerfile)
    host, _, port = listen.rpartition(":")
    assert host == "0.0.0.0"
    (container_port,) = _gateway_container()["ports"]
    assert container_port["containerPort"] == int(port)
    (service_port,) = _one("Service", "hearts-gateway")["spec"]["ports"]
    assert service_port["targetPort"] == container_port["name"]
    assert re.search(r"^USER \d+$", dockerfile, re.MULTILINE)  # numeric: runAsNonRoot can check it
    assert _gateway_container()["securityContext"]["runAsNonRoot"] is True


def test_kustomization_sets_every_image() -> None:
    kustomization = yaml.safe_load((DEPLOY / "kubernetes" / "kustomization.yaml").read_text())
    images = {image["name"] for image in kustomization["images"]}
    used = {
        container["image"]
        for doc in _documents()
        if doc["kind"] in ("Deployment", "StatefulSet")
        for container in doc["spec"]["template"]["spec"]["containers"]
        if ":" not in container["image"]  # pinned third-party images (redis:7.4) stay as they are
    }
    assert used == images == {"hearts-server", "hearts-gateway"}


def test_the_token_secret_is_never_committed() -> None:
    # The Secret comes from a file the operator writes; git ignores it, so no placeholder key
    # that everyone can read is ever deployed.
    kustomization = yaml.safe_load((DEPLOY / "kubernetes" / "kustomization.yaml").read_text())
    (generator,) = kustomization["secretGenerator"]
    (secret_env,) = [e for e in _server_container()["env"] if e["name"] == "HEARTS_TOKEN_SECRET"]
    ref = secret_env["valueFrom"]["secretKeyRef"]
    assert generator["name"] == ref["name"]
    assert generator["files"] == [ref["key"]]
    assert not [d for d in _documents() if d["kind"] == "Secret"]
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", str(DEPLOY / "kubernetes" / ref["key"])],
        cwd=DEPLOY,
        check=False,
    )
    assert ignored.returncode == 0


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl (kustomize)")
def test_kustomize_renders_every_replica_onto_the_generated_secret(tmp_path: Path) -> None:
    folder = tmp_path / "kubernetes"
    shutil.copytree(DEPLOY / "kubernetes", folder)
    (folder / "token-secret").unlink(missing_ok=True)
    render = ["kubectl", "kustomize", str(folder)]
    missing = subprocess.run(render, capture_output=True, text=True, check=False)
    assert missing.returncode != 0  # no secret file: nothing to apply
    assert "token-secret" in missing.stderr
    (folder / "token-secret").write_text("a-test-secret-of-32-characters!!")
    rendered = subprocess.run(render, capture_output=True, text=True, check=True).stdout
    docs = [doc for doc in yaml.safe_load_all(rendered) if doc]
    (secret,) = [d for d in docs if d["kind"] == "Secret"]
    (deployment,) = [
        d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "hearts-server"
    ]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    (secret_env,) = [e for e in container["env"] if e["name"] == "HEARTS_TOKEN_SECRET"]
    # The generated name carries a hash of the content; the reference follows it.
    assert secret_env["valueFrom"]["secretKeyRef"]["name"] == secret["metadata"]["name"]
    assert secret["metadata"]["name"].startswith("hearts-server-")
    assert set(secret["data"]) == {"token-secret"}
