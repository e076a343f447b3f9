"""The paper's reference code, run beside sws (never imported into it): its source exported from a git copy
and a Python that has what its runner imports (tyro, loguru, tqdm, httpx, openai, cachetools).

``SWS_REFERENCE_GIT``: a clone (or bare git dir) of JimXiongGM/simple_wiki_search at cdc9851 (default: the
workplace mirror); ``SWS_REFERENCE_PYTHON``: that Python (default: this one). A test using
:func:`reference_code` is skipped, saying which is missing, where they are not there.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

COMMIT = "cdc9851"
DEFAULT_GIT = "/work/.mirror/JimXiongGM+simple_wiki_search/repo"
IMPORTS = ("tyro", "loguru", "tqdm", "httpx", "openai", "cachetools")


@pytest.fixture(scope="session")
def reference_code(tmp_path_factory) -> tuple[Path, str]:
    """(exported source directory, Python to run it with), or the test is skipped."""
    git = os.environ.get("SWS_REFERENCE_GIT", DEFAULT_GIT)
    python = os.environ.get("SWS_REFERENCE_PYTHON", sys.executable)
    if not Path(git).exists():
        pytest.skip(f"no reference repository at {git} (set SWS_REFERENCE_GIT)")
    check = subprocess.run(
        [python, "-c", f"import {', '.join(IMPORTS)}"], check=False, capture_output=True, text=True
    )
    if check.returncode:
        pytest.skip(f"{python} cannot import the reference runner's {IMPORTS} (set SWS_REFERENCE_PYTHON)")
    src = tmp_path_factory.mktemp("reference-src")
    archive = subprocess.run(["git", "-C", git, "archive", COMMIT], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive.stdout, check=True)
    return src, python


def run_reference(code: tuple[Path, str], script: str) -> str:
    """Run Python ``script`` in the reference source directory; its stdout."""
    src, python = code
    done = subprocess.run(
        [python, "-c", script], cwd=src, check=False, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def cached_ids(code: tuple[Path, str], data: Path, dataset: str, save_dir: Path) -> dict[str, list]:
    """The reference runner's resume check (``_partition_cached_items``) on ``data`` against ``save_dir``:
    ``{"cached": [{qid, status, f1, gpt_judge}...], "pending": [ids]}``."""
    script = (
        "import json\nfrom pathlib import Path\nimport run_qa_agent as r\n"
        f"items = r._load_items(Path({str(data)!r}), {dataset!r})\n"
        f"cached, pending = r._partition_cached_items(items, Path({str(save_dir)!r}))\n"
        "print(json.dumps({'cached': cached, 'pending': [item['id'] for _, item in pending]}))\n"
    )
    return json.loads(run_reference(code, script).strip().splitlines()[-1])


def reference_table(code: tuple[Path, str], full_root: Path, sample_root: Path, *args: str) -> str:
    """What the reference's scripts/print_qa_benchmark_md_table.py prints for these two roots."""
    src, python = code
    command = [python, "scripts/print_qa_benchmark_md_table.py", "--full_root", str(full_root)]
    command += ["--sample_root", str(sample_root), *args]
    done = subprocess.run(command, cwd=src, check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
