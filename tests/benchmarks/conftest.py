"""Benchmark scripts are files, not a package: load them by path."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def bench_module(name: str):
    """``benchmarks/<name>.py`` as a module (registered, so its dataclasses resolve)."""
    key = f"benchmarks_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, BENCHMARKS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


def skips_without_harness(name: str, peer: Path) -> bool:
    """Whether ``benchmarks/<name>.py --peer PEER`` (no side-by-side harness there) prints one ``skipped`` line
    naming it and exits 0."""
    from tests import processes

    done = processes.run([sys.executable, str(BENCHMARKS / f"{name}.py"), "--peer", str(peer)], timeout=120)
    (line,) = done.stdout.splitlines()
    record = json.loads(line)
    return done.returncode == 0 and (record["measurement"], record["reason"]) == (
        "skipped",
        f"no side-by-side harness at {peer}",
    )
