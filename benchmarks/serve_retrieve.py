"""``POST /retrieve`` (the RL trainers' retriever format) against its in-process floor, on questions of the
six QA sets, ``topk`` 3.

1. ``batched``: one request of ``--batch`` (512) queries, per method, against ``SearchEngine.batch_search`` of
   the same queries in this process (the ``floor``, its rounds alternating with the served ones while the
   service is up) and against the same queries sent one request at a time by one client (``sequential``).
   Goals: batched served >= 0.8x the floor; >= 5x the sequential rate for vector and rrf.
2. ``concurrent``: ``--clients`` (1 024) closed-loop clients sending one query each (rLLM's and SkyRL's form)
   for ``--seconds`` (30) after a 10 s warm-up, rrf. Goal: 0 failed; QPS against the floor reported.
3. ``fault``: the same load with one of 2 retrieval replicas SIGKILLed after ``--kill-after`` s. Goal: <= 1%
   failed (retryable 503s count), both replicas running again.
4. ``rollout`` (run before the others): a Search-R1 GRPO step's searches (512 prompts x 5 rollouts): ONE
   ``POST /retrieve`` of ``{"queries": [--rollout-queries (2 560) questions], "topk": 3, "return_scores":
   true}``, as Search-R1's ``batch_search`` sends it (no method: sws's default, rrf), and the same body with
   ``"method": "vector"`` (the peer's own work, dense search only), against ``sws serve`` (default bounds,
   no token) on each of ``--rollout-replicas`` (1 and 2) retrieval replicas, side by side with **Search-R1's
   own retrieval server** (``search_r1/search/retrieval_server.py`` at a14dc3a, run by ``search_r1_peer.py``)
   on the same chunks, vectors and encoder (all-MiniLM-L6-v2, mean pooling; its FAISS index ``Flat`` over
   the index's own vectors). Questions: Search-R1's HotpotQA dev set
   (``tests/data/qa/hotpotqa_dev.searchr1.parquet``), each round a new slice, the same for both servers;
   ``--rollout-rounds`` (3) rounds per replica count, the servers alternating. Per round and side: wall time
   of the request (body sent, answer read and parsed), failed queries (no hits, listed in ``errors``, or all
   of them on an HTTP error), status, answer bytes (sws cuts each document at ``serve.retrieve.max_chars``,
   Search-R1 returns whole chunks). Goal: Search-R1's time / sws's >= 2, pooled over the rounds, sws 0
   failed, for each replica count and body. A ``rollout_sanity`` line first: both servers' top-3 ids (sws
   with ``vector``) for a few questions.

   What was changed to run Search-R1's server on a CPU (a runner written beside its unmodified file; each
   line's ``peer.changes`` says it too): ``torch.Tensor.cuda`` / ``torch.nn.Module.cuda`` return self (model
   and inputs stay on the CPU); ``torch.nn.Module.half`` returns self (its main hard-codes fp16, several
   times slower than fp32 on a CPU; it runs fp32); ``uvicorn.run`` binds 127.0.0.1 and a free port instead
   of 0.0.0.0:8000; faiss stays on the CPU (``--faiss_gpu`` not passed). It needs ``datasets`` in the venv
   (``.venv/bin/pip install datasets``) and a git directory of PeterGriffinJin/Search-R1 (``--search-r1``,
   ``SEARCH_R1_REPO``, or ``.mirror/PeterGriffinJin+Search-R1/repo`` beside the repository); without them
   the step prints one ``skipped`` line saying what is missing.

Run: ``timeout 1800 .venv/bin/python benchmarks/serve_retrieve.py`` (``--seconds 10`` for a short run);
the rollout alone: ``timeout 1800 .venv/bin/python benchmarks/serve_retrieve.py --step rollout``
(``--rollout-queries 64 --rollout-rounds 1`` for a smoke run).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import httpx
import search_r1_peer
from loadgen import load
from serve_common import DATA, REPO, agent_queries, emit, json_stdout, sample_index
from serve_load import TOKEN, killed_replica_run

from serve.launch import ServeProcess

FLOOR_GOAL, SEQUENTIAL_GOAL, FAULT_GOAL = 0.8, 5.0, 0.01
WHOLE_CHUNK_CHARS = 12_000  # over the sample's longest chunk with its title
WHOLE_ANSWER_CHARS = 128 * 2**20  # 2,560 queries x topk 3 x (12,000 + 256) is over the default 64 Mi
TOPK = 3
BODY_BYTES = 4 << 20  # a 512-query body is over the 64 KiB default bound
STEPS = ("batched", "concurrent", "fault", "rollout")
ROLLOUT_GOAL = 2.0  # Search-R1's server's time / sws's for the same batch
ROLLOUT_SANITY = 8  # questions whose top-3 ids both servers are asked for
ROLLOUT_WARMUP = 64
ROLLOUT_TIMEOUT_S = 1800.0  # the client's (Search-R1's batch_search sets none)


def floor_engine(index: Path):
    """``SearchEngine`` over ``index`` in this process, its queries embedded as ``sws serve`` embeds them by
    default (``serve.embedding.runtime: auto``: for MiniLM on the CPU, OpenVINO bf16 or ONNX Runtime by the
    hardware)."""
    from sws.index import WikiIndex, make_embedder
    from sws.index.manifest import read_manifest
    from sws.search import SearchEngine

    spec = dict(read_manifest(index)["embedder"]["spec"]) | {"runtime": "auto", "device": "cpu"}
    engine = SearchEngine(WikiIndex.open(index, embedder=make_embedder(**spec)))
    engine.batch_search(["model loaded"] * 8, TOPK, "rrf")
    return engine


def batch_seconds(engine, client: httpx.Client, queries: list[str], method: str, repeats: int):
    """Median seconds of one batch in this process (the floor) and of one ``/retrieve`` of it, their rounds
    alternating, so that both sides see the same moments of a shared machine; a first round of each unmeasured
    (the searchers' word memos filled)."""
    body = {"queries": queries, "topk": TOPK, "method": method}
    floor, served = [], []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        engine.batch_search(queries, TOPK, method)
        floor.append(time.perf_counter() - start)
        start = time.perf_counter()
        client.post("/retrieve", json=body).raise_for_status()
        served.append(time.perf_counter() - start)
    return statistics.median(floor[1:]), statistics.median(served[1:])


def sequential_qps(client: httpx.Client, queries: list[str], method: str) -> float:
    start = time.perf_counter()
    for query in queries:
        client.post("/retrieve", json={"query": query, "top_k": TOPK, "method": method}).raise_for_status()
    return len(queries) / (time.perf_counter() - start)


def post_batch(client: httpx.Client, url: str, queries: list[str], extra: dict | None = None):
    """One ``POST /retrieve`` of ``queries`` in Search-R1's body (with the ``extra`` fields): its figures
    (seconds until the answer is parsed, failed queries, status, answer bytes) and the ids per query."""
    body = {"queries": queries, "topk": TOPK, "return_scores": True} | (extra or {})
    start = time.perf_counter()
    try:
        response = client.post(f"{url}/retrieve", json=body)
        status, size = response.status_code, len(response.content)
        answer = response.json() if response.is_success else {}
    except httpx.HTTPError as exc:
        answer, status, size = {}, type(exc).__name__, 0
    seconds = time.perf_counter() - start
    result = answer.get("result") or []
    bad = {error["index"] for error in answer.get("errors", [])}
    failed = len(queries)
    if len(result) == len(queries):
        failed = sum(1 for i, hits in enumerate(result) if not hits or i in bad)
    ids = [[hit["document"]["id"] for hit in hits] for hits in result]
    return {"seconds": round(seconds, 3), "failed": failed, "status": status, "bytes": size}, ids


def rollout(args, index: Path) -> bool:
    """Step 4 (see the docstring): emits ``rollout_sanity`` and one ``rollout`` line per replica count and
    body; True when every goal holds (or the peer cannot run here: one ``skipped`` line)."""
    reason = search_r1_peer.missing(args.search_r1, args.search_r1_commit)
    if reason:
        emit("serve_retrieve", "rollout", skipped=reason)
        return True
    from sws.eval.datasets import load_dataset

    pool = [item.question.strip() for item in load_dataset(DATA / "qa" / "hotpotqa_dev.searchr1.parquet")]
    n, rounds, ok = args.rollout_queries, args.rollout_rounds, True
    # rrf: Search-R1's body as sent (sws's default method); vector: the peer's own work; vector-whole: that with
    # whole chunks in the answer, as the peer sends them (sws cuts them at serve.retrieve.max_chars; the sample's
    # longest chunk is 8,954 characters), the answer bound raised to let 2,560 x 3 whole chunks through
    methods = {
        "rrf": {},
        "vector": {"method": "vector"},
        "vector-whole": {"method": "vector", "max_chars": WHOLE_CHUNK_CHARS},
    }
    whole_bound = f"serve.retrieve.max_answer_chars={WHOLE_ANSWER_CHARS}"
    peer_info = {"repo": "PeterGriffinJin/Search-R1", "commit": args.search_r1_commit}
    peer_info["changes"] = search_r1_peer.CHANGES
    with (
        tempfile.TemporaryDirectory(prefix="sws-search-r1-") as work,
        search_r1_peer.SearchR1Server(
            args.search_r1, args.search_r1_commit, index, Path(work), Path(f"{index}-search-r1.log")
        ) as peer,
        httpx.Client(timeout=ROLLOUT_TIMEOUT_S, trust_env=False) as client,
    ):
        post_batch(client, peer.url, pool[-ROLLOUT_WARMUP:])
        for r_index, replicas in enumerate(args.rollout_replicas):
            log = str(index) + "-rollout.log"
            serve_args = ["--replicas", str(replicas), whole_bound]
            with ServeProcess(index, args=serve_args, log_path=log) as server:
                for method in methods.values():
                    post_batch(client, server.url, pool[-ROLLOUT_WARMUP:], method)
                if r_index == 0:
                    asked = pool[:ROLLOUT_SANITY]
                    ours, theirs = (
                        post_batch(client, u, asked, methods["vector"])[1] for u in (server.url, peer.url)
                    )
                    same = sum(a == b for a, b in zip(ours, theirs, strict=False))
                    emit(
                        "serve_retrieve",
                        "rollout_sanity",
                        queries=len(asked),
                        same_top3_ids=same,
                        same_top1_id=sum(a[:1] == b[:1] for a, b in zip(ours, theirs, strict=False)),
                        differing=[
                            {"query": q, "sws": a, "search_r1": b}
                            for q, a, b in zip(asked, ours, theirs, strict=False)
                            if a != b
                        ],
                        peer=peer_info,
                    )
                peer_rounds, sws_rounds = [], {method: [] for method in methods}
                for r in range(rounds):
                    start = (r_index * rounds + r) * n
                    queries = [pool[(start + i) % len(pool)] for i in range(n)]
                    peer_rounds.append(post_batch(client, peer.url, queries)[0])
                    for name, method in methods.items():
                        sws_rounds[name].append(post_batch(client, server.url, queries, method)[0])
            peer_s = sum(side["seconds"] for side in peer_rounds)
            for name, ours in sws_rounds.items():
                failed = sum(side["failed"] for side in ours)
                ratio = None if failed else round(peer_s / sum(side["seconds"] for side in ours), 2)
                passed = ratio is not None and ratio >= ROLLOUT_GOAL
                ok &= passed
                emit(
                    "serve_retrieve",
                    "rollout",
                    replicas=replicas,
                    method=name,
                    body={"as Search-R1 sends it": True} if not methods[name] else methods[name],
                    server=["--replicas", str(replicas), whole_bound],
                    queries=n,
                    topk=TOPK,
                    sws=ours,
                    search_r1=peer_rounds,
                    round_ratios=[
                        round(p["seconds"] / s["seconds"], 2) if not s["failed"] else None
                        for p, s in zip(peer_rounds, ours, strict=True)
                    ],
                    ratio=ratio,
                    goal=ROLLOUT_GOAL,
                    goal_means="Search-R1's time / sws's, pooled over the rounds, >= 2; sws 0 failed",
                    passed=passed,
                    peer=peer_info,
                )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, help="index directory (default: the bundled sample)")
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--clients", type=int, default=1024)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--kill-after", type=float, default=5.0)
    parser.add_argument("--step", choices=STEPS, action="append", help="steps to run (default: all)")
    parser.add_argument("--skip", choices=STEPS, action="append", default=[])
    parser.add_argument("--rollout-queries", type=int, default=2560, help="queries in the one batch")
    parser.add_argument("--rollout-rounds", type=int, default=3, help="batch pairs per replica count")
    parser.add_argument("--rollout-replicas", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--search-r1", type=Path, default=search_r1_peer.default_repo(REPO), help="Search-R1 git directory"
    )
    parser.add_argument("--search-r1-commit", default=search_r1_peer.COMMIT)
    args = parser.parse_args()
    json_stdout()
    index = args.index or sample_index()
    steps = [step for step in args.step or STEPS if step not in args.skip]
    ok = rollout(args, index) if "rollout" in steps else True
    if {"batched", "concurrent", "fault"}.isdisjoint(steps):
        return 0 if ok else 1
    queries = agent_queries("questions", args.batch)
    singles = [("/retrieve", {"query": q, "top_k": TOPK, "method": "rrf"}) for q in queries]
    engine = floor_engine(index)
    floors = {}
    serve_args = ["--replicas", "2", f"serve.max_body_bytes={BODY_BYTES}"]
    with ServeProcess(index, token=TOKEN, args=serve_args, log_path=str(index) + "-retrieve.log") as server:
        headers = {"authorization": f"Bearer {TOKEN}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=300, trust_env=False) as client:
            for method in ("keywords", "vector", "rrf"):
                floor_s, served_s = batch_seconds(engine, client, queries, method, args.repeats)
                floors[method] = len(queries) / floor_s
                if "batched" not in steps:
                    continue
                batched = len(queries) / served_s
                sequential = sequential_qps(client, queries, method)
                passed = batched >= FLOOR_GOAL * floors[method] and (
                    method == "keywords" or batched >= SEQUENTIAL_GOAL * sequential
                )
                ok &= passed
                emit(
                    "serve_retrieve",
                    "batched",
                    method=method,
                    queries=len(queries),
                    floor_qps=round(floors[method], 1),
                    batched_qps=round(batched, 1),
                    sequential_qps=round(sequential, 1),
                    ratio=round(batched / floors[method], 2),
                    vs_sequential=round(batched / sequential, 2),
                    goal=f"ratio >= {FLOOR_GOAL}; vector/rrf vs_sequential >= {SEQUENTIAL_GOAL}",
                    passed=passed,
                )
        if "concurrent" in steps:
            load(server.url, singles, clients=args.clients, seconds=10.0, token=TOKEN)  # warm up
            summary = load(
                server.url, singles, clients=args.clients, seconds=args.seconds, token=TOKEN
            ).summary()
            passed = summary["failed"] == 0
            ok &= passed
            ratio = round(summary["qps"] / floors["rrf"], 2)
            emit("serve_retrieve", "concurrent", **summary, vs_floor=ratio, goal="failed == 0", passed=passed)
        if "fault" in steps:
            result, recovery_s = killed_replica_run(
                server, singles, args.clients, args.seconds, args.kill_after
            )
            rate = result.failed / max(1, result.requests)
            passed = rate <= FAULT_GOAL and recovery_s is not None
            ok &= passed
            emit(
                "serve_retrieve",
                "fault",
                **result.summary(),
                failed_rate=round(rate, 4),
                recovery_s=recovery_s,
                goal=f"failed <= {FAULT_GOAL:.0%} and recovered",
                passed=passed,
            )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
