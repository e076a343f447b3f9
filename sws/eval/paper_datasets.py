"""The paper's six QA benchmarks, registered: their names, how their items are typed, where
``sws fetch datasets`` gets their evaluation splits and where they sit in the reference's QA archive
(``data/dataset/full_test/<name>/<file>.jsonl``, ``data/dataset/random_300/<name>.json``: the files its
``run_qa_agent.py`` reads; ``sws eval --qa-root``).

Every source is a plain HTTPS file (no hub login, no Google Drive): the datasets' own release where it is a
plain file, else a Hugging Face dataset repository's ``resolve`` URL, saved under a name :func:`infer_dataset`
recognises.

| dataset | file | source |
|---|---|---|
| 2WikiMultiHopQA dev (12,576) | ``2wikimultihopqa_dev.jsonl`` | FlashRAG's JSONL of the official dev split (the official release is a Dropbox zip) |
| HotpotQA dev (7,405) | ``hotpotqa_dev_distractor_v1.json`` | the authors' file at CMU; a byte-identical Hugging Face copy (RAGLAB) as fallback; sha256 pinned |
| MuSiQue-Ans dev (2,417) | ``musique_ans_v1.0_dev.jsonl`` | the official JSONL (the release zip is on Google Drive), from the ``dgslibisey/MuSiQue`` HF copy |
| FRAMES test (824) | ``frames_test.tsv`` | ``google/frames-benchmark`` ``test.tsv`` (the authors' HF release) |
| PopQA test (14,267) | ``popqa_test.tsv`` | ``akariasai/PopQA`` ``test.tsv`` (the authors' HF release) |
| Bamboogle (125) | ``bamboogle_test.jsonl`` | FlashRAG's JSONL of all 125 questions |
"""

from __future__ import annotations

from typing import Any

from sws.eval.registry import QADataset, ReferenceFiles, register_dataset
from sws.fetch import QASource

HF = "https://huggingface.co/datasets"
FLASHRAG = f"{HF}/RUC-NLPIR/FlashRAG_datasets/resolve/main"
RAGLAB_REVISION = "c33b09b7fa5099b89830e84f9bdff78329268d9b"  # a byte-identical copy of the CMU file


def _musique_type(raw: dict[str, Any], ident: str) -> str:
    return ident.split("__")[0] if "__" in ident else "unknown"  # "2hop__1234_5678"


def _popqa_type(raw: dict[str, Any], ident: str) -> str:
    return str(raw.get("prop") or "unknown")


def _frames_type(raw: dict[str, Any], ident: str) -> str:
    return str(raw["reasoning_types"]) if raw.get("reasoning_types") else "default"


PAPER_DATASETS = (
    QADataset(
        "2WikiMultiHopQA",
        ("2wiki", "2wikimultihop"),
        source=QASource(
            "2WikiMultiHopQA",
            "2wikimultihopqa_dev.jsonl",
            (f"{FLASHRAG}/2wikimultihopqa/dev.jsonl",),
            "dev",
            12576,
            licence="Apache-2.0",
        ),
        label="2Wiki",
        reference=ReferenceFiles("2WikiMultiHopQA", "dev.jsonl"),
    ),
    QADataset(
        "HotpotQA",
        ("hotpot",),
        source=QASource(
            "HotpotQA",
            "hotpotqa_dev_distractor_v1.json",
            (
                "https://curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_distractor_v1.json",
                f"{HF}/RAGLAB/data/resolve/{RAGLAB_REVISION}/eval_datasets/HotPotQA/hotpot_dev_distractor_v1.json",
            ),
            "dev (distractor)",
            7405,
            sha256="4e9ecb5c8d3b719f624d66b60f8d56bf227f03914f5f0753d6fa1b359d7104ea",
            bytes=46_320_117,
            licence="CC BY-SA 4.0",
        ),
        reference=ReferenceFiles("HotpotQA", "hotpot_dev_fullwiki_v1.jsonl"),
    ),
    QADataset(
        "MuSiQue",
        item_type=_musique_type,
        source=QASource(
            "MuSiQue",
            "musique_ans_v1.0_dev.jsonl",
            (f"{HF}/dgslibisey/MuSiQue/resolve/main/musique_ans_v1.0_dev.jsonl",),
            "MuSiQue-Ans dev",
            2417,
            licence="CC BY 4.0",
        ),
        reference=ReferenceFiles("MuSiQue", "musique_ans_v1.0_dev.jsonl", _musique_type),
    ),
    QADataset(
        "FRAMES",
        item_type=_frames_type,
        source=QASource(
            "FRAMES",
            "frames_test.tsv",
            (f"{HF}/google/frames-benchmark/resolve/main/test.tsv",),
            "test",
            824,
            licence="Apache-2.0",
        ),
        # its rows typed "default" there: the reference's runner reads no reasoning_types
        reference=ReferenceFiles("FRAMES", "frames.jsonl"),
    ),
    QADataset(
        "PopQA",
        item_type=_popqa_type,
        source=QASource(
            "PopQA",
            "popqa_test.tsv",
            (f"{HF}/akariasai/PopQA/resolve/main/test.tsv",),
            "test",
            14267,
            licence="MIT",
        ),
        reference=ReferenceFiles("PopQA", "popqa.jsonl", _popqa_type),
    ),
    QADataset(
        "Bamboogle",
        source=QASource(
            "Bamboogle", "bamboogle_test.jsonl", (f"{FLASHRAG}/bamboogle/test.jsonl",), "test", 125
        ),
        reference=ReferenceFiles("Bamboogle", "bamboogle.jsonl"),
    ),
)

for _dataset in PAPER_DATASETS:
    register_dataset(_dataset)
