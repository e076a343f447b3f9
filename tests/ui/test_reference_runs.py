"""``sws ui --runs`` over output trees the reference's own runner wrote (tests/data/reference_runs): one run per
dataset/model folder, its episodes' trajectories, and the files it could not use on its card."""

from pathlib import Path

from fastapi.testclient import TestClient
from markupsafe import escape

from sws.ui import create_app

FIXTURE = Path(__file__).parents[1] / "data" / "reference_runs"


def test_a_reference_tree_opens_as_runs():
    with TestClient(create_app(run_dirs=[FIXTURE / "tree"])) as c:
        runs = c.get("/runs").text
        keys = [
            f"{d}-{m}-{s}"
            for s in ("full_test", "random_300")
            for d in ("HotpotQA", "MuSiQue", "Bamboogle")
            for m in ("heuristic", "search_then_submit")
        ]
        assert all(f'data-run="{key}"' in runs for key in keys)
        table = c.get("/runs/HotpotQA-heuristic-full_test").text
        assert table.count('class="episode-link"') == 3 and "When was Rosalynn Carter born?" in table
        episode = c.get(
            "/runs/HotpotQA-heuristic-full_test/episode", params={"id": "5a85ea095542994775f606a8"}
        )
        assert episode.status_code == 200
        assert (
            "August 18, 1927" in episode.text and "https://en.wikipedia.org/wiki/1080#chunk-1" in episode.text
        )
        assert c.get("/runs/HotpotQA-heuristic-full_test/episode", params={"id": "nope"}).status_code == 404


def test_files_it_could_not_use_are_on_the_card():
    with TestClient(create_app(run_dirs=[FIXTURE / "edge_cases"])) as c:
        card = c.get("/runs/HotpotQA-search_then_submit-full_test").text
    for name in ("leftover.json.tmp", "latin1.json", "truncated.json", "duplicate.json", "eval_null.json"):
        assert str(escape(name)) in card
    assert card.count("Not used:") == 6 and card.count('class="episode-link"') == 5
