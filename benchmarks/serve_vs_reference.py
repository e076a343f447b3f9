"""``sws serve`` beside the paper's reference tool server, both in one run on this machine: closed-loop
``POST /search`` clients (the harness' ``load.py``, HotpotQA questions) on the same chunks of the bundled sample.
Each cell (method, clients) is ``--rounds`` pairs of windows, the two servers alternating window by window (this
machine's speed moves by 2x within minutes, so a lone pair says little), the reference restarted before each
cell so that its query-embedding cache starts as cold as sws's (sws caches no search), and round r asking the
questions from ``r * START_STRIDE`` on, the same for both sides, so the reference never meets a question twice
within a cell (a window that asked more is flagged ``repeats``). A cell's ratio is sws's requests over the
reference's, pooled over its rounds; each round's ratio is printed too. Goals: rrf and vector >= 2x the
reference at every client count with 0 failed; keywords >= 1.0x.

The reference runs from the side-by-side harness (``--peer``, default ``../shared/peer`` beside the repository:
its venv, the reference's sources from a git directory of JimXiongGM/simple_wiki_search, ``REF_REPO``); without
it the benchmark prints one ``skipped`` line saying what is missing and exits 0.

Run: ``timeout 2400 .venv/bin/python benchmarks/serve_vs_reference.py`` (~22 min; ``--quick``: 16 and 256
clients, no 512 cells, ~15 min).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

from serve_common import REPO, emit, json_stdout, sample_index

from serve.launch import ServeProcess

GOALS = {"rrf": 2.0, "vector": 2.0, "keywords": 1.0}
REFERENCE_PORT = 18100
CELLS = [(m, c, 15, 5) for m in ("rrf", "vector", "keywords") for c in (16, 256)]
# the 512 clients: 15 s warm-up, 40 s window; one round each (it asks more than a stride)
LONG_CELLS = [(m, 512, 40, 15) for m in ("rrf", "vector")]
# questions between the rounds' first ones: more than a 20 s window of rrf or vector asks here
START_STRIDE = 2400


def peer_home() -> Path:
    """Where the harness keeps its venv, indexes and run folders (``SWS_PEER_HOME``, else ``$TMPDIR/sws-peer``)."""
    return Path(os.environ.get("SWS_PEER_HOME", Path(tempfile.gettempdir()) / "sws-peer"))


def peer_python() -> Path:
    """The harness venv's interpreter (``run_reference.sh`` makes it)."""
    return peer_home() / "venv/bin/python"


def reference(peer: Path, *command: str) -> None:
    """``run_reference.sh COMMAND...`` (its output to stderr); raises if it fails."""
    subprocess.run(["bash", str(peer / "run_reference.sh"), *command], check=True, stdout=2)


def measure(
    peer: Path, url: str, method: str, clients: int, seconds: int, warmup: int, start: int = 0
) -> dict:
    """One window of ``load.py`` against ``url``, asking its questions from the ``start``-th on."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        args = [str(peer_python()), str(peer / "load.py"), url, "--clients", str(clients), "--method", method]
        args += ["--seconds", str(seconds), "--warmup", str(warmup), "--start", str(start)]
        args += ["--json", out.name]
        subprocess.run(args, check=True, stdout=2)
        return json.loads(Path(out.name).read_text())


def side(result: dict) -> dict:
    """A window's figures: QPS, p99 of the answered requests, failed, and the questions it asked."""
    ok = result["latency_ms_ok"]
    return {
        "qps": round(result["qps"], 1),
        "p99_ms": round(ok["p99"]) if ok["n"] else None,
        "failed": result["failed"],
        "asked": result["started"],
    }


def pooled(rounds: list[tuple[dict, dict]], method: str, goals: dict | None = None) -> dict:
    """A cell's verdict from its ``(reference, sws)`` windows (:func:`side`): the ratio of the QPS summed over
    the rounds (equal windows: the ratio of the requests), each round's ratio, whether any window of an
    embedding method but the last asked more than :data:`START_STRIDE` questions (the next round's reference
    window may then meet one of them again). ``goals`` (default :data:`GOALS`) gives each method's least
    ratio; a method it maps to None has none (only sws's 0 failed is asked)."""
    goal = (GOALS if goals is None else goals).get(method)
    theirs, ours = sum(ref["qps"] for ref, _ in rounds), sum(sws["qps"] for _, sws in rounds)
    ratio = round(ours / theirs, 2) if theirs else None
    clean = all(sws["failed"] == 0 for _, sws in rounds)
    return {
        "ratio": ratio,
        "round_ratios": [round(sws["qps"] / ref["qps"], 2) if ref["qps"] else None for ref, sws in rounds],
        "repeats": method != "keywords"
        and any(w["asked"] > START_STRIDE for pair in rounds[:-1] for w in pair),
        "passed": clean and (goal is None or (ratio is not None and ratio >= goal)),
        "goal": f"pooled ratio >= {goal}, sws 0 failed"
        if goal is not None
        else "sws 0 failed (no ratio goal)",
    }


def run_cells(
    peer: Path,
    corpus: Path,
    url: str,
    cells: list[tuple[str, int, int, int, int]],
    *,
    port: int = REFERENCE_PORT,
    benchmark: str = "serve_vs_reference",
    goals: dict | None = None,
    fields: dict | None = None,
) -> bool:
    """Each cell ``(method, clients, seconds, warmup, rounds)``: the reference (on ``corpus``, at ``port``)
    restarted, then ``rounds`` pairs of windows, the reference's then sws's (at ``url``), each pair from its
    round's :data:`START_STRIDE` on; one ``cell`` line each (with ``fields``). True when every cell passed
    (:func:`pooled` with ``goals``)."""
    ok = True
    for method, clients, seconds, warmup, rounds in cells:
        reference(peer, "stop", str(port))
        reference(peer, str(corpus), str(port))
        windows = []
        for r in range(rounds):
            load = (method, clients, seconds, warmup, r * START_STRIDE)
            theirs = side(measure(peer, f"http://127.0.0.1:{port}", *load))
            windows.append((theirs, side(measure(peer, url, *load))))
        verdict = pooled(windows, method, goals)
        ok &= verdict["passed"]
        emit(
            benchmark,
            "cell",
            method=method,
            clients=clients,
            seconds=seconds,
            warmup=warmup,
            reference=[ref for ref, _ in windows],
            sws=[sws for _, sws in windows],
            **verdict,
            **(fields or {}),
        )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", type=Path, default=REPO.parent / "shared" / "peer")
    parser.add_argument("--quick", action="store_true", help="no 512-client cells")
    parser.add_argument("--rounds", type=int, default=3, help="alternating window pairs per cell (default 3)")
    parser.add_argument("--methods", nargs="+", choices=GOALS, default=list(GOALS), help="methods measured")
    parser.add_argument(
        "--clients", nargs="+", type=int, help="client counts measured (default: every cell's)"
    )
    args = parser.parse_args()
    json_stdout()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    if not (args.peer / "run_reference.sh").is_file():
        emit("serve_vs_reference", "skipped", reason=f"no side-by-side harness at {args.peer}")
        return 0
    index = sample_index()
    cells = [(*cell, args.rounds) for cell in CELLS] + ([] if args.quick else [(*c, 1) for c in LONG_CELLS])
    cells = [c for c in cells if c[0] in args.methods and (not args.clients or c[1] in args.clients)]
    with ServeProcess(index, log_path=str(index) + "-vs-reference.log") as server:
        try:
            ok = run_cells(args.peer, index.parent / "corpus", server.url, cells)
        finally:
            reference(args.peer, "stop", str(REFERENCE_PORT))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
