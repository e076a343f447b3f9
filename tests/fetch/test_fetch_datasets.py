"""``sws fetch datasets`` against local copies of the six sources (behind ``--mirror``, host kept in the path)."""

import hashlib
import json

from click.testing import CliRunner

from sws.cli import cli
from sws.eval import load_dataset, qa_sources, select
from sws.fetch import read_fetch_manifest

FAST = ["--no-progress", "--backoff", "0"]
FIVE = ["2wiki", "musique", "frames", "popqa", "bamboogle"]


def _run(server, *args):
    return CliRunner().invoke(cli, ["fetch", "datasets", "--mirror", server.url, *FAST, *args])


def test_datasets_are_fetched_loadable_and_their_random_300_reproducible(server, qa_tree, tmp_path):
    result = _run(server, *[a for n in FIVE for a in ("--name", n)], "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    got = {d["dataset"]: d for d in summary["datasets"]}
    assert list(got) == ["2WikiMultiHopQA", "MuSiQue", "FRAMES", "PopQA", "Bamboogle"]
    assert {k: v["items"] for k, v in got.items()} == {
        "2WikiMultiHopQA": 400,
        "MuSiQue": 350,
        "FRAMES": 40,
        "PopQA": 400,
        "Bamboogle": 125,
    }
    assert (
        "the loader reads 400 items; the published dev has 12576" in result.stderr
    )  # a sample, not the split
    manifest = read_fetch_manifest(tmp_path / "fetch-manifest.json")
    for source in qa_sources():
        if source.dataset not in got:
            assert source.filename not in manifest["files"]
            continue
        path = tmp_path / source.filename
        entry = manifest["files"][source.filename]
        served = qa_tree["/" + source.urls[0].split("://", 1)[1]]
        assert path.read_bytes() == served and entry["sha256"] == hashlib.sha256(served).hexdigest()
        assert entry["url"] == f"{server.url}/{source.urls[0].split('://', 1)[1]}"
        items = load_dataset(path)  # the name alone tells the loader the dataset and format
        subset = select(items, "random_300", seed=42)
        assert entry["random_300"] == {
            "label": "random_300 (sws resample, seed 42)",  # not the paper's file (sws eval --qa-root)
            "seed": 42,
            "n": min(300, len(items)),
            "ids_sha256": hashlib.sha256("\n".join(i.id for i in subset).encode()).hexdigest(),
        }
    frames = load_dataset(tmp_path / "frames_test.tsv")
    assert frames[0].id == "0" and frames[0].answer == "Jane Ballou"
    popqa = load_dataset(tmp_path / "popqa_test.tsv")
    assert popqa[0].type == "composer" and popqa[0].aliases == ("Ralph Reichenthal",)


def test_a_file_that_differs_from_the_pinned_checksum_is_refused_on_every_mirror(server, tmp_path):
    result = _run(server, "--name", "hotpotqa", "--out", str(tmp_path))
    assert result.exit_code == 1
    assert "hotpotqa_dev_distractor_v1.json: every source failed" in result.stderr
    assert "the published size is 46,320,117" in result.stderr  # the sample served by the first URL
    assert (
        f"HTTP 404 Not Found for {server.url}/huggingface.co/datasets/RAGLAB/data/resolve/" in result.stderr
    )
    assert list(tmp_path.iterdir()) == []


def test_a_missing_dataset_file_is_a_clear_404_and_dry_run_lists_sizes(server, qa_tree, tmp_path):
    frames = "/huggingface.co/datasets/google/frames-benchmark/resolve/main/test.tsv"
    dry = _run(server, "--name", "frames", "--name", "hotpotqa", "--out", str(tmp_path), "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert f"{len(qa_tree[frames]):,} B" in dry.stdout and "frames_test.tsv  [new]" in dry.stdout
    assert "46,320,117 B" in dry.stdout  # pinned: no request needed
    assert not tmp_path.exists() or list(tmp_path.iterdir()) == []
    del server.state.files[frames]
    result = _run(server, "--name", "frames", "--out", str(tmp_path))
    assert result.exit_code == 1
    assert f"HTTP 404 Not Found for {server.url}{frames}" in result.stderr
