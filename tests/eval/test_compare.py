"""``sws compare`` through the real CLI on real runs: ``sws eval`` of one scripted policy twice over the leads
index (in process, Ray workers: the tests marked ``ray``), copies with one change injected, the reference
runner's own output tree (sws's runs of its policies against the same ``sws serve``), and ``--replay``
against that index in process and over HTTP (the retrieval app, and ``sws serve`` for the runner's tree)."""

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from sws.agent.scripted_server import ScriptedLLMServer
from sws.cli import cli
from sws.eval import EpisodeRecord, PartWriter, load_records
from sws.eval.compare import paired_bootstrap
from sws.eval.reference_export import export_reference
from sws.eval.results import part_files
from tests.index.helpers import LEADS_SERVE_ARGS
from tests.startup import RegisteredServe

BAMBOOGLE = "tests/data/qa/bamboogle_test.flashrag.jsonl"
EDITED = "1. [Nothing](https://en.wikipedia.org/wiki/0)"
SCRIPT = [
    {
        "tool_calls": [
            ["search", {"query": "Citibank founded", "method": "keywords", "top_k": 3}],
            ["search", {"query": "first spacecraft to approach Uranus", "method": "vector", "top_k": 3}],
            ["search", {"query": "Uranus", "only_title": True}],
        ]
    },
    {"tool_calls": [["open_url", {"url": "https://en.wikipedia.org/wiki/1000"}]]},
    {"tool_calls": [["submit_answer", {"answer": "James Madison"}]]},
]


@pytest.fixture(scope="module")
def runs(ray_local, leads_root, tmp_path_factory):
    """Two runs of the same scripted policy (4 Bamboogle questions), each by its own ``sws eval``."""
    root = tmp_path_factory.mktemp("compare")
    with ScriptedLLMServer(script=SCRIPT) as llm:
        for name in ("a", "b"):
            args = ["eval", "--dataset", "bamboogle", "--data", BAMBOOGLE, "--limit", "4"]
            args += [
                "--llm-base-url",
                llm.url,
                "--model",
                "scripted-searcher",
                "--index",
                str(leads_root / "index"),
            ]
            result = CliRunner().invoke(cli, [*args, "--out", str(root / name), "eval.workers=1"])
            assert result.exit_code == 0, result.output
    return root


def edited(run, dest, edit: Callable[[list[EpisodeRecord]], list[EpisodeRecord]]):
    """A copy of ``run`` whose records are ``edit(records)``."""
    shutil.copytree(run, dest)
    for part in part_files(dest):
        part.unlink()
    writer = PartWriter(dest, "edited")
    for record in edit(load_records(run)):
        writer.add(record)
    writer.flush()
    return dest


def compare(a, b, out, *extra):
    result = CliRunner().invoke(cli, ["compare", str(a), str(b), "--out", str(out), *extra])
    report = json.loads((out / "compare.json").read_text()) if result.exit_code == 0 else None
    return result, report


@pytest.mark.ray
def test_the_same_policy_run_twice_differs_nowhere(runs, tmp_path):
    result, report = compare(runs / "a", runs / "b", tmp_path)
    assert result.exit_code == 0, result.output
    group = report["groups"]["Bamboogle"]
    assert (group["paired"], group["differing"], group["only_a"], group["only_b"]) == (4, 0, 0, 0)
    assert report["differing"] == report["only_a"] == report["only_b"] == []
    f1 = group["metrics"]["f1"]
    assert (f1["n"], f1["mean_delta"], f1["ci_low"], f1["ci_high"]) == (4, 0.0, 0.0, 0.0)
    assert group["metrics"]["search_calls"]["mean_a"] == 3.0 and group["judge_flips"] == {"0→1": 0, "1→0": 0}
    assert "- differing: 0 of 4; stop reason changed: 0" in result.output
    # no judge ran: counted and named per side, never a score
    assert len(report["missing"]["A"]["judge"]) == 4 and "A: 4 record(s) without judge" in result.output
    assert (tmp_path / "compare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = (tmp_path / "compare.csv").read_text().splitlines()
    assert len(rows) == 5 and rows[0].startswith("dataset,id,present,differs,answer_a,answer_b,f1_a,f1_b")


@pytest.mark.ray
def test_an_injected_change_is_reported_at_exactly_that_question(runs, tmp_path):
    def change(records):
        target = records[2]
        target.predicted_answer = "Someone else"
        target.eval = {**target.eval, "f1": 0.0, "em": 0.0}
        return records

    b = edited(runs / "b", tmp_path / "b", change)
    changed = load_records(b)[2]
    result, report = compare(runs / "a", b, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert report["differing"] == [f"Bamboogle/{changed.id}"]
    (question,) = [q for q in report["questions"] if q["differs"]]
    assert question["differs"] == ["answer"] + (["f1", "em"] if question["a"]["f1"] else [])
    assert report["groups"]["Bamboogle"]["differing"] == 1
    assert f"| Bamboogle | {changed.id} | answer" in result.output


@pytest.mark.ray
def test_judge_flips_are_counted_both_ways(runs, tmp_path):
    def judged(verdicts):
        def edit(records):
            for record in records:
                record.eval = {**record.eval, "gpt_judge": verdicts[record.id]}
            return records

        return edit

    a = edited(runs / "a", tmp_path / "a", judged({"test_0": 1, "test_1": 1, "test_2": 0, "test_3": 0}))
    b = edited(runs / "b", tmp_path / "b", judged({"test_0": 1, "test_1": 0, "test_2": 1, "test_3": 1}))
    result, report = compare(a, b, tmp_path / "out")
    group = report["groups"]["Bamboogle"]
    assert group["judge_flips"] == {"0→1": 2, "1→0": 1} and group["metrics"]["judge"]["mean_delta"] == 0.25
    assert group["differing"] == 3 and "judge" not in report["missing"]["A"]
    assert "- judge flips (A→B): 0→1 2, 1→0 1" in result.output


@pytest.mark.ray
def test_a_question_on_one_side_only_is_listed(runs, tmp_path):
    b = edited(runs / "b", tmp_path / "b", lambda records: records[1:])
    dropped = load_records(runs / "b")[0].id
    result, report = compare(runs / "a", b, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert report["only_a"] == [f"Bamboogle/{dropped}"] and report["only_b"] == []
    assert report["groups"]["Bamboogle"]["paired"] == 3
    assert "### Only in A (1)" in result.output and f"| Bamboogle | {dropped} |" in result.output
    _, swapped = compare(b, runs / "a", tmp_path / "swapped")
    assert swapped["only_b"] == [f"Bamboogle/{dropped}"] and swapped["only_a"] == []


@pytest.mark.ray
def test_replay_against_the_same_index_is_identical(runs, leads_root, tmp_path):
    result, report = compare(runs / "a", runs / "b", tmp_path, "--replay", str(leads_root / "index"))
    assert result.exit_code == 0, result.output
    replay = report["replay"]
    assert replay["groups"] == {
        "open_url": {"calls": 4, "identical": 4},
        "search (keywords)": {"calls": 4, "identical": 4},
        "search (only_title)": {"calls": 4, "identical": 4},
        "search (vector)": {"calls": 4, "identical": 4},
        "submit_answer": {"calls": 4, "identical": 4},
    }
    assert replay["differing"] == 0 and replay["problems"] == []
    assert "| search (keywords) | 4 | 4 | 100.00 % |" in result.output
    assert "not deterministic: rrf on the reference side" in result.output


@pytest.mark.ray
def test_replay_names_an_edited_observation_with_both_texts(runs, leads_root, tmp_path):
    def tamper(records):
        messages = records[1].messages
        tools = [m for m in messages if m.get("role") == "tool"]
        tools[1]["content"] = EDITED  # the vector search's hits
        tools[0]["tool_call_id"] = "call-nobody-made"  # answers no recorded call
        return records

    b = edited(runs / "b", tmp_path / "b", tamper)
    record = load_records(b)[1]
    result, report = compare(runs / "a", b, tmp_path / "out", "--replay", str(leads_root / "index"))
    assert result.exit_code == 0, result.output
    replay = report["replay"]
    assert replay["groups"]["search (vector)"] == {"calls": 4, "identical": 3}
    assert replay["groups"]["search (keywords)"] == {"calls": 3, "identical": 3}
    (first,) = replay["first_differing"]
    recorded = [m for m in load_records(runs / "b")[1].messages if m.get("role") == "tool"]
    assert (first["id"], first["group"]) == (record.id, "search (vector)")
    assert (first["recorded"], first["replayed"]) == (EDITED, recorded[1]["content"])
    assert replay["problems"] == [
        f"Bamboogle/{record.id} message 3 ('call-nobody-made'): no recorded call has its id"
    ]
    assert EDITED in result.output and recorded[1]["content"] in result.output


def test_paired_bootstrap_is_seeded_and_brackets_the_mean():
    deltas = [0.0, 1.0] * 20
    low, high = paired_bootstrap(deltas, seed=7, resamples=2000)
    assert (low, high) == paired_bootstrap(deltas, seed=7, resamples=2000)
    assert 0.0 < low < 0.5 < high < 1.0
    assert paired_bootstrap([0.25] * 9, seed=1, resamples=200) == (0.25, 0.25)


@pytest.mark.ray
def test_bad_inputs_are_one_line_errors(runs, leads_root, damaged_index, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("x")
    no_records = tmp_path / "no-records"
    no_records.mkdir()
    shutil.copy(runs / "a" / "run.json", no_records / "run.json")

    def other_dataset(records):
        for record in records:
            record.dataset = "hotpotqa"
        return records

    def other_model(records):
        records[0].model = "someone-else"
        return records

    truncated = tmp_path / "truncated"
    shutil.copytree(runs / "b", truncated)
    part = part_files(truncated)[0]
    part.write_bytes(part.read_bytes()[:100])
    hotpot = edited(runs / "b", tmp_path / "hotpot", other_dataset)
    two_models = edited(runs / "b", tmp_path / "two-models", other_model)
    a = str(runs / "a")
    cases = [
        ([a, str(tmp_path / "missing")], f"{tmp_path / 'missing'}: no such folder"),
        ([a, str(tmp_path / "file")], f"{tmp_path / 'file'}: not a folder"),
        (
            [a, str(tmp_path / "empty")],
            f"{tmp_path / 'empty'} holds neither an sws run (run.json) nor a reference",
        ),
        ([str(no_records), a], f"{no_records}: no episode records to compare"),
        ([a, str(truncated)], f"{truncated}: damaged part file {part}: "),
        ([a, str(hotpot)], "A and B share no dataset (A: Bamboogle; B: hotpotqa)"),
        ([a, str(two_models)], "holds runs of several models (scripted-searcher, someone-else)"),
        ([a, a, "--replay", str(tmp_path / "nowhere")], "neither an http(s) URL nor an index directory"),
        ([a, a, "--replay", str(damaged_index)], f"replay against {damaged_index} failed: "),
    ]
    for args, message in cases:
        result = CliRunner().invoke(cli, ["compare", *args, "--out", str(tmp_path / "out"), "--no-plots"])
        last = result.output.strip().splitlines()[-1]
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (args, result.output)
        assert last.startswith("Error: ") and message in last, (args, last)


def reference_tree(run, root):
    """``run`` exported as the reference runner writes its outputs: ``root/<Dataset>/<model>/<qid>.json``."""
    summary = export_reference([run], root)
    assert summary.skipped == [], summary.lines()
    return root


@pytest.mark.ray
def test_a_reference_tree_is_compared_and_replayed_as_a_run(runs, leads_root, tmp_path):
    tree = reference_tree(runs / "b", tmp_path / "output_full_test")
    folder = tree / "Bamboogle" / "scripted-searcher"
    (folder / "test_9.json.tmp").write_text("{")  # an interrupted write
    (folder / "test_8.json").write_text('{"id": "test_8", "ques')  # truncated
    result, report = compare(runs / "a", tree, tmp_path / "out", "--replay", str(leads_root / "index"))
    assert result.exit_code == 0, result.output
    assert report["b"]["kind"] == "reference tree" and report["b"]["records"] == 4
    assert report["differing"] == report["only_a"] == report["only_b"] == []
    assert report["groups"]["Bamboogle"]["paired"] == 4
    problems = report["b"]["problems"]
    assert any("1 file(s) leftover .json.tmp" in p and "test_9.json.tmp" in p for p in problems), problems
    assert any("1 file(s) not JSON" in p and "test_8.json" in p for p in problems), problems
    assert any("4 file(s) no gpt_judge" in p for p in problems) and "test_8.json" in result.output
    replay = report["replay"]
    assert replay["calls"] == 20 and replay["differing"] == 0
    assert {g: c["identical"] == c["calls"] for g, c in replay["groups"].items()} == dict.fromkeys(
        ["open_url", "search (keywords)", "search (only_title)", "search (vector)", "submit_answer"], True
    )

    # one answer changed in the tree: reported at exactly that question
    changed = json.loads((folder / "test_1.json").read_text())
    (folder / "test_1.json").write_text(json.dumps({**changed, "predicted_answer": "Nobody"}))
    _, report = compare(runs / "a", tree, tmp_path / "changed")
    assert report["differing"] == ["Bamboogle/test_1"]


@pytest.mark.ray
def test_a_tree_of_two_models_is_compared_one_model_at_a_time(runs, tmp_path):
    tree = reference_tree(runs / "b", tmp_path / "tree")
    other = reference_tree(runs / "a", tmp_path / "other") / "Bamboogle" / "scripted-searcher"
    other.rename(tree / "Bamboogle" / "other-model")
    for record in (tree / "Bamboogle" / "other-model").iterdir():
        record.write_text(
            record.read_text().replace('"model": "scripted-searcher"', '"model": "other-model"')
        )
    refused = CliRunner().invoke(cli, ["compare", str(runs / "a"), str(tree), "--out", str(tmp_path / "out")])
    assert refused.exit_code == 1
    assert (
        "holds runs of several models (other-model, scripted-searcher): pick one with --model"
        in refused.output
    )
    result, report = compare(runs / "a", tree, tmp_path / "out", "--model", "scripted-searcher")
    assert result.exit_code == 0, result.output
    assert report["b"]["models"] == ["scripted-searcher"] and report["differing"] == []


@pytest.mark.ray
def test_a_question_recorded_twice_on_one_side_is_named(runs, tmp_path):
    shutil.copytree(runs / "b", tmp_path / "both" / "first")
    shutil.copytree(runs / "b", tmp_path / "both" / "second")
    result, report = compare(runs / "a", tmp_path / "both", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert sorted(report["b"]["problems"]) == [
        f"Bamboogle/test_{i}: recorded twice (two runs of it); kept the first" for i in range(4)
    ]
    assert report["b"]["records"] == 4 and report["differing"] == []


@pytest.mark.ray
def test_replay_over_http_against_the_retrieval_service(runs, leads_root, tmp_path, monkeypatch):
    """The retrieval service's real HTTP app over the same index (bearer token), served by uvicorn."""
    from serve.retrieval.http_app import make_http_app
    from serve.retrieval.service import RetrievalService
    from sws.search import SearchEngine
    from tests.ui.helpers import ServedApp

    service = RetrievalService(SearchEngine.open(leads_root / "index"))
    try:
        with ServedApp(make_http_app(service, token="replay-token")) as app:
            monkeypatch.delenv("SWS_SERVE_TOKEN", raising=False)
            refused = CliRunner().invoke(
                cli,
                [
                    "compare",
                    str(runs / "a"),
                    str(runs / "b"),
                    "--out",
                    str(tmp_path / "x"),
                    "--replay",
                    app.url,
                ],
            )
            monkeypatch.setenv("SWS_SERVE_TOKEN", "replay-token")
            result, report = compare(runs / "a", runs / "b", tmp_path / "out", "--replay", app.url)
    finally:
        service.close()
    last = refused.output.strip().splitlines()[-1]
    assert (
        refused.exit_code == 1
        and last.startswith(f"Error: replay against {app.url} failed: ")
        and "401" in last
    )
    assert result.exit_code == 0, result.output
    replay = report["replay"]
    assert (replay["calls"], replay["differing"]) == (20, 0)
    assert (
        replay["groups"]["search (keywords)"]
        == replay["groups"]["search (vector)"]
        == {"calls": 4, "identical": 4}
    )


# The reference runner's own output (tests/data/reference_runs/README.md): run_qa_agent.py with the scripted
# policies as models, its tools served by `sws serve` over the leads index (LEADS_SERVE_ARGS)
REFERENCE = Path("tests/data/reference_runs")
TREE = REFERENCE / "tree" / "output_full_test"
# what each model's 9 questions (3 datasets) of TREE called, per tool and search method
TREE_CALLS = {
    "search_then_submit": {"search (rrf)": 9, "submit_answer": 9},
    "heuristic": {"open_url": 9, "search (rrf)": 9, "submit_answer": 9},
    "search_methods": {
        "open_url": 9,
        "search (keywords)": 9,
        "search (only_title)": 9,
        "search (vector)": 9,
        "submit_answer": 9,
    },
}
IDENTICAL = {model: {g: [n, n] for g, n in calls.items()} for model, calls in TREE_CALLS.items()}


@pytest.fixture(scope="module")
def leads_server(leads_root, tmp_path_factory):
    """``sws serve`` on the leads index as make.py served it to the reference runner (started once here)."""
    log = tmp_path_factory.mktemp("leads-serve") / "serve.log"
    with RegisteredServe(leads_root / "index", args=LEADS_SERVE_ARGS, log_path=log) as served:
        yield served


@pytest.fixture(scope="module")
def policy_runs(ray_local, leads_server, tmp_path_factory):
    """sws's runs of the reference fixture's full_test questions with the scripted policies that the reference
    runner ran and that open pages, against the same service: ``<model>/<dataset>``."""
    root = tmp_path_factory.mktemp("policies")
    with ScriptedLLMServer() as llm:
        for model in ("heuristic", "search_methods"):
            for data in sorted((REFERENCE / "questions" / "full_test").iterdir()):
                dataset = data.name.split(".")[0]
                args = ["eval", "--dataset", dataset, "--data", str(data), "--llm-base-url", llm.url]
                args += [
                    "--model",
                    model,
                    "--tools-url",
                    leads_server.url,
                    "--out",
                    str(root / model / dataset),
                ]
                result = CliRunner().invoke(cli, [*args, "eval.workers=1"])
                assert result.exit_code == 0, result.output
    return root


@pytest.mark.ray
@pytest.mark.parametrize("model", ["heuristic", "search_methods"])
def test_sws_and_the_reference_runner_agree_on_every_question(policy_runs, model, tmp_path):
    """The same scripted policy run by sws and by the reference runner against the same service: 0
    differences, the whole tree at once."""
    result, report = compare(policy_runs / model, TREE, tmp_path, "--model", model)
    assert result.exit_code == 0, result.output
    assert report["b"]["kind"] == "reference tree" and report["b"]["records"] == 9
    assert report["differing"] == report["only_a"] == report["only_b"] == []
    assert {name: g["paired"] for name, g in report["groups"].items()} == {
        "Bamboogle": 3,
        "HotpotQA": 3,
        "MuSiQue": 3,
        "all": 9,
    }
    metrics = report["groups"]["all"]["metrics"]
    assert {m: metrics[m]["mean_delta"] for m in ("f1", "em", "rounds", "search_calls", "open_calls")} == {
        "f1": 0.0,
        "em": 0.0,
        "rounds": 0.0,
        "search_calls": 0.0,
        "open_calls": 0.0,
    }
    # the reference judged (an exact match 1, no verdict otherwise), sws did not: named, never a difference
    assert len(report["missing"]["A"]["judge"]) == 9 and len(report["missing"]["B"]["judge"]) < 9
    assert "### All datasets" in result.output


def test_the_committed_sws_run_and_the_reference_runner_agree(tmp_path):
    """Both made by make.py with the scripted search_then_submit against one ``sws serve``: sws's run of two
    datasets, the reference runner's of three (MuSiQue on its side only, listed)."""
    result, report = compare(REFERENCE / "sws_run", TREE, tmp_path, "--model", "search_then_submit")
    assert result.exit_code == 0, result.output
    assert (report["a"]["kind"], report["b"]["kind"]) == ("sws run", "reference tree")
    assert report["differing"] == report["only_a"] == []
    assert report["only_b"] == [  # in (dataset, natural id) order: 4620 before 13548
        "MuSiQue/2hop__4620_4601",
        "MuSiQue/2hop__13548_13529",
        "MuSiQue/3hop1__9285_5188_23307",
    ]
    assert report["groups"]["all"]["paired"] == 6 and report["groups"]["MuSiQue"]["only_b"] == 3
    assert "### Only in B (3)" in result.output


def replayed_tree(environment: str, out: Path) -> dict[str, dict[str, list[int]]]:
    """Per model, ``sws compare TREE TREE --replay environment``'s [calls, identical] per tool and method."""
    groups = {}
    for model in TREE_CALLS:
        result, report = compare(TREE, TREE, out / model, "--model", model, "--replay", environment)
        assert result.exit_code == 0, result.output
        assert report["replay"]["problems"] == [], report["replay"]["problems"]
        groups[model] = {g: [c["calls"], c["identical"]] for g, c in report["replay"]["groups"].items()}
    return groups


def test_the_reference_trajectories_replay_identically_against_sws_serve(leads_server, tmp_path):
    """Every call the reference runner made, issued again over HTTP to ``sws serve`` on the same index."""
    assert replayed_tree(leads_server.url, tmp_path) == IDENTICAL


def test_the_reference_trajectories_replay_identically_over_the_same_index(leads_root, tmp_path):
    """The same calls against that index opened in process (queries embedded as that service embeds them)."""
    assert replayed_tree(str(leads_root / "index"), tmp_path) == IDENTICAL


def test_a_reference_folder_with_bad_files_is_compared_with_each_named(tmp_path):
    clean = TREE / "HotpotQA" / "search_then_submit"
    edges = REFERENCE / "edge_cases" / "output_full_test" / "HotpotQA" / "search_then_submit"
    result, report = compare(clean, edges, tmp_path)
    assert result.exit_code == 0, result.output
    assert report["differing"] == [] and report["only_a"] == []
    assert report["only_b"] == ["HotpotQA/eval_null", "HotpotQA/no_judge"]
    assert report["missing"]["B"]["f1"] == ["HotpotQA/eval_null"]
    problems = "\n".join(report["b"]["problems"])
    for kind, name in [
        ("leftover .json.tmp", "leftover.json.tmp"),
        ("not UTF-8", "latin1.json"),
        ("not JSON", "truncated.json"),
        ("id already read from another file", "duplicate.json"),
        ("eval is null", "eval_null.json"),
        ("no gpt_judge", "no_judge.json"),
    ]:
        assert any(kind in line and name in line for line in report["b"]["problems"]), (kind, problems)
        assert name in result.output


def test_each_tool_message_is_paired_with_its_recorded_call():
    from sws.eval.reference_runs import record_from_reference
    from sws.eval.replay import recorded_calls
    from tests.eval.reference_tree import reference_json

    record, _ = record_from_reference(reference_json("q1"), "Bamboogle", 0)
    calls, problems = recorded_calls(record)
    assert [(c.message, c.tool, c.group, c.recorded) for c in calls] == [
        (3, "search", "search (rrf)", "hits"),  # no method: rrf, the contract's default
        (4, "open_url", "open_url", '{"status": "error", "error": "not found"}'),
        (8, "submit_answer", "submit_answer", '{"status": "done", "answer": "Ann"}'),
    ]
    assert problems == [] and calls[0].offered == ("search", "open_url", "submit_answer")

    odd = {"id": "c9", "function": {"name": "search", "arguments": {"query": "q", "method": "kw"}}}
    record.messages = [
        {"role": "assistant", "tool_calls": ["not a call", odd, {"id": "c8", "function": "search"}]},
        {"role": "tool", "tool_call_id": "c9", "content": "hits"},
        {"role": "tool", "tool_call_id": "c8", "content": None},
    ]
    calls, problems = recorded_calls(record)
    assert [(c.arguments, c.group) for c in calls] == [
        ('{"query": "q", "method": "kw"}', "search (keywords)")
    ]
    assert problems == ["Bamboogle/q1 message 2 ('c8'): its content is not text"]
