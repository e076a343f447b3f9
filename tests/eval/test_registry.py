"""A QA dataset is one registration (``sws.eval.registry``): once registered, it is loadable by its name, an
alias or its file name, listed in ``sws eval --help`` and ``sws fetch datasets --help``, fetchable from its
source and a column of the report's tables; the paper's six are registered the same way."""

import json

import pytest
from click.testing import CliRunner

from sws.cli import cli
from sws.eval import (
    DatasetError,
    QADataset,
    ReferenceFiles,
    canonical_dataset,
    get_dataset,
    load_dataset,
    qa_sources,
    read_questions,
    register_dataset,
    registered_datasets,
    unregister_dataset,
)
from sws.fetch import QASource

SOURCE = QASource(
    "TriviaToy", "triviatoy_dev.jsonl", ("https://example.org/triviatoy.jsonl",), "dev", 2, bytes=99
)


@pytest.fixture
def toy():
    dataset = register_dataset(
        QADataset("TriviaToy", ("ttoy",), item_type=lambda raw, ident: f"toy-{ident}", source=SOURCE)
    )
    yield dataset
    unregister_dataset(dataset.name)


def test_the_paper_six_are_registered_in_the_papers_order():
    assert list(registered_datasets()) == [
        "2WikiMultiHopQA",
        "HotpotQA",
        "MuSiQue",
        "FRAMES",
        "PopQA",
        "Bamboogle",
    ]
    assert [s.dataset for s in qa_sources()] == list(registered_datasets())


def test_a_registered_dataset_is_loadable_listed_and_fetchable(toy, tmp_path):
    path = tmp_path / "triviatoy_dev.jsonl"
    path.write_text(json.dumps({"id": "q1", "question": "Who?", "answer": "Her"}) + "\n")
    (item,) = load_dataset(path)  # the file's name tells the dataset
    assert (item.dataset, item.type, item.answer) == ("TriviaToy", "toy-q1", "Her")
    assert load_dataset(path, "ttoy") == load_dataset(path, "Trivia-Toy") == [item]
    assert canonical_dataset("TTOY") == "TriviaToy" and get_dataset("triviatoy") is toy

    runner = CliRunner()
    listed = runner.invoke(cli, ["eval", "--help"], terminal_width=400).output
    assert "2wikimultihopqa, hotpotqa, musique, frames, popqa, bamboogle or triviatoy." in listed
    listed = runner.invoke(cli, ["fetch", "datasets", "--help"], terminal_width=400).output
    assert "popqa, bamboogle or triviatoy; repeatable" in listed
    plan = runner.invoke(
        cli, ["fetch", "datasets", "--name", "ttoy", "--out", str(tmp_path / "o"), "--dry-run"]
    )
    assert plan.exit_code == 0, plan.output
    assert "triviatoy_dev.jsonl" in plan.stdout and "99 B" in plan.stdout


def read_lines(path):
    """A reader of its own: ``question|answer`` lines."""
    for n, line in enumerate(path.read_text().splitlines(), 1):
        question, answer = line.split("|")
        yield n, {"question": question, "answer": answer}


def test_a_dataset_with_its_own_reader_and_no_source_is_loadable_not_fetchable(tmp_path):
    register_dataset(QADataset("LocalToy", read=read_lines))
    try:
        assert "localtoy" not in CliRunner().invoke(cli, ["fetch", "datasets", "--help"]).output
        result = CliRunner().invoke(cli, ["fetch", "datasets", "--name", "localtoy", "--dry-run"])
        assert result.exit_code == 1 and "no QA source for LocalToy" in result.output
        path = tmp_path / "localtoy.txt"
        path.write_text("Q1?|A1\nQ2?|A2\n")
        assert [(i.answer, i.type) for i in load_dataset(path)] == [("A1", "default"), ("A2", "default")]
    finally:
        unregister_dataset("LocalToy")


def test_a_name_or_alias_given_twice_is_refused(toy):
    with pytest.raises(ValueError, match=r"\['ttoy'\] already registered"):
        register_dataset(QADataset("Other", ("ttoy",)))
    with pytest.raises(ValueError, match="already registered"):
        register_dataset(QADataset("TriviaToy"))
    with pytest.raises(ValueError, match="not lower case"):
        QADataset("X", ("Bad-Alias",))
    with pytest.raises(ValueError, match="its source is 'TriviaToy''s"):
        QADataset("X", source=SOURCE)
    with pytest.raises(DatasetError, match="unknown dataset 'squad'"):
        get_dataset("squad")


def test_a_dataset_in_the_reference_archive_says_where_and_how_it_is_typed(tmp_path):
    """``ReferenceFiles``: its folder and full_test file there, and the type of a row that tells none."""
    files = ReferenceFiles("LocalToy", "toy.jsonl", lambda row, ident: f"toy-{ident or 'none'}")
    register_dataset(QADataset("LocalToy", reference=files))
    try:
        path = tmp_path / "full_test" / "LocalToy" / "toy.jsonl"
        path.parent.mkdir(parents=True)
        rows = [
            {"id": "q1", "question": "Q1?", "answer": "A"},
            {"qid": "q2", "question": "Q2?", "answer": "B"},
        ]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        questions = read_questions("localtoy", "full_test", qa_root=tmp_path)
        assert questions.path == path
        assert [(i.id, i.type, i.dataset) for i in questions.items] == [
            ("q1", "toy-q1", "LocalToy"),
            ("q2", "toy-none", "LocalToy"),  # typed by its id field, as the reference types
        ]
        assert files.path(tmp_path, "random_300") == tmp_path / "random_300" / "LocalToy.json"
    finally:
        unregister_dataset("LocalToy")
    register_dataset(QADataset("LocalToy"))
    try:
        with pytest.raises(
            DatasetError, match=r"^LocalToy is not in the reference's QA archive \(its datasets: 2Wiki"
        ):
            read_questions("localtoy", "full_test", qa_root=tmp_path)
    finally:
        unregister_dataset("LocalToy")
