"""Regenerate this fixture by running the paper's own ``run_qa_agent.py`` and table script (README.md here).

Usage (from the repository root; REF is an export of JimXiongGM/simple_wiki_search @ cdc9851, PY a Python with
what its runner imports: tyro, loguru, tqdm, httpx, openai, cachetools, orjson)::

    RAY_AUTH_MODE=disabled PYTHONPATH=. .venv/bin/python tests/data/reference_runs/make.py REF PY

It builds the leads index (tests/index/helpers.py) under a temporary directory, starts ``sws serve`` on it
and sws's scripted OpenAI-compatible LLM, runs the reference runner for every subset x dataset x model of
``questions/`` (two models: the scripted policies ``search_then_submit`` and ``heuristic``; the LLM judge on
with no OpenAI key, so an exact match scores 1, an empty answer 0, and any other has no ``gpt_judge``), writes
``tree/``, then ``edge_cases/`` (copies of one folder, edited: see README.md) and the reference script's
output for ``tree/`` with and without ``--disable_n``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODELS = ("search_then_submit", "heuristic")
ROOTS = {"full_test": "output_full_test", "random_300": "output_sample_random_300"}


def build_index(root: Path) -> Path:
    from sws.index import FaissIndexer, build_index
    from tests.index.helpers import lead_pages, minilm, write_corpus

    corpus = write_corpus(root / "corpus", lead_pages())
    build_index(
        corpus,
        root / "index",
        embedder=minilm(),
        dense=FaissIndexer(m=16, shard_rows=16),
        embed_options={"workers": 0, "rows_per_unit": 8},
    )
    return root / "index"


def run_reference(ref: Path, python: str, llm_url: str, tools_url: str, home: Path) -> None:
    """The reference runner once per subset x dataset x model, one worker (so the files are in order)."""
    env = {**os.environ, "HOME": str(home), "OPENAI_API_KEY": ""}
    for subset, root in ROOTS.items():
        for data in sorted((HERE / "questions" / subset).iterdir()):
            dataset = data.name.split(".")[0]
            for model in MODELS:
                save = HERE / "tree" / root / dataset / model
                command = [
                    python,
                    "run_qa_agent.py",
                    *("--model_name", model, "--server_url", llm_url, "--tool_server_url", tools_url),
                    *("--data_dir", str(data), "--dataset_name", dataset, "--save_dir", str(save)),
                    *("--max_workers", "1", "--enable_llm_judge"),
                ]
                subprocess.run(command, cwd=ref, env=env, check=True)


def make_edge_cases() -> None:
    """Copies of tree/output_full_test/HotpotQA/search_then_submit, each edge case made by editing a copy."""
    source = HERE / "tree" / "output_full_test" / "HotpotQA" / "search_then_submit"
    folder = HERE / "edge_cases" / "output_full_test" / "HotpotQA" / "search_then_submit"
    shutil.rmtree(HERE / "edge_cases", ignore_errors=True)
    shutil.copytree(source, folder)
    files = sorted(folder.glob("*.json"))
    first = json.loads(files[0].read_text(encoding="utf-8"))

    def write(name: str, obj: dict) -> None:
        (folder / name).write_text(json.dumps(obj, ensure_ascii=False, indent=2), encoding="utf-8")

    (folder / "leftover.json.tmp").write_text(files[0].read_text(encoding="utf-8")[:200], encoding="utf-8")
    write("eval_null.json", {**first, "id": "eval_null", "eval": None})
    write(
        "no_judge.json",
        {**first, "id": "no_judge", "eval": {k: v for k, v in first["eval"].items() if k != "gpt_judge"}},
    )
    (folder / "latin1.json").write_bytes(
        json.dumps({**first, "id": "latin1", "question": "Qu\u00e9?"}, ensure_ascii=False).encode(
            "latin-1", "replace"
        )
    )
    (folder / "truncated.json").write_text(files[0].read_text(encoding="utf-8")[:300], encoding="utf-8")
    write("duplicate.json", first)


def print_tables(ref: Path, python: str) -> None:
    for name, extra in (("reference_table.txt", []), ("reference_table_disable_n.txt", ["--disable_n"])):
        out = subprocess.run(
            [
                python,
                "scripts/print_qa_benchmark_md_table.py",
                *("--full_root", str(HERE / "tree" / ROOTS["full_test"])),
                *("--sample_root", str(HERE / "tree" / ROOTS["random_300"])),
                *extra,
            ],
            cwd=ref,
            check=True,
            capture_output=True,
            text=True,
        )
        (HERE / name).write_text(out.stdout, encoding="utf-8")


def main(ref: str, python: str) -> None:
    from serve.launch import ServeProcess
    from sws.agent.scripted_server import ScriptedLLMServer

    shutil.rmtree(HERE / "tree", ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        index = build_index(Path(tmp))
        with ServeProcess(index, log_path=Path(tmp) / "serve.log") as tools, ScriptedLLMServer() as llm:
            run_reference(Path(ref), python, llm.url.removesuffix("/v1"), tools.url, Path(tmp))
    make_edge_cases()
    print_tables(Path(ref), python)


if __name__ == "__main__":
    main(*sys.argv[1:3])
