"""File-format readers: each yields raw dicts with the keys the item builder understands.

Raw keys: ``id``, ``question``, ``prompt``, ``answer``, ``answers``, ``answer_aliases``, ``type``, ``prop``,
``reasoning_types`` (only those the file has). Formats: JSON lists (plain ``{question, answer}``, official
2WikiMultiHopQA / HotpotQA), JSONL (FlashRAG ``golden_answers``, official MuSiQue, the reference's normalised
files), Search-R1 / verl Parquet, CSV (FRAMES, Bamboogle) and TSV (FRAMES ``test.tsv``, PopQA ``popQA.tsv``).

Every row comes with where it is: its line in JSONL, CSV and TSV files (the line a CSV record ends on), its
1-based position in JSON lists and Parquet files, which have no line per row (:func:`where`). Files are read
as UTF-8; invalid bytes, malformed JSON and unreadable Parquet are errors naming the file and line.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

_QUESTION_COLUMNS = ("question", "prompt", "problem")
_ID_COLUMNS = ("id", "_id", "qid", "", "unnamed: 0")
_LINE_FORMATS = (".jsonl", ".csv", ".tsv")


class DatasetFormatError(ValueError):
    """A QA file that no reader understands, or whose rows lack a question."""


def read_raw(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(position, raw row) of a QA file in file order, by extension (``.json``, ``.jsonl``, ``.parquet``,
    ``.csv``, ``.tsv``); the position is a line or an item number, as :func:`where` says.

    Raises:
        DatasetFormatError: an unsupported extension, invalid UTF-8, malformed JSON or unreadable Parquet.
    """
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            rows = json.loads(_text(path))
        except json.JSONDecodeError as exc:
            raise DatasetFormatError(f"{path}:{exc.lineno}: malformed JSON: {exc.msg}") from exc
        if isinstance(rows, dict) and isinstance(rows.get("data"), list):
            rows = rows["data"]
        if not isinstance(rows, list):
            raise DatasetFormatError(f"{path}: expected a JSON list of objects, got {type(rows).__name__}")
        yield from ((n, _from_mapping(r, path, n)) for n, r in enumerate(rows, 1))
    elif suffix == ".jsonl":
        for n, line in enumerate(_text(path).split("\n"), 1):
            if line.strip():
                yield n, _from_mapping(_json_line(line, path, n), path, n)
    elif suffix == ".parquet":
        try:
            rows = pq.read_table(path).to_pylist()
        except (pa.ArrowException, OSError) as exc:
            raise DatasetFormatError(f"{path}: unreadable Parquet: {_first_line(exc)}") from exc
        yield from enumerate((_from_searchr1(r) for r in rows), 1)
    elif suffix in (".csv", ".tsv"):
        reader = csv.DictReader(
            io.StringIO(_text(path), newline=""), delimiter="\t" if suffix == ".tsv" else ","
        )
        for row in reader:
            yield reader.line_num, _from_table_row(row, path)
    else:
        raise DatasetFormatError(
            f"{path}: unsupported QA file type {suffix!r} (json, jsonl, parquet, csv, tsv)"
        )


def where(path: Path, position: int) -> str:
    """``path:LINE`` for JSONL, CSV and TSV files, ``path: item N`` for JSON lists and Parquet."""
    return f"{path}:{position}" if _by_line(path) else f"{path}: item {position}"


def position_name(path: Path, position: int) -> str:
    """``line N`` or ``item N``, as :func:`where` counts in this file."""
    return f"{'line' if _by_line(path) else 'item'} {position}"


def _by_line(path: Path) -> bool:
    return path.suffix.lower() in _LINE_FORMATS


def _text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DatasetFormatError(f"{path}:{line}: invalid UTF-8 (byte {exc.start})") from exc


def _json_line(line: str, path: Path, n: int) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(f"{path}:{n}: malformed JSON: {exc.msg} (column {exc.colno})") from exc


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]


def _from_mapping(obj: Any, path: Path, position: int) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise DatasetFormatError(f"{where(path, position)}: expected a JSON object, got {type(obj).__name__}")
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
