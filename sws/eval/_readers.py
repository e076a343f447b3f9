"""File-format readers: each yields raw dicts with the keys the item builder understands.

Raw keys: ``id``, ``question``, ``prompt``, ``answer``, ``answers``, ``answer_aliases``, ``type``, ``prop``,
``reasoning_types`` (only those the file has). Formats: JSON lists (plain ``{question, answer}``, official
2WikiMultiHopQA / HotpotQA), JSONL (FlashRAG ``golden_answers``, official MuSiQue, the reference's normalised
files), Search-R1 / verl Parquet, CSV (FRAMES, Bamboogle) and TSV (FRAMES ``test.tsv``, PopQA ``popQA.tsv``).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

_QUESTION_COLUMNS = ("question", "prompt", "problem")
_ID_COLUMNS = ("id", "_id", "qid", "", "unnamed: 0")


class DatasetFormatError(ValueError):
    """A QA file that no reader understands, or whose rows lack a question."""


def read_raw(path: Path) -> Iterator[dict[str, Any]]:
    """Raw rows of a QA file, in file order, by extension (``.json``, ``.jsonl``, ``.parquet``, ``.csv``, ``.tsv``)."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        rows = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(rows, dict) and isinstance(rows.get("data"), list):
            rows = rows["data"]
        if not isinstance(rows, list):
            raise DatasetFormatError(f"{path}: expected a JSON list of objects, got {type(rows).__name__}")
        yield from (_from_mapping(r, path) for r in rows)
    elif suffix == ".jsonl":
        with path.open(encoding="utf-8") as f:
            yield from (_from_mapping(json.loads(line), path) for line in f if line.strip())
    elif suffix == ".parquet":
        yield from (_from_searchr1(r) for r in pq.read_table(path).to_pylist())
    elif suffix in (".csv", ".tsv"):
        with path.open(encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f, delimiter="\t" if suffix == ".tsv" else ",")
            yield from (_from_table_row(r, path) for r in reader)
    else:
        raise DatasetFormatError(
            f"{path}: unsupported QA file type {suffix!r} (json, jsonl, parquet, csv, tsv)"
        )


def _from_mapping(obj: Any, path: Path) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise DatasetFormatError(f"{path}: expected JSON objects, got {type(obj).__name__}")
    raw = {
        k: obj[k] for k in ("question", "prompt", "answer", "answers", "answer_aliases", "type") if k in obj
    }
    ident = next((obj[k] for k in ("id", "_id", "qid") if obj.get(k) not in (None, "")), None)
    if ident is not None:
        raw["id"] = str(ident)
    if "golden_answers" in obj and "answers" not in raw:  # FlashRAG
        raw["answers"] = obj["golden_answers"]
    if "possible_answers" in obj and "answers" not in raw:  # PopQA official, as JSON
        raw["answers"] = _json_list(obj["possible_answers"])
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    if obj.get("prop") or meta.get("prop"):
        raw["prop"] = obj.get("prop") or meta["prop"]
    return raw


def _from_searchr1(row: dict[str, Any]) -> dict[str, Any]:
    extra = row.get("extra_info") or {}
    prompt = row.get("prompt") or []
    question = extra.get("question") or row.get("question") or (prompt[-1]["content"] if prompt else "")
    raw: dict[str, Any] = {"question": question}
    gold = (row.get("reward_model") or {}).get("ground_truth")
    if isinstance(gold, dict):  # Search-R1 proper: {"target": [...]}
        gold = gold.get("target")
    if row.get("golden_answers") is not None:
        raw["answers"] = list(row["golden_answers"])
    elif isinstance(gold, (list, tuple)):
        raw["answers"] = list(gold)
    elif gold is not None:
        raw["answer"] = gold
    elif extra.get("answer") is not None:
        raw["answer"] = extra["answer"]
    if row.get("id") not in (None, ""):
        raw["id"] = str(row["id"])
    return raw


def _from_table_row(row: dict[str, str], path: Path) -> dict[str, Any]:
    cols = {k.strip().lower(): v for k, v in row.items() if k is not None}  # None: surplus cells
    question = next((cols[c] for c in _QUESTION_COLUMNS if cols.get(c)), None)
    if question is None:
        raise DatasetFormatError(f"{path}: no question column (one of {_QUESTION_COLUMNS}) in {list(row)}")
    raw: dict[str, Any] = {"question": question}
    if cols.get("possible_answers"):  # PopQA official
        raw["answers"] = _json_list(cols["possible_answers"])
    elif "answer" in cols:
        raw["answer"] = cols["answer"]
    ident = next((cols[c] for c in _ID_COLUMNS if cols.get(c)), None)
    if ident is not None:
        raw["id"] = ident
    for key in ("type", "prop", "reasoning_types"):
        if cols.get(key):
            raw[key] = cols[key]
    return raw


def _json_list(value: Any) -> list:
    return json.loads(value) if isinstance(value, str) else list(value)
