"""Time to the first page of the runs table for a results directory of thousands of episodes.

What: a synthetic results directory (``EpisodeRecord`` rows with realistic conversations, 1-12 rounds of
10-hit search observations each, written by ``PartWriter`` in 64-row Parquet parts, as a run writes them) is
opened by a fresh ``sws ui`` app served by uvicorn on 127.0.0.1, and timed over HTTP (full response body):

- ``first_page_cold``: the first request for ``/runs/<run>`` after the app started (the run is read from
  Parquet: summary columns only, plus ``run_stats`` for the cards). Goal: < 1 s.
- ``first_page_warm``: the same page again (cached summary: sort, filter, slice, render).
- ``sorted_filtered``: sorted by F1 descending with the "not submitted" filter; ``last_page``; ``all_runs``.
- ``episode_page``: one episode's page (its whole conversation, read from its one part file).
- ``charts``: the tool-use charts over the run.

Warm figures are the median of ``--repeat`` requests. The directory is kept under
``benchmarks/results/work/ui-runs-<N>`` and reused (``--fresh`` rewrites it). The OS page cache is warm for
every measurement (the files were just written or read); a cold-disk open adds the read of the summary
columns (a few MB for 5,000 episodes).

Run: ``timeout 900 .venv/bin/python benchmarks/ui_runs_table.py`` (``--episodes 5000`` default; ~1 min on the
shared 2-core VM, most of it writing the synthetic run). Prints JSON lines; exits 1 if a goal fails.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for path in (REPO, REPO / "benchmarks"):
    if str(path) not in sys.path:  # run as `python benchmarks/ui_runs_table.py` without installing
        sys.path.insert(0, str(path))

from corpus_common import emit, json_stdout

BENCH = "ui_runs_table"
WORK = REPO / "benchmarks" / "results" / "work"
GOAL_FIRST_PAGE_S = 1.0


def timed_get(client, url: str) -> tuple[float, int, int]:
    start = time.perf_counter()
    response = client.get(url)
    body = response.content
    return time.perf_counter() - start, response.status_code, len(body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--fresh", action="store_true", help="rewrite the synthetic run")
    args = parser.parse_args()
    json_stdout()

    import httpx

    from sws.eval.results import part_files
    from sws.ui import create_app
    from tests.ui.helpers import ServedApp, synthetic_run

    run_dir = WORK / f"ui-runs-{args.episodes}" / "hotpot-synthetic"
    if args.fresh or not part_files(run_dir):
        shutil.rmtree(run_dir, ignore_errors=True)
        start = time.perf_counter()
        synthetic_run(run_dir, args.episodes)
        emit(BENCH, "synthesize", episodes=args.episodes, seconds=round(time.perf_counter() - start, 2))
    parts = part_files(run_dir)
    emit(
        BENCH,
        "run_dir",
        episodes=args.episodes,
        part_files=len(parts),
        parquet_mb=round(sum(p.stat().st_size for p in parts) / 2**20, 2),
    )

    failed = False
    app = create_app(run_dirs=[run_dir.parent])
    key = app.state.runs.runs[0].key
    with ServedApp(app) as served, httpx.Client(base_url=served.url, timeout=60) as client:
        seconds, status, size = timed_get(client, f"/runs/{key}")
        ok = status == 200 and seconds < GOAL_FIRST_PAGE_S
        failed |= not ok
        emit(
            BENCH,
            "first_page_cold",
            seconds=round(seconds, 4),
            status=status,
            html_kb=round(size / 1024, 1),
            goal_s=GOAL_FIRST_PAGE_S,
            ok=ok,
        )
        pages = {
            "first_page_warm": f"/runs/{key}",
            "sorted_filtered": f"/runs/{key}?sort=f1&order=desc&not_submitted=1",
            "last_page": f"/runs/{key}?page=1000000",
            "all_runs": "/runs/all?sort=time_cost&order=desc",
            "episode_page": f"/runs/{key}/episode?id=hot-{args.episodes // 2:06d}",
            "charts": f"/charts?run={key}",
        }
        for name, url in pages.items():
            times = []
            for _ in range(args.repeat):
                seconds, status, size = timed_get(client, url)
                assert status == 200, (url, status)
                times.append(seconds)
            fields = {"median_s": round(statistics.median(times), 4), "max_s": round(max(times), 4)}
            if name == "first_page_warm":
                fields |= {"goal_s": GOAL_FIRST_PAGE_S, "ok": fields["median_s"] < GOAL_FIRST_PAGE_S}
                failed |= not fields["ok"]
            emit(BENCH, name, **fields, html_kb=round(size / 1024, 1), repeat=args.repeat)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
