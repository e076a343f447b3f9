"""The GPU check: on one machine with an NVIDIA GPU, no internet and 10 minutes, install the ``gpu`` extra,
run the ``gpu``-marked tests, the Qwen3-Embedding throughput benchmark, and the actor LLM on the path a user
runs: ``sws serve --index WORK/index --llm SETTINGS.yaml`` (``device: gpu``; Ray Serve LLM on vLLM beside the
retrieval app, its ready line awaited), a probe of its ``/llm/v1`` and ``sws eval --llm-base-url .../llm/v1``
episodes with the served tools: first a tiny random-weight Qwen3 made here (the smoke step), then the paper
profile's model (Qwen3.5) on local weights only (``--llm-weights DIR``, else the local Hugging Face cache;
without them its steps are recorded as skipped, saying why). Every step's outcome (ok / failed / skipped, why,
seconds) and figures go to one JSON file, rewritten after each step.

    bash benchmarks/gpu_check.sh [--wheelhouse DIR | --no-install] [--llm-weights DIR] [--python PY]
                                 [--out FILE] [--dry-run]

Each step has its own timeout inside the total budget (``--budget-s``); a failed step is recorded with the
end of its log and the check goes on; a step whose input failed is skipped, naming it. The ``gpu`` extra
comes from ``--wheelhouse DIR`` (made beforehand on a machine with internet, same Python and platform:
``pip download -d DIR '.[gpu]' 'setuptools>=68' && pip download --no-deps -d DIR faiss-gpu-cuvs==1.15.1``)
or, without one, from the package registry if it answers.
Exit status: 0 every step ok or skipped, 1 a step failed, 2 no GPU (nothing run; ``--dry-run`` exits 0).
Only the standard library is used here, so any ``python3`` can run it; the steps run under ``--python``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # its standard-library helpers, also when imported by path
    sys.path.insert(0, str(HERE))

from served_eval import READY_PREFIX, eval_command, ready_event

REPO = HERE.parent
EPISODES = 3
TINY_MODEL = "tiny-qwen3"  # its folder in the work folder
JUNIT_OUTCOMES = {"failure": "failed", "error": "error", "skipped": "skipped"}
TEARDOWN_S = 30.0  # kept back from the budget to stop the LLM app
HAS_GPU_EXTRA = (
    "import importlib.util, sys\n"
    "from sws.index.dense.cagra import gpu_build_available\n"
    "sys.exit(0 if importlib.util.find_spec('vllm') and gpu_build_available() else 1)"
)


class Skip(Exception):
    """The step is not run; the message says why."""


class Fail(Exception):
    """The step failed before running a command; the message says why."""


@dataclass
class Step:
    """One step: ``commands(check)`` returns the command lines to run in turn (or raises Skip / Fail).

    ``service``: the last command keeps running (the LLM app) once it prints a ``{"event": "ready"}`` line.
    ``background``: runs beside the following steps; a step that ``needs`` it waits for it.
    """

    name: str
    what: str
    timeout_s: float
    commands: Callable[[Check], list[list[str]]]
    needs: tuple[str, ...] = ()
    env: Callable[[Check], dict[str, str]] | None = None  # more environment variables
    figures: Callable[[str, Check], Any] | None = None  # (stdout, check) -> figures, also of a failed run
    verdict: Callable[[Any], str | None] | None = None  # figures -> why the step failed, or None
    background: bool = False
    service: bool = False


def json_output(stdout: str) -> Any:
    """The JSON a command printed: the whole text if it is one document, else its JSON-object lines (one
    object alone, several keyed by ``measurement`` when they all have one, else a list)."""
    try:
        return json.loads(stdout)
    except ValueError:
        pass
    objects = []
    for line in stdout.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            objects.append(value)
    if len(objects) == 1:
        return objects[0]
    if objects and all("measurement" in o for o in objects):
        return {o["measurement"]: o for o in objects}
    return objects or None


def junit_figures(path: Path) -> dict[str, Any]:
    """Counts and per-test outcomes (with the skip or failure message) from pytest's JUnit XML."""
    tests: dict[str, str] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        outcome = next((c for c in case if c.tag in JUNIT_OUTCOMES), None)
        tests[name] = (
            "passed"
            if outcome is None
            else f"{JUNIT_OUTCOMES[outcome.tag]}: {outcome.get('message', '')}"[:300]
        )
    counts = {
        k: sum(v.split(":")[0] == k for v in tests.values()) for k in ("passed", "failed", "error", "skipped")
    }
    return {**counts, "tests": tests}


def extra_pin(extra: str, name: str) -> str:
    """The requirement for ``name`` in pyproject.toml's ``extra`` (one source of the pins)."""
    reqs = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"][extra]
    return next(r for r in reqs if re.split(r"[=<>!~\[; ]", r, maxsplit=1)[0] == name)


def gpu_test_files() -> list[str]:
    """Test files with a ``gpu``-marked test (collecting only these keeps the step short)."""
    return sorted(
        str(p.relative_to(REPO)) for p in (REPO / "tests").rglob("test_*.py") if "mark.gpu" in p.read_text()
    )


def detect_gpu() -> tuple[dict[str, str] | None, str]:
    """``({"name", "memory", "driver"}, "")`` of the first GPU nvidia-smi lists, or ``(None, why not)``."""
    query = ["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"]
    try:
        done = subprocess.run(query, capture_output=True, text=True, timeout=30, check=False)
    except FileNotFoundError:
        return None, "no GPU: nvidia-smi not found"
    except subprocess.TimeoutExpired:
        return None, "no GPU: nvidia-smi did not answer in 30 s"
    rows = [line.split(", ") for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not rows:
        return None, f"no GPU: nvidia-smi found none ({(done.stderr or done.stdout).strip()[-200:]})"
    name, memory, driver = (rows[0] + ["", "", ""])[:3]
    return {"name": name, "memory": memory, "driver": driver, "count": str(len(rows))}, ""


class Check:
    """Runs the steps under one deadline and keeps the report (written after every step)."""

    def __init__(
        self,
        python: str,
        work: Path,
        out: Path,
        budget_s: float,
        wheelhouse: str | None = None,
        install: bool = True,
        llm_weights: str | None = None,
    ):
        self.python, self.work, self.out = python, work, out
        self.wheelhouse, self.install, self.llm_weights = wheelhouse, install, llm_weights
        self.started = time.monotonic()
        self.deadline = self.started + budget_s
        self.lock = threading.Lock()
        self.background: dict[str, Future] = {}
        self.pool = ThreadPoolExecutor(2)
        self.service: subprocess.Popen | None = None
        self.report: dict[str, Any] = {
            "check": "gpu_check",
            "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "budget_s": budget_s,
            "python": python,
            "work": str(work),
            "install_source": None,
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
            "steps": [],
        }
        self.results: dict[str, dict[str, Any]] = {}

    # ---- running

    def run(self, steps: list[Step]) -> int:
        """Run the steps (background ones beside the rest), stop the LLM app, write the report; 1 if a
        step failed, else 0."""
        try:
            for step in steps:
                if step.background:
                    self.background[step.name] = self.pool.submit(self.run_step, step)
                else:
                    self.run_step(step)
            for future in self.background.values():
                future.result()
        finally:
            self.stop_service()
            self.pool.shutdown()
            self.write()
        return 1 if any(r["status"] == "failed" for r in self.results.values()) else 0

    def run_step(self, step: Step) -> dict[str, Any]:
        started = time.monotonic()
        record: dict[str, Any] = {"name": step.name, "what": step.what, "status": "skipped", "reason": ""}
        try:
            for need in step.needs:
                if need in self.background:
                    self.background[need].result()
                status = self.results.get(need, {}).get("status")
                if status != "ok":
                    raise Skip(f"needs {need} ({status or 'not run'})")
            timeout = min(step.timeout_s, self.deadline - TEARDOWN_S - time.monotonic())
            if timeout < 5:
                raise Skip("time budget spent")
            record["timeout_s"] = round(timeout)
            commands = step.commands(self)
            record["commands"] = [" ".join(c) for c in commands]
            env = step.env(self) if step.env else {}
            try:
                self._execute(step, commands, env, timeout)
            finally:
                self._add_figures(step, record)
            failure = step.verdict(record.get("figures")) if step.verdict else None
            if failure:
                raise Fail(failure)
            record["status"] = "ok"
        except Skip as exc:
            record["reason"] = str(exc)
        except Fail as exc:
            record["status"], record["reason"] = "failed", str(exc)
            record["log_tail"] = self._tail(step.name)
        except Exception as exc:  # noqa: BLE001 - a broken step is recorded, and the check goes on
            record["status"], record["reason"] = "failed", f"{type(exc).__name__}: {exc}"
            record["log_tail"] = self._tail(step.name)
        record["seconds"] = round(time.monotonic() - started, 1)
        with self.lock:
            self.results[step.name] = record
            self.report["steps"].append(record)
        self.write()
        print(
            f"gpu_check: {step.name}: {record['status']} {record['reason']} ({record['seconds']} s)",
            file=sys.stderr,
            flush=True,
        )
        return record

    def _add_figures(self, step: Step, record: dict[str, Any]) -> None:
        out = self._paths(step.name)[0]
        if step.figures and out.exists():
            try:
                record["figures"] = step.figures(out.read_text(), self)
            except Exception as exc:  # noqa: BLE001 - unreadable figures are reported, not fatal
                record["figures_error"] = f"{type(exc).__name__}: {exc}"

    def _execute(self, step: Step, commands: list[list[str]], env: dict[str, str], timeout: float) -> None:
        """Run the commands in turn within ``timeout`` seconds, stdout to the step's ``.out`` file (the last
        one kept running if ``step.service``, once it printed its ready line, in place of the one before)."""
        deadline = time.monotonic() + timeout
        if step.service:
            self.stop_service()
        out_path, log_path = self._paths(step.name)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **self.base_env(), **env}
        with open(out_path, "w") as out, open(log_path, "w") as log:
            for i, command in enumerate(commands):
                process = subprocess.Popen(
                    command,
                    cwd=REPO,
                    env=env,
                    stdout=subprocess.PIPE if (step.service and i == len(commands) - 1) else out,
                    stderr=log,
                    text=True,
                    start_new_session=True,
                )
                if step.service and i == len(commands) - 1:
                    try:
                        out.write(self._await_ready(process, deadline))
                    except Fail:
                        _stop(process)
                        raise
                    self.service = process
                    break
                try:
                    process.wait(max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    _stop(process)
                    raise Fail(f"timed out after {timeout:.0f} s: {' '.join(command)}") from None
                if process.returncode != 0:
                    raise Fail(f"exit {process.returncode}: {' '.join(command)}")

    def _await_ready(self, process: subprocess.Popen, deadline: float) -> str:
        lines: list[str] = []
        reader = threading.Thread(target=lambda: lines.extend(process.stdout), daemon=True)
        reader.start()
        while time.monotonic() < deadline:
            ready = next((line for line in lines if line.startswith(READY_PREFIX)), None)
            if ready:
                return ready
            if process.poll() is not None:
                raise Fail(f"exited {process.returncode} before it was ready")
            time.sleep(0.5)
        raise Fail("not ready before the step's timeout")

    def stop_service(self) -> None:
        if self.service is not None:
            _stop(self.service, grace_s=TEARDOWN_S - 5)
            self.service = None

    def base_env(self) -> dict[str, str]:
        paths = [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        return {
            "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths)),
            "PYTHONUNBUFFERED": "1",
            "RAY_AUTH_MODE": os.environ.get("RAY_AUTH_MODE", "disabled"),
            "HF_HUB_OFFLINE": "1",  # nothing is downloaded: a step that tries fails at once
            "TRANSFORMERS_OFFLINE": "1",
            "SWS_SERVE_TOKEN": "",  # the served apps without a bearer token, as the probe calls them
        }

    def capture(self, command: list[str], timeout_s: float = 60.0) -> subprocess.CompletedProcess:
        """A short side command's outcome, its output as text."""
        return subprocess.run(
            command,
            cwd=REPO,
            env={**os.environ, **self.base_env()},
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )

    def probe(self, command: list[str], timeout_s: float = 60.0) -> int:
        """Exit status of a short side command (output discarded), -1 if it could not run in time."""
        try:
            return self.capture(command, timeout_s).returncode
        except (OSError, subprocess.TimeoutExpired):
            return -1

    def figures_of(self, name: str) -> dict[str, Any]:
        return self.results[name].get("figures") or {}

    # ---- report

    def _paths(self, name: str) -> tuple[Path, Path]:
        return self.work / "logs" / f"{name}.out", self.work / "logs" / f"{name}.log"

    def _tail(self, name: str, chars: int = 2000) -> str:
        text = "".join(p.read_text(errors="replace") for p in self._paths(name) if p.exists())
        return text[-chars:]

    def write(self) -> None:
        with self.lock:
            self.report["seconds"] = round(time.monotonic() - self.started, 1)
            self.report["ok"] = bool(self.results) and all(
                r["status"] != "failed" for r in self.results.values()
            )
            self.out.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.out.with_suffix(".json.tmp")
            tmp.write_text(json.dumps(self.report, indent=1, ensure_ascii=False) + "\n")
            tmp.replace(self.out)


def _stop(process: subprocess.Popen, grace_s: float = 10.0) -> None:
    """SIGTERM to the process's session (it started one), then SIGKILL after ``grace_s``."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)


# ---- the steps


def install_commands(check: Check) -> list[list[str]]:
    """The ``gpu`` extra, then faiss-gpu-cuvs in place of faiss-cpu (same ``faiss`` module; without its
    dependencies, whose cuBLAS conflicts with torch's: pyproject.toml ``faiss-gpu``)."""
    py = check.python
    if not check.install:
        raise Skip("--no-install")
    if check.probe([py, "-c", HAS_GPU_EXTRA]) == 0:
        check.report["install_source"] = "already installed"
        raise Skip("the gpu extra is already installed (vllm imports, faiss builds on the GPU)")
    if check.wheelhouse:
        if not any(Path(check.wheelhouse).glob("*.whl")):
            raise Fail(f"--wheelhouse {check.wheelhouse}: no wheels there")
        source = ["--no-index", "--find-links", check.wheelhouse]
        check.report["install_source"] = f"wheelhouse {check.wheelhouse}"
    elif check.probe([py, "-m", "pip", "index", "versions", "vllm", "--retries", "0", "--timeout", "5"]) == 0:
        source = []
        check.report["install_source"] = "registry"
    else:
        raise Fail(
            "no package registry reachable and no --wheelhouse: on a machine with internet and the same Python "
            "and platform run `pip download -d WHEELS '.[gpu]' 'setuptools>=68'` and `pip download --no-deps -d "
            "WHEELS faiss-gpu-cuvs==1.15.1`, copy WHEELS here and pass "
            "--wheelhouse WHEELS"
        )
    pip = [py, "-m", "pip", "install", "-q", "--no-cache-dir", *source]
    return [
        [*pip, "-e", ".[gpu]"],
        [py, "-m", "pip", "uninstall", "-y", "faiss-cpu"],
        [*pip, "--force-reinstall", "--no-deps", extra_pin("faiss-gpu", "faiss-gpu-cuvs")],
    ]


def pytest_verdict(figures: dict[str, Any] | None) -> str | None:
    """On a GPU machine a skipped gpu test is a missing part, not a pass."""
    if figures and figures["skipped"]:
        return f"{figures['skipped']} gpu-marked test(s) skipped: " + "; ".join(
            f"{name}: {outcome}"
            for name, outcome in figures["tests"].items()
            if outcome.startswith("skipped")
        )
    return None


def settings_path(check: Check, kind: str) -> Path:
    """Where ``kind``'s LLM settings are written (``gpu_llm.py config``)."""
    return check.work / f"llm-{kind}.yaml"


def serve_commands(kind: str, port: int) -> Callable[[Check], list[list[str]]]:
    """``sws serve --llm`` of ``kind``'s settings (``tiny`` or ``paper``), written first; no local weights of
    the paper's model skips the step. The query embedder stays on the CPU: on one GPU it would hold the GPU
    the LLM's engine needs."""

    def commands(check: Check) -> list[list[str]]:
        settings = settings_path(check, kind)
        config = [check.python, "benchmarks/gpu_llm.py", "config", kind, "--out", str(settings)]
        weights = check.work / TINY_MODEL if kind == "tiny" else check.llm_weights
        config += ["--model-dir", str(weights)] if weights else []
        done = check.capture(config, timeout_s=120)
        if done.returncode != 0:
            raise Fail(f"exit {done.returncode}: {' '.join(config)}: {done.stderr.strip()[-500:]}")
        written = json_output(done.stdout)
        if "skipped" in written:
            raise Skip(written["skipped"])
        return [
            [check.python, "-m", "sws", "serve", "--index", str(check.work / "index"), "--port", str(port)]
            + ["--llm", str(settings), "serve.embedding.num_gpus=0", "serve.embedding.device=cpu"]
        ]

    return commands


def served_figures(kind: str) -> Callable[[str, Check], dict[str, Any]]:
    """The ready line of ``sws serve`` and the settings it serves."""
    return lambda out, check: {
        **ready_event(out),
        "settings": json.loads(settings_path(check, kind).read_text()),
    }


def llm_steps(kind: str, what: str, port: int, serve_timeout_s: float, needs: tuple[str, ...]) -> list[Step]:
    """Serve ``kind``, probe its ``/llm/v1``, run ``sws eval`` episodes on it (the served tools too)."""
    served = f"{kind}_serve"

    def probe(check: Check) -> list[list[str]]:
        ready = check.figures_of(served)
        return [[check.python, "benchmarks/gpu_llm.py", "probe", ready["llm_url"], ready["llm_model"]]]

    def episodes(check: Check) -> list[list[str]]:
        out = check.work / "runs" / kind
        overrides = ("eval.workers=1", "eval.timeout_s=120")
        return [eval_command(check.python, check.figures_of(served), out, EPISODES, *overrides)]

    return [
        Step(
            served,
            f"sws serve --llm: {what}, device gpu, beside the retrieval app (its ready line)",
            serve_timeout_s,
            serve_commands(kind, port),
            needs=needs,
            figures=served_figures(kind),
            service=True,
        ),
        Step(
            f"{kind}_probe",
            "one tool-enabled chat turn and a burst of 16 fixed-length completions at /llm/v1",
            120,
            probe,
            needs=(served,),
            figures=lambda out, c: json_output(out),
        ),
        Step(
            f"{kind}_eval",
            f"sws eval: {EPISODES} Bamboogle episodes at /llm/v1, the served tools, on the service's Ray",
            240,
            episodes,
            needs=(served,),
            env=lambda c: {"RAY_ADDRESS": c.figures_of(served)["ray_address"]},
            figures=lambda out, c: json_output(out),
        ),
    ]


def steps(check: Check, port: int = 8000) -> list[Step]:
    py, work = check.python, check.work
    return [
        Step("install", "pip install the gpu extra (vLLM, faiss-gpu-cuvs)", 300, install_commands),
        Step(
            "index_build",
            "corpus and MiniLM index of the bundled sample, for the episodes (CPU, beside the GPU steps)",
            300,
            lambda c: [
                [py, "-m", "sws", "build", "corpus", "--out", str(work / "corpus")],
                [
                    py,
                    "-m",
                    "sws",
                    "build",
                    "index",
                    "--corpus",
                    str(work / "corpus"),
                    "--out",
                    str(work / "index"),
                ],
            ],
            env=lambda c: {"CUDA_VISIBLE_DEVICES": ""},  # MiniLM on the CPU: the GPU steps run meanwhile
            background=True,
        ),
        Step(
            "pytest_gpu",
            "the gpu-marked tests (the CAGRA build)",
            180,
            lambda c: [
                [
                    py,
                    "-m",
                    "pytest",
                    "-q",
                    "-m",
                    "gpu",
                    "-p",
                    "no:cacheprovider",
                    f"--junitxml={work / 'pytest_gpu.xml'}",
                    *gpu_test_files(),
                ]
            ],
            figures=lambda out, c: junit_figures(c.work / "pytest_gpu.xml"),
            verdict=pytest_verdict,
        ),
        Step(
            "embed_qwen3",
            "Qwen3-Embedding-0.6B tokens/s on 1536-token chunks next to the bf16 matmul rate",
            180,
            lambda c: [[py, "benchmarks/embed_qwen3_gpu.py"]],
            figures=lambda out, c: json_output(out),
        ),
        Step(
            "tiny_model",
            "the tiny random-weight Qwen3 model (real tokenizer and chat template)",
            90,
            lambda c: [[py, "benchmarks/tiny_qwen3.py", str(work / TINY_MODEL)]],
            figures=lambda out, c: json_output(out),
        ),
        *llm_steps(
            "tiny",
            "the tiny model (smoke step; parsers hermes / qwen3, its template's JSON tool calls)",
            port,
            240,
            ("tiny_model", "index_build"),
        ),
        *llm_steps(
            "paper",
            "the paper profile's model (Qwen3.5) on local weights, eager",
            port,
            300,
            ("index_build",),
        ),
    ]


def default_python() -> str:
    venv = REPO / ".venv" / "bin" / "python"
    return os.environ.get("SWS_PYTHON") or (str(venv) if venv.exists() else sys.executable)


def default_out() -> Path:
    return (
        Path(os.environ["OUT"]) / "gpu_check.json"
        if os.environ.get("OUT")
        else REPO / "benchmarks" / "results" / "gpu_check.json"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--wheelhouse", help="install the gpu extra from the wheels in this folder (no index)"
    )
    source.add_argument("--no-install", action="store_true", help="the gpu extra is installed already")
    parser.add_argument(
        "--python",
        default=None,
        help="interpreter of the project's environment "
        "(default: $SWS_PYTHON, else .venv/bin/python, else this one)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="the JSON file (default: $OUT/gpu_check.json "
        "if OUT is set, else benchmarks/results/gpu_check.json)",
    )
    parser.add_argument(
        "--work", type=Path, default=None, help="models, index, logs (default: a new folder in /tmp)"
    )
    parser.add_argument("--budget-s", type=float, default=540.0, help="all steps together")
    parser.add_argument("--port", type=int, default=8000, help="sws serve's HTTP port")
    parser.add_argument(
        "--llm-weights",
        help="local weights of the paper profile's LLM (Qwen3.5); default: the local Hugging Face cache",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="list the steps and write the JSON; run nothing"
    )
    args = parser.parse_args(argv)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    work = args.work or Path(tempfile.gettempdir()) / f"sws-gpu-check-{stamp}-{os.getpid()}"
    check = Check(
        args.python or default_python(),
        work,
        args.out or default_out(),
        args.budget_s,
        args.wheelhouse,
        not args.no_install,
        args.llm_weights,
    )
    plan = steps(check, args.port)
    gpu, why = detect_gpu()
    check.report["machine"]["gpu"] = gpu
    check.report["dry_run"] = args.dry_run
    if gpu is None or args.dry_run:
        reason = why or "dry run"
        for step in plan:
            print(
                f"gpu_check: {step.name}: {step.what} (timeout {step.timeout_s:.0f} s"
                f"{', needs ' + ', '.join(step.needs) if step.needs else ''}): skipped, {reason}",
                file=sys.stderr,
            )
            check.results[step.name] = record = {
                "name": step.name,
                "what": step.what,
                "status": "skipped",
                "reason": reason,
                "seconds": 0.0,
            }
            check.report["steps"].append(record)
        check.write()
        print(f"gpu_check: {reason}; report: {check.out}", file=sys.stderr)
        return 0 if args.dry_run else 2
    return check.run(plan)


if __name__ == "__main__":
    raise SystemExit(main())
