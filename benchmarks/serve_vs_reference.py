"""``sws serve`` beside the paper's reference tool server, both in one run on this machine: closed-loop
``POST /search`` clients (the harness' ``load.py``, HotpotQA questions) on the same chunks of the bundled sample,
cell by cell, the two servers alternating, the reference restarted before each of its cells so that its
query-embedding cache is as cold as sws's (sws caches no search). Goals: rrf and vector >= 2x the reference at
every client count with 0 failed; keywords >= 1.0x.

The reference runs from the side-by-side harness (``--peer``, default ``../shared/peer`` beside the repository:
its venv, the reference's sources from a git directory of JimXiongGM/simple_wiki_search, ``REF_REPO``); without
it the benchmark prints one ``skipped`` line saying what is missing and exits 0.

Run: ``timeout 1800 .venv/bin/python benchmarks/serve_vs_reference.py`` (~10 min; ``--quick``: 16 and 256
clients, no 512 cell, ~6 min).
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
LONG_CELL = ("rrf", 512, 40, 15)  # the issue's: 15 s warm-up, 40 s window


def peer_python() -> Path:
    """The harness venv's interpreter (``run_reference.sh`` makes it)."""
    return Path(os.environ.get("SWS_PEER_HOME", Path(tempfile.gettempdir()) / "sws-peer")) / "venv/bin/python"


def reference(peer: Path, *command: str) -> None:
    """``run_reference.sh COMMAND...`` (its output to stderr); raises if it fails."""
    subprocess.run(["bash", str(peer / "run_reference.sh"), *command], check=True, stdout=2)


def measure(peer: Path, url: str, method: str, clients: int, seconds: int, warmup: int) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        args = [str(peer_python()), str(peer / "load.py"), url, "--clients", str(clients)]
        args += ["--seconds", str(seconds), "--warmup", str(warmup), "--method", method, "--json", out.name]
        subprocess.run(args, check=True, stdout=2)
        return json.loads(Path(out.name).read_text())


def side(result: dict) -> dict:
    ok = result["latency_ms_ok"]
    return {
        "qps": round(result["qps"], 1),
        "p99_ms": round(ok["p99"]) if ok["n"] else None,
        "failed": result["failed"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", type=Path, default=REPO.parent / "shared" / "peer")
    parser.add_argument("--quick", action="store_true", help="no 512-client cell")
    args = parser.parse_args()
    json_stdout()
    if not (args.peer / "run_reference.sh").is_file():
        emit("serve_vs_reference", "skipped", reason=f"no side-by-side harness at {args.peer}")
        return 0
    index = sample_index()
    cells = CELLS if args.quick else [*CELLS, LONG_CELL]
    ok = True
    with ServeProcess(index, log_path=str(index) + "-vs-reference.log") as server:
        try:
            for method, clients, seconds, warmup in cells:
                reference(args.peer, "stop", str(REFERENCE_PORT))
                reference(args.peer, str(index.parent / "corpus"), str(REFERENCE_PORT))
                theirs = side(
                    measure(args.peer, f"http://127.0.0.1:{REFERENCE_PORT}", method, clients, seconds, warmup)
                )
                ours = side(measure(args.peer, server.url, method, clients, seconds, warmup))
                ratio = round(ours["qps"] / theirs["qps"], 2)
                passed = ratio >= GOALS[method] and ours["failed"] == 0
                ok &= passed
                emit(
                    "serve_vs_reference",
                    "cell",
                    method=method,
                    clients=clients,
                    seconds=seconds,
                    warmup=warmup,
                    reference=theirs,
                    sws=ours,
                    ratio=ratio,
                    goal=f"ratio >= {GOALS[method]}, 0 failed",
                    passed=passed,
                )
        finally:
            reference(args.peer, "stop", str(REFERENCE_PORT))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
