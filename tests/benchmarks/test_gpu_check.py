"""The GPU check without a GPU: the LLM app config for the tiny model, the script's syntax and dry run, and
the step runner (failures, timeouts, skips, the budget, background steps, the LLM service) on plain commands."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from serve.llm import llm_config
from tests.benchmarks.conftest import BENCHMARKS, bench_module

gpu_check = bench_module("gpu_check")
gpu_llm = bench_module("gpu_llm")
PY = sys.executable
STEP_NAMES = [
    "install",
    "index_build",
    "pytest_gpu",
    "embed_qwen3",
    "tiny_model",
    "llm_serve",
    "llm_probe",
    "eval",
]


def test_llm_app_config_names_the_templates_parsers_and_the_local_model(tiny_qwen3_dir):
    config = llm_config(gpu_llm.app_args(tiny_qwen3_dir))
    assert config["model_loading_config"] == {"model_id": "tiny-qwen3", "model_source": str(tiny_qwen3_dir)}
    engine = config["engine_kwargs"]
    assert (engine["tool_call_parser"], engine["reasoning_parser"]) == ("hermes", "qwen3")
    assert engine["enable_auto_tool_choice"] is True and engine["enforce_eager"] is True
    max_positions = json.loads((tiny_qwen3_dir / "config.json").read_text())["max_position_embeddings"]
    assert engine["max_model_len"] <= max_positions and engine["gpu_memory_utilization"] <= 0.3
    assert config["deployment_config"]["num_replicas"] == 1


def test_family_comes_from_the_model_config_when_the_name_says_nothing(tiny_qwen3_dir, tmp_path):
    renamed = shutil.copytree(
        tiny_qwen3_dir, tmp_path / "actor", ignore=shutil.ignore_patterns("*.safetensors")
    )
    engine = llm_config(gpu_llm.app_args(renamed))["engine_kwargs"]
    assert (engine["tool_call_parser"], engine["reasoning_parser"]) == ("hermes", "qwen3")


def test_ray_serve_llm_accepts_the_app_config(tiny_qwen3_dir):
    models = pytest.importorskip("ray.llm._internal.serve.core.configs.llm_config")
    config = models.LLMConfig(**llm_config(gpu_llm.app_args(tiny_qwen3_dir)))
    assert config.model_id == "tiny-qwen3" and config.engine_kwargs["tool_call_parser"] == "hermes"


def test_script_parses():
    assert subprocess.run(["bash", "-n", str(BENCHMARKS / "gpu_check.sh")], check=False).returncode == 0


def test_dry_run_lists_the_steps_and_writes_them_skipped(tmp_path):
    env = {**os.environ, "GPU_CHECK_PYTHON": PY, "OUT": str(tmp_path)}
    done = subprocess.run(
        ["bash", str(BENCHMARKS / "gpu_check.sh"), "--dry-run"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "gpu_check.json").read_text())
    assert [s["name"] for s in report["steps"]] == STEP_NAMES
    assert {s["status"] for s in report["steps"]} == {"skipped"} and report["dry_run"] is True
    reason = "dry run" if shutil.which("nvidia-smi") else "no GPU: nvidia-smi not found"
    assert {s["reason"] for s in report["steps"]} == {reason}
    for name in STEP_NAMES:
        assert f"gpu_check: {name}: " in done.stderr


def test_without_a_gpu_nothing_runs_and_the_exit_status_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi on it
    out = tmp_path / "r.json"
    assert gpu_check.main(["--out", str(out), "--work", str(tmp_path / "w")]) == 2
    report = json.loads(out.read_text())
    assert report["machine"]["gpu"] is None and not (tmp_path / "w").exists()
    assert {s["reason"] for s in report["steps"]} == {"no GPU: nvidia-smi not found"}


def _ends(pid: int, wait_s: float = 10.0) -> bool:
    """Whether the process is gone (or a zombie) within ``wait_s``: a signal is delivered asynchronously."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


def _check(tmp_path, budget_s: float = 300.0, **kwargs):
    return gpu_check.Check(PY, tmp_path / "work", tmp_path / "report.json", budget_s, **kwargs)


def _py(code: str) -> list[str]:
    return [PY, "-c", code]


def test_a_failed_step_is_recorded_and_the_check_goes_on(tmp_path):
    check = _check(tmp_path)
    steps = [
        gpu_check.Step(
            "broken", "fails", 60, lambda c: [_py("import sys; print('boom', file=sys.stderr); sys.exit(3)")]
        ),
        gpu_check.Step(
            "after", "runs", 60, lambda c: [_py("print('{\"x\": 1}')")], figures=lambda o, c: json.loads(o)
        ),
        gpu_check.Step("dependent", "skipped", 60, lambda c: [_py("")], needs=("broken",)),
    ]
    assert check.run(steps) == 1
    report = json.loads((tmp_path / "report.json").read_text())
    broken, after, dependent = report["steps"]
    assert broken["status"] == "failed" and broken["reason"].startswith("exit 3: ")
    assert "boom" in broken["log_tail"]
    assert after["status"] == "ok" and after["figures"] == {"x": 1}
    assert dependent == {**dependent, "status": "skipped", "reason": "needs broken (failed)"}
    assert report["ok"] is False


def test_a_step_past_its_timeout_is_stopped_with_its_children(tmp_path):
    pid_file = tmp_path / "child.pid"
    sleeper = f"import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)']); open({str(pid_file)!r}, 'w').write(str(p.pid)); p.wait()"
    check = _check(tmp_path)
    record = check.run_step(gpu_check.Step("slow", "sleeps", 6, lambda c: [_py(sleeper)]))
    assert record["status"] == "failed" and record["reason"].startswith("timed out after 6 s")
    assert _ends(int(pid_file.read_text()))


def test_no_step_starts_once_the_budget_is_spent(tmp_path):
    check = _check(tmp_path, budget_s=gpu_check.TEARDOWN_S + 1)
    record = check.run_step(gpu_check.Step("late", "never runs", 60, lambda c: [_py("")]))
    assert (record["status"], record["reason"]) == ("skipped", "time budget spent")


def test_background_step_service_and_the_steps_that_need_them(tmp_path):
    marker = tmp_path / "built"
    serve = (
        "import json, os, time; print('starting'); "
        "print(json.dumps({'event': 'ready', 'url': 'http://127.0.0.1:1/v1', 'pid': os.getpid()}), flush=True); "
        "time.sleep(300)"
    )
    steps = [
        gpu_check.Step(
            "build",
            "background",
            60,
            lambda c: [_py("import time; time.sleep(2)"), _py(f"open({str(marker)!r}, 'w')")],
            background=True,
        ),
        gpu_check.Step(
            "svc",
            "service",
            60,
            lambda c: [_py(serve)],
            figures=lambda o, c: gpu_check.json_output(o),
            service=True,
        ),
        gpu_check.Step(
            "use",
            "needs both: the build's file, the service's URL (its env too)",
            60,
            lambda c: [_py(f"import os; assert os.path.exists({str(marker)!r}); print(os.environ['URL'])")],
            needs=("build", "svc"),
            env=lambda c: {"URL": c.figures_of("svc")["url"]},
        ),
    ]
    check = _check(tmp_path)
    assert check.run(steps) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    by_name = {s["name"]: s for s in report["steps"]}
    assert {s["status"] for s in report["steps"]} == {"ok"}
    assert (tmp_path / "work" / "logs" / "use.out").read_text() == "http://127.0.0.1:1/v1\n"
    assert _ends(by_name["svc"]["figures"]["pid"])  # the service was stopped at the end


def test_a_service_that_dies_before_ready_fails(tmp_path):
    check = _check(tmp_path)
    step = gpu_check.Step("svc", "dies", 60, lambda c: [_py("import sys; sys.exit(4)")], service=True)
    record = check.run_step(step)
    assert (record["status"], record["reason"]) == ("failed", "exited 4 before it was ready")
    assert check.service is None


def test_install_source_is_the_wheelhouse_or_a_clear_failure(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    record = _check(tmp_path, wheelhouse=str(empty)).run_step(_install_step())
    assert (record["status"], record["reason"]) == ("failed", f"--wheelhouse {empty}: no wheels there")

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "x-1.0-py3-none-any.whl").touch()
    check = _check(tmp_path, wheelhouse=str(wheels))
    commands = gpu_check.install_commands(check)
    assert commands[0][-3:] == [str(wheels), "-e", ".[gpu]"] and "--no-index" in commands[0]
    assert commands[2][-1] == "faiss-gpu-cuvs==1.15.1" and commands[1][-1] == "faiss-cpu"
    assert check.report["install_source"] == f"wheelhouse {wheels}"

    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")  # a registry that does not answer
    record = _check(tmp_path).run_step(_install_step())
    assert record["status"] == "failed" and record["reason"].startswith(
        "no package registry reachable and no --wheelhouse"
    )
    assert _check(tmp_path, install=False).run_step(_install_step())["reason"] == "--no-install"


def _install_step():
    return gpu_check.Step("install", "", 60, gpu_check.install_commands)


def test_pytest_figures_and_verdict_from_junit(tmp_path):
    (tmp_path / "test_x.py").write_text(
        "import pytest\n"
        "def test_ok(): pass\n"
        "@pytest.mark.skip(reason='needs vllm')\n"
        "def test_skipped(): pass\n"
        "def test_bad(): assert 1 == 2\n"
    )
    xml = tmp_path / "junit.xml"
    subprocess.run(
        [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}", "test_x.py"],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    figures = gpu_check.junit_figures(xml)
    assert (figures["passed"], figures["failed"], figures["skipped"]) == (1, 1, 1)
    assert figures["tests"]["test_x::test_skipped"] == "skipped: needs vllm"
    assert (
        gpu_check.pytest_verdict(figures)
        == "1 gpu-marked test(s) skipped: test_x::test_skipped: skipped: needs vllm"
    )
    assert gpu_check.pytest_verdict({**figures, "skipped": 0}) is None


def test_gpu_steps_cover_the_gpu_marked_tests():
    files = gpu_check.gpu_test_files()
    assert "tests/serve/test_llm.py" in files and "tests/index/test_cagra.py" in files
    assert all("mark.gpu" in Path(gpu_check.REPO, f).read_text() for f in files)


def test_probe_figures_over_real_http():
    """The probe's requests and figures, against the scripted OpenAI-compatible server (no vLLM here)."""
    from sws.agent.scripted_server import ScriptedLLMServer

    with ScriptedLLMServer(policy="search_then_submit") as server:
        gpu_llm._wait_for_model(server.url, "search_then_submit", timeout_s=30)
        figures = gpu_llm.probe(server.url, "search_then_submit", burst=4, burst_tokens=8)
    assert "search_then_submit" in figures["models"]
    turn = figures["tool_turn"]
    assert (
        turn["finish_reason"] == "tool_calls" and turn["tool_calls"] == 1 and "tool_calls" in turn["fields"]
    )
    assert figures["burst"]["requests"] == 4 and figures["burst"]["completion_tokens"] > 0


def test_serving_without_vllm_fails_at_once_with_the_install_line(tiny_qwen3_dir):
    script = BENCHMARKS / "gpu_llm.py"
    without_vllm = (  # as where vLLM is missing: Ray Serve LLM's import fails
        "import runpy, sys; sys.modules['ray.serve.llm'] = None; "
        f"sys.argv = [{str(script)!r}, 'serve', {str(tiny_qwen3_dir)!r}]; "
        f"runpy.run_path({str(script)!r}, run_name='__main__')"
    )
    done = subprocess.run([PY, "-c", without_vllm], capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "ImportError: Ray Serve LLM needs vLLM" in done.stderr
    assert "pip install -e '.[gpu]'" in done.stderr
    config = subprocess.run(
        [PY, str(BENCHMARKS / "gpu_llm.py"), "config", str(tiny_qwen3_dir)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(config.stdout) == gpu_llm.app_args(tiny_qwen3_dir)
