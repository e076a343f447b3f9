"""Writes ``expected.json``: what the reference's runner (JimXiongGM/simple_wiki_search, ``run_qa_agent.py``)
loads from the synthetic ``data/dataset`` tree beside this file, through its own functions: the file
``_resolve_data_path`` picks, the rows ``_load_items`` returns, the id, question, gold, aliases and type
``_build_record`` records of each, the question ``_run_one`` asks (stripped) and the seed ``main`` passes
(``Args().seed`` + position).

Not a test: it needs the reference's source and its dependencies, which sws does not install. From this folder:

    git -C REFERENCE_REPO archive cdc9851 | tar -x -C /tmp/ref-src
    python3 -m venv /tmp/ref-venv && /tmp/ref-venv/bin/pip install tyro loguru tqdm httpx cachetools openai
    PYTHONPATH=/tmp/ref-src /tmp/ref-venv/bin/python make_expected.py
"""

import json
import sys
from pathlib import Path

import run_qa_agent as ref

DATASETS = ("2WikiMultiHopQA", "HotpotQA", "MuSiQue", "FRAMES", "PopQA", "Bamboogle")
NO_RESULT = {  # _build_record copies these from the agent's result; the questions' fields are what is compared
    "model_name": "",
    "messages": [],
    "tools": [],
    "predicted_answer": "",
    "stop_reason": "",
    "time_cost": 0.0,
    "usage": {},
}


def loaded(name: str, full_test: bool) -> dict:
    path, subset = ref._resolve_data_path(data_dir=None, dataset_name=name, use_full_test_data=full_test)
    items = []
    for idx, item in enumerate(ref._load_items(path, name)):
        record = ref._build_record(item=item, result=NO_RESULT, eval_metrics=None)
        items.append(
            {
                **{k: record[k] for k in ("id", "question", "answer", "answer_aliases", "type")},
                "asked": str(item["question"]).strip(),
                "seed": ref.Args().seed + idx,
            }
        )
    return {"subset": subset, "path": str(path), "items": items}


def main() -> None:
    expected = {
        "made_by": (
            "tests/data/reference_qa/make_expected.py: the reference's run_qa_agent.py (JimXiongGM/simple_wiki_search "
            "@ cdc9851, exported with git archive) loading this data/dataset tree"
        ),
        "datasets": {name: [loaded(name, True), loaded(name, False)] for name in DATASETS},
    }
    Path("expected.json").write_text(
        json.dumps(expected, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    sys.stdout.write("wrote expected.json\n")


if __name__ == "__main__":
    main()
