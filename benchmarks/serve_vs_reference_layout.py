"""``sws serve`` beside the paper's reference tool server over the *same* index in the reference's own layout
(issue 45's side by side). The harness (``--peer``, default ``../shared/peer``) builds the reference's Tantivy
``text/{chunks,titles}`` and FAISS ``vector/{index.faiss,ids.pkl}`` from the bundled sample's chunks (481
chunks, 106 pages) and starts the reference on them with its MiniLM ``/v1/embeddings`` server on ``--port`` +
1; sws adopts those very files (``sws index import TEXT VECTOR --out IDX --embedder-spec ...``: hard links,
under ``benchmarks/results/work/reference-layout/<harness key>/``) and serves them with
``--embedding-endpoint`` at that same embedding server. Both sides send it the same strings: model
``all-MiniLM-L6-v2``, input ``Instruct: Given a web search query, retrieve relevant passages that answer the
query\\nQuery: {q.strip()}`` (the reference's runtime task, always on; sws's from the imported manifest's
``query_task``). The harness starts its embedding server without ``--strip_instruct`` (``setup``'s
``embed_args``), so MiniLM embeds the instruction on both sides.

1. Observations (``search``, ``open_url``, ``difference`` and ``parity`` lines). ``--questions`` real
   questions (the six QA sets of ``tests/data/qa`` interleaved, ``serve_common.agent_queries``) x keywords /
   vector / rrf x ``--top-k`` (1 5 10): ``POST /search {query, top_k, only_title: false, method}`` to both
   servers, the ``content`` strings compared byte for byte. Each observation is
   - ``identical``;
   - ``equal_as_sets`` (rrf): the reference's own candidate pools are asked of it (keywords and vector at 3 x
     ``top_k``: the rrf path's keyword pages and vector chunks), each candidate's fused score computed as it
     computes it (``sum 1.0 / (60 + rank)`` in floats, text rank then vector rank), and position by position
     the two hits have the same fused score, each sws hit once and its text byte-identical to the reference's
     for that chunk. So hits may change places only within a tie class, and at the cut another member of the
     cut tie class may stand in (the reference orders ties by ``PYTHONHASHSEED``; sws breaks them
     deterministically, CONTRACT part 1 §2). ``reference_tied`` counts the reference's rrf observations that
     held a tie at all;
   - ``vector-tie-order``: different only where FAISS scores tie exactly (the query embedded at the same
     server and searched here in the adopted ``index.faiss``): a vector observation, or an rrf one whose sws
     vector pool is the reference's up to such ties and which sws fused from that pool. The reference keeps
     FAISS's order of tied hits, sws orders them by row: a difference CONTRACT part 1 does not list, so it
     fails the goal;
   - ``keyword-syntax`` (keywords, rrf): the two agree once the query's non-word characters are spaces (the
     same Tantivy terms): the reference's raw Tantivy query syntax made the difference, a deliberate deviation
     (sws honours words and quoted phrases and escapes the rest, CONTRACT part 1 §2);
   - ``unexplained``: anything else.
   ``open_url``: every chunk URL in the hits (``…/wiki/<id>#chunk-N``) and its article URL, byte for byte; the
   hits' titles as ``/wiki/<Title>`` URLs are reported apart (``title``: sws resolves an exact title first,
   the reference takes the best BM25 title, a deliberate deviation, outside the goal). ``difference`` lines:
   the first ``--show`` differing pairs per cell, in full. Goal: every observation identical, rrf
   ``equal_as_sets`` or a deliberate deviation (``parity``'s ``failing`` counts the rest by kind;
   ``strictly_identical``: all identical).
2. Served QPS (``cell`` lines, ``serve_vs_reference.run_cells``): rrf, vector and keywords at 16 and 256
   closed-loop clients of the harness' ``load.py`` (HotpotQA questions), ``--rounds`` alternating window pairs
   per cell, the reference (and with it the embedding server) restarted before each cell. ``sws_embedding``:
   ``endpoint``, sws embedding at the reference's embedding server as in part 1 (that one MiniLM process, on
   the same cores, then bounds both sides' vector and rrf: their ratios are reported, not judged), then
   ``local``, a fresh ``sws serve`` of the same index embedding its queries itself (as
   ``serve_vs_reference.py`` runs it; rrf and vector only: keywords embed nothing). Goals: rrf >= 2x
   (``local``), keywords >= 1x, sws 0 failed in every cell.

Without the harness it prints one ``skipped`` line and exits 0; it exits 1 when a goal fails.

Run: ``timeout 3600 .venv/bin/python benchmarks/serve_vs_reference_layout.py > layout.jsonl`` (~35 min on 2
cores: the harness' venv and indexes the first time ~3 min, 150 questions 2-5 min, ten cells x 3 rounds of 2 x
20 s windows with the restarts ~26 min); ``--quick``: 12 questions, one 8 s + 3 s round per cell at 16 clients
(~5 min, a smoke check); ``--only parity|load``, ``--load-embedding endpoint|local``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

from serve_common import REPO, WORK, agent_queries, emit, json_stdout, sample_index
from serve_vs_reference import CELLS, REFERENCE_PORT, peer_home, reference, run_cells

from serve.launch import ServeProcess
from sws.index.embedders.base import QWEN3_QUERY_TASK

BENCH = "serve_vs_reference_layout"
METHODS = ("keywords", "vector", "rrf")
# the load cells' goals per way sws embeds its queries: through the reference's embedding server (both sides
# then wait on that one MiniLM process, saturated on a small machine: rrf and vector ratios are reported, not
# judged), or locally (its own query runtime, as serve_vs_reference.py runs it)
LOAD_GOALS = {
    "endpoint": {"rrf": None, "vector": None, "keywords": 1.0},
    "local": {"rrf": 2.0, "vector": None, "keywords": 1.0},
}
# what the harness' embedding server serves, asked for as the reference asks (its runtime's task, always on)
EMBEDDER = {"kind": "sentence-transformers", "model": "all-MiniLM-L6-v2", "query_task": QWEN3_QUERY_TASK}
NO_RESULTS = "No results found."
HIT = re.compile(r"(\d+)\. (\[.*\]\(https://en\.wikipedia\.org/wiki/(\d+)#chunk-(\d+)\))")
RRF_K = 60
# differences CONTRACT part 1 §2 makes on purpose (named, not failing): the reference's raw query syntax
DELIBERATE = ("keyword-syntax",)
HIT_LINE = re.compile(f"^{HIT.pattern}$", re.MULTILINE)


def harness_info(port: int) -> dict[str, str]:
    """``run-PORT/info.txt`` of a running harness start: ``indexes``, ``embed_url``, ``commit``, ..."""
    text = (peer_home() / f"run-{port}" / "info.txt").read_text()
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def adopt(indexes: Path) -> tuple[Path, float | None]:
    """The harness' ``indexes`` (``text/``, ``vector/``) imported by ``sws index import`` under ``WORK``, once
    per harness index (its folder name is the harness' hash of the inputs); the seconds it took (None:
    reused)."""
    out = WORK / "reference-layout" / indexes.name / "index"
    manifest = out / "manifest.json"
    if manifest.is_file() and json.loads(manifest.read_text())["embedder"]["spec"] == EMBEDDER:
        return out, None
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    command = [sys.executable, "-m", "sws", "index", "import", str(indexes / "text"), str(indexes / "vector")]
    subprocess.run(
        [*command, "--out", str(out), "--embedder-spec", json.dumps(EMBEDDER)], check=True, stdout=2
    )
    return out, round(time.perf_counter() - started, 2)


def hits(observation: str) -> list[tuple[str, str]]:
    """``(chunk_id, text)`` per hit of a search observation (CONTRACT §1.9), the text without its number:
    a hit starts at a line ``{i}. [title](…/wiki/<id>#chunk-N)`` numbered past the previous hit's.

    Raises:
        ValueError: not a search observation (an error answer).
    """
    if observation == NO_RESULTS:
        return []
    found: list[tuple[str, list[str]]] = []
    last = 0
    for line in observation.split("\n"):
        m = HIT.fullmatch(line)
        if m and int(m[1]) > last:
            last = int(m[1])
            found.append((f"{m[3]}_{int(m[4]) - 1}", [m[2]]))
        elif found:
            found[-1][1].append(line)
        else:
            raise ValueError(f"not a search observation: {observation[:200]!r}")
    return [(cid, "\n".join(lines).rstrip("\n")) for cid, lines in found]


def rrf_scores(keyword_pool: list[str], vector_pool: list[str]) -> dict[str, float]:
    """The reference's fused score of each candidate: ``sum(1.0 / (60 + rank))`` over its text rank, then its
    vector rank (1-based, first occurrence), in floats as it sums them."""
    ranks: list[dict[str, float]] = []
    for pool in (keyword_pool, vector_pool):
        ranked: dict[str, float] = {}
        for rank, cid in enumerate(pool, 1):
            ranked.setdefault(cid, float(rank))
        ranks.append(ranked)
    return {
        cid: sum(1.0 / (RRF_K + r[cid]) for r in ranks if cid in r) for cid in {*keyword_pool, *vector_pool}
    }


def tie_equal(theirs: list[tuple[str, str]], ours: list[tuple[str, str]], score: dict, text: dict) -> bool:
    """Whether ``ours`` is ``theirs`` up to the order (and, at the cut, the choice) of hits whose ``score``
    ties: as long, each hit once, position by position the same score, each hit's text ``text[chunk]``."""
    if len(theirs) != len(ours) or len({c for c, _ in ours}) != len(ours):
        return False
    return all(
        r in score and s in score and score[r] == score[s] and text.get(s) == t_s
        for (r, _), (s, t_s) in zip(theirs, ours, strict=True)
    )


def fused(keyword_pool: list, vector_pool: list, top_k: int) -> tuple[list, dict[str, float], dict]:
    """RRF over two pools of ``(chunk_id, text)`` hits as the reference fuses them: its top ``top_k`` hits
    (ties in no set order), every candidate's score, every candidate's text."""
    score = rrf_scores([c for c, _ in keyword_pool], [c for c, _ in vector_pool])
    text = dict([*vector_pool, *keyword_pool])  # an rrf hit's text is its chunk's, from either pool
    ranked = sorted(score, key=lambda c: -score[c])[:top_k]
    return [(c, text[c]) for c in ranked], score, text


class FaissScores:
    """Each chunk's FAISS score for a query, as both servers compute it: the query embedded by the index's
    query embedder at the shared endpoint, searched in the adopted ``index.faiss`` (to find exact ties)."""

    def __init__(self, index: Path, embed_url: str):
        import faiss

        from sws.index.embedders.endpoint import endpoint_embedder
        from sws.index.reference.keys import KEYS_FILE, ChunkKeys

        manifest = json.loads((index / "manifest.json").read_text())
        self.embedder = endpoint_embedder(manifest["embedder"], embed_url)
        self.faiss = faiss.read_index(str(index / manifest["dense"]["dir"] / "index.faiss"))
        self.keys = ChunkKeys(index / KEYS_FILE)

    def __call__(self, query: str, k: int) -> dict[str, float]:
        scores, rows = self.faiss.search(self.embedder.embed_queries([query]), min(k, self.faiss.ntotal))
        found = [(int(r), float(s)) for r, s in zip(rows[0], scores[0]) if r >= 0]
        return dict(zip(self.keys.chunk_ids([r for r, _ in found]), (s for _, s in found)))


class Sides:
    """``POST`` the same body to the reference (side 0) and sws (side 1): ``content`` or a failure string."""

    def __init__(self, reference_url: str, sws_url: str, faiss_scores: FaissScores):
        import httpx

        self.urls, self.faiss_scores = (reference_url, sws_url), faiss_scores
        self.client = httpx.Client(timeout=120.0, trust_env=False)

    def post(self, side: int, path: str, body: dict) -> str:
        response = self.client.post(self.urls[side] + path, json=body)
        if response.status_code != 200:
            return f"<HTTP {response.status_code}: {response.text[:300]}>"
        return response.json()["content"]

    def both(self, path: str, body: dict) -> tuple[str, str]:
        return self.post(0, path, body), self.post(1, path, body)

    def search(self, side: int, query: str, method: str, top_k: int) -> str:
        return self.post(
            side, "/search", {"query": query, "top_k": top_k, "only_title": False, "method": method}
        )


def compare(sides: Sides, query: str, method: str, top_k: int) -> tuple[str, bool, str, str]:
    """``(verdict, tied, reference, sws)``: the two observations and whether they are ``identical``, rrf's
    ``equal_as_sets`` (the reference's pools fused as it fuses them; ``tied``: a tie among its hits),
    ``vector-tie-order`` (they differ only where FAISS scores tie: a vector observation, or an rrf one whose
    sws vector pool is the reference's up to such ties and which sws fused from it) or ``differing``."""
    theirs, ours = (sides.search(side, query, method, top_k) for side in (0, 1))
    if method != "rrf" and theirs == ours:
        return "identical", False, theirs, ours
    try:
        ref, sws = hits(theirs), hits(ours)
        if method == "vector":
            ties = tie_equal(ref, sws, sides.faiss_scores(query, 3 * top_k), dict(ref))
            return ("vector-tie-order" if ties else "differing"), False, theirs, ours
        if method == "keywords":
            return "differing", False, theirs, ours
        keyword_pool, vector_pool = (
            hits(sides.search(0, query, m, 3 * top_k)) for m in ("keywords", "vector")
        )
        _, score, text = fused(keyword_pool, vector_pool, top_k)
        tied = any(Counter(score.values())[score[c]] > 1 for c, _ in ref if c in score)
        if theirs == ours or tie_equal(ref, sws, score, text):
            return ("identical" if theirs == ours else "equal_as_sets"), tied, theirs, ours
        our_pool = hits(sides.search(1, query, "vector", 3 * top_k))
        faiss_score = sides.faiss_scores(query, 9 * top_k)
        if our_pool != vector_pool and tie_equal(vector_pool, our_pool, faiss_score, dict(vector_pool)):
            top, score, text = fused(keyword_pool, our_pool, top_k)
            if tie_equal(top, sws, score, text):
                return "vector-tie-order", tied, theirs, ours
    except ValueError:  # an error answer: no hits to compare
        return "differing", False, theirs, ours
    return "differing", tied, theirs, ours


def sanitized(query: str) -> str:
    """The query with every non-word character a space: the same Tantivy terms (its default tokenizer splits
    on non-alphanumerics) without any query syntax; AND / OR / NOT / IN / TO lower-cased (operators in
    caps)."""
    plain = re.sub(r"[^\w\s]|_", " ", query)
    return re.sub(r"\b(AND|OR|NOT|IN|TO)\b", lambda m: m[0].lower(), plain)


def compare_search(sides: Sides, query: str, method: str, top_k: int) -> dict:
    """One question's observations for one method and ``top_k``: ``verdict`` (:func:`compare`; a difference
    on keywords or rrf is asked again with the :func:`sanitized` query: ``keyword-syntax`` when that agrees,
    else ``unexplained``), the two strings."""
    verdict, tied, theirs, ours = compare(sides, query, method, top_k)
    if verdict == "differing":
        plain = sanitized(query)
        again = compare(sides, plain, method, top_k)[0] if method != "vector" and plain != query else None
        verdict = "keyword-syntax" if again in ("identical", "equal_as_sets") else "unexplained"
    row = {"query": query, "method": method, "top_k": top_k, "verdict": verdict, "tied": tied}
    return row | {"reference": theirs, "sws": ours}


def parity(sides: Sides, questions: list[str], top_ks: list[int], show: int, threads: int) -> bool:
    """Part 1: ``search`` lines per method and ``top_k``, ``open_url`` lines per URL kind, up to ``show``
    ``difference`` lines per cell, one ``parity`` line; whether it passed."""
    tasks = [(q, m, k) for m in METHODS for k in top_ks for q in questions]
    with ThreadPoolExecutor(threads) as pool:
        rows = list(pool.map(lambda t: compare_search(sides, *t), tasks))
    failing, strict = Counter(), True
    for method in METHODS:
        for top_k in top_ks:
            cell = [r for r in rows if (r["method"], r["top_k"]) == (method, top_k)]
            verdicts = Counter(r["verdict"] for r in cell)
            kinds = {k: n for k, n in verdicts.items() if k not in ("identical", "equal_as_sets")}
            failing.update({k: n for k, n in kinds.items() if k not in DELIBERATE})
            strict &= verdicts["identical"] == len(cell)
            emit(
                BENCH,
                "search",
                method=method,
                top_k=top_k,
                questions=len(cell),
                identical=verdicts["identical"],
                equal_as_sets=verdicts["equal_as_sets"],
                differing=sum(kinds.values()),
                kinds=kinds,
                reference_tied=sum(r["tied"] for r in cell) if method == "rrf" else None,
            )
            for r in [r for r in cell if r["verdict"] in kinds][:show]:
                fields = ("method", "top_k", "query", "verdict", "reference", "sws")
                emit(BENCH, "difference", **{k: r[k] for k in fields})
    urls = open_urls(rows)
    with ThreadPoolExecutor(threads) as pool:
        opened = list(pool.map(lambda u: sides.both("/open_url", {"url": u[1]}), urls))
    for kind in ("chunk", "article", "title"):
        pairs = [(url, o) for (k, url), o in zip(urls, opened) if k == kind]
        differing = [(url, o) for url, o in pairs if o[0] != o[1]]
        if kind != "title":
            failing[f"open_url {kind}"] += len(differing)
            strict &= not differing
        emit(
            BENCH,
            "open_url",
            kind=kind,
            urls=len(pairs),
            identical=len(pairs) - len(differing),
            differing=len(differing),
            deviation="title resolution (CONTRACT part 1 §2)" if kind == "title" else None,
        )
        for url, (theirs, ours) in differing[:show]:
            emit(BENCH, "difference", method="open_url", kind=kind, url=url, reference=theirs, sws=ours)
    passed = not +failing
    emit(
        BENCH,
        "parity",
        questions=len(questions),
        top_k=top_ks,
        failing=dict(+failing),
        strictly_identical=strict,
        passed=passed,
        goal="identical, rrf equal as sets where the reference's scores tie, or a deliberate deviation "
        f"({', '.join(DELIBERATE)})",
    )
    return passed


def open_urls(rows: list[dict]) -> list[tuple[str, str]]:
    """``(kind, url)``: each chunk URL in the hits of either side, its article URL, and the hit's title as a
    ``/wiki/<Title>`` URL, each once, in first-seen order."""
    seen: dict[str, str] = {}
    for row in rows:
        for content in (row["reference"], row["sws"]):
            for m in HIT_LINE.finditer(content):
                title = m[2][1 : m[2].rindex("](")]
                page = f"https://en.wikipedia.org/wiki/{m[3]}"
                seen.setdefault(f"{page}#chunk-{m[4]}", "chunk")
                seen.setdefault(page, "article")
                seen.setdefault(
                    "https://en.wikipedia.org/wiki/" + quote(title.replace(" ", "_"), safe="_"), "title"
                )
    return [(kind, url) for url, kind in seen.items()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", type=Path, default=REPO.parent / "shared" / "peer")
    parser.add_argument("--port", type=int, default=REFERENCE_PORT, help="the reference's (its embedder: +1)")
    parser.add_argument("--quick", action="store_true", help="12 questions; one 8 s round at 16 clients")
    parser.add_argument("--questions", type=int, help="questions asked (default 150; --quick 12)")
    parser.add_argument("--top-k", type=int, nargs="+", default=[1, 5, 10], help="default 1 5 10")
    parser.add_argument("--rounds", type=int, help="alternating window pairs per load cell (default 3)")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS), help="load cells")
    parser.add_argument("--clients", nargs="+", type=int, help="load cells (default 16 256; --quick 16)")
    parser.add_argument(
        "--load-embedding",
        nargs="+",
        choices=tuple(LOAD_GOALS),
        default=list(LOAD_GOALS),
        help="how sws embeds queries in the load cells (default both: endpoint, then local)",
    )
    parser.add_argument("--only", choices=("parity", "load"), help="run one part")
    parser.add_argument("--show", type=int, default=2, help="differing pairs printed per cell (default 2)")
    parser.add_argument("--threads", type=int, default=4, help="concurrent observation requests (default 4)")
    args = parser.parse_args()
    json_stdout()
    if not (args.peer / "run_reference.sh").is_file():
        emit(BENCH, "skipped", reason=f"no side-by-side harness at {args.peer}")
        return 0
    rounds = args.rounds or (1 if args.quick else 3)
    if rounds < 1 or (args.questions is not None and args.questions < 1):
        parser.error("--rounds and --questions must be at least 1")
    clients = args.clients or ([16] if args.quick else [16, 256])
    cells = [
        (m, c, *((8, 3) if args.quick else (s, w)), rounds)
        for m, c, s, w in CELLS
        if m in args.methods and c in clients
    ]
    corpus = sample_index().parent / "corpus"
    port = str(args.port)
    ok = True
    try:
        reference(args.peer, "stop", port)
        reference(args.peer, str(corpus), port)
        info = harness_info(args.port)
        index, seconds = adopt(Path(info["indexes"]))
        endpoint = ["--embedding-endpoint", info["embed_url"]]
        emit(
            BENCH,
            "setup",
            reference_commit=info["commit"],
            reference_indexes=info["indexes"],
            sws_index=str(index),
            import_seconds=seconds,
            embed_url=info["embed_url"],
            embed_args=info.get("embed_args", ""),
            embedder=EMBEDDER,
        )
        if args.only != "load":
            with ServeProcess(index, args=endpoint, log_path=str(index) + "-serve.log") as server:
                sides = Sides(info["reference_url"], server.url, FaissScores(index, info["embed_url"]))
                questions = agent_queries("questions", args.questions or (12 if args.quick else 150))
                ok &= parity(sides, questions, args.top_k, args.show, args.threads)
        if args.only != "parity":
            for i, mode in enumerate(args.load_embedding):
                todo = [c for c in cells if i == 0 or c[0] != "keywords"]  # keywords embed nothing: once
                with ServeProcess(
                    index, args=endpoint if mode == "endpoint" else [], log_path=f"{index}-serve-{mode}.log"
                ) as server:
                    ok &= run_cells(
                        args.peer,
                        corpus,
                        server.url,
                        todo,
                        port=args.port,
                        benchmark=BENCH,
                        goals=LOAD_GOALS[mode],
                        fields={"sws_embedding": mode},
                    )
    finally:
        reference(args.peer, "stop", port)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
