"""The reference's per-question output tree read as sws records; every bad file counted and named."""

import json

import pytest

from sws.eval.reference_runs import find_reference_trees, is_reference_path, message_counts, read_reference
from tests.eval.reference_tree import MESSAGES, reference_json, write


def test_counts_from_messages():
    assert message_counts(MESSAGES) == {
        "rounds": 3,
        "search_calls": 1,
        "open_calls": 1,
        "submit_calls": 1,
        "unknown_tool_calls": 0,
        "tool_errors": 1,
        "nudges": 1,
        "llm_time_s": 1.5,
        "tool_time_s": pytest.approx(0.2),
    }


def test_whole_tree_and_one_folder(tmp_path):
    root = tmp_path / "output_sample_random_300"
    write(root / "HotpotQA" / "gpt-5.4", "a.json", reference_json("a", f1=0.5, judge=0))
    write(root / "HotpotQA" / "Qwen3.5-9B", "b.json", reference_json("b"))
    write(
        root / "Bamboogle" / "Qwen3.5-9B", "c.json", reference_json("c", stop_reason="Max round num reached")
    )
    (root / "Bamboogle" / "zeta").mkdir()

    tree = read_reference(root)
    assert tree.subset == "random_300"
    assert tree.models == ("Qwen3.5-9B", "gpt-5.4", "zeta")  # the reference script's rank, then by name
    assert [(r.dataset, r.model, r.files) for r in tree.runs] == [
        ("HotpotQA", "Qwen3.5-9B", 1),
        ("HotpotQA", "gpt-5.4", 1),
        ("Bamboogle", "Qwen3.5-9B", 1),
        ("Bamboogle", "zeta", 0),
    ]
    record = tree.runs[1].records[0]
    assert (record.id, record.dataset, record.model, record.answer, record.predicted_answer) == (
        "a",
        "HotpotQA",
        "Qwen/Qwen3.5-9B",
        "Ann",
        "Ann",
    )
    assert (record.eval["f1"], record.eval["gpt_judge"], record.status, record.rounds) == (
        0.5,
        0,
        "submitted",
        3,
    )
    assert (record.usage["total_tokens"], record.time_cost, record.messages) == (120, 2.5, MESSAGES)
    assert tree.runs[2].records[0].status == "max_rounds"
    assert tree.problem_lines() == []

    folder = read_reference(root / "HotpotQA" / "gpt-5.4")
    assert [(r.dataset, r.model, r.subset, len(r.records)) for r in folder.runs] == [
        ("HotpotQA", "gpt-5.4", "random_300", 1)
    ]
    assert find_reference_trees([tmp_path]) == [root]
    assert is_reference_path(root / "HotpotQA" / "gpt-5.4") and not is_reference_path(tmp_path)


def test_not_a_tree(tmp_path):
    with pytest.raises(ValueError, match="not a reference output tree"):
        read_reference(tmp_path)


def test_bad_files_counted_and_named(tmp_path):
    folder = tmp_path / "output_full_test" / "MuSiQue" / "Qwen3.5-4B"
    write(folder, "ok.json", reference_json("ok", f1=0.25))
    write(folder, "null.json", reference_json("null", eval=None))
    write(folder, "nojudge.json", reference_json("nojudge", f1=0.5, judge=None))
    write(folder, "dup.json", reference_json("ok", f1=1.0))
    write(folder, "left.json.tmp", reference_json("left"))
    (folder / "latin1.json").write_bytes(
        json.dumps(reference_json("é")).encode("utf-8").replace(b"\\u00e9", b"\xe9")
    )
    (folder / "cut.json").write_text(json.dumps(reference_json("cut"))[:40])
    write(folder, "list.json", [1, 2])
    write(folder, "noid.json", reference_json(""))
    write(folder, "odd.json", reference_json("odd", stop_reason="Crashed"))

    run = read_reference(folder).runs[0]
    kinds = {(p.kind, p.path.name, p.skipped) for p in run.problems}
    assert kinds == {
        ("eval_null", "null.json", False),
        ("no_judge", "nojudge.json", False),
        ("duplicate_id", "dup.json", True),
        ("leftover_tmp", "left.json.tmp", True),
        ("not_utf8", "latin1.json", True),
        ("bad_json", "cut.json", True),
        ("not_object", "list.json", True),
        ("no_id", "noid.json", True),
        ("unknown_stop_reason", "odd.json", False),
    }
    assert sorted(r.id for r in run.records) == ["nojudge", "null", "odd", "ok"]
    assert (
        next(r for r in run.records if r.id == "ok").eval["f1"] == 0.25
    )  # the first file of an id (by name)
    assert next(r for r in run.records if r.id == "odd").status == "error"
    # the reference script's n: the .json files present, unreadable ones with 0
    assert (run.files, run.f1_sum, run.judge_sum) == (9, 0.25 + 0.5 + 1.0 + 1.0 + 1.0, 4.0)
    lines = read_reference(folder).problem_lines()
    assert f"{folder}: 1 file(s) id already read from another file" in lines[1]
    assert any(line.endswith(": cut.json") and "not JSON" in line for line in lines)
    assert len(lines) == len(kinds)


def test_sws_runs_in_dataset_folders_are_not_a_reference_tree(tmp_path):
    run = tmp_path / "runs" / "HotpotQA" / "Qwen3.5-9B"
    run.mkdir(parents=True)
    (run / "run.json").write_text("{}")
    assert find_reference_trees([tmp_path, tmp_path / "runs"]) == []
    assert not is_reference_path(run)


def test_sws_runs_named_by_dataset_are_not_a_reference_tree(tmp_path):
    """``sws eval --out runs/HotpotQA``: the run's parts/ folder is not a model folder."""
    run = tmp_path / "runs" / "HotpotQA"
    (run / "parts").mkdir(parents=True)
    (run / "run.json").write_text("{}")
    assert find_reference_trees([tmp_path, tmp_path / "runs"]) == []
    assert not is_reference_path(run / "parts")
