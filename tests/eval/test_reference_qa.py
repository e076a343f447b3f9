"""The reference's QA archive (``sws eval --qa-root``): sws reads a synthetic ``data/dataset`` tree as the
reference's runner loads it (``tests/data/reference_qa/expected.json``, written by running the runner's own
loader functions over the same tree: ``make_expected.py`` there), and refuses a bad archive in one line before
any Ray, index or episode."""

import json
import logging
from pathlib import Path

import pytest
from click.testing import CliRunner

from sws.cli import cli
from sws.config import AgentConfig
from sws.eval.questions import read_questions

ROOT = Path("tests/data/reference_qa")
ARCHIVE = ROOT / "data" / "dataset"
EXPECTED = json.loads((ROOT / "expected.json").read_text(encoding="utf-8"))
CASES = [(name, loaded) for name, both in EXPECTED["datasets"].items() for loaded in both]


@pytest.mark.parametrize(("dataset", "loaded"), CASES, ids=[f"{n}-{x['subset']}" for n, x in CASES])
def test_the_archive_reads_as_the_reference_runner_loads_it(dataset, loaded):
    questions = read_questions(dataset, loaded["subset"], qa_root=ARCHIVE)
    seed = AgentConfig().seed  # the episode at position i is seeded seed + i (sws.agent.episode)
    got = [
        {
            "id": item.id,
            "question": item.question,
            "answer": item.answer,
            "answer_aliases": list(item.aliases),
            "type": item.type,
            "asked": item.question.strip(),  # what the agent sends (SearchAgent.run)
            "seed": seed + i,
        }
        for i, item in enumerate(questions.items)
    ]
    assert got == loaded["items"]
    assert questions.path == ROOT / loaded["path"] and questions.label == loaded["subset"]
    assert (questions.source, questions.sampling_seed) == ("reference", None)
    assert {item.dataset for item in questions.items} == {dataset}


def test_rows_without_gold_are_dropped_counted_and_named(caplog):
    with caplog.at_level(logging.WARNING, logger="sws.eval.datasets"):
        read_questions("musique", "full_test", qa_root=ARCHIVE)
    assert "musique_ans_v1.0_dev.jsonl: dropped 2 item(s) without gold (line 5, line 12)" in caplog.text


def evaluate(root, dataset="MuSiQue", subset="random_300"):
    args = [
        "eval",
        "--dataset",
        dataset,
        "--qa-root",
        str(root),
        "--subset",
        subset,
        "--index",
        "no-such-index",
    ]
    return CliRunner().invoke(cli, args)


def archive(tmp_path, name: str, content: str | bytes) -> Path:
    """A ``data/dataset`` folder holding one file, ``name`` under it."""
    path = tmp_path / "dataset" / name
    path.parent.mkdir(parents=True)
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return path


MUSIQUE_JSONL = "full_test/MuSiQue/musique_ans_v1.0_dev.jsonl"
ROW = {"id": "2hop__1", "question": "Q?", "answer": "A"}


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (
            MUSIQUE_JSONL,
            json.dumps(ROW) + '\n{"id": "b", "question": \n',
            ":2: malformed JSON: Expecting value",
        ),
        (MUSIQUE_JSONL, json.dumps(ROW).encode() + b'\n{"id": "\xff"}\n', ":2: invalid UTF-8 (byte "),
        (MUSIQUE_JSONL, '["not", "an object"]\n', ":1: expected a JSON object, got list"),
        (MUSIQUE_JSONL, '{"question": "Q?", "answer": "A"}\n', ":1: no id or qid (the reference names each"),
        (
            MUSIQUE_JSONL,
            '{"id": "a", "question": " ", "prompt": "", "answer": "A"}\n',
            ":1: item without a question",
        ),
        (
            MUSIQUE_JSONL,
            json.dumps(ROW) + "\n" + json.dumps(ROW) + "\n",
            ":2: duplicate id '2hop__1' (first at line 1)",
        ),
        ("random_300/MuSiQue.json", '{"data": []}', ": expected a JSON list of questions, got dict"),
        ("random_300/MuSiQue.json", "[1, 2]", ": item 1: expected a JSON object, got int"),
        ("random_300/MuSiQue.json", "", ": empty file"),
        ("random_300/MuSiQue.json", "[\n{]", ":2: malformed JSON: Expecting property name"),
        (
            "random_300/MuSiQue.json",
            '[{"id": "a", "question": "Q?", "answers": []}]',
            ": item 1: item 'a' has no gold answer (the reference runs it unscored; sws scores every question)",
        ),
    ],
)
def test_a_bad_file_is_one_line_naming_where(tmp_path, name, content, message):
    path = archive(tmp_path, name, content)
    subset = name.split("/")[0]
    result = evaluate(tmp_path / "dataset", subset=subset)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), result.output
    (line,) = result.output.splitlines()
    assert line.startswith(f"Error: {path}{message}"), line


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        (MUSIQUE_JSONL, "\n\n", ": no items"),
        (MUSIQUE_JSONL, '{"id": "a", "question": "Q?"}\n', ": none of its 1 items has a gold answer"),
        ("random_300/MuSiQue.json", "[]", ": no items"),
    ],
)
def test_a_file_without_a_question_to_run_is_a_usage_error(tmp_path, name, content, message):
    path = archive(tmp_path, name, content)
    result = evaluate(tmp_path / "dataset", subset=name.split("/")[0])
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == f"Error: {path}{message}"


def test_a_missing_folder_or_file_is_one_line(tmp_path):
    missing = evaluate(tmp_path / "nowhere")
    not_an_archive = "is not the reference's QA archive folder: it has neither full_test/ nor random_300/"
    assert missing.exit_code == 1 and missing.output.splitlines() == [
        f"Error: {tmp_path / 'nowhere'} {not_an_archive} (give the archive's data/dataset)"
    ]
    archive(tmp_path, "random_300/PopQA.json", "[]")
    absent = evaluate(tmp_path / "dataset", "MuSiQue", "random_300")
    wanted = tmp_path / "dataset" / "random_300" / "MuSiQue.json"
    assert absent.exit_code == 1 and absent.output.splitlines() == [
        f"Error: {wanted}: no such file (the reference reads MuSiQue's random_300 from it)"
    ]
    id_list = evaluate(tmp_path / "dataset", "MuSiQue", str(tmp_path / "ids.txt"))
    assert id_list.exit_code == 1 and id_list.output.splitlines() == [
        f"Error: the reference's QA archive holds full_test and random_300, not '{tmp_path / 'ids.txt'}'"
    ]


def test_data_and_qa_root_are_one_or_the_other():
    both = CliRunner().invoke(
        cli,
        ["eval", "--dataset", "musique", "--qa-root", str(ARCHIVE), "--data", str(ROOT / "expected.json")],
    )
    neither = CliRunner().invoke(cli, ["eval", "--dataset", "musique"])
    for result in (both, neither):
        assert result.exit_code == 2, result.output
        assert result.output.splitlines()[-1] == (
            "Error: give the questions as --data FILE or --qa-root DIR (the reference's data/dataset), one of them"
        )
