"""File-format readers: each yields raw dicts with the keys the item builder understands.

Raw keys: ``id``, ``question``, ``prompt``, ``answer``, ``answers``, ``answer_aliases``, ``type``, ``prop``,
``reasoning_types`` (only those the file has). Formats: JSON lists (plain ``{question, answer}``, official
2WikiMultiHopQA / HotpotQA), JSONL (FlashRAG ``golden_answers``, official MuSiQue, the reference's normalised
files), Search-R1 / verl Parquet, CSV (FRAMES, Bamboogle) and TSV (FRAMES ``test.tsv``, PopQA ``popQA.tsv``).

Every row comes with where it is: its line in JSONL, CSV and TSV files (the line a CSV record ends on), its
1-based position in JSON lists and Parquet files, which have no line per row (:func:`where`). Files are read
as UTF-8; invalid bytes, malformed JSON, CSV or Parquet and fields of the wrong kind (``extra_info`` not a
struct, ``possible_answers`` not a list) are errors naming the file and the line or item.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import reprlib
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
        rows = json_document(path)
        if isinstance(rows, dict) and isinstance(rows.get("data"), list):
            rows = rows["data"]
        if not isinstance(rows, list):
            raise DatasetFormatError(f"{path}: expected a JSON list of objects, got {type(rows).__name__}")
        yield from ((n, _from_mapping(r, path, n)) for n, r in enumerate(rows, 1))
    elif suffix == ".jsonl":
        for n, line in enumerate(utf8_text(path).split("\n"), 1):
            if line.strip():
                yield n, _from_mapping(json_line(line, path, n), path, n)
    elif suffix == ".parquet":
        try:
            rows = pq.read_table(path).to_pylist()
        except (pa.ArrowException, OSError) as exc:
            raise DatasetFormatError(f"{path}: unreadable Parquet: {_first_line(exc)}") from exc
        yield from ((n, _from_searchr1(r, where(path, n))) for n, r in enumerate(rows, 1))
    elif suffix in (".csv", ".tsv"):
        yield from _table_rows(path, "\t" if suffix == ".tsv" else ",")
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


def utf8_text(path: Path) -> str:
    """The file's text; invalid UTF-8 is an error naming its line and byte."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DatasetFormatError(f"{path}:{line}: invalid UTF-8 (byte {exc.start})") from exc


def json_document(path: Path) -> Any:
    """The file as one JSON document; an empty file or malformed JSON is an error naming its line."""
    text = utf8_text(path)
    if not text.strip():
        raise DatasetFormatError(f"{path}: empty file")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(f"{path}:{exc.lineno}: malformed JSON: {exc.msg}") from exc


def json_line(line: str, path: Path, n: int) -> Any:
    """Line ``n`` of a JSONL file, parsed; malformed JSON is an error naming the line and column."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetFormatError(f"{path}:{n}: malformed JSON: {exc.msg} (column {exc.colno})") from exc


def _table_rows(path: Path, delimiter: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, raw row) of a CSV or TSV file, read strictly: a record the csv module cannot read (an unbalanced
    quote, a field over its 128 KiB limit) is an error naming the line it starts on."""
    reader = csv.DictReader(io.StringIO(utf8_text(path), newline=""), delimiter=delimiter, strict=True)
    start = 1
    try:
        if reader.fieldnames is None:  # an empty file
            return
        start = reader.line_num + 1
        for row in reader:
            yield reader.line_num, _from_table_row(row, path, where(path, reader.line_num))
            start = reader.line_num + 1
    except csv.Error as exc:
        raise DatasetFormatError(f"{path}:{start}: malformed {path.suffix[1:].upper()}: {exc}") from exc


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
    at = where(path, position)
    if "golden_answers" in obj and "answers" not in raw:  # FlashRAG
        raw["answers"] = _answer_list(obj, "golden_answers", at)
    if "possible_answers" in obj and "answers" not in raw:  # PopQA official, as JSON
        raw["answers"] = _answer_list(obj, "possible_answers", at)
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    if obj.get("prop") or meta.get("prop"):
        raw["prop"] = obj.get("prop") or meta["prop"]
    return raw


def _from_searchr1(row: dict[str, Any], at: str) -> dict[str, Any]:
    extra = _struct(row, "extra_info", at)
    question = extra.get("question") or row.get("question") or _prompt_text(row.get("prompt"), at)
    raw: dict[str, Any] = {"question": question}
    gold = _struct(row, "reward_model", at).get("ground_truth")
    if isinstance(gold, dict):  # Search-R1 proper: {"target": [...]}
        gold = gold.get("target")
    if row.get("golden_answers") is not None:
        raw["answers"] = _answer_list(row, "golden_answers", at)
    elif isinstance(gold, (list, tuple)):
        raw["answers"] = list(gold)
    elif gold is not None:
        raw["answer"] = gold
    elif extra.get("answer") is not None:
        raw["answer"] = extra["answer"]
    if row.get("id") not in (None, ""):
        raw["id"] = str(row["id"])
    return raw


def _struct(row: dict[str, Any], key: str, at: str) -> dict[str, Any]:
    """``row[key]``, a struct (a dict; {} when absent)."""
    value = row.get(key)
    if value is not None and not isinstance(value, dict):
        raise DatasetFormatError(f"{at}: {key} is {type(value).__name__}, not a struct")
    return value or {}


def _prompt_text(prompt: Any, at: str) -> str:
    """The content of a chat prompt's last message (Search-R1 / verl ``prompt``); "" without a prompt."""
    if not prompt:
        return ""
    if not isinstance(prompt, list):
        raise DatasetFormatError(f"{at}: prompt is {type(prompt).__name__}, not a list of chat messages")
    last = prompt[-1]
    if not isinstance(last, dict) or not isinstance(last.get("content"), str):
        raise DatasetFormatError(f"{at}: the prompt's last message has no content")
    return last["content"]


def _from_table_row(row: dict[str, str], path: Path, at: str) -> dict[str, Any]:
    cols = {k.strip().lower(): v for k, v in row.items() if k is not None}  # None: surplus cells
    named = [c for c in _QUESTION_COLUMNS if c in cols]
    if not named:
        raise DatasetFormatError(f"{path}: no question column (one of {_QUESTION_COLUMNS}) in {list(row)}")
    raw: dict[str, Any] = {"question": next((cols[c] for c in named if cols[c]), "")}  # "": refused by line
    if cols.get("possible_answers"):  # PopQA official
        raw["answers"] = _answer_list(cols, "possible_answers", at)
    elif "answer" in cols:
        raw["answer"] = cols["answer"]
    ident = next((cols[c] for c in _ID_COLUMNS if cols.get(c)), None)
    if ident is not None:
        raw["id"] = ident
    for key in ("type", "prop", "reasoning_types"):
        if cols.get(key):
            raw[key] = cols[key]
    return raw


def _answer_list(obj: dict[str, Any], key: str, at: str) -> list | None:
    """``obj[key]``, a list of answers or one written as a JSON string (PopQA's ``possible_answers``)."""
    value = answers = obj[key]
    if isinstance(value, str):
        with contextlib.suppress(json.JSONDecodeError):
            answers = json.loads(value)
    if answers is not None and not isinstance(answers, list):
        raise DatasetFormatError(f"{at}: {key} is not a JSON list: {reprlib.repr(value)}")
    return answers
