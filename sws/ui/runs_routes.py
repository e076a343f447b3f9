"""The results' pages: every run's summary and tables, one run's episodes table, an episode, tool-use charts."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from sws.eval.report import report_tables
from sws.ui import charts as chart_lib
from sws.ui.episode import answer_checks, episode_steps
from sws.ui.pages import Pages, root_path
from sws.ui.runs import ALL_RUNS, TABLE_COLUMNS, TableQuery

NUMERIC_COLUMNS = frozenset(
    {"f1", "gpt_judge", "rounds", "search_calls", "open_calls", "total_tokens", "time_cost", "index"}
)


def runs_router(pages: Pages) -> APIRouter:
    """``/runs``, ``/runs/{key}``, ``/runs/{key}/episode`` and ``/charts`` over ``pages.store`` (re-read when a
    page asks for a run it does not know yet)."""
    router = APIRouter()
    store = pages.store

    @router.get("/runs", response_class=HTMLResponse)
    def runs(request: Request) -> HTMLResponse:
        store.refresh()
        summaries = [(run, store.summary(run)) for run in store.runs]
        stats = [s.stats for _, s in summaries if s.stats is not None]
        tables = report_tables(stats) if stats else []
        return pages.render(
            request, "runs.html", nav="runs", title="Runs", summaries=summaries, tables=tables
        )

    @router.get("/runs/{key}", response_class=HTMLResponse)
    def run_table(request: Request, key: str) -> HTMLResponse:
        if store.get(key) is None and key != ALL_RUNS:
            store.refresh()
        run = store.get(key)
        if run is None and key != ALL_RUNS:
            return pages.not_found(request, f"No run {key!r}.")
        started = time.perf_counter()
        query = TableQuery.parse(dict(request.query_params))
        page = store.table(key, query)
        chosen = store.runs if key == ALL_RUNS else [run]
        return pages.render(
            request,
            "table.html",
            nav="runs",
            title=run.label if run else "All runs",
            key=key,
            run=run,
            summaries=[(r, store.summary(r)) for r in chosen],
            query=query,
            page=page,
            columns=TABLE_COLUMNS,
            numeric=NUMERIC_COLUMNS,
            elapsed_ms=(time.perf_counter() - started) * 1000,
        )

    @router.get("/runs/{key}/episode", response_class=HTMLResponse)
    def episode(request: Request, key: str, id: str = "") -> HTMLResponse:
        run = store.get(key)
        if run is None:
            store.refresh()
            run = store.get(key)
        record = store.episode(run, id) if run is not None and id else None
        if record is None:
            return pages.not_found(request, f"No episode {id!r} in run {key!r}.")
        return pages.render(
            request,
            "episode.html",
            nav="runs",
            title=f"Episode {record.id}",
            run=run,
            record=record,
            steps=episode_steps(record, root_path(request)),
            checks=answer_checks(record),
        )

    @router.get("/charts", response_class=HTMLResponse)
    def charts(request: Request, run: str = ALL_RUNS) -> HTMLResponse:
        store.refresh()
        chosen = store.runs if run == ALL_RUNS else [r for r in store.runs if r.key == run]
        if not chosen and run != ALL_RUNS:
            return pages.not_found(request, f"No run {run!r}.")
        rows = [row for r in chosen for row in store.summary(r).rows]
        overview, per_dataset = chart_lib.tool_use_charts(rows)
        return pages.render(
            request,
            "charts.html",
            nav="charts",
            title="Tool use",
            selected=run,
            n_rows=len(rows),
            overview=overview,
            per_dataset=per_dataset,
        )

    return router
