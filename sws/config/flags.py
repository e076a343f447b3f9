"""Command-line flags, declared once: each is an alias of config keys (or an argument of its stage), turned
into the click commands' options (``sws.cli.options.flag_options``), which the ``ray_jobs/`` entrypoints run.
A new option is one line in its command's table.

A flag given on the command line wins over the profile and the ``KEY=VALUE`` overrides; one not given leaves
the config as they make it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import click

from sws.config.serving import INGRESS_MODES

# --out directories and input files: an existing path of the other kind is a one-line usage error
# ("Directory 'x' is a file.", "File 'x' is a directory.") before anything runs.
OUT_DIR = click.Path(file_okay=False)
INPUT_FILE = click.Path(dir_okay=False)
VERIFY_HELP = "Check every index file's checksum before opening it (reads the whole index once; sizes are always checked)."
ENDPOINT_HELP = (
    "Embed queries at this OpenAI-compatible /v1/embeddings server (the index's model name; bearer token from "
    "SWS_EMBEDDING_API_KEY) instead of locally; checked at start."
)


@dataclass(frozen=True)
class Flag:
    """One option of a command (and so of its ``ray_jobs/`` entrypoint).

    Args:
        name: ``--kebab-case``.
        help: its help text.
        keys: the config keys (dotted) its value sets; none: it is an argument of the stage, ``dest``.
        type: its value's type (``str``, ``int`` or a ``click.ParamType``); ``bool``: a switch, which sets
            ``keys`` to ``value`` when given.
        value: what a switch sets.
        sets: more keys set when it is given, to these values (``--tools-url``: ``tools.transport: http``).
        dest: the name of its value (default: ``name`` in snake case).
        required: it must be given.
        multiple: repeatable; its value is the list given.
        envvar: an environment variable that supplies it when not given.
        metavar: the value's name in the help.
        hidden: left out of the help (a deprecated name).
        names: the registry whose names it takes (``"datasets"``); ``{names}`` in ``help`` lists them when the
            help is shown (``sws.cli.options.REGISTRIES``), so it lists those registered after import too.
    """

    name: str
    help: str
    keys: tuple[str, ...] = ()
    type: Any = str
    value: Any = True
    sets: tuple[tuple[str, Any], ...] = ()
    dest: str = ""
    required: bool = False
    multiple: bool = False
    envvar: str | None = None
    metavar: str | None = None
    hidden: bool = False
    names: str = ""

    @property
    def param(self) -> str:
        return self.dest or self.name.lstrip("-").replace("-", "_")

    @property
    def switch(self) -> bool:
        return self.type is bool


def flag_settings(flags: Sequence[Flag], values: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the parsed ``values`` (by ``Flag.param``; None or False: not given) of ``flags`` mean: the config
    keys they set (dotted key -> value) and the stage's arguments (name -> value)."""
    keys: dict[str, Any] = {}
    stage: dict[str, Any] = {}
    for flag in flags:
        value = values.get(flag.param)
        if not flag.keys:
            stage[flag.param] = value
        elif value is not None and value is not False:
            keys |= dict.fromkeys(flag.keys, flag.value if flag.switch else value) | dict(flag.sets)
    return keys, stage


VERIFY = Flag("--verify", VERIFY_HELP, ("index.verify_on_open",), bool)
ENDPOINT_FLAG = "--embedding-endpoint"
CORPUS = Flag("--corpus", "Corpus directory (default: corpus.out of the config).", ("corpus.out",))

BUILD_CORPUS = (
    Flag(
        "--dump",
        "Dump file (.xml, .xml.bz2, multistream); repeatable.",
        dest="dumps",
        type=INPUT_FILE,
        multiple=True,
    ),
    Flag(
        "--multistream-index",
        "Multistream -index.txt.bz2, paired with --dump.",
        dest="index_paths",
        type=INPUT_FILE,
        multiple=True,
    ),
    Flag(
        "--index", "", dest="old_index_paths", type=INPUT_FILE, multiple=True, hidden=True
    ),  # deprecated name
    Flag("--out", "Output directory (default: corpus.out of the config).", ("corpus.out",), OUT_DIR),
)
EMBED = (
    CORPUS,
    Flag("--out", "Vectors directory (default: embed.out of the config).", ("embed.out",), OUT_DIR),
)
BUILD_INDEX = (
    CORPUS,
    Flag("--out", "Index directory (default: index.out of the config).", ("index.out",), OUT_DIR),
    Flag(
        "--vectors",
        "Finished vectors directory to index (default: embed during the build).",
        ("index.vectors",),
    ),
)
EXPORT_INDEX = (
    Flag("--out", "Output directory (new or empty).", type=OUT_DIR, required=True),
    Flag(
        "--format",
        "Layout to write: the paper's reference index (Tantivy chunk-1536 + FAISS HNSW fp16, ids.pkl).",
        dest="layout",
        type=click.Choice(["reference"]),
        required=True,
    ),
    Flag(
        "--metric",
        "FAISS metric: ip (inner product, default) or l2 (same ranking on normalised vectors).",
        type=click.Choice(["ip", "l2"]),
    ),
    Flag("--model", "Embedder name in the FAISS folder (default: the index's embedder, last path part)."),
)
IMPORT_INDEX = (
    Flag(
        "--out",
        "Index directory (new or empty; the source folder itself adopts it in place).",
        type=OUT_DIR,
        required=True,
    ),
    Flag(
        "--embedder-spec",
        "Query embedder as a make_embedder JSON spec (default: the reference's, Qwen3-Embedding-0.6B with its "
        'search instruction), e.g. \'{"kind": "sentence-transformers", "model": "all-MiniLM-L6-v2", "query_task": ""}\'.',
        metavar="JSON",
    ),
    Flag(
        "--copy",
        "Copy the files instead of hard-linking them (source and index on different filesystems).",
        type=bool,
    ),
)
SEARCH = (Flag(ENDPOINT_FLAG, ENDPOINT_HELP, metavar="URL"),)  # sws search (no config; open_url never embeds)
EVAL = (
    Flag("--dataset", "{names}.", required=True, names="datasets"),
    Flag(
        "--data",
        "QA file (or --qa-root).",
        dest="data_path",
        type=click.Path(exists=True, dir_okay=False),
    ),
    Flag(
        "--qa-root",
        "The reference's QA archive folder (its data/dataset): ask the paper's own full_test or random_300 "
        "file of --dataset, read as its run_qa_agent.py reads it (instead of --data).",
        type=click.Path(file_okay=False),
    ),
    Flag(
        "--subset",
        "full_test, random_300 or an id-list file (default: eval.subset); with --data, random_300 is sws's "
        "seeded resample (eval.seed), labelled 'random_300 (sws resample, seed N)', not the paper's file.",
        ("eval.subset",),
    ),
    Flag(
        "--llm-base-url",
        "OpenAI-compatible base URL (default: the no-LLM heuristic baseline).",
        ("eval.llm_base_url",),
    ),
    Flag("--model", "Model name at that endpoint.", ("eval.model",)),
    Flag(
        "--out",
        "Results directory (default: <eval.out>/<dataset>-<subset label>-<model>, e.g. "
        "HotpotQA-random_300-sws-resample-seed-42-MODEL for sws's resample).",
        type=OUT_DIR,
    ),
    Flag("--index", "Index for in-process tools (default: index.out).", ("tools.index",)),
    Flag(
        "--tools-url",
        "Use the retrieval service at this URL (POST /call) instead of in-process tools.",
        ("tools.url",),
        sets=(("tools.transport", "http"),),
    ),
    Flag("--limit", "Only the first N items of the subset (smoke runs).", type=click.IntRange(1)),
    Flag(
        "--repair",
        "Move unreadable part files to <out>/damaged/ (kept, not deleted) and run their episodes again.",
        type=bool,
    ),
    Flag(
        "--extend",
        "Resume with more items than the run holds (a larger --limit); recorded in run.json.",
        type=bool,
    ),
    Flag(ENDPOINT_FLAG, ENDPOINT_HELP, ("tools.embedding_endpoint",), metavar="URL"),
    Flag(
        "--unverified-tools",
        'Run even if --tools-url tells no index fingerprint (recorded as "unverified").',
        type=bool,
    ),
    VERIFY,
)
SERVE = (
    Flag(
        "--index",
        "Index directory (default: serve.index, then index.out of the config; env SWS_INDEX).",
        ("serve.index",),
        click.Path(file_okay=False),
        envvar="SWS_INDEX",
    ),
    Flag("--host", "Bind address (default 127.0.0.1; 0.0.0.0 to serve other machines).", ("serve.host",)),
    Flag("--port", "HTTP port (default 11536, the reference tool server's).", ("serve.port",), int),
    Flag(
        "--replicas",
        "Retrieval replicas, a fixed count (default: 1 on a local Ray; on a cluster they autoscale, 2-32).",
        ("serve.replicas.min_replicas", "serve.replicas.max_replicas"),
        click.IntRange(1),
    ),
    Flag("--ingress", "HTTP ingress (default haproxy).", ("serve.ingress",), click.Choice(INGRESS_MODES)),
    Flag(
        "--no-batching",
        "Embed queries inside each retrieval replica, unbatched.",
        ("serve.embedding.batching",),
        bool,
        value=False,
    ),
    Flag(ENDPOINT_FLAG, ENDPOINT_HELP, ("serve.embedding.endpoint",), metavar="URL"),
    Flag("--no-mcp", "Do not expose the MCP endpoint at /mcp.", ("serve.mcp",), bool, value=False),
    Flag(
        "--address-dir",
        "Write the RL trainers' address files here once the service answers (ASearcher's "
        "$RAG_SERVER_ADDR_DIR, rLLM's url_file DIR/rag_url); removed when it stops.",
        ("serve.address_dir",),
        click.Path(file_okay=False),
    ),
    Flag(
        "--ray-address",
        "Deploy to this running Ray cluster instead of starting a local one.",
        ("ray.address",),
    ),
    Flag(
        "--num-cpus",
        "CPUs of the local Ray (default: all; with --llm at least what the apps reserve).",
        ("ray.num_cpus",),
        int,
    ),
    Flag(
        "--llm",
        "Also serve the actor LLM (Ray Serve LLM, vLLM) at /llm (OpenAI base URL <url>/llm/v1): a profile's "
        "llm: section or a YAML file of its fields; llm.<field>=<value> overrides.",
        dest="llm_source",
        metavar="PROFILE_OR_YAML",
    ),
    VERIFY,
)
