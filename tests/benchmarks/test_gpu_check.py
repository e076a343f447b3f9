"""The GPU check without a GPU: the LLM settings it serves (device gpu, validated as ``sws serve --llm`` reads
them; Qwen3.5 on local weights only), the commands of its served steps, the script's syntax and dry run, and
the step runner (failures, timeouts, skips, the budget, background steps, services) on plain commands."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from serve.llm import llm_config, load_llm_source
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
    "tiny_serve",
    "tiny_probe",
    "tiny_eval",
    "paper_serve",
    "paper_probe",
    "paper_eval",
]
PAPER_MODEL = "Qwen/Qwen3.5-9B"  # the paper profile's llm.model (LLMServeConfig's default)


def _config(kind: str, out: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    """``gpu_llm.py config`` as the check runs it (offline, its own process); its JSON line."""
    command = [PY, str(BENCHMARKS / "gpu_llm.py"), "config", kind, "--out", str(out), *args]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_tiny_settings_are_device_gpu_and_validate_as_sws_serve_reads_them(tiny_qwen3_dir, tmp_path):
    written = _config("tiny", tmp_path / "tiny.yaml", "--model-dir", str(tiny_qwen3_dir))
    assert written["yaml"] == str(tmp_path / "tiny.yaml")
    cfg = load_llm_source(written["yaml"])
    assert (cfg.device, cfg.model, cfg.enforce_eager) == ("gpu", str(tiny_qwen3_dir), True)
    config = llm_config(cfg)
    assert config["model_loading_config"] == {"model_id": "tiny-qwen3", "model_source": str(tiny_qwen3_dir)}
    assert "accelerator_config" not in config  # a GPU engine
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
    engine = llm_config(gpu_llm.tiny_settings(renamed))["engine_kwargs"]
    assert (engine["tool_call_parser"], engine["reasoning_parser"]) == ("hermes", "qwen3")


def test_ray_serve_llm_accepts_the_settings(tiny_qwen3_dir):
    models = pytest.importorskip("ray.llm._internal.serve.core.configs.llm_config")
    config = models.LLMConfig(**llm_config(gpu_llm.tiny_settings(tiny_qwen3_dir)))
    assert config.model_id == "tiny-qwen3" and config.engine_kwargs["tool_call_parser"] == "hermes"


def _hf_cache(root: Path, weights: Path) -> Path:
    """A Hugging Face cache (``HF_HOME``) holding ``weights`` as the paper model's snapshot."""
    repo = root / "hub" / f"models--{PAPER_MODEL.replace('/', '--')}"
    shutil.copytree(weights, repo / "snapshots" / "0123abc")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abc")
    return repo / "snapshots" / "0123abc"


@pytest.mark.parametrize("source", ["model_dir", "hf_cache"])
def test_paper_settings_are_its_llm_section_on_local_weights(source, tiny_qwen3_dir, tmp_path):
    if source == "model_dir":
        weights, args, env = tiny_qwen3_dir, ["--model-dir", str(tiny_qwen3_dir)], {"HF_HOME": str(tmp_path)}
    else:
        weights, args = _hf_cache(tmp_path / "hf", tiny_qwen3_dir), []
        env = {"HF_HOME": str(tmp_path / "hf")}
    written = _config("paper", tmp_path / "paper.yaml", *args, env=env)
    cfg = load_llm_source(written["yaml"])
    paper = load_llm_source("paper")
    assert paper.model == PAPER_MODEL
    assert (cfg.model, cfg.served_model_name, cfg.device) == (str(weights), "Qwen3.5-9B", "gpu")
    assert (cfg.max_model_len, cfg.gpu_memory_utilization) == (
        paper.max_model_len,
        paper.gpu_memory_utilization,
    )
    assert llm_config(cfg)["model_loading_config"]["model_id"] == "Qwen3.5-9B"


def test_paper_settings_without_local_weights_are_skipped_saying_where_it_looked(tiny_qwen3_dir, tmp_path):
    out, env = tmp_path / "paper.yaml", {"HF_HOME": str(tmp_path / "empty-hf")}
    skipped = _config("paper", out, env=env)["skipped"]
    assert skipped.startswith(f"no local weights of {PAPER_MODEL}: not in the local Hugging Face cache (")
    assert str(tmp_path / "empty-hf" / "hub") in skipped and "no --model-dir given" in skipped
    no_weights = shutil.copytree(
        tiny_qwen3_dir, tmp_path / "w", ignore=shutil.ignore_patterns("*.safetensors")
    )
    skipped = _config("paper", out, "--model-dir", str(no_weights), env=env)["skipped"]
    assert (
        skipped
        == f"no local weights of {PAPER_MODEL} in --model-dir {no_weights}: no config.json and weight files"
    )
    assert not out.exists()


def _served_check(tmp_path, tiny_qwen3_dir=None, **kwargs):
    check = _check(tmp_path, **kwargs)
    if tiny_qwen3_dir is not None:
        shutil.copytree(tiny_qwen3_dir, check.work / gpu_check.TINY_MODEL)
    return check


def test_the_served_steps_run_sws_serve_with_the_settings_then_probe_and_eval_its_ready_line(
    tiny_qwen3_dir, tmp_path
):
    check = _served_check(tmp_path, tiny_qwen3_dir)
    serve, probe, episodes = gpu_check.llm_steps("tiny", "the tiny model", 8123, 60, ("tiny_model",))
    assert [s.name for s in (serve, probe, episodes)] == ["tiny_serve", "tiny_probe", "tiny_eval"]
    assert serve.service and serve.needs == ("tiny_model",)
    assert probe.needs == episodes.needs == ("tiny_serve",)
    work = check.work
    (command,) = serve.commands(check)
    assert command == [
        *(PY, "-m", "sws", "serve", "--index", str(work / "index"), "--port", "8123"),
        *("--llm", str(work / "llm-tiny.yaml"), "serve.embedding.num_gpus=0", "serve.embedding.device=cpu"),
    ]
    assert load_llm_source(str(work / "llm-tiny.yaml")).device == "gpu"
    ready = {
        "event": "ready",
        "url": "http://127.0.0.1:8123",
        "llm_url": "http://127.0.0.1:8123/llm/v1",
        "llm_model": "tiny-qwen3",
        "ray_address": "127.0.0.1:6379",
    }
    figures = serve.figures(f"noise\n{json.dumps(ready)}\n", check)
    assert figures == {**ready, "settings": gpu_llm.tiny_settings(work / gpu_check.TINY_MODEL)}
    check.results["tiny_serve"] = {"status": "ok", "figures": figures}
    assert probe.commands(check) == [
        [PY, "benchmarks/gpu_llm.py", "probe", "http://127.0.0.1:8123/llm/v1", "tiny-qwen3"]
    ]
    (run,) = episodes.commands(check)
    assert run[:4] == [PY, "-m", "sws", "eval"] and run[-2:] == ["eval.workers=1", "eval.timeout_s=120"]
    flags = dict(zip(run[4:-2:2], run[5:-2:2], strict=True))
    assert (flags["--llm-base-url"], flags["--model"], flags["--tools-url"]) == (
        "http://127.0.0.1:8123/llm/v1",
        "tiny-qwen3",
        "http://127.0.0.1:8123",
    )
    assert flags["--out"] == str(work / "runs" / "tiny") and flags["--limit"] == str(gpu_check.EPISODES)
    assert episodes.env(check) == {"RAY_ADDRESS": "127.0.0.1:6379"}


def test_without_local_weights_the_paper_steps_are_skipped_with_the_reason(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty-hf"))
    check = _served_check(tmp_path)
    assert check.run(gpu_check.llm_steps("paper", "Qwen3.5", 8123, 60, ())) == 0
    serve, probe, episodes = json.loads((tmp_path / "report.json").read_text())["steps"]
    assert (serve["name"], serve["status"]) == ("paper_serve", "skipped")
    assert serve["reason"].startswith(
        f"no local weights of {PAPER_MODEL}: not in the local Hugging Face cache"
    )
    for step in (probe, episodes):
        assert (step["status"], step["reason"]) == ("skipped", "needs paper_serve (skipped)")
    assert not (check.work / "llm-paper.yaml").exists()


def test_the_paper_steps_look_in_the_llm_weights_folder(tmp_path):
    check = _served_check(tmp_path, llm_weights=str(tmp_path / "missing"))
    record = check.run_step(gpu_check.llm_steps("paper", "Qwen3.5", 8123, 60, ())[0])
    assert (record["status"], record["reason"]) == (
        "skipped",
        f"no local weights of {PAPER_MODEL} in --model-dir {tmp_path / 'missing'}: no config.json and weight files",
    )


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


def test_a_service_step_takes_the_place_of_the_one_before(tmp_path):
    """One GPU, one engine: the running service is stopped before the next one starts."""
    pid_file = tmp_path / "first.pid"
    first = (
        f"import json, os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
        "print(json.dumps({'event': 'ready'}), flush=True); time.sleep(300)"
    )
    second = (
        f"import json, os; pid = open({str(pid_file)!r}).read(); "
        "print(json.dumps({'event': 'ready', 'first_gone': not os.path.exists(f'/proc/{pid}')}), flush=True); "
        "import time; time.sleep(300)"
    )

    def figures(out, check):
        return gpu_check.json_output(out)

    steps = [
        gpu_check.Step("one", "first", 60, lambda c: [_py(first)], figures=figures, service=True),
        gpu_check.Step("two", "second", 60, lambda c: [_py(second)], figures=figures, service=True),
    ]
    check = _check(tmp_path)
    assert check.run(steps) == 0 and check.service is None
    assert check.results["two"]["figures"]["first_gone"] is True


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
    assert "tests/index/test_cagra.py" in files
    assert all("mark.gpu" in Path(gpu_check.REPO, f).read_text() for f in files)


def test_probe_figures_over_real_http():
    """The probe's requests and figures, against the scripted OpenAI-compatible server (no vLLM here)."""
    from serve.llm_launch import wait_listed
    from sws.agent.scripted_server import ScriptedLLMServer

    with ScriptedLLMServer(policy="search_then_submit") as server:
        wait_listed(server.url, "search_then_submit", timeout_s=30)
        figures = gpu_llm.probe(server.url, "search_then_submit", burst=4, burst_tokens=8)
    assert "search_then_submit" in figures["models"]
    turn = figures["tool_turn"]
    assert (
        turn["finish_reason"] == "tool_calls" and turn["tool_calls"] == 1 and "tool_calls" in turn["fields"]
    )
    assert figures["burst"]["requests"] == 4 and figures["burst"]["completion_tokens"] > 0
