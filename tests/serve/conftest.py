"""Fixtures: an index built from a real dump sample, the in-process tools over it, and ``sws serve`` on
127.0.0.1 over the same index (a child process with its own local Ray, HAProxy ingress, 2 retrieval replicas,
the batched query-embedding deployment, a bearer token).

Corpus: ``tests/data/camchenry_enwiki-10k.xml.bz2`` (real enwiki pages: 79 chunks, 85 redirects) through the
real corpus build; vectors: the packaged MiniLM (max 128 tokens, to stay fast).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tests" / "data" / "camchenry_enwiki-10k.xml.bz2"
TOKEN = "test-token-3f9c2a"


@pytest.fixture(scope="session")
def serve_index(tmp_path_factory, ray_local) -> Path:
    from sws.config import load_config, to_dict
    from sws.corpus.build import build_corpus
    from sws.index import SentenceTransformerEmbedder, build_index

    root = tmp_path_factory.mktemp("serve-index")
    cfg = to_dict(load_config("local"))
    build_corpus([str(SAMPLE)], root / "corpus", clean=cfg["clean"], chunk=cfg["chunk"], progress=False)
    embedder = SentenceTransformerEmbedder(device="cpu", max_length=128)
    build_index(root / "corpus", root / "index", embedder=embedder, embed_options={"workers": 0})
    return root / "index"


@pytest.fixture(scope="session")
def engine(serve_index):
    """The in-process engine, its queries embedded as ``sws serve`` embeds them (``serve.embedding.runtime:
    auto``: OpenVINO bf16 where the CPU has bf16 units, whose rankings may differ from fp32's at near-ties)."""
    from serve.retrieval.embedding import open_query_embedder
    from sws.search import SearchEngine

    return SearchEngine.open(serve_index, embedder=open_query_embedder(serve_index, "cpu", "auto"))


@pytest.fixture(scope="session")
def local_tools(engine):
    """The in-process reference: ``WikiTools.call_tool`` over the same index."""
    from sws.env import WikiTools

    return WikiTools(engine)


@pytest.fixture(scope="package")
def server(serve_index, tmp_path_factory):
    """``sws serve`` (HAProxy ingress, 2 retrieval replicas, batched embeddings, bearer token), stopped after
    this package (an idle Serve still costs a share of a core)."""
    from tests.startup import RegisteredServe

    log = tmp_path_factory.mktemp("serve-log") / "serve.log"
    process = RegisteredServe(
        serve_index,
        token=TOKEN,
        args=["--replicas", "2", "--num-cpus", "4"],
        log_path=log,
    )
    process.start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture(scope="package")
def proxy_server(serve_index, tmp_path_factory):
    """``sws serve`` on Serve's Python proxy ingress, query embeddings in the replica, no token (as the RL
    trainers call it; its address files in ``.address_dir``): the other ingress mode, shared by its tests
    (``test_served.py``, ``test_slow_clients.py``)."""
    from tests.startup import RegisteredServe

    log = tmp_path_factory.mktemp("proxy-serve-log") / "serve.log"
    addresses = tmp_path_factory.mktemp("trainer-addresses")  # the RL trainers' address files
    args = ["--ingress", "proxy", "--no-batching", "--num-cpus", "2", "--address-dir", str(addresses)]
    with RegisteredServe(serve_index, args=args, log_path=log) as process:
        process.address_dir = addresses
        yield process
    assert not list(addresses.iterdir()), "sws serve left its address files behind"


def run_driver(ray_address: str, code: str, *args: str, timeout_s: float = 180.0):
    """Run ``code`` in a fresh Python process connected to the server's Ray; its last stdout line is JSON."""
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "PYTHONPATH": str(REPO)}
    env.pop("RAY_ADDRESS", None)
    prelude = (
        "import json, sys, ray\n"
        f"ray.init(address={ray_address!r}, log_to_driver=False, logging_level='ERROR')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + code, *args],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env=env,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
