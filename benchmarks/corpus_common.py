"""Shared helpers of the ``benchmarks/corpus_*.py`` scripts (not a benchmark itself).

Every benchmark prints JSON lines, one object per measurement, each carrying ``machine`` (CPU count, platform,
Python, date, load average at start) so figures from different machines and days are never mixed up.
"""

from __future__ import annotations

import bz2
import datetime as _dt
import html
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as `python benchmarks/corpus_x.py` without installing
    sys.path.insert(0, str(REPO))

from sws.config import bundled_sample_dump, load_config, to_dict
from sws.corpus.dump import DumpUnit, WikiDumpReader
from sws.corpus.pages import Page
from sws.corpus.wikitext import WikitextConverter

SAMPLE = bundled_sample_dump()  # the gensim enwiki slice: 206 pages, 106 articles


def machine_info() -> dict:
    """What the figures were measured on. The dev box is shared: ``loadavg`` shows how busy it was; its CPU
    model and bf16 units change between sessions (an AMX Xeon one day, an AVX2 EPYC the next), and with them
    which query runtime ``auto`` picks."""
    from sws.index.embedders.precision import cpu_has_bf16

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "cpu": cpu_model(),
        "cpu_bf16": cpu_has_bf16(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what the platform module says."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file() and (
        found := re.search(r"^model name\s*:\s*(.+)$", cpuinfo.read_text(), re.MULTILINE)
    ):
        return found.group(1).strip()
    return platform.processor() or platform.machine()


MACHINE = machine_info()
_JSON_OUT = None


def json_stdout() -> None:
    """Keep stdout for the JSON lines only: anything else written to fd 1 from now on (Ray's driver and
    raylet messages, libraries) goes to stderr."""
    global _JSON_OUT
    if _JSON_OUT is None:
        sys.stdout.flush()
        _JSON_OUT = os.fdopen(os.dup(1), "w", encoding="utf-8")
        os.dup2(2, 1)


def emit(benchmark: str, measurement: str, **fields) -> dict:
    """Print one measurement as a JSON line (and return it)."""
    load = [round(x, 2) for x in os.getloadavg()]
    record = {
        "benchmark": benchmark,
        "measurement": measurement,
        **fields,
        "loadavg": load,
        "machine": MACHINE,
    }
    out = _JSON_OUT or sys.stdout
    out.write(json.dumps(record, ensure_ascii=False) + "\n")
    out.flush()
    return record


def config_sections(profile: str = "local") -> tuple[dict, dict]:
    """The ``clean`` and ``chunk`` sections of a config profile (defaults of CleanConfig / ChunkConfig)."""
    cfg = to_dict(load_config(profile))
    return dict(cfg["clean"]), dict(cfg["chunk"])


def make_converter(clean: dict) -> WikitextConverter:
    options = dict(clean)
    options.pop("drop_disambiguation", None)
    return WikitextConverter(**options)


def read_pages(path: str) -> list[Page]:
    reader = WikiDumpReader(DumpUnit(str(path)))
    pages = list(reader.pages())
    if reader.error:
        raise RuntimeError(reader.error)
    return pages


def is_article(page: Page) -> bool:
    """What both sides count as an article: namespace 0, not a redirect."""
    return page.ns == 0 and page.redirect_to is None


# -- wikiextractor ---------------------------------------------------------------------------------------

# wikiextractor 3.0.x compiles patterns with global inline flags in mid-pattern (e.g. "...((?i)http|...")
# which Python 3.11 rejects ("global flags not at the start of the expression"). The launcher below retries
# such a compile with the flags moved to the front; a wikiextractor that compiles cleanly never hits it.
_LAUNCHER = r"""
import re, sys
_compile = re._compile
_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE, "u": re.UNICODE}
def _shim(pattern, flags):
    try:
        return _compile(pattern, flags)
    except re.error as exc:
        if "global flags not at the start" not in str(exc) or not isinstance(pattern, str):
            raise
        for letters in re.findall(r"\(\?([imsxu]+)\)", pattern):
            for letter in letters:
                flags |= _FLAGS[letter]
        return _compile(re.sub(r"\(\?[imsxu]+\)", "", pattern), flags)
re._compile = _shim
if __name__ == "__main__":
    import runpy
    runpy.run_module("wikiextractor.WikiExtractor", run_name="__main__", alter_sys=True)
"""


def run_wikiextractor(dump: str, out: str | None, processes: int = 1, timeout_s: float = 3600) -> dict:
    """Run ``python -m wikiextractor.WikiExtractor DUMP --json --processes N`` (retried under the 3.11 shim
    if it fails on the regex flags error).

    ``out`` is a directory for the JSON files, or None to send the output to /dev/null (throughput runs).
    Returns ``wall_s`` and ``cpu_s`` (user+sys of wikiextractor and all its worker processes, from
    ``RUSAGE_CHILDREN``: wikiextractor's "--processes 1" is a reader, one extractor and one writer process),
    the command line and whether the shim was needed.
    """
    args = [str(dump), "--json", "-q", "--processes", str(processes), "-b", "100M", "-o", out if out else "-"]
    try:
        return _timed_wikiextractor(
            [sys.executable, "-m", "wikiextractor.WikiExtractor", *args], out, timeout_s
        )
    except RuntimeError as exc:
        if "global flags not at the start" not in str(exc):
            raise
    with tempfile.NamedTemporaryFile("w", suffix="_wx_launch.py", delete=False) as launcher:
        launcher.write(_LAUNCHER)
    try:
        result = _timed_wikiextractor([sys.executable, launcher.name, *args], out, timeout_s)
    finally:
        os.unlink(launcher.name)
    return {**result, "shim": True}


def _timed_wikiextractor(cmd: list[str], out: str | None, timeout_s: float) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        cmd,
        stdout=subprocess.DEVNULL if out is None else subprocess.PIPE,
        stderr=subprocess.PIPE,
        timeout=timeout_s,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"wikiextractor failed (rc {proc.returncode}): {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    shown = "wikiextractor " + " ".join(cmd[3:] if cmd[1] == "-m" else cmd[2:])
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "cmd": shown, "shim": False}


def wikiextractor_docs(out_dir: str) -> dict[int, dict]:
    """The JSON documents wikiextractor wrote under ``out_dir``, by page id, with HTML entities decoded."""
    docs: dict[int, dict] = {}
    for path in sorted(Path(out_dir).rglob("wiki_*")):
        opener = bz2.open if path.suffix == ".bz2" else open
        with opener(path, "rt", encoding="utf-8") as lines:
            for line in lines:
                doc = json.loads(line)
                doc["text"] = html.unescape(doc["text"])
                docs[int(doc["id"])] = doc
    return docs
