"""The Kubernetes manifests agree with the server they deploy.

No cluster runs here, so these tests check what can drift silently: every HEARTS_* variable is a
real setting, probes ask the health service the server registers, ports and selectors line up,
the pod leaves the Service before the server stops listening and its grace period outlasts the
drain, the autoscaler alone sets the replica count and the disruption budget never blocks a
drain, Redis refuses writes before it is killed, and every secret comes from a file that git
ignores (rendered with kustomize where kubectl is installed). Redis: it asks for a password that
the server's URL carries, from the same Secret key, its probes authenticate and read the answer
(run against a local redis-server where one is installed), only the server's pods may connect,
and its StatefulSet's Service is headless. Every container meets the "restricted" Pod Security
Standard, and the server's image brings the bytecode its read-only root filesystem cannot cache.
For the web gateway: every HEARTS_GATEWAY_* variable is one of its flags, its probes use its own
endpoints, it reaches every server replica through the headless Service, its grace period
outlasts its drain, and its image listens where the manifests expect.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml
from redis.asyncio.connection import parse_url as parse_redis_url

from hearts_server.config import Settings
from hearts_server.server import SERVICE_NAME
from tests.conftest import free_port

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
GATEWAY = DEPLOY / "gateway"
DOCS = DEPLOY.parent / "docs" / "deploy.md"
KUSTOMIZATION = DEPLOY / "kubernetes" / "kustomization.yaml"
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


def _redis_container() -> dict[str, Any]:
    (container,) = _one("StatefulSet", "hearts-redis")["spec"]["template"]["spec"]["containers"]
    return container


def _workloads() -> list[dict[str, Any]]:
    return [d for d in _documents() if d["kind"] in ("Deployment", "StatefulSet")]


def _env(container: dict[str, Any]) -> dict[str, str | None]:
    return {item["name"]: item.get("value") for item in container["env"]}


def _secret_ref(container: dict[str, Any], name: str) -> dict[str, Any]:
    (item,) = [e for e in container["env"] if e["name"] == name]
    ref: dict[str, Any] = item["valueFrom"]["secretKeyRef"]
    return ref


def _expanded(value: str) -> list[str]:
    """The variables that the kubelet expands in ``value``: each $(NAME)."""
    return re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", value)


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
    env = _server_container()["env"]
    names = {item["name"] for item in env if item["name"].startswith("HEARTS_")}
    assert names <= settings, names - settings
    # Any other variable is there only to be expanded into a setting, which the kubelet does
    # only with variables defined before it.
    order = [item["name"] for item in env]
    for name in set(order) - names:
        users = [item["name"] for item in env if name in _expanded(item.get("value", ""))]
        assert users, f"{name}: neither a setting nor expanded into one"
        assert all(order.index(name) < order.index(user) for user in users), name


def test_probes_ask_the_health_service_the_server_registers() -> None:
    container = _server_container()
    assert container["readinessProbe"]["grpc"]["service"] == SERVICE_NAME
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert container["readinessProbe"]["grpc"]["port"] == ports["grpc"] == Settings().port
    assert ports["metrics"] == Settings().metrics_port


def test_metrics_are_scraped_from_the_pods_and_not_served_to_clients() -> None:
    # The client-facing Service carries gRPC alone (as a LoadBalancer it would publish the rest);
    # the pods say where Prometheus finds their metrics.
    service = _one("Service", "hearts-server")
    assert [port["name"] for port in service["spec"]["ports"]] == ["grpc"]
    assert "annotations" not in service["metadata"]
    template = _one("Deployment", "hearts-server")["spec"]["template"]["metadata"]
    annotations = template["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == Settings().metrics_port
    assert annotations["prometheus.io/path"] == "/metrics"


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
    url = urllib.parse.urlsplit(_env(_server_container())["HEARTS_REDIS_URL"] or "")
    (port,) = _one("Service", "hearts-redis")["spec"]["ports"]
    assert (url.scheme, url.hostname, url.port, url.path) == (
        "redis",
        "hearts-redis",
        port["port"],
        "/0",
    )
    # The StatefulSet's governing Service is another, headless one: a name for each pod.
    governing = _one("Service", _one("StatefulSet", "hearts-redis")["spec"]["serviceName"])
    assert governing["spec"]["clusterIP"] == "None"
    assert governing["spec"]["selector"] == _one("Service", "hearts-redis")["spec"]["selector"]


def test_redis_and_the_server_read_one_password_from_one_secret_key() -> None:
    redis_container = _redis_container()
    args = redis_container["args"]
    (redis_variable,) = _expanded(args[args.index("--requirepass") + 1])
    server_url = _env(_server_container())["HEARTS_REDIS_URL"] or ""
    (server_variable,) = _expanded(server_url)
    redis_ref = _secret_ref(redis_container, redis_variable)
    assert redis_ref == _secret_ref(_server_container(), server_variable)
    assert not redis_ref.get("optional")
    # redis-cli reads this variable itself: the probes send the same password.
    assert redis_variable == "REDISCLI_AUTH"
    # The URL carries the password as redis-py, and so the server, reads it.
    password = "0123456789abcdef" * 4  # as docs/deploy.md has it made: hex
    parsed = parse_redis_url(server_url.replace(f"$({server_variable})", password))
    assert parsed["password"] == password
    assert "username" not in parsed  # Redis's default user, the one --requirepass sets


def test_the_documented_redis_password_needs_no_encoding_in_the_url(tmp_path: Path) -> None:
    # The same text is Redis's password and part of a URL: anything but unreserved characters
    # would need percent-encoding there that Redis would not undo. No newline either: the
    # Secret would keep it, and URL parsing drops it.
    (line,) = [
        ln for ln in DOCS.read_text().splitlines() if "> deploy/kubernetes/redis-password" in ln
    ]
    command = line.split("#")[0].replace("deploy/kubernetes/", f"{tmp_path}/")
    if shutil.which(command.split()[0]) is None:
        pytest.skip(f"needs {command.split()[0]}")
    subprocess.run(["bash", "-c", command], check=True)
    password = (tmp_path / "redis-password").read_text()
    assert re.fullmatch(r"[A-Za-z0-9._~-]{32,}", password), repr(password)


@pytest.mark.redis
@pytest.mark.skipif(
    shutil.which("redis-server") is None or shutil.which("redis-cli") is None,
    reason="needs redis-server and redis-cli",
)
def test_the_redis_probes_pass_for_the_password_alone(tmp_path: Path) -> None:
    # redis-server with the manifest's own arguments, then its probes and the server's URL: an
    # unauthenticated redis-cli still exits 0 (it prints NOAUTH), so a probe must read the answer.
    container = _redis_container()
    password = "0123456789abcdef" * 4
    port = free_port()
    args = [arg.replace("$(REDISCLI_AUTH)", password) for arg in container["args"]]
    extra = ["--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path)]
    process = subprocess.Popen(["redis-server", *args, *extra], stdout=subprocess.DEVNULL)
    try:
        client = redis.Redis(port=port, password=password, socket_connect_timeout=0.2)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                assert time.monotonic() < deadline, "redis-server did not answer"
                time.sleep(0.05)
        client.close()
        environ = {k: v for k, v in os.environ.items() if k != "REDISCLI_AUTH"}
        for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
            command = container[kind]["exec"]["command"]
            assert "redis-cli" in command[-1], kind
            local = [*command[:-1], command[-1].replace("redis-cli", f"redis-cli -p {port}")]
            for auth, passes in ((password, True), ("not-" + password, False), (None, False)):
                env = environ if auth is None else {**environ, "REDISCLI_AUTH": auth}
                ran = subprocess.run(local, env=env, capture_output=True, check=False)
                assert (ran.returncode == 0) is passes, (kind, auth)
        url = (_env(_server_container())["HEARTS_REDIS_URL"] or "").replace(
            "$(REDIS_PASSWORD)", password
        )
        url = url.replace("hearts-redis:6379", f"127.0.0.1:{port}")
        with redis.Redis.from_url(url) as server_client:
            assert server_client.ping()
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_only_the_server_reaches_redis() -> None:
    policy = _one("NetworkPolicy", "hearts-redis")["spec"]
    labels = {
        d["metadata"]["name"]: d["spec"]["template"]["metadata"]["labels"] for d in _workloads()
    }
    assert set(policy["podSelector"]) == {"matchLabels"}
    assert policy["podSelector"]["matchLabels"].items() <= labels["hearts-redis"].items()
    assert policy["policyTypes"] == ["Ingress"]
    (rule,) = policy["ingress"]
    (peer,) = rule["from"]
    # A pod selector alone: pods of the policy's own namespace, no address ranges.
    assert set(peer) == {"podSelector"}
    assert set(peer["podSelector"]) == {"matchLabels"}
    admitted = peer["podSelector"]["matchLabels"].items()
    assert [name for name, pod in labels.items() if admitted <= pod.items()] == ["hearts-server"]
    (port,) = rule["ports"]
    (redis_port,) = _redis_container()["ports"]
    assert port["port"] in (redis_port["containerPort"], redis_port["name"])
    assert port.get("protocol", "TCP") == "TCP"


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


def test_every_secret_comes_from_a_file_that_git_ignores() -> None:
    # The Secrets come from files the operator writes; git ignores them, so no placeholder key
    # that everyone can read is ever deployed, and no real one is ever committed.
    kustomization = yaml.safe_load(KUSTOMIZATION.read_text())
    generated = {gen["name"]: gen["files"] for gen in kustomization["secretGenerator"]}
    assert not [d for d in _documents() if d["kind"] == "Secret"]
    files = {name for names in generated.values() for name in names}
    for workload in _workloads():
        for container in workload["spec"]["template"]["spec"]["containers"]:
            for item in container.get("env", []):
                ref = item.get("valueFrom", {}).get("secretKeyRef")
                if ref is None:
                    continue
                assert ref["name"] in generated, item["name"]
                # A key the Secret must have is one of its files; an optional one is a file
                # the docs have the operator add to them.
                assert ref.get("optional") or ref["key"] in generated[ref["name"]], item["name"]
                files.add(ref["key"])
    docs = DOCS.read_text()
    written = set(re.findall(r"> deploy/kubernetes/([\w.-]+)", docs))
    assert written <= files, written - files
    files |= set(re.findall(r"`([a-z][a-z-]*-(?:secret|password))`", docs))
    assert {"token-secret", "token-extra-secret", "redis-password"} <= files
    paths = [str(DEPLOY / "kubernetes" / name) for name in sorted(files)]
    ignored = subprocess.run(
        ["git", "check-ignore", *paths], cwd=DEPLOY, capture_output=True, text=True, check=False
    )
    assert set(ignored.stdout.split()) == set(paths), set(paths) - set(ignored.stdout.split())


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="needs kubectl (kustomize)")
def test_kustomize_renders_every_replica_onto_the_generated_secret(tmp_path: Path) -> None:
    folder = tmp_path / "kubernetes"
    shutil.copytree(DEPLOY / "kubernetes", folder)
    render = ["kubectl", "kustomize", str(folder)]
    files = {"token-secret": "a-test-secret-of-32-characters!!", "redis-password": "0a1b" * 16}
    for name in files:
        (folder / name).unlink(missing_ok=True)
    for name, content in files.items():
        missing = subprocess.run(render, capture_output=True, text=True, check=False)
        assert missing.returncode != 0  # a secret file missing: nothing to apply
        assert name in missing.stderr
        (folder / name).write_text(content)
    rendered = subprocess.run(render, capture_output=True, text=True, check=True).stdout
    docs = [doc for doc in yaml.safe_load_all(rendered) if doc]
    secrets = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Secret"}
    workloads = {
        d["metadata"]["name"]: d for d in docs if d["kind"] in ("Deployment", "StatefulSet")
    }
    (server,) = workloads["hearts-server"]["spec"]["template"]["spec"]["containers"]
    (redis_container,) = workloads["hearts-redis"]["spec"]["template"]["spec"]["containers"]
    # The generated names carry a hash of the content; the references follow them.
    token = _secret_ref(server, "HEARTS_TOKEN_SECRET")["name"]
    assert token.startswith("hearts-server-")
    assert set(secrets[token]["data"]) == {"token-secret"}
    password = _secret_ref(redis_container, "REDISCLI_AUTH")
    assert password == _secret_ref(server, "REDIS_PASSWORD")
    assert password["name"].startswith("hearts-redis-")
    assert set(secrets[password["name"]]["data"]) == {"redis-password"}
    assert len(secrets) == 2


# What the "restricted" Pod Security Standard allows besides its baseline's checks
# (https://kubernetes.io/docs/concepts/security/pod-security-standards/).
_RESTRICTED_VOLUMES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}


@pytest.mark.parametrize("name", [d["metadata"]["name"] for d in _workloads()])
def test_every_container_meets_the_restricted_pod_security_standard(name: str) -> None:
    (workload,) = [d for d in _workloads() if d["metadata"]["name"] == name]
    pod = workload["spec"]["template"]["spec"]
    pod_context = pod.get("securityContext", {})
    assert not [key for key in ("hostNetwork", "hostPID", "hostIPC") if pod.get(key)]
    assert not pod_context.get("sysctls")
    for volume in pod.get("volumes", []):
        assert set(volume) - {"name"} <= _RESTRICTED_VOLUMES, volume["name"]
    containers = [
        *pod["containers"],
        *pod.get("initContainers", []),
        *pod.get("ephemeralContainers", []),
    ]
    for container in containers:
        context = container.get("securityContext", {})
        effective = {**pod_context, **context}  # a container's own setting wins
        assert effective.get("runAsNonRoot") is True, container["name"]
        assert effective.get("runAsUser") != 0, container["name"]
        assert context.get("allowPrivilegeEscalation") is False, container["name"]
        assert not context.get("privileged"), container["name"]
        capabilities = context.get("capabilities", {})
        assert "ALL" in capabilities.get("drop", []), container["name"]
        assert set(capabilities.get("add", [])) <= {"NET_BIND_SERVICE"}, container["name"]
        seccomp = effective.get("seccompProfile", {}).get("type")
        assert seccomp in ("RuntimeDefault", "Localhost"), container["name"]
        assert context.get("procMount", "Default") == "Default", container["name"]
        assert effective.get("appArmorProfile", {}).get("type") != "Unconfined", container["name"]
        assert not [port for port in container.get("ports", []) if port.get("hostPort")]


def test_redis_runs_as_the_images_user_with_a_volume_it_can_write() -> None:
    # The redis image's entrypoint chowns /data and steps down to its user (999) only when
    # started as root; started as that user, Redis writes its volume through the group.
    spec = _one("StatefulSet", "hearts-redis")["spec"]["template"]["spec"]
    context = _redis_container()["securityContext"]
    assert context["runAsUser"] == context["runAsGroup"] == 999
    assert spec["securityContext"]["fsGroup"] == 999
    assert [m["mountPath"] for m in _redis_container()["volumeMounts"]] == ["/data"]


def test_no_disruption_budget_blocks_a_drain() -> None:
    budgets = {
        d["metadata"]["name"]: d["spec"] for d in _documents() if d["kind"] == "PodDisruptionBudget"
    }
    for name, budget in budgets.items():
        (workload,) = [d for d in _workloads() if d["metadata"]["name"] == name]
        replicas = workload["spec"].get("replicas")
        if replicas is None:  # the autoscaler's
            replicas = _one("HorizontalPodAutoscaler", name)["spec"]["minReplicas"]
        assert budget["minAvailable"] < replicas, name
    # One Redis: a budget that kept it would refuse every eviction.
    assert "hearts-redis" not in budgets
    # Replicas that wait for Redis are unready; evicting them must not wait for ready ones.
    assert budgets["hearts-server"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"


def test_the_no_replica_alert_watches_the_servers_deployment() -> None:
    alerts = yaml.safe_load((DEPLOY / "monitoring" / "hearts-alerts.yaml").read_text())
    (rule,) = [
        rule
        for group in alerts["groups"]
        for rule in group["rules"]
        if "kube_deployment_status_replicas_available" in rule["expr"]
    ]
    (name,) = re.findall(r'deployment="([^"]+)"', rule["expr"])
    (container,) = _one("Deployment", name)["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "hearts-server"


def test_the_server_image_brings_the_bytecode_it_cannot_write() -> None:
    # The root filesystem is read-only, so Python cannot cache what it compiles at start-up:
    # the venv and the standard library (which the base image ships without) come compiled.
    assert _server_container()["securityContext"]["readOnlyRootFilesystem"] is True
    dockerfile = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    stages = re.split(r"^FROM ", dockerfile, flags=re.MULTILINE)[1:]
    build, final = stages[0], stages[-1]
    (install,) = [line for line in build.splitlines() if "uv pip install" in line]
    assert "--compile-bytecode" in install or "UV_COMPILE_BYTECODE=1" in build
    (python,) = re.findall(r"^python:(\d+\.\d+)", final)
    assert re.search(rf"^RUN python -m compileall .*/usr/local/lib/python{python}$", final, re.M)
