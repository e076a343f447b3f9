"""The pipeline's stages as their entrypoints run them: `sws build corpus/embed/index`, `sws eval` and
`sws quickstart` (and so ``ray_jobs/*.py``, which run those commands) each resolve a config and call one
function here, which unpacks it into the plain arguments of the library (the library never sees config
objects) and turns the library's errors into :class:`StageError`, whose message is the one-line error to show.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sws.config import (
    EmbedderConfig,
    EmbedJobConfig,
    EvalConfig,
    IndexConfig,
    SwsConfig,
    ToolClientConfig,
    to_dict,
)

if TYPE_CHECKING:
    from sws.eval.judge import JudgeSettings


class StageError(RuntimeError):
    """A stage cannot run or finish; the message is the one-line reason. ``usage``: the arguments are wrong."""

    def __init__(self, message: str, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage


def use_dumps(cfg: SwsConfig, dumps, index_paths, manifest_given: bool) -> None:
    """Build from the ``dumps`` given on the command line instead of the profile's; unless ``manifest_given``,
    their fetch manifest is looked for next to them (the profile's lists its own files)."""
    cfg.dump.paths, cfg.dump.index_paths = list(dumps), list(index_paths)
    if not manifest_given:
        cfg.dump.fetch_manifest = None


def build_corpus(cfg: SwsConfig, out: str, progress: bool = True) -> dict:
    """Start Ray as configured, check the inputs against their fetch manifest and build the corpus; its
    manifest."""
    from sws.corpus.build import CorpusBuildError, build_corpus
    from sws.fetch import FetchManifestError, expected_digests
    from sws.raykit import init_ray

    paths = [*cfg.dump.paths, *cfg.dump.index_paths]
    try:
        # missing inputs are left to the build, which names them
        expected = expected_digests([p for p in paths if os.path.isfile(p)], cfg.dump.fetch_manifest)
    except FetchManifestError as exc:
        raise StageError(str(exc)) from exc
    init_ray(cfg.ray.address, cfg.ray.num_cpus)
    plain = to_dict(cfg)
    try:
        return build_corpus(
            cfg.dump.paths,
            out,
            clean=plain["clean"],
            chunk=plain["chunk"],
            index_paths=cfg.dump.index_paths,
            streams_per_shard=cfg.dump.streams_per_shard,
            workers=cfg.ray.workers,
            progress=progress,
            expected=expected,
        )
    except CorpusBuildError as exc:
        raise StageError(str(exc)) from exc


def corpus_summary(manifest: dict) -> dict:
    """What `sws build corpus` prints of a corpus manifest."""
    return {
        "fingerprint": manifest["fingerprint"],
        "complete": manifest["complete"],
        **{
            k: manifest["counts"][k]
            for k in ("pages", "articles", "redirects", "other_namespace", "skipped", "chunks", "tokens")
        },
        "input_errors": manifest["input_errors"],
        "rebuilt_shards": manifest["rebuilt_shards"],
        "wall_s": manifest["durations"]["wall_s"],
    }


def check_corpus_complete(manifest: dict) -> None:
    """Raise, with the reason, when the corpus is partial or empty."""
    if manifest["input_errors"]:
        first = manifest["input_errors"][0]
        raise StageError(
            f"corpus is incomplete: {len(manifest['input_errors'])} input error(s), first in {first['unit']}: "
            f"{first['error']} (pages read before the error were kept; see manifest.json)"
        )
    if not manifest["counts"]["articles"]:
        raise StageError(f"no articles found in the input ({manifest['counts']['pages']} pages read)")


def embed(cfg: SwsConfig, corpus: str, out: str):
    """Embed every chunk of ``corpus`` into vector shards in ``out`` (on Ray unless ``embed.workers`` is 0);
    the :class:`~sws.index.VectorSet`."""
    from sws.index import SwsIndexError, embed_corpus

    try:
        _start_embedding(cfg)
        return embed_corpus(corpus, out, embedder_spec(cfg.embedder), **embed_options(cfg.embed))
    except (SwsIndexError, ValueError) as exc:
        raise StageError(str(exc)) from exc


def build_index(cfg: SwsConfig, corpus: str, out: str, vectors: str | None = None) -> dict:
    """Build the indexes as configured (embedding on Ray unless ``vectors`` is given); their manifest."""
    from sws.index import SwsIndexError, build_index

    try:
        keyword, dense = make_indexers(cfg.index)
        if not vectors:
            _start_embedding(cfg)
        return build_index(
            corpus,
            out,
            embedder=None if vectors else embedder_spec(cfg.embedder),
            vectors_dir=vectors,
            keyword=keyword,
            dense=dense,
            embed_options=embed_options(cfg.embed),
        )
    except (SwsIndexError, ValueError) as exc:
        raise StageError(str(exc)) from exc


def index_summary(manifest: dict) -> dict:
    """What `sws build index` prints of an index manifest."""
    return {
        "fingerprint": manifest["fingerprint"],
        "chunks": manifest["corpus"]["chunks"],
        "pages": manifest["keyword"]["pages"],
        "redirects": manifest["keyword"]["redirects"],
        "embedder": manifest["embedder"]["spec"]["model"],
        "dim": manifest["embedder"]["dim"],
        "shards": len(manifest["dense"]["shards"]),
        "seconds": manifest["seconds"],
    }


def _start_embedding(cfg: SwsConfig) -> None:
    """Check that models can load here (``ValueError``: one line), then start Ray unless embedding in process."""
    from sws.torch_companions import check_torch_companions

    check_torch_companions()
    if cfg.embed.workers:
        from sws.raykit import init_ray

        init_ray(cfg.ray.address, cfg.ray.num_cpus)


def verify_index_files(index_dir: str, *, require_checksums: bool = False) -> dict:
    """``sws.index.manifest.verify_index``; an index without checksums is an error with ``require_checksums``,
    else a warning on stderr (its sizes were checked)."""
    from sws.index import SwsIndexError
    from sws.index.manifest import verify_index

    try:
        summary = verify_index(Path(index_dir))
    except SwsIndexError as exc:
        raise StageError(str(exc)) from exc
    if summary["checksum"] is None:
        message = (
            f"{index_dir} records no checksums (built before sws recorded them): the sizes of its "
            f"{summary['files']} files match, their contents cannot be checked; rebuild the index to record them"
        )
        if require_checksums:
            raise StageError(message)
        print(f"warning: {message}", file=sys.stderr)
    return summary


def export_index(
    index_dir: str, out: str, layout: str, metric: str | None = None, model: str | None = None
) -> dict:
    """``sws.index.reference.export_reference`` (the only ``layout`` so far: "reference"); a refused export
    (the index does not verify, ``out`` is not empty, an unexportable tokenizer) is a ``StageError``."""
    from sws.index import SwsIndexError
    from sws.index.reference import export_reference

    if layout != "reference":
        raise StageError(f"--format {layout!r}: expected 'reference'", usage=True)
    try:
        return export_reference(index_dir, out, metric or "ip", model=model)
    except (SwsIndexError, ValueError) as exc:
        raise StageError(str(exc)) from exc


def import_index(
    sources: str | Sequence[str], out: str, embedder_spec: str | None = None, copy: bool = False
) -> dict:
    """``sws.index.reference.import_reference`` of an index in the reference's layout: one folder, or its
    Tantivy and FAISS parts as two folders or two ``.tar.zst`` archives (``embedder_spec``: a JSON
    ``make_embedder`` spec); what it prints of the manifest. A refused import is a ``StageError``."""
    import json

    from sws.index import SwsIndexError
    from sws.index.embedders import embedder_kinds
    from sws.index.reference import import_reference

    spec = None
    if embedder_spec:
        try:
            spec = json.loads(embedder_spec)
        except ValueError as exc:
            raise StageError(f"--embedder-spec is not JSON: {exc}", usage=True) from None
        if not isinstance(spec, dict) or not all(isinstance(spec.get(k), str) for k in ("kind", "model")):
            raise StageError('--embedder-spec must be a JSON object with "kind" and "model"', usage=True)
        if spec["kind"] not in embedder_kinds():
            raise StageError(
                f"--embedder-spec: unknown kind {spec['kind']!r} ({', '.join(embedder_kinds())})", usage=True
            )
    try:
        manifest = import_reference(sources, out, embedder=spec, copy=bool(copy))
    except (SwsIndexError, ValueError) as exc:
        raise StageError(str(exc)) from exc
    return {
        "index": str(Path(out).resolve()),
        "layout": manifest["layout"],
        "fingerprint": manifest["fingerprint"],
        **{k: manifest["corpus"][k] for k in ("chunks", "pages")},
        "faiss": manifest["dense"]["params"],
        "tokenizer": manifest["keyword"]["params"]["tokenizer"],
        "embedder": manifest["embedder"]["spec"]["model"],
        "seconds": manifest["seconds"],
    }


def evaluate(
    cfg: SwsConfig,
    *,
    dataset: str,
    data_path: str,
    out: str | None = None,
    limit: int | None = None,
    repair: bool = False,
    extend: bool = False,
    unverified_tools: bool = False,
) -> dict:
    """Load and select the items, reach the tools and the LLM as configured, run the episodes; a summary.

    The rest comes from the config (``eval.*``, ``tools.*``, ``index.*``: the flags of ``sws eval`` set its
    keys, ``sws.config.flags.EVAL``): the tools in process over ``tools.index`` (None: ``index.out``), or the
    retrieval service at ``tools.url``. In process, ``index.verify_on_open`` checks the index files'
    checksums here, once, before the workers open the index (sizes only). ``out`` defaults to
    ``<eval.out>/<dataset>-<subset>-<model>``; ``extend`` lets a resume add items to the run;
    ``unverified_tools`` runs against a service that tells no environment fingerprint
    (:func:`environment`).

    Raises:
        StageError: bad inputs, another run in ``out``, a tool service that cannot be verified.
        EvalInterrupted: SIGINT or SIGTERM stopped the run (what had finished is recorded).
    """
    from sws.agent import HEURISTIC_MODEL, LLMSettings
    from sws.eval.datasets import EmptyDatasetError, file_sha256, load_dataset, select
    from sws.eval.lock import RunLockedError
    from sws.eval.registry import DatasetError, canonical_dataset
    from sws.eval.results import DamagedPartError
    from sws.eval.run_meta import DamagedRunError, RunMismatchError
    from sws.eval.runner import run_evaluation
    from sws.eval.spec import EvalSpec
    from sws.raykit import init_ray
    from sws.transport import tool_client_factory

    e = cfg.eval
    index_dir = cfg.tools.index or cfg.index.out
    try:
        dataset = canonical_dataset(dataset)
        items = select(load_dataset(data_path, dataset), e.subset, seed=e.seed)[:limit]
        data_sha256 = file_sha256(data_path)
    except EmptyDatasetError as exc:  # nothing to run: the --data given is wrong
        raise StageError(str(exc), usage=True) from exc
    except (DatasetError, OSError) as exc:
        raise StageError(str(exc)) from exc
    if cfg.index.verify_on_open and cfg.tools.transport == "inprocess":
        verify_index_files(index_dir)
    fingerprint, query_embedding = environment(cfg.tools, index_dir, unverified_tools)
    with _llm_endpoint(e.llm_base_url) as base_url:
        model = e.model or (HEURISTIC_MODEL if base_url != e.llm_base_url else None)
        if not model:
            raise StageError("--model is required with --llm-base-url", usage=True)
        out = out or str(Path(e.out) / f"{dataset}-{Path(e.subset).stem}-{model.replace('/', '_')}")
        try:
            spec = EvalSpec(
                items,
                Path(out),
                dataclasses.replace(e.agent, model=model),
                LLMSettings(base_url, os.environ.get(e.api_key_env, "EMPTY"), e.max_concurrency, e.timeout_s),
                tool_client_factory(**tool_client_args(cfg.tools, index_dir)),
                fingerprint,
                query_embedding,
                judge_settings(e, base_url) if e.judge else None,
                dataset,
                e.subset,
                data_sha256,
                e.seed if e.subset == "random_300" else None,
                extend=bool(extend),
                repair=bool(repair),
                workers=e.workers,
                episodes_per_worker=e.episodes_per_worker,
                worker_num_cpus=e.worker_num_cpus,
                tool_modules=tuple(cfg.tools.modules),
                offered_tools=tuple(e.tools or ()),
            )
        except ValueError as exc:
            raise StageError(str(exc)) from exc
        init_ray(cfg.ray.address, cfg.ray.num_cpus)
        try:
            summary = run_evaluation(spec)
        except (RunMismatchError, RunLockedError) as exc:
            raise StageError(str(exc)) from exc
        except DamagedRunError as exc:
            raise StageError(f"{exc}; fix it, or use a new --out directory") from exc
        except DamagedPartError as exc:
            raise StageError(
                f"{exc}; rerun with --repair to move damaged parts to {spec.out_dir / 'damaged'} and run their "
                "episodes again"
            ) from exc
    return {"out": out, "model": model, **dataclasses.asdict(summary)}


def judge_settings(e: EvalConfig, base_url: str) -> JudgeSettings:
    """The LLM judge as ``eval.judge_*`` configure it (``judge_base_url`` None: the agent's ``base_url``)."""
    from sws.eval.judge import JudgeSettings, default_cache_dir

    return JudgeSettings(
        model=e.judge_model,
        base_url=e.judge_base_url or base_url,
        api_key=os.environ.get(e.judge_api_key_env),
        variant=e.judge_variant,
        cache_dir=str(default_cache_dir()),  # the driver's SWS_CACHE, not a Ray worker's
        timeout=e.timeout_s,
    )


@contextlib.contextmanager
def _llm_endpoint(base_url: str | None):
    """The given endpoint, or the scripted heuristic baseline on 127.0.0.1 (search, open, submit; no LLM)."""
    if base_url:
        yield base_url
        return
    from sws.agent.scripted_server import ScriptedLLMServer

    print("no --llm-base-url: running the heuristic baseline (no LLM), labelled as such", file=sys.stderr)
    with ScriptedLLMServer(policy="heuristic") as server:
        yield server.url


def environment(tools_cfg, index_dir: str, unverified: bool = False) -> tuple[str, dict[str, Any] | None]:
    """The fingerprint of the environment the episodes see and how its queries are embedded: the index's (in
    process: its embedder's spec, or the ``tools.embedding_endpoint`` it checks) or the service's (``GET /info``
    with the bearer token, as the tool client sends it: its ``query_embedding``, None if it tells none).

    A service that refuses the request (401/403: the token, the Host) is an error, as its tool calls would
    fail. One that cannot be reached or tells no fingerprint is an error too unless ``unverified``, which
    gives ``"unverified"`` (runs against it are then never told apart by their environment).
    """
    from sws.index import SwsIndexError
    from sws.index.manifest import read_manifest

    if tools_cfg.transport == "http":
        from sws.transport.info import ServiceRefusedError, fingerprint_in, service_info

        token = _token(tools_cfg)
        try:
            problem, info = service_info(tools_cfg.url, token, tools_cfg.timeout_s)
        except ServiceRefusedError as exc:  # the tool calls would be refused too
            hint = "" if exc.status == 403 else f"; {'check' if token else 'set'} ${tools_cfg.token_env}"
            raise StageError(f"{exc}{hint}") from exc
        if info:
            return fingerprint_in(info), info.get("query_embedding")
        if not unverified:
            raise StageError(
                f"{problem}, so which index it serves cannot be checked; pass --unverified-tools to run "
                'anyway (recorded as fingerprint "unverified")'
            )
        print(f'warning: {problem}; the run is recorded as fingerprint "unverified"', file=sys.stderr)
        return "unverified", None
    try:
        manifest = read_manifest(Path(index_dir))
    except SwsIndexError as exc:
        raise StageError(str(exc)) from exc
    from sws.index.embedders import QUERY_RUNTIMES

    spec = manifest["embedder"]["spec"]
    if tools_cfg.embedding_endpoint and tools_cfg.transport == "inprocess":  # checked before the workers
        from sws.index.embedders.endpoint import endpoint_embedder

        try:
            remote = endpoint_embedder(manifest["embedder"], tools_cfg.embedding_endpoint)
        except SwsIndexError as exc:
            raise StageError(str(exc)) from exc
        return manifest["fingerprint"], {"model": spec["model"], **remote.runtime_info()}
    runtime = spec.get("runtime") or ("torch" if spec["kind"] in QUERY_RUNTIMES else spec["kind"])
    return manifest["fingerprint"], {"model": spec["model"], "runtime": runtime}


def embedder_spec(cfg: EmbedderConfig) -> dict[str, Any]:
    """``make_embedder`` keyword arguments."""
    return {"kind": cfg.kind, "model": cfg.model, "query_task": cfg.query_task, **cfg.options}


def tool_client_args(cfg: ToolClientConfig, index: str | None = None) -> dict[str, Any]:
    """``make_tool_client`` arguments: ``index`` is the fallback of an unset ``cfg.index``; the bearer token is
    read here, from ``cfg.token_env``.

    Raises:
        ValueError: a retry setting or tool option out of range (checked here, not in the workers).
    """
    from sws.env import ToolOptions
    from sws.retry import RetryPolicy

    return {
        "transport": cfg.transport,
        "index": cfg.index or index,
        "url": cfg.url,
        "app_name": cfg.app_name,
        "token": _token(cfg),
        "policy": RetryPolicy(cfg.timeout_s, cfg.max_attempts, cfg.backoff_s, cfg.backoff_max_s),
        "max_connections": cfg.max_connections,
        "tool_options": ToolOptions(**dataclasses.asdict(cfg.tools)),
        "embedding_endpoint": cfg.embedding_endpoint,
    }


def _token(cfg: ToolClientConfig) -> str | None:
    return os.environ.get(cfg.token_env) if cfg.token_env else None


def embed_options(cfg: EmbedJobConfig) -> dict[str, Any]:
    """``embed_corpus`` keyword arguments (besides corpus, output and embedder)."""
    return {k: v for k, v in dataclasses.asdict(cfg).items() if k != "out"}


def make_indexers(cfg: IndexConfig):
    """The (TantivyIndexer, FaissIndexer) pair for a config."""
    from sws.index.dense import FaissIndexer
    from sws.index.keyword import TantivyIndexer

    k, d = cfg.keyword, cfg.dense
    return (
        TantivyIndexer(tokenizer=k.tokenizer, threads=k.threads, heap_mb=k.heap_mb),
        FaissIndexer(
            m=d.m,
            ef_construction=d.ef_construction,
            ef_search=d.ef_search,
            shard_rows=d.shard_rows,
            threads=d.threads,
            builder=d.builder,
        ),
    )
