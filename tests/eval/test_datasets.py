"""Loaders over every QA file in tests/data/qa (copies of ../shared/data/qa) and the official forms."""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sws.eval import (
    DatasetError,
    QAItem,
    canonical_dataset,
    gold_and_aliases,
    load_dataset,
    random_subset,
    select,
    subset_by_ids,
)

QA = Path(__file__).parents[1] / "data" / "qa"

FILES = {
    "2wikimultihop_test_questions_and_answers.json": ("2WikiMultiHopQA", 12_576),
    "2wikimultihopqa_dev.searchr1.parquet": ("2WikiMultiHopQA", 12_576),
    "hotpotqa_test_questions_and_answers.json": ("HotpotQA", 7_405),
    "hotpotqa_dev.searchr1.parquet": ("HotpotQA", 7_405),
    "musique_test_questions_and_answers.json": ("MuSiQue", 2_417),
    "musique_dev.searchr1.parquet": ("MuSiQue", 2_417),
    "frames_test_set.csv": ("FRAMES", 824),
    "popqa_test_sample1000_seed42.flashrag.jsonl": ("PopQA", 1_000),
    "bamboogle_test.flashrag.jsonl": ("Bamboogle", 125),
    "bamboogle_test_questions_and_answers.json": ("Bamboogle", 125),
}

_cache: dict[str, list[QAItem]] = {}


def items_of(name: str) -> list[QAItem]:
    if name not in _cache:
        _cache[name] = load_dataset(QA / name)
    return _cache[name]


@pytest.mark.parametrize("name", FILES)
def test_counts_names_unique_ids(name):
    dataset, n = FILES[name]
    items = items_of(name)
    assert len(items) == n
    assert {i.dataset for i in items} == {dataset}
    assert len({i.id for i in items}) == n
    assert all(i.question.strip() and isinstance(i.answer, str) for i in items)


@pytest.mark.parametrize(
    ("json_name", "parquet_name"),
    [
        ("2wikimultihop_test_questions_and_answers.json", "2wikimultihopqa_dev.searchr1.parquet"),
        ("hotpotqa_test_questions_and_answers.json", "hotpotqa_dev.searchr1.parquet"),
        ("musique_test_questions_and_answers.json", "musique_dev.searchr1.parquet"),
    ],
)
def test_json_and_searchr1_forms_agree(json_name, parquet_name):
    assert items_of(json_name) == items_of(parquet_name)


@pytest.mark.parametrize("name", [n for n in FILES if n.endswith(".json")])
def test_plain_json_answers_as_in_file(name):
    raw = json.loads((QA / name).read_text(encoding="utf-8"))
    items = items_of(name)
    assert [(i.question, i.answer, i.aliases) for i in items] == [
        (r["question"], r["answer"], ()) for r in raw
    ]


@pytest.mark.parametrize("name", [n for n in FILES if n.endswith(".jsonl")])
def test_flashrag_gold_then_aliases(name):
    rows = [json.loads(line) for line in (QA / name).read_text(encoding="utf-8").splitlines()]
    items = items_of(name)
    assert [i.id for i in items] == [r["id"] for r in rows]
    for item, row in zip(items, rows):
        gold = row["golden_answers"]
        assert item.answer == gold[0]
        assert item.aliases == tuple(s.strip() for s in gold[1:] if s.strip())


def test_spot_values():
    popqa = items_of("popqa_test_sample1000_seed42.flashrag.jsonl")[0]
    assert popqa == QAItem(
        "test_10207",
        "Who was the composer of Easy Living?",
        "Ralph Rainger",
        ("Ralph Reichenthal",),
        "composer",
        "PopQA",
    )
    frames = items_of("frames_test_set.csv")
    assert (frames[0].id, frames[0].answer, frames[0].type) == ("0", "Jane Ballou", "Multiple constraints")
    assert frames[-1].id == "823"
    assert frames[0].question.endswith("future wife's name? ")  # unstripped, as in the file
    hotpot = items_of("hotpotqa_dev.searchr1.parquet")
    assert (hotpot[0].question, hotpot[0].answer, hotpot[0].type) == (
        "Were Scott Derrickson and Ed Wood of the same nationality?",
        "yes",
        "default",
    )
    assert items_of("musique_dev.searchr1.parquet")[0].type == "unknown"  # no MuSiQue id to take it from
    assert items_of("bamboogle_test.flashrag.jsonl")[0].answer == "james madison"


def test_generated_ids_are_stable_and_repeat_suffixed():
    two_wiki = items_of("2wikimultihop_test_questions_and_answers.json")
    assert two_wiki[0].id == "fbe236cc3cd00680"  # sha1("2WikiMultiHopQA\0" + question)[:16]
    musique = items_of("musique_test_questions_and_answers.json")
    repeats = [i for i in musique if i.id.endswith("-2")]
    assert len(repeats) == 5  # MuSiQue dev has five repeated (question, answer) pairs
    assert all(i.id[:-2] in {j.id for j in musique} for i in repeats)


def test_random_300_is_seeded_and_in_file_order():
    for name in (
        "2wikimultihopqa_dev.searchr1.parquet",
        "frames_test_set.csv",
        "bamboogle_test.flashrag.jsonl",
    ):
        items = items_of(name)
        sample = select(items, "random_300")
        assert len(sample) == min(300, len(items))
        assert sample == select(items, "random_300")
        positions = [items.index(i) for i in sample]
        assert positions == sorted(positions)
    frames = items_of("frames_test_set.csv")
    assert random_subset(frames, 300, seed=1) != random_subset(frames, 300, seed=2)
    assert select(frames, "full_test") == frames


def test_subsets_from_ids(tmp_path):
    items = items_of("frames_test_set.csv")
    assert [i.id for i in subset_by_ids(items, ["5", "3", "800"])] == ["5", "3", "800"]
    (tmp_path / "ids.txt").write_text("7\n\n2\n")
    assert [i.id for i in select(items, str(tmp_path / "ids.txt"))] == ["7", "2"]
    (tmp_path / "ids.json").write_text(json.dumps([{"id": "9", "question": "q"}, "4"]))
    assert [i.id for i in select(items, str(tmp_path / "ids.json"))] == ["9", "4"]
    with pytest.raises(DatasetError, match="not in the dataset"):
        subset_by_ids(items, ["5", "nope"])
    with pytest.raises(DatasetError, match="unknown subset"):
        select(items, "random_301")


@pytest.mark.parametrize(
    ("answer", "answers", "aliases", "expected"),
    [
        ("a", None, None, ("a", ())),
        ("a", None, [" b ", "", None, "c"], ("a", ("b", "c"))),
        (None, ["a", "b", " "], ["ignored"], ("a", ("b",))),
        ("a", ["a", "b"], ["ignored"], ("a", ("a", "b"))),  # answer given: all of answers are aliases
        (3, None, None, ("3", ())),
        (None, [], None, None),
        (None, None, ["x"], None),
        # as the reference's item_answer_aliases: the first non-empty answer is left out, not answers[0]
        (None, ["", "b", "c"], None, ("", ("c",))),
        (None, [None, "x"], None, ("None", ())),
        ("a", None, "bc", ("a", ())),  # answer_aliases that is no list: none
    ],
)
def test_gold_and_aliases_rules(answer, answers, aliases, expected):
    assert gold_and_aliases(answer, answers, aliases) == expected


def test_official_forms(tmp_path):
    (tmp_path / "dev.json").write_text(
        json.dumps([{"_id": "abc", "type": "comparison", "question": "Q1?", "answer": "yes", "context": []}])
    )
    assert load_dataset(tmp_path / "dev.json", "2wiki") == [
        QAItem("abc", "Q1?", "yes", (), "comparison", "2WikiMultiHopQA")
    ]

    (tmp_path / "musique_ans_v1.0_dev.jsonl").write_text(
        json.dumps(
            {
                "id": "2hop__1_2",
                "question": "Q?",
                "answer": "A",
                "answer_aliases": ["Alias"],
                "answerable": True,
            }
        )
        + "\n"
        + json.dumps({"id": "3hop1__9", "prompt": "P?", "answer": None})  # no gold: dropped
        + "\n"
    )
    assert load_dataset(tmp_path / "musique_ans_v1.0_dev.jsonl") == [
        QAItem("2hop__1_2", "Q?", "A", ("Alias",), "2hop", "MuSiQue")
    ]

    (tmp_path / "popQA.tsv").write_text(
        "id\tsubj\tprop\tobj\tquestion\tpossible_answers\n"
        '4222\tGeorge Rankin\toccupation\tpolitician\tWhat is George Rankin\'s occupation?\t["politician", "political leader"]\n'
    )
    assert load_dataset(tmp_path / "popQA.tsv") == [
        QAItem(
            "4222",
            "What is George Rankin's occupation?",
            "politician",
            ("political leader",),
            "occupation",
            "PopQA",
        )
    ]

    (tmp_path / "frames_test.tsv").write_text(
        "\tPrompt\tAnswer\treasoning_types\n0\tWho?\tHim\tNumerical reasoning\n"
    )
    assert load_dataset(tmp_path / "frames_test.tsv") == [
        QAItem("0", "Who?", "Him", (), "Numerical reasoning", "FRAMES")
    ]

    (tmp_path / "Bamboogle Prerelease.csv").write_text('Question,Answer\n"Who, then?",Someone\n')
    (item,) = load_dataset(tmp_path / "Bamboogle Prerelease.csv")
    assert (item.question, item.answer, item.type) == ("Who, then?", "Someone", "default")

    (tmp_path / "bamboogle.jsonl").write_text(
        json.dumps({"id": "x", "question": "", "prompt": "From prompt?", "answers": ["A", "B"]}) + "\n"
    )
    assert load_dataset(tmp_path / "bamboogle.jsonl")[0].question == "From prompt?"


def test_errors(tmp_path):
    with pytest.raises(DatasetError, match="unknown dataset"):
        canonical_dataset("squad")
    assert canonical_dataset("2wikimultihopqa") == canonical_dataset("2Wiki") == "2WikiMultiHopQA"
    (tmp_path / "hotpot.txt").write_text("x")
    with pytest.raises(DatasetError, match="unsupported"):
        load_dataset(tmp_path / "hotpot.txt")
    (tmp_path / "q.json").write_text("[]")
    with pytest.raises(DatasetError, match="cannot tell the dataset"):
        load_dataset(tmp_path / "q.json")
    (tmp_path / "hotpot.csv").write_text("a,b\n1,2\n")
    with pytest.raises(DatasetError, match="no question column"):
        load_dataset(tmp_path / "hotpot.csv")


def test_duplicate_ids_are_refused_with_file_line_and_id(tmp_path):
    rows = [{"id": "a", "question": "Q1?", "answer": "x"}, {"id": "b", "question": "Q2?", "answer": "y"}]
    rows.append({"id": "a", "question": "Q3?", "answer": "z"})
    jsonl = tmp_path / "bamboogle.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in rows[:2]) + "\n\n" + json.dumps(rows[2]) + "\n")
    (tmp_path / "bamboogle.json").write_text(json.dumps(rows))
    (tmp_path / "frames.csv").write_text("id,Prompt,Answer\n7,Q1?,x\n8,Q2?,y\n7,Q3?,z\n")
    pq.write_table(
        pa.table({"id": ["a", "b", "a"], "question": ["Q1?", "Q2?", "Q3?"], "golden_answers": [["x"]] * 3}),
        tmp_path / "hotpotqa.parquet",
    )
    expected = {
        "bamboogle.jsonl": ":4: duplicate id 'a' (first at line 1)",
        "bamboogle.json": ": item 3: duplicate id 'a' (first at item 1)",
        "frames.csv": ":4: duplicate id '7' (first at line 2)",
        "hotpotqa.parquet": ": item 3: duplicate id 'a' (first at item 1)",
    }
    for name, message in expected.items():
        with pytest.raises(DatasetError) as caught:
            load_dataset(tmp_path / name)
        assert str(caught.value) == f"{tmp_path / name}{message}"
    (tmp_path / "ids.txt").write_text("5\n\n3\n5\n")  # an id list repeating an id is refused too
    with pytest.raises(DatasetError, match=r"ids.txt:4: duplicate id '5' \(first at line 1\)$"):
        select(items_of("frames_test_set.csv"), str(tmp_path / "ids.txt"))


def test_malformed_json_and_invalid_utf8_name_file_and_line(tmp_path):
    good = json.dumps({"id": "a", "question": "Q1?", "answer": "x"})
    cases = {
        "bamboogle.jsonl": (
            f'{good}\n{{"id": "b", question}}\n'.encode(),
            ":2: malformed JSON: Expecting property name enclosed in double quotes (column 13)",
        ),
        "popqa.jsonl": (f"{good}\n\n".encode() + b'{"question": "Q\xff?"}\n', ":3: invalid UTF-8 (byte "),
        "hotpotqa.json": (f"[{good},\n{{]".encode(), ":2: malformed JSON: "),
        "musique.json": (f"[{good},\n".encode() + b'{"question": "\xc3("}]', ":2: invalid UTF-8 (byte "),
        "frames.csv": (b"Prompt,Answer\nQ1?,x\nQ\xe9?,y\n", ":3: invalid UTF-8 (byte "),
        "musique.parquet": (b"PAR1 not really", ": unreadable Parquet: "),
    }
    for name, (data, message) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(DatasetError) as caught:
            load_dataset(tmp_path / name)
        assert str(caught.value).startswith(f"{tmp_path / name}{message}"), caught.value
        assert "\n" not in str(caught.value)


def test_a_lone_surrogate_is_refused_with_file_and_line(tmp_path):
    """The issue: ``\\ud83d`` (half a character once decoded) in a question ran every episode, then no record
    could be written; in the id it crashed. Refused up front, naming the line and the field."""
    good = json.dumps({"id": "a", "question": "Q1?", "answer": "x"})
    cases = {
        "bamboogle.jsonl": (
            f'{good}\n{{"id": "b", "question": "Q2 \\ud83d", "answer": "y"}}\n',
            ":2: question",
        ),
        "popqa.jsonl": (f'{good}\n\n{{"id": "b", "question": "Q2?", "answer": "\\ud83d"}}\n', ":3: answer"),
        "musique.jsonl": (f'{good}\n{{"id": "b\\udc00", "question": "Q2?", "answer": "y"}}\n', ":2: id"),
        "hotpotqa.json": (
            f'[{good}, {{"question": "Q2?", "answers": ["y", "\\ud83d"]}}]',
            ": item 2: aliases",
        ),
    }
    for name, (text, message) in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        with pytest.raises(DatasetError) as caught:
            load_dataset(tmp_path / name)
        assert str(caught.value).startswith(f"{tmp_path / name}{message} holds a lone surrogate "), (
            caught.value
        )
        assert "\n" not in str(caught.value)


_BIG = "x" * (128 * 1024 + 1)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("frames.csv", 'Prompt,Answer\nQ1?,x\n"Q2?,y\nQ3?,z\n', ":3: malformed CSV: unexpected end of data"),
        ("frames.csv", f'Prompt,Answer\nQ1?,x\n"{_BIG}",y\n', ":3: malformed CSV: field larger than field"),
        ("frames.csv", "Prompt,Answer\nQ1?,x\n,y\n", ":3: item without a question"),
        (
            "popQA.tsv",
            'question\tpossible_answers\nQ1?\t["a", \n',
            ":2: possible_answers is not a JSON list: ",
        ),
        (
            "popqa.jsonl",
            '{"question": "Q1?", "possible_answers": 5}\n',
            ":1: possible_answers is not a JSON list: ",
        ),
        (
            "popqa.jsonl",
            '{"question": "Q1?", "possible_answers": "[\\"a\\""}\n',
            ":1: possible_answers is not ",
        ),
        (
            "hotpotqa.parquet",
            {"extra_info": ['{"question": "Q?"}']},
            ": item 1: extra_info is str, not a struct",
        ),
        (
            "hotpotqa.parquet",
            {"prompt": [[{"role": "user"}]]},
            ": item 1: the prompt's last message has no content",
        ),
        ("hotpotqa.parquet", {"prompt": ["Q?"]}, ": item 1: prompt is str, not a list of chat messages"),
    ],
)
def test_damaged_files_are_one_line_with_file_and_row(tmp_path, name, content, message):
    """The issue's damaged files gave tracebacks (``_csv.Error``, ``AttributeError``, ``KeyError``, ``TypeError``,
    ``JSONDecodeError``), or a merged row, or "no question column" without a line."""
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        rows = len(next(iter(content.values())))
        pq.write_table(pa.table({**content, "golden_answers": [["x"]] * rows}), path)
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    assert str(caught.value).startswith(f"{path}{message}"), caught.value
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("Prompt,Answer\n", ": no items"),
        ("Prompt,Notes\nQ1?,a\nQ2?,b\n", ": none of its 2 items has a gold answer"),
    ],
)
def test_a_file_without_items_to_run_is_refused(tmp_path, content, message):
    from sws.eval.datasets import EmptyDatasetError

    (tmp_path / "frames.csv").write_text(content)
    with pytest.raises(EmptyDatasetError) as caught:
        load_dataset(tmp_path / "frames.csv")
    assert str(caught.value).startswith(f"{tmp_path / 'frames.csv'}{message}")
