"""Server benchmark: a real Redis, the real server and a bare baseline, driven from another process.

    uv run --with matplotlib==3.11.2 python bench/server/run.py            # about 6 minutes
    uv run --with matplotlib==3.11.2 python bench/server/run.py --quick    # about 3 minutes

Starts ``redis-server``, ``hearts-server`` and ``baseline.py`` (each its own process group, on
127.0.0.1 only), runs each workload of ``load.py`` in a process of its own, optionally ghz (a Go
gRPC load tool, installed with ``go install`` into ``bench/server/.bin``), prints the table, writes
``--json``, draws ``--chart`` (when matplotlib is importable) and, with ``--write-docs``, replaces
the figures in ``docs/benchmarks.md``. Everything it started is stopped on the way out, also on
errors and Ctrl-C. ``docs/benchmarks.md`` (Server) says what each figure means.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
GHZ_MODULE = "github.com/bojand/ghz/cmd/ghz@v0.120.0"
GHZ = HERE / ".bin" / "ghz"
DOCS = ROOT / "docs" / "benchmarks.md"
BEGIN, END = "<!-- server-figures:begin -->", "<!-- server-figures:end -->"
SECRET = "bench-secret-0123456789abcdef"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


PIN_CPUS = {"server": 0, "baseline": 0, "redis": 1, "load": 1}
"""With ``--pin``: the servers under test on one core, Redis and the load generator on the other."""


def _pinned_to(cpu: int | None) -> dict[str, Any]:
    """Popen arguments that run the child (and every thread it starts) on ``cpu`` only."""
    if cpu is None:
        return {}
    return {"preexec_fn": lambda: os.sched_setaffinity(0, {cpu})}


class Processes:
    """Child processes, each in its own process group; all are stopped on exit."""

    def __init__(self, *, pin: bool = False) -> None:
        self.children: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.pin = pin

    def start(
        self, name: str, command: Sequence[str], log: Path, **kwargs: Any
    ) -> subprocess.Popen[bytes]:
        handle = log.open("wb")
        kwargs.update(_pinned_to(PIN_CPUS.get(name) if self.pin else None))
        process = subprocess.Popen(
            list(command), stdout=handle, stderr=subprocess.STDOUT, start_new_session=True, **kwargs
        )
        handle.close()
        self.children.append((name, process))
        return process

    def stop(self, process: subprocess.Popen[bytes], grace: float = 10.0) -> None:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)
        else:
            # The leader is gone; its group (a bot worker, say) may not be.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)

    def stop_all(self) -> None:
        for _, process in reversed(self.children):
            self.stop(process)
        self.children.clear()


def wait_for_line(log: Path, pattern: str, process: subprocess.Popen[bytes], seconds: float) -> str:
    """The first line of ``log`` matching ``pattern``; raise if the process dies or times out."""
    deadline = time.monotonic() + seconds
    regex = re.compile(pattern)
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace") if log.exists() else ""
        match = regex.search(text)
        if match:
            return match.group(0)
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited:\n{text}")
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {pattern!r} in {log}")


def machine() -> str:
    cpu = "unknown CPU"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    redis_version = subprocess.run(
        ["redis-server", "--version"], capture_output=True, text=True, check=False
    ).stdout.split()
    version = next((w[2:] for w in redis_version if w.startswith("v=")), "?")
    load = os.getloadavg()[0]
    return (
        f"{cpu}, {os.cpu_count()} cores, Linux {platform.release()}, "
        f"CPython {platform.python_version()}, Redis {version}, load average {load:.1f} at start"
    )


# --------------------------------------------------------------------------- steps


def generate_stubs(directory: Path) -> None:
    """baseline_pb2*.py, and protosets for ghz (the baseline's and the API's), with grpcio-tools."""
    directory.mkdir(parents=True, exist_ok=True)
    import google.api  # noqa: PLC0415 - googleapis-common-protos ships the .proto files too

    googleapis = Path(next(iter(google.api.__path__))).parent.parent
    subprocess.run(
        [
            sys.executable, "-m", "grpc_tools.protoc", f"-I{ROOT / 'proto'}", f"-I{googleapis}",
            f"--descriptor_set_out={directory / 'hearts.protoset'}", "--include_imports",
            str(ROOT / "proto" / "hearts" / "v1" / "table_service.proto"),
        ],
        check=True,
    )  # fmt: skip
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{HERE}",
            f"--python_out={directory}",
            f"--grpc_python_out={directory}",
            f"--descriptor_set_out={directory / 'baseline.protoset'}",
            "--include_imports",
            str(HERE / "baseline.proto"),
        ],
        check=True,
    )


def ensure_ghz() -> Path | None:
    """ghz at its pinned version in bench/server/.bin, installed with the Go toolchain if needed."""
    if GHZ.exists():
        return GHZ
    go = shutil.which("go")
    if go is None:
        print("ghz skipped: no Go toolchain (or pass --no-ghz)", file=sys.stderr)
        return None
    print(f"installing {GHZ_MODULE} into {GHZ.parent} ...", file=sys.stderr)
    env = dict(os.environ, GOBIN=str(GHZ.parent))
    result = subprocess.run([go, "install", GHZ_MODULE], env=env, check=False, timeout=900)
    return GHZ if result.returncode == 0 and GHZ.exists() else None


def run_load(
    workdir: Path, name: str, options: Sequence[str], timeout: float, *, pin: bool = False
) -> dict[str, Any]:
    out = workdir / f"{name}.json"
    command = [sys.executable, str(HERE / "load.py"), "--out", str(out), *options]
    print(f"\n== {name}", file=sys.stderr, flush=True)
    subprocess.run(
        command,
        check=True,
        timeout=timeout,
        start_new_session=True,
        **_pinned_to(PIN_CPUS["load"] if pin else None),
    )
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def run_ghz(  # noqa: PLR0917 - the ghz command line, spelled out
    ghz: Path,
    target: str,
    call: str,
    data: str,
    seconds: float,
    concurrency: int,
    protoset: Path | None,
    metadata: str | None = None,
) -> dict[str, Any]:
    command = [
        str(ghz),
        "--insecure",
        "--call",
        call,
        "-d",
        data,
        "-c",
        str(concurrency),
        "--connections",
        "4",
        "-z",
        f"{seconds}s",
        "-t",
        "5s",
        "-O",
        "json",
    ]
    if protoset is not None:
        command += ["--protoset", str(protoset)]
    if metadata:
        command += ["-m", metadata]
    command.append(target)
    print(f"\n== ghz {call}", file=sys.stderr, flush=True)
    completed = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=False,
        timeout=seconds + 60,
        start_new_session=True,
    )
    if completed.returncode != 0 or not completed.stdout.strip():
        raise RuntimeError(f"ghz failed: {completed.stderr.strip()[:500]}")
    report = json.loads(completed.stdout)
    latencies = {
        f"p{int(item['percentage'])}": item["latency"] / 1e6
        for item in report.get("latencyDistribution") or ()
    }
    result = {
        "rps": report["rps"],
        "count": report["count"],
        "p50": latencies.get("p50"),
        "p95": latencies.get("p95"),
        "p99": latencies.get("p99"),
        "status": report.get("statusCodeDistribution"),
    }
    print(
        f"  {result['rps']:.0f} calls/s, p50 {result['p50']:.2f} ms, p99 {result['p99']:.2f} ms",
        file=sys.stderr,
    )
    return result


# --------------------------------------------------------------------------- report


def fmt(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "—"
    return f"{value:,.{digits}f}"


def ratio(ours: float | None, base: float | None) -> str:
    if not ours or not base:
        return "—"
    return f"{ours / base:.2f}×"


def lat(result: dict[str, Any], method: str) -> str:
    stats = result["latency_ms"].get(method)
    if not stats or not stats["n"]:
        return "—"
    return f"{fmt(stats['p50'])} / {fmt(stats['p95'])} / {fmt(stats['p99'])}"


def report(results: dict[str, Any]) -> str:
    """The Markdown figures: throughput and costs next to the baseline, then the other goals.

    A run of some workloads only (``--only``) gives the rows and goals of those it ran.
    """
    play = results["play"]
    bots = results.get("bots")
    watch = results.get("watch")
    base = play["baseline_saturated"]
    rows = []

    def row(
        name: str,
        r: dict[str, Any],
        method: str,
        versus: dict[str, Any] | None,
        *,
        paced: bool = False,
    ) -> None:
        # An open loop's rate is what was offered: only its costs compare with the baseline's,
        # and only with the baseline's at the same rate (None: there is no such baseline run).
        cost = r["cost"]
        other = versus["cost"] if versus is not None else {"server_cpu_ms_per_command": None}
        throughput = (
            "—" if paced or versus is None else ratio(r["commands_per_s"], versus["commands_per_s"])
        )
        rows.append(
            f"| {name} | {fmt(r['commands_per_s'], 0)} | {throughput} | "
            f"{fmt(r['per_method_per_s'].get(method), 0)} | {lat(r, method)} | "
            f"{fmt(cost['server_cpu_ms_per_command'], 3)} | "
            f"{ratio(cost['server_cpu_ms_per_command'], other['server_cpu_ms_per_command'])} | "
            f"{fmt(cost['redis_reads_per_command'], 2)} | {fmt(cost['evalsha_per_command'], 2)} | "
            f"{fmt(cost['redis_cpu_ms_per_command'], 3)} | "
            f"{fmt(cost.get('redis_bytes_in_per_command'), 0)} | "
            f"{fmt(cost.get('load_generator_cpu_ms_per_command'), 3)} |"
        )

    half = play["half"]
    row(f"baseline `Write`, saturated ({base['concurrency']} in flight)", base, "Write", base)
    row(
        f"**(a)** four seats, saturated ({play['saturated']['concurrency']} in flight)",
        play["saturated"],
        "PlayCard",
        base,
    )
    row(
        f"**(a)** open loop at ½ of that ({fmt(half['offered_per_s'], 0)}/s)",
        half,
        "PlayCard",
        play["baseline_half"],
        paced=True,
    )
    row(
        f"baseline `Write`, open loop at the same {fmt(half['offered_per_s'], 0)}/s",
        play["baseline_half"],
        "Write",
        play["baseline_half"],
        paced=True,
    )
    if bots is not None:
        row(
            f"**(b)** one seat + three bots, saturated "
            f"({bots['saturated']['concurrency']} in flight)",
            bots["saturated"],
            "PlayCard",
            base,
        )
    streams = [] if watch is None else [watch["active"], *watch.get("more", ())]
    for r in streams:
        row(
            f"**(c)** 250 watched tables, open loop at {fmt(r['offered_per_s'], 0)}/s",
            r,
            "PlayCard",
            None,  # the baseline ran at (a)'s half rate only: CPU per command grows as rates fall
            paced=True,
        )
    levels = [r["concurrency"] for r in play["baseline_sweep"]]
    threads = [
        "| server CPU ms/command, saturated | all threads | event loop's thread | gRPC's threads |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, r in (("baseline `Write`", base), ("(a) four seats", play["saturated"])):
        cost = r["cost"]
        loop = cost.get("server_loop_cpu_ms_per_command")
        rest = None if loop is None else cost["server_cpu_ms_per_command"] - loop
        threads.append(
            f"| {name} | {fmt(cost['server_cpu_ms_per_command'], 3)} | {fmt(loop, 3)} | "
            f"{fmt(rest, 3)} |"
        )
    lines = [
        "| workload | commands/s | × baseline (saturated) | PlayCard/s | "
        "PlayCard p50 / p95 / p99 ms (baseline: `Write`) | server CPU ms/command | "
        "× baseline | Redis round trips/command | EVALSHA/command | Redis CPU ms/command | "
        "bytes sent to Redis/command | load generator CPU ms/command |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        *rows,
        "",
        *threads,
        "",
        "Other calls, p50 / p95 / p99 ms: "
        + "; ".join(
            f"{name} `{method}` {lat(r, method)}"
            for name, r in (("(a)", play["saturated"]), ("(b)", bots and bots["saturated"]))
            if r is not None
            for method in ("PassCards", "CreateTable", "JoinTable")
            if r["latency_ms"].get(method)
        )
        + ".",
        "",
        "| closed loop, calls in flight | " + " | ".join(str(level) for level in levels) + " |",
        "| --- |" + " ---: |" * len(levels),
    ]
    for name, sweep in (
        ("baseline `Write`/s", play["baseline_sweep"]),
        ("(a) commands/s", play["sweep"]),
        ("(b) commands/s", bots and bots["sweep"]),
    ):
        if sweep is None:
            continue
        by_level = {r["concurrency"]: r["commands_per_s"] for r in sweep}
        lines.append(
            f"| {name} | " + " | ".join(fmt(by_level.get(level), 0) for level in levels) + " |"
        )
    over = play["overload"]
    failures = over["failures"]

    def count(*codes: str) -> int:
        return sum(v for k, v in failures.items() if k.split(":")[1] in codes)

    def when(code: str) -> str:
        stats = over["failure_latency_ms"].get(code)
        return "" if not stats else f" (p50 {fmt(stats['p50'])} / p99 {fmt(stats['p99'])} ms)"

    sent = over["offered"] - over["starved"]
    ok = over["latency_ms"].get("PlayCard", {})
    overload_text = (
        f"{fmt(over['commands_per_s'], 0)} ok/s; of {sent:,} calls sent: "
        f"{count('RESOURCE_EXHAUSTED', 'UNAVAILABLE'):,} refused by the servicer"
        f"{when('RESOURCE_EXHAUSTED')}, {count('CANCELLED'):,} refused by gRPC's pending-call "
        f"limit with CANCELLED{when('CANCELLED')}, {count('DEADLINE_EXCEEDED'):,} timed out; "
        f"successful PlayCard p50 / p99 {fmt(ok.get('p50'))} / {fmt(ok.get('p99'))} ms"
    )
    lines += [
        "",
        "| goal | measured |",
        "| --- | --- |",
        f"| overload: (a) open loop at 2× ({fmt(over['offered_per_s'], 0)}/s offered, "
        f"{results['config']['timeout']} s deadline, {results['config']['tables']:,} tables) | "
        f"{overload_text} |",
    ]
    if watch is not None:
        lines += _stream_goals(play, watch, streams)
    ghz = results.get("ghz")
    if ghz:
        lines += [
            "",
            "| ghz (Go load tool, closed loop, 64 in flight) | calls/s | p50 ms | p99 ms |",
            "| --- | ---: | ---: | ---: |",
        ]
        for name, r in ghz.items():
            lines.append(
                f"| {name} | {fmt(r['rps'], 0)} | {fmt(r['p50'], 2)} | {fmt(r['p99'], 2)} |"
            )
    return "\n".join(lines)


def _stream_goals(
    play: dict[str, Any], watch: dict[str, Any], streams: list[dict[str, Any]]
) -> list[str]:
    """The goals' rows of (c): delivery, memory per stream, Redis memory per table."""
    idle = watch["idle"]
    return [
        *(
            f"| event delivery, {r['active_streams']:,} active + {idle['snapshots']:,} idle "
            f"streams, {fmt(r['offered_per_s'], 0)} writes/s | p50 "
            f"{fmt(r['delivery_ms']['p50'])} ms, p99 {fmt(r['delivery_ms']['p99'])} ms, max "
            f"{fmt(r['delivery_ms']['max'])} ms ({r['delivery_ms']['n']:,} events; "
            f"{r['failed_streams']} streams failed) |"
            for r in streams
        ),
        f"| server memory per open stream ({idle['snapshots']:,} idle streams; "
        f"{idle.get('refusals_retried', 0):,} opens refused and retried) | "
        f"{fmt(idle['bytes_per_stream'] / 1024)} KiB "
        f"(RSS {idle['server_rss_before'] / 2**20:.0f} → "
        f"{idle['server_rss_after'] / 2**20:.0f} MiB) |",
        f"| Redis memory per table (`MEMORY USAGE` of its three keys) | new, seats free: "
        f"{fmt(watch['redis_bytes_per_new_table'] / 1024)} KiB; in play in (a), "
        "tables at random points of their games: "
        f"{fmt(play['redis_bytes_per_table_in_play'] / 1024)} KiB |",
    ]


def chart(results: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib  # noqa: PLC0415 - optional

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: PLC0415
    except ImportError:
        print("no chart: run with `uv run --with matplotlib==3.11.2 ...`", file=sys.stderr)
        return False
    play, bots, watch = results["play"], results["bots"], results["watch"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    ax = axes[0]
    for sweep, label in (
        (play["baseline_sweep"], "baseline Write"),
        (play["sweep"], "(a) four seats"),
        (bots["sweep"], "(b) seat + 3 bots"),
    ):
        ax.plot(
            [r["concurrency"] for r in sweep],
            [r["commands_per_s"] for r in sweep],
            "o-",
            label=label,
        )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("calls in flight (closed loop)")
    ax.set_ylabel("completed commands / s")
    ax.set_title("Throughput")
    ax.set_ylim(bottom=0)
    ax.legend()
    ax = axes[1]
    phases = [
        ("baseline\nsaturated", play["baseline_saturated"], "Write"),
        ("(a)\nsaturated", play["saturated"], "PlayCard"),
        ("baseline\n½ rate", play["baseline_half"], "Write"),
        ("(a)\n½ rate", play["half"], "PlayCard"),
        ("(a) 2× rate\n(successes)", play["overload"], "PlayCard"),
        ("(b)\nsaturated", bots["saturated"], "PlayCard"),
        ("(c) 250\nwatched", watch["active"], "PlayCard"),
    ]
    xs = list(range(len(phases)))
    for q, marker in (("p50", "o"), ("p95", "s"), ("p99", "^")):
        ax.plot(xs, [(r["latency_ms"].get(m) or {}).get(q) for _, r, m in phases], marker, label=q)
    delivery = watch["active"]["delivery_ms"]
    ax.plot(
        [xs[-1], xs[-1]],
        [delivery["p50"], delivery["p99"]],
        "x",
        color="black",
        markersize=9,
        label="(c) event delivery p50, p99",
    )
    ax.axhline(50, color="grey", linestyle=":", label="50 ms goal")
    ax.set_xticks(xs, [p[0] for p in phases], fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("latency, ms")
    ax.set_title("PlayCard latency (baseline: Write)")
    ax.legend(fontsize=7)
    ax = axes[2]
    labels = [
        "baseline\nsaturated",
        "(a)\nsaturated",
        "baseline\n½ rate",
        "(a)\n½ rate",
        "(b)\nsaturated",
    ]
    costs = [
        play["baseline_saturated"]["cost"],
        play["saturated"]["cost"],
        play["baseline_half"]["cost"],
        play["half"]["cost"],
        bots["saturated"]["cost"],
    ]
    server = [c["server_cpu_ms_per_command"] for c in costs]
    redis_cpu = [c["redis_cpu_ms_per_command"] for c in costs]
    ax.bar(labels, server, label="server process")
    ax.bar(labels, redis_cpu, bottom=server, label="Redis")
    ax.tick_params(axis="x", labelsize=7)
    ax.set_ylabel("CPU ms per completed command")
    ax.set_title("CPU per command")
    ax.legend()
    fig.suptitle(f"hearts-server benchmark, {results['date']}: {results['machine']}", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_docs(text: str, results: dict[str, Any]) -> None:
    docs = DOCS.read_text()
    if BEGIN not in docs or END not in docs:
        raise SystemExit(f"{DOCS} has no {BEGIN} ... {END} block to fill")
    head, rest = docs.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    block = (
        f"{BEGIN}\n**Figures** — {results['date']}, {results['machine']}; "
        f"`{results['command']}`.\n\n{text}\n{END}"
    )
    DOCS.write_text(head + block + tail)


# --------------------------------------------------------------------------- main


@contextlib.contextmanager
def cleanup_on_signals(processes: Processes) -> Iterator[None]:
    def handler(signum: int, frame: object) -> None:
        processes.stop_all()
        raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        processes.stop_all()
        for sig, old in previous.items():
            signal.signal(sig, old)


def profile_dir(path: str) -> str:
    directory = Path(path).resolve()
    directory.mkdir(parents=True, exist_ok=True)
    return str(directory)


def profile_split(play: dict[str, Any], directory: str) -> dict[str, Any]:
    """Where each server's CPU per command went at (a)'s saturating level, from the profiles
    ``load.py --profile-dir`` recorded (see ``profiles.py``); printed, and kept in the JSON."""
    sys.path.insert(0, str(HERE))
    import profiles  # noqa: PLC0415 - the module beside this script

    split: dict[str, Any] = {}
    for name, result in (("baseline", play["baseline_saturated"]), ("play", play["saturated"])):
        # The repetition the sweep kept for this level (the better of two in a full run).
        path = Path(directory) / f"{name}-{result['concurrency']}-{result.get('rep', 0)}.txt"
        if not path.exists():
            continue
        cpu_us = result["cost"]["server_cpu_ms_per_command"] * 1000
        split[name] = {bucket: share * cpu_us for bucket, share in profiles.split(path).items()}
        print(
            f"{name} at {result['concurrency']} in flight, µs of server CPU per command: "
            + ", ".join(f"{bucket} {us:.0f}" for bucket, us in split[name].items()),
            file=sys.stderr,
        )
    return split


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter phases (about 3 minutes)")
    parser.add_argument("--no-ghz", action="store_true", help="skip the ghz runs")
    parser.add_argument("--json", default="", help="write all results here")
    parser.add_argument("--chart", default=str(ROOT / "docs" / "server_benchmark.png"))
    parser.add_argument("--write-docs", action="store_true", help="fill docs/benchmarks.md")
    parser.add_argument(
        "--profile",
        default="",
        help="a directory: py-spy profiles of both servers during each closed-loop level of "
        "(a), and where their CPU per command goes; run with `--with py-spy==0.4.3`",
    )
    parser.add_argument(
        "--server-arg", action="append", default=[], help="extra hearts-server flag (repeat)"
    )
    parser.add_argument(
        "--baseline-client",
        choices=("lane", "redis-py"),
        default="lane",
        help="the baseline's Redis client: the Hearts server's own multiplexed connection "
        "(default), or redis-py's pooled client",
    )
    parser.add_argument("--only", default="", help="comma-separated workloads (debugging)")
    parser.add_argument("--from-json", default="", help="report a saved --json run, run nothing")
    parser.add_argument("--tables", type=int, default=0, help="tables for (a) (default 1000)")
    parser.add_argument("--levels", default="", help="calls in flight to sweep, e.g. 64,256")
    parser.add_argument(
        "--pin",
        action="store_true",
        help="run the servers on CPU 0 and Redis and the load generator on CPU 1",
    )
    parser.add_argument(
        "--keep-workdir", action="store_true", help="keep the servers' logs (debugging)"
    )
    parser.add_argument(
        "--watch-rate",
        type=float,
        default=0,
        help="writes/s to the watched tables of (c) (default: ½ of (a)'s rate)",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.from_json:
        publish(args, json.loads(Path(args.from_json).read_text()))
        return
    quick = args.quick
    config = {
        "tables": 300 if quick else 1000,
        "levels": "16,64,256" if quick else "4,16,64,256",
        "seconds": 4 if quick else 10,
        "open_seconds": 5 if quick else 15,
        "overload_seconds": 5 if quick else 15,
        "bot_tables": 256,
        "idle_streams": 5000,
        "active_tables": 250,
        "watch_seconds": 8 if quick else 20,
        "timeout": 1.0,
        "reps": 1 if quick else 2,
        "ghz_seconds": 5 if quick else 10,
    }
    if args.tables:
        config["tables"] = args.tables
    if args.levels:
        config["levels"] = args.levels
    only = set(filter(None, args.only.split(",")))
    command = (
        "uv run --with matplotlib==3.11.2 python bench/server/run.py"
        + (" --quick" if quick else "")
        + (" --pin" if args.pin else "")
    )
    results: dict[str, Any] = {
        "machine": machine(),
        "date": datetime.date.today().isoformat(),
        "pinned": args.pin,
        "config": config,
        "command": command,
    }
    print(results["machine"], file=sys.stderr)
    ghz = None if args.no_ghz else ensure_ghz()
    processes = Processes(pin=args.pin)
    workdir = Path(tempfile.mkdtemp(prefix="hearts-bench-"))
    try:
        with cleanup_on_signals(processes):
            generate_stubs(workdir / "gen")
            redis_port = free_port()
            redis_url = f"redis://127.0.0.1:{redis_port}/0"
            redis_log = workdir / "redis.log"
            redis_proc = processes.start(
                "redis",
                [
                    "redis-server",
                    "--port",
                    str(redis_port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    str(workdir),
                    "--maxmemory-policy",
                    "noeviction",
                ],
                redis_log,
            )
            wait_for_line(redis_log, r"Ready to accept connections", redis_proc, 20)
            server_log = workdir / "server.log"
            server = processes.start(
                "server",
                [
                    sys.executable,
                    "-m",
                    "hearts_server",
                    "--port",
                    "0",
                    "--redis-url",
                    redis_url,
                    "--token-secret",
                    SECRET,
                    "--metrics-port",
                    "0",
                    "--log-level",
                    "WARNING",
                    *args.server_arg,
                ],
                server_log,
                env=dict(os.environ, PYTHONUNBUFFERED="1"),
            )
            line = wait_for_line(server_log, r"listening on (\S+)", server, 60)
            target = line.rsplit(" ", 1)[1]
            base_log = workdir / "baseline.log"
            baseline = processes.start(
                "baseline",
                [
                    sys.executable,
                    str(HERE / "baseline.py"),
                    "--port",
                    "0",
                    "--redis-url",
                    redis_url,
                    "--gen-dir",
                    str(workdir / "gen"),
                    "--client",
                    args.baseline_client,
                ],
                base_log,
            )
            base_target = wait_for_line(base_log, r"listening on (\S+)", baseline, 60).rsplit(
                " ", 1
            )[1]
            common = ["--redis-url", redis_url, "--timeout", str(config["timeout"])]
            ours = ["--target", target, "--server-pid", str(server.pid), *common]

            def want(name: str) -> bool:
                return not only or name in only

            if want("play"):
                results["play"] = run_load(
                    workdir,
                    "play",
                    [
                        "--workload",
                        "play",
                        *ours,
                        "--tables",
                        str(config["tables"]),
                        "--baseline-target",
                        base_target,
                        "--baseline-pid",
                        str(baseline.pid),
                        "--gen-dir",
                        str(workdir / "gen"),
                        "--reps",
                        str(config["reps"]),
                        "--levels",
                        config["levels"],
                        "--seconds",
                        str(config["seconds"]),
                        "--open-seconds",
                        str(config["open_seconds"]),
                        "--overload-seconds",
                        str(config["overload_seconds"]),
                        *(["--profile-dir", profile_dir(args.profile)] if args.profile else []),
                    ],
                    900,
                    pin=args.pin,
                )
            if args.profile and want("play"):
                results["play"]["profile_split"] = profile_split(results["play"], args.profile)
            if want("bots"):
                results["bots"] = run_load(
                    workdir,
                    "bots",
                    [
                        "--workload",
                        "bots",
                        *ours,
                        "--tables",
                        str(config["bot_tables"]),
                        "--levels",
                        config["levels"],
                        "--seconds",
                        str(config["seconds"]),
                    ],
                    600,
                    pin=args.pin,
                )
            if want("watch"):
                # One move per table per second (a brisk human table is slower), then, as a
                # stress point, half of (a)'s saturating rate.
                rates = [250.0]
                if args.watch_rate:
                    rates = [args.watch_rate]
                elif "play" in results:
                    rates.append(results["play"]["saturated"]["commands_per_s"] / 2)
                results["watch"] = run_load(
                    workdir,
                    "watch",
                    [
                        "--workload",
                        "watch",
                        *ours,
                        "--idle-streams",
                        str(config["idle_streams"]),
                        "--active-tables",
                        str(config["active_tables"]),
                        "--watch-rate",
                        ",".join(f"{rate:.0f}" for rate in rates),
                        "--seconds",
                        str(config["watch_seconds"]),
                    ],
                    600,
                    pin=args.pin,
                )
            if ghz is not None and want("ghz"):
                payload = base64.b64encode(b"x" * 48).decode()
                runs = {
                    "baseline `Write` (a new key per call)": (
                        base_target,
                        "hearts.bench.v1.Baseline.Write",
                        {"key": "g{{.RequestNumber}}", "version": 0, "payload": payload},
                        workdir / "gen" / "baseline.protoset",
                    ),
                    "hearts `GetTable` (a spectator)": (
                        target,
                        "hearts.v1.TableService.GetTable",
                        {"name": _some_table(target)},
                        workdir / "gen" / "hearts.protoset",
                    ),
                }
                results["ghz"] = {}
                for name, (address, call, data, protoset) in runs.items():
                    try:
                        results["ghz"][name] = run_ghz(
                            ghz, address, call, json.dumps(data), config["ghz_seconds"], 64,
                            protoset,
                        )  # fmt: skip
                    except (RuntimeError, ValueError, subprocess.TimeoutExpired) as error:
                        print(f"  {error}", file=sys.stderr)
            results["server_rss_end"] = _rss(server.pid)
    finally:
        processes.stop_all()
        if args.keep_workdir:
            print(f"logs and files kept in {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    publish(args, results)


def publish(args: argparse.Namespace, results: dict[str, Any]) -> None:
    """Print the figures; draw the chart; fill docs/benchmarks.md when asked.

    A run of some workloads only (``--only``) prints their figures, or all it measured as JSON
    when (a), whose baseline the figures are set against, is not among them; it draws no chart
    and writes no docs, which show every workload.
    """
    if "play" not in results:
        print(json.dumps(results, indent=1)[:20000])
        return
    text = report(results)
    print("\n" + results["machine"] + "\n\n" + text)
    if not all(name in results for name in ("bots", "watch")):
        print("\nsome workloads only: no chart, docs/benchmarks.md unchanged", file=sys.stderr)
        return
    if args.chart and chart(results, Path(args.chart)):
        print(f"\nchart: {args.chart}", file=sys.stderr)
    if args.write_docs:
        write_docs(text, results)
        print(f"figures written to {DOCS}", file=sys.stderr)


def _rss(pid: int) -> int:
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def _some_table(target: str) -> str:
    """A new table on the server, for the read-only ghz run."""
    import grpc  # noqa: PLC0415 - only the orchestrator's ghz step needs it here

    from hearts.v1 import table_pb2 as pb  # noqa: PLC0415
    from hearts.v1 import table_service_pb2 as api  # noqa: PLC0415
    from hearts.v1 import table_service_pb2_grpc as api_grpc  # noqa: PLC0415

    with grpc.insecure_channel(target) as channel:
        stub = api_grpc.TableServiceStub(channel)
        created = stub.CreateTable(
            api.CreateTableRequest(table=pb.Table(display_name="ghz")), timeout=10
        )
        name: str = created.view.table.name
        for seat in range(4):
            stub.JoinTable(
                api.JoinTableRequest(name=name, seat=seat, player_display_name=f"p{seat}"),
                timeout=10,
            )
        return name


if __name__ == "__main__":
    main()
