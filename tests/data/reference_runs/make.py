"""Regenerate this fixture by running the paper's own ``run_qa_agent.py`` and table script (README.md here).

Usage (from the repository root; REF is an export of JimXiongGM/simple_wiki_search @ cdc9851, PY a Python with
what its runner imports: tyro, loguru, tqdm, httpx, openai, cachetools, orjson; PART ``tree`` or ``sws``,
both when none is named)::

    RAY_AUTH_MODE=disabled PYTHONPATH=. .venv/bin/python tests/data/reference_runs/make.py REF PY [PART...]

It builds the leads index (tests/index/helpers.py) under a temporary directory, starts ``sws serve`` on it
(``LEADS_SERVE_ARGS``: queries embedded in fp32, as in process) and sws's scripted OpenAI-compatible LLM, then

- ``tree``: runs the reference runner for every subset x dataset x model of ``questions/`` (the models are
  scripted policies, :data:`MODELS`: ``search_then_submit``, ``heuristic`` and, on full_test,
  ``search_methods``; the LLM judge on with no OpenAI key, so an exact match scores 1, an empty answer 0,
  and any other has no ``gpt_judge``), writes ``tree/``, then ``edge_cases/`` (copies of one folder, edited:
  see README.md) and the reference script's output for ``tree/`` with and without ``--disable_n``;
- ``sws``: runs ``sws eval`` (``search_then_submit``, the same service) on two datasets of
  ``questions/full_test`` into ``sws_run/``, exports it with ``sws export --format reference`` into
  ``sws_export/output_full_test/`` and stores what the reference's table script prints for that export
  (``sws_export_table.txt``) and what its runner's resume check makes of it (``sws_export_cache.json``).
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
# the scripted policies run as models, per subset: search_methods (every search method) on full_test only
MODELS = {
    "full_test": ("search_then_submit", "heuristic", "search_methods"),
    "random_300": ("search_then_submit", "heuristic"),
}
ROOTS = {"full_test": "output_full_test", "random_300": "output_sample_random_300"}
SWS_MODEL = "search_then_submit"
SWS_DATASETS = ("Bamboogle", "HotpotQA")
SWS = [sys.executable, "-c", "from sws.cli import cli; cli()"]


def run_reference(ref: Path, python: str, llm_url: str, tools_url: str, home: Path) -> None:
    """The reference runner once per subset x dataset x model, one worker (so the files are in order)."""
    env = {**os.environ, "HOME": str(home), "OPENAI_API_KEY": ""}
    for subset, root in ROOTS.items():
        for data in sorted((HERE / "questions" / subset).iterdir()):
            dataset = data.name.split(".")[0]
            for model in MODELS[subset]:
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


def reference_table(ref: Path, python: str, root: Path, *extra: str) -> str:
    """What the reference's table script prints for ``root/output_full_test`` and ``root/output_sample_random_300``."""
    command = [python, "scripts/print_qa_benchmark_md_table.py"]
    command += [
        "--full_root",
        str(root / ROOTS["full_test"]),
        "--sample_root",
        str(root / ROOTS["random_300"]),
    ]
    return subprocess.run([*command, *extra], cwd=ref, check=True, capture_output=True, text=True).stdout


def print_tables(ref: Path, python: str) -> None:
    for name, extra in (("reference_table.txt", []), ("reference_table_disable_n.txt", ["--disable_n"])):
        (HERE / name).write_text(reference_table(ref, python, HERE / "tree", *extra), encoding="utf-8")


def sws_eval(llm_url: str, tools_url: str) -> None:
    """``sws eval`` of the scripted ``search_then_submit`` on questions/full_test's SWS_DATASETS, one worker."""
    from sws.eval.lock import LOCK_FILE

    shutil.rmtree(HERE / "sws_run", ignore_errors=True)
    repo = HERE.parents[2]  # paths relative to the repository, as run.json records them
    for dataset in SWS_DATASETS:
        data = (HERE / "questions" / "full_test" / f"{dataset}.jsonl").relative_to(repo)
        command = [*SWS, "eval", "--dataset", dataset, "--data", str(data), "--subset", "full_test"]
        command += ["--llm-base-url", llm_url, "--model", SWS_MODEL, "--tools-url", tools_url]
        out = (HERE / "sws_run" / dataset).relative_to(repo)
        subprocess.run([*command, "--out", str(out), "eval.workers=1"], cwd=repo, check=True)
        (HERE / "sws_run" / dataset / LOCK_FILE).unlink()  # the finished run's lock, not data


def cached_ids(ref: Path, python: str, data: Path, dataset: str, save_dir: Path) -> dict[str, list]:
    """The reference runner's resume check (``_partition_cached_items``) on ``data`` against ``save_dir``:
    ``{"cached": [{qid, status, f1, gpt_judge}...], "pending": [ids]}``."""
    script = (
        "import json\nfrom pathlib import Path\nimport run_qa_agent as r\n"
        f"items = r._load_items(Path({str(data)!r}), {dataset!r})\n"
        f"cached, pending = r._partition_cached_items(items, Path({str(save_dir)!r}))\n"
        "print(json.dumps({'cached': cached, 'pending': [item['id'] for _, item in pending]}))\n"
    )
    done = subprocess.run([python, "-c", script], cwd=ref, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def check_sws_export(ref: Path, python: str) -> None:
    """``sws export`` of sws_run/, then the reference's table script and runner cache on that export."""
    export = HERE / "sws_export"
    shutil.rmtree(export, ignore_errors=True)
    subprocess.run(
        [*SWS, "export", "--format", "reference", str(HERE / "sws_run"), str(export / ROOTS["full_test"])],
        check=True,
    )
    table = reference_table(ref, python, export, "--models", SWS_MODEL)
    (HERE / "sws_export_table.txt").write_text(table, encoding="utf-8")
    cache = {
        dataset: cached_ids(
            ref,
            python,
            HERE / "questions" / "full_test" / f"{dataset}.jsonl",
            dataset,
            export / ROOTS["full_test"] / dataset / SWS_MODEL,
        )
        for dataset in SWS_DATASETS
    }
    (HERE / "sws_export_cache.json").write_text(json.dumps(cache, indent=2) + "\n", encoding="utf-8")


def main(ref: str, python: str, *parts: str) -> None:
    from serve.launch import ServeProcess
    from sws.agent.scripted_server import ScriptedLLMServer
    from tests.index.helpers import LEADS_SERVE_ARGS, build_leads_index

    parts = parts or ("tree", "sws")
    if unknown := set(parts) - {"tree", "sws"}:
        sys.exit(f"unknown part(s) {sorted(unknown)}: tree or sws")
    with tempfile.TemporaryDirectory() as tmp:
        index = build_leads_index(Path(tmp)) / "index"
        serve = ServeProcess(index, args=LEADS_SERVE_ARGS, log_path=Path(tmp) / "serve.log")
        with serve as tools, ScriptedLLMServer() as llm:
            if "tree" in parts:
                shutil.rmtree(HERE / "tree", ignore_errors=True)
                run_reference(Path(ref), python, llm.url.removesuffix("/v1"), tools.url, Path(tmp))
            if "sws" in parts:
                sws_eval(llm.url, tools.url)
    if "tree" in parts:
        make_edge_cases()
        print_tables(Path(ref), python)
    if "sws" in parts:
        check_sws_export(Path(ref), python)


if __name__ == "__main__":
    main(*sys.argv[1:])
