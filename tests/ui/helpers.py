"""Data for the UI tests and benchmark: an index from a real dump sample plus a hostile page, runs produced by
the real agent against the scripted LLM server, and synthetic runs of any size.

- :func:`build_ui_index`: ``tests/data/camchenry_enwiki-10k.xml.bz2`` (68 real enwiki articles, 79 chunks,
  85 redirects) and one hostile dump page (:data:`EVIL_DUMP_TEXT`) through the real corpus shard builder (no
  Ray), indexed with the packaged MiniLM.
- :func:`produce_runs`: three results directories written by ``EpisodeWorker`` (the Ray runner's worker, run
  in process) with the agent talking to a ``ScriptedLLMServer`` over HTTP and the real tools over that index:
  the heuristic no-LLM policy on HotpotQA-like questions (some episodes fail on injected 5xx), a never-
  submitting policy on a Bamboogle-labelled set, and a scripted hostile episode (PopQA label).
- :func:`synthetic_run`: ``EpisodeRecord`` rows with realistic conversations, for paging and the benchmark.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from xml.sax.saxutils import escape

REPO = Path(__file__).resolve().parents[2]
DUMP_SAMPLE = REPO / "tests" / "data" / "camchenry_enwiki-10k.xml.bz2"

PWN = "window.__pwned=1"
EVIL_PAGE_ID = 777001
EVIL_TITLE = "Evil <img src=x onerror=window.__pwned=1;alert(8)> page"
# wikitext: the converter strips real tags but keeps what was entity-escaped, so the corpus text holds
# literal <script>, <img onerror> and javascript: links
EVIL_DUMP_TEXT = """'''Evil page''' tests the viewer. &lt;script&gt;window.__pwned=1;alert(1)&lt;/script&gt; here.

== Payloads ==
An image &lt;img src=x onerror="window.__pwned=1;alert(2)"&gt; and a link [click me](javascript:window.__pwned=1) and
&lt;a href="javascript:window.__pwned=1"&gt;anchor&lt;/a&gt; and &lt;svg onload=window.__pwned=1&gt;.
"""
EVIL_QUESTION = "What does <script>window.__pwned=1;alert('q')</script> the <b>evil</b> page say?"
EVIL_GOLD = "<img src=x onerror=window.__pwned=1;alert('gold')>"
EVIL_ALIASES = ("javascript:window.__pwned=1", "[alias](javascript:alert('alias'))")
EVIL_ANSWER = "<script>window.__pwned=1;alert('answer')</script><img src=x onerror=alert('img')> [x](javascript:alert(1))"
EVIL_REASONING = "<script>window.__pwned=1</script> thinking <img src=x onerror=alert('content')>"

QUESTIONS = [  # (id, question, gold, aliases) about pages of the dump sample
    ("h01", "When did the Gunpowder Incident take place?", "April 20, 1775", ()),
    ("h02", "Who created Bernard's Watch?", "Andrew Norriss", ()),
    ("h03", "In which year was the Colorado Street Bridge built?", "1912", ()),
    ("h04", "Who made the zinc etching La Calavera Catrina?", "José Guadalupe Posada", ("Posada",)),
    ("h05", "Who wrote The Crime at Black Dudley?", "Margery Allingham", ()),
    ("h06", "When was Roddy Lorimer born?", "19 May 1953", ()),
    ("h07", "How many rooms does the Fort Garry Hotel have?", "246", ()),
    ("h08", "Where is the Lake Erie Arboretum located?", "Erie, Pennsylvania", ("Frontier Park",)),
    ("h09", "Who founded Plan USA?", "John Langdon-Davies", ("Eric Muggeridge",)),
    ("h10", "Is Armeria a genus of flowering plants?", "yes", ()),
]
BAMBOOGLE = [
    ("b01", "Which hotel in Winnipeg opened in December 1913?", "Fort Garry Hotel", ()),
    ("b02", "What river flows out of Lough Ramor?", "Blackwater river", ("Blackwater",)),
    ("b03", "Which squadron flew Lockheed Hudsons?", "No. 200 Squadron RAF", ()),
]


def write_evil_dump(path: Path) -> Path:
    xml = (
        "<mediawiki><siteinfo><sitename>Wikipedia</sitename></siteinfo>\n"
        f"<page><title>{escape(EVIL_TITLE)}</title><ns>0</ns><id>{EVIL_PAGE_ID}</id><revision><id>1</id>"
        f"<timestamp>2026-01-01T00:00:00Z</timestamp><text>{escape(EVIL_DUMP_TEXT)}</text></revision></page>\n"
        "</mediawiki>\n"
    )
    path.write_text(xml, encoding="utf-8")
    return path


def build_ui_index(root: Path, embedder) -> Path:
    """``root/corpus`` (the dump sample + the hostile page, real shard builder) and ``root/index``."""
    from sws.config import load_config, to_dict
    from sws.corpus.dump import DumpUnit
    from sws.corpus.shard import CorpusShardBuilder
    from sws.index import FaissIndexer, build_index

    cfg = to_dict(load_config("local"))
    corpus = root / "corpus"
    builder = CorpusShardBuilder.from_options(corpus, cfg["clean"], cfg["chunk"])
    builder.build(0, DumpUnit(str(DUMP_SAMPLE)))
    builder.build(1, DumpUnit(str(write_evil_dump(root / "evil.xml"))))
    (corpus / "manifest.json").write_text(json.dumps({"kind": "sws-corpus", "fingerprint": "ui-test-v1"}))
    build_index(
        corpus,
        root / "index",
        embedder=embedder,
        dense=FaissIndexer(m=16, shard_rows=64),
        embed_options={"workers": 0},
    )
    return root / "index"


def _items(rows, dataset):
    from sws.eval import QAItem

    return [QAItem(i, q, a, tuple(al), "default", dataset) for i, q, a, al in rows]


def run_in_process(
    out: Path, items, tools, config, server_url, *, dataset: str, max_attempts: int = 3
) -> Path:
    """One results directory: ``prepare_run`` + ``EpisodeWorker`` (as the Ray runner does), items in order."""
    from sws.agent import LLMSettings
    from sws.eval.results import prepare_run
    from sws.eval.runner import EpisodeWorker

    fingerprint = "ui-test-env"
    prepare_run(
        out,
        {
            "dataset": dataset,
            "subset": "full_test",
            "model": config.model,
            "agent_config": config.to_dict(),
            "fingerprint": fingerprint,
            "items": len(items),
            "llm_base_url": server_url,
            "judge": None,
        },
    )
    llm = LLMSettings(server_url, timeout=30, max_attempts=max_attempts, backoff_s=0.01)

    async def go():
        worker = EpisodeWorker(str(out), "ui-w0", config, llm, lambda: tools, fingerprint, rows_per_part=4)
        try:
            for index, item in enumerate(items):
                await worker.run(index, item)
        finally:
            worker.flush()
            await worker.agent.llm.close()

    asyncio.run(go())
    return out


def produce_runs(root: Path, tools) -> dict[str, Path]:
    """The three runs (keys ``heuristic``, ``never``, ``evil``) under ``root``."""
    from sws.agent import HEURISTIC_MODEL, AgentConfig
    from sws.agent.scripted_server import Faults, ScriptedLLMServer

    runs: dict[str, Path] = {}
    # heuristic baseline; every LLM request has a 10 % chance of a 5xx and there are no retries, so some
    # episodes fail (seeded: items run one after another, so the same ones every time)
    with ScriptedLLMServer(
        policy="heuristic",
        faults=Faults(error_rate=0.1, seed=4),
        reasoning_content=True,
        record_requests=False,
    ) as server:
        runs["heuristic"] = run_in_process(
            root / "hotpot-heuristic",
            _items(QUESTIONS, "HotpotQA"),
            tools,
            AgentConfig(model=HEURISTIC_MODEL),
            server.url,
            dataset="HotpotQA",
            max_attempts=1,
        )
    with ScriptedLLMServer(policy="never_submit", record_requests=False) as server:
        runs["never"] = run_in_process(
            root / "bamboogle-never",
            _items(BAMBOOGLE, "Bamboogle"),
            tools,
            AgentConfig(model="never_submit", max_round=5),
            server.url,
            dataset="Bamboogle",
        )
    script = [
        {
            "content": EVIL_REASONING,
            "tool_calls": [
                ["search", {"query": "evil page <script>window.__pwned=1</script>", "top_k": 3}],
                ["search", {"query": "<img src=x onerror=window.__pwned=1>", "method": "keywords"}],
            ],
        },
        {
            "content": "open it [y](javascript:alert(2))",
            "tool_calls": [
                ["open_url", {"url": f"https://en.wikipedia.org/wiki/{EVIL_PAGE_ID}#chunk-1"}],
                ["open_url", {"url": "javascript:window.__pwned=1//https://en.wikipedia.org/wiki/1"}],
            ],
        },
        {"content": None, "tool_calls": [["submit_answer", {"answer": EVIL_ANSWER}]]},
    ]
    with ScriptedLLMServer(script=script, record_requests=False) as server:
        runs["evil"] = run_in_process(
            root / "popqa-evil",
            _items([("evil-<script>1", EVIL_QUESTION, EVIL_GOLD, EVIL_ALIASES)], "PopQA"),
            tools,
            AgentConfig(model="scripted-<b>evil</b>"),
            server.url,
            dataset="PopQA",
        )
    return runs


def synthetic_run(
    out: Path, n: int, *, dataset: str = "HotpotQA", seed: int = 0, rows_per_part: int = 64
) -> Path:
    """A results directory of ``n`` synthetic records with realistic sizes (~10-30 kB of messages each)."""
    from sws.agent import AgentConfig, Episode
    from sws.env import tool_schemas
    from sws.eval import QAItem
    from sws.eval.records import EpisodeRecord
    from sws.eval.results import PartWriter, prepare_run

    rng = random.Random(seed)
    config = AgentConfig(model="synthetic-model")
    prepare_run(
        out,
        {
            "dataset": dataset,
            "subset": "full_test",
            "model": config.model,
            "agent_config": config.to_dict(),
            "fingerprint": "synthetic",
            "items": n,
        },
    )
    writer = PartWriter(out, "synthetic-w0", rows_per_part=rows_per_part, max_age_s=1e9)
    schemas = tool_schemas()
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "zeta",
        "eta",
        "theta",
        "iota",
        "kappa",
        "lambda",
        "mu",
    ]
    for i in range(n):
        rounds = rng.randint(1, 12)
        searches, opens = rng.randint(0, rounds), rng.randint(0, rounds)
        status = rng.choices(["submitted", "max_rounds", "error"], [0.85, 0.1, 0.05])[0]
        messages = [
            {"role": "system", "content": "You are a search agent." * 20},
            {"role": "user", "content": f"Q{i}"},
        ]
        for r in range(rounds):
            call_id = f"call_{i}_{r}"
            messages.append(
                {
                    "role": "assistant",
                    "content": " ".join(rng.choices(words, k=40)),
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "search", "arguments": json.dumps({"query": f"q {i} {r}"})},
                        }
                    ],
                }
            )
            body = "\n".join(
                f"{k}. [Page {k}](https://en.wikipedia.org/wiki/{k}#chunk-1)\n   - "
                + " ".join(rng.choices(words, k=30))
                for k in range(1, 11)
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "name": "search", "content": body})
        episode = Episode(
            messages=messages,
            status=status,
            rounds=rounds,
            time_cost=rng.uniform(1, 60),
            predicted_answer="" if status != "submitted" else rng.choice(words),
            stop_reason={"submitted": "submitted", "max_rounds": "max_rounds"}.get(status),
            error_type="APIError" if status == "error" else None,
        )
        episode.tool_calls.update(
            {"search": searches, "open_url": opens, "submit_answer": int(status == "submitted")}
        )
        episode.usage.update(
            prompt_tokens=rounds * 1500, completion_tokens=rounds * 100, total_tokens=rounds * 1600
        )
        item = QAItem(
            f"{dataset[:3].lower()}-{i:06d}",
            f"Question number {i} about {rng.choice(words)}?",
            rng.choice(words),
            (),
            "default",
            dataset,
        )
        f1 = rng.choice([0.0, 0.0, 0.5, 1.0]) if status != "error" else None
        scores = None if f1 is None else {"f1": f1, "em": float(f1 == 1.0)}
        writer.add(EpisodeRecord.from_episode(item, i, episode, config, schemas, "synthetic", scores))
    writer.flush()
    return out


class ServedApp:
    """An ASGI app served by uvicorn on 127.0.0.1 (a free port, on a socket made as Ray makes its servers')
    from a background thread (``lifespan``, ``loop``: uvicorn's settings; "on" for an app that needs its
    lifespan run)."""

    def __init__(self, app, lifespan: str = "off", loop: str = "auto"):
        import uvicorn

        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app, log_level="warning", lifespan=lifespan, loop=loop, timeout_graceful_shutdown=1
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, name="sws-ui", daemon=True
        )

    def __enter__(self):
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError(f"the UI did not start on {self.url}")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._socket.close()


class ChromiumMissing(RuntimeError):
    """Chromium is not installed and could not be installed."""


def _apt(*args: str, timeout: float) -> subprocess.CompletedProcess:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(
        ["apt-get", *args], capture_output=True, text=True, timeout=timeout, env=env, check=False
    )


def ensure_chromium(path: Path, apt=_apt) -> Path:
    """``path`` (Debian's ``/usr/bin/chromium``), installed with ``apt-get install -y chromium`` when missing;
    ``apt-get update`` runs once if the first install fails (no or stale package lists on a fresh machine).

    Raises:
        ChromiumMissing: no apt-get, not root, or apt-get failed (its error output is in the message).
    """
    if path.is_file():
        return path
    if shutil.which("apt-get") is None:
        raise ChromiumMissing(f"{path} is missing and there is no apt-get: install Debian's chromium package")
    if os.geteuid() != 0:
        raise ChromiumMissing(f"{path} is missing; installing it needs root: apt-get install -y chromium")
    command = ("install", "-y", "--no-install-recommends", "chromium")
    done = apt(*command, timeout=1200)
    if done.returncode != 0:
        update = apt("update", timeout=600)
        if update.returncode != 0:
            raise ChromiumMissing(f"apt-get update failed, cannot install chromium:\n{update.stderr[-2000:]}")
        done = apt(*command, timeout=1200)
    if done.returncode != 0 or not path.is_file():
        raise ChromiumMissing(
            f"apt-get install chromium failed (exit {done.returncode}) or did not provide {path}:\n"
            f"{done.stderr[-2000:]}"
        )
    return path
