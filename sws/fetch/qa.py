"""The six QA benchmarks: where each comes from, and fetching them in the form ``sws.eval`` loads.

Every source is a plain HTTPS file (no hub login, no Google Drive): the datasets' own release where it is a
plain file, else a Hugging Face dataset repository's ``resolve`` URL. Files are saved under names that
:func:`sws.eval.infer_dataset` recognises, loaded once after download (the item count and a fingerprint of
the ``random_300`` ids go into ``fetch-manifest.json``), and verified against a pinned sha256 where one is
known; for the others the manifest records the sha256 of what was fetched, and a later fetch into the same
directory keeps the file only if it still matches.

| dataset | file | source |
|---|---|---|
| 2WikiMultiHopQA dev (12,576) | ``2wikimultihopqa_dev.jsonl`` | FlashRAG's JSONL of the official dev split (the official release is a Dropbox zip) |
| HotpotQA dev (7,405) | ``hotpotqa_dev_distractor_v1.json`` | the authors' file at CMU; a byte-identical Hugging Face copy (RAGLAB) as fallback; sha256 pinned |
| MuSiQue-Ans dev (2,417) | ``musique_ans_v1.0_dev.jsonl`` | the official JSONL (the release zip is on Google Drive), from the ``dgslibisey/MuSiQue`` HF copy |
| FRAMES test (824) | ``frames_test.tsv`` | ``google/frames-benchmark`` ``test.tsv`` (the authors' HF release) |
| PopQA test (14,267) | ``popqa_test.tsv`` | ``akariasai/PopQA`` ``test.tsv`` (the authors' HF release) |
| Bamboogle (125) | ``bamboogle_test.jsonl`` | FlashRAG's JSONL of all 125 questions |
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from sws.fetch.errors import FetchError
from sws.fetch.files import RemoteFile, fetch_files, with_sizes
from sws.fetch.http import HttpFetcher

HF = "https://huggingface.co/datasets"
FLASHRAG = f"{HF}/RUC-NLPIR/FlashRAG_datasets/resolve/main"
RAGLAB_REVISION = "c33b09b7fa5099b89830e84f9bdff78329268d9b"  # a byte-identical copy of the CMU file


@dataclass(frozen=True, slots=True)
class QASource:
    """Where one benchmark's evaluation split comes from.

    Args:
        dataset: canonical name (:data:`sws.eval.DATASETS`).
        filename: the local file name (its prefix tells the loader the dataset, its suffix the format).
        urls: plain HTTPS URLs, tried in order (several only with a pinned ``sha256``).
        split: which split it is.
        items: the number of items the loader reads from the published file.
        sha256: pinned digest, when known.
        bytes: pinned size, when known.
        licence: the dataset's licence, as its authors state it ("" when not verified).
    """

    dataset: str
    filename: str
    urls: tuple[str, ...]
    split: str
    items: int
    sha256: str | None = None
    bytes: int | None = None
    licence: str = ""


QA_SOURCES: tuple[QASource, ...] = (
    QASource(
        "2WikiMultiHopQA",
        "2wikimultihopqa_dev.jsonl",
        (f"{FLASHRAG}/2wikimultihopqa/dev.jsonl",),
        "dev",
        12576,
        licence="Apache-2.0",
    ),
    QASource(
        "HotpotQA",
        "hotpotqa_dev_distractor_v1.json",
        (
            "https://curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_distractor_v1.json",
            f"{HF}/RAGLAB/data/resolve/{RAGLAB_REVISION}/eval_datasets/HotPotQA/hotpot_dev_distractor_v1.json",
        ),
        "dev (distractor)",
        7405,
        sha256="4e9ecb5c8d3b719f624d66b60f8d56bf227f03914f5f0753d6fa1b359d7104ea",
        bytes=46_320_117,
        licence="CC BY-SA 4.0",
    ),
    QASource(
        "MuSiQue",
        "musique_ans_v1.0_dev.jsonl",
        (f"{HF}/dgslibisey/MuSiQue/resolve/main/musique_ans_v1.0_dev.jsonl",),
        "MuSiQue-Ans dev",
        2417,
        licence="CC BY 4.0",
    ),
    QASource(
        "FRAMES",
        "frames_test.tsv",
        (f"{HF}/google/frames-benchmark/resolve/main/test.tsv",),
        "test",
        824,
        licence="Apache-2.0",
    ),
    QASource(
        "PopQA",
        "popqa_test.tsv",
        (f"{HF}/akariasai/PopQA/resolve/main/test.tsv",),
        "test",
        14267,
        licence="MIT",
    ),
    QASource(
        "Bamboogle",
        "bamboogle_test.jsonl",
        (f"{FLASHRAG}/bamboogle/test.jsonl",),
        "test",
        125,
    ),
)


def qa_sources(names: Iterable[str] = ()) -> list[QASource]:
    """The sources of the datasets ``names`` (canonical names, :data:`sws.eval.DATASETS`), or all six.

    Raises:
        FetchError: a name without a source.
    """
    wanted = set(names)
    unknown = wanted - {s.dataset for s in QA_SOURCES}
    if unknown:
        raise FetchError(
            f"no QA source for {', '.join(sorted(unknown))} (known: {', '.join(s.dataset for s in QA_SOURCES)})"
        )
    return [s for s in QA_SOURCES if not wanted or s.dataset in wanted]


def mirrored(url: str, mirror: str | None) -> str:
    """``url`` through a mirror that keeps the host in the path: ``https://h/p`` -> ``MIRROR/h/p``."""
    if not mirror:
        return url
    parts = urlsplit(url)
    return f"{mirror.rstrip('/')}/{parts.netloc}{parts.path}" + (f"?{parts.query}" if parts.query else "")


def remote_files(sources: Iterable[QASource], mirror: str | None = None) -> list[RemoteFile]:
    return [
        RemoteFile(
            s.filename,
            tuple(mirrored(u, mirror) for u in s.urls),
            s.bytes,
            {"sha256": s.sha256} if s.sha256 else {},
            "pinned in sws.fetch.qa" if s.sha256 else None,
            {"dataset": s.dataset, "split": s.split, "licence": s.licence},
        )
        for s in sources
    ]


def plan_datasets(
    fetcher: HttpFetcher, sources: Iterable[QASource], mirror: str | None = None
) -> list[RemoteFile]:
    """The files to fetch, with sizes (asked from the servers where not pinned): what ``--dry-run`` lists."""
    return with_sizes(fetcher, remote_files(sources, mirror))


def fetch_datasets(
    fetcher: HttpFetcher,
    sources: Iterable[QASource],
    out_dir: str | Path,
    mirror: str | None = None,
    check: Callable[[Path, QASource], dict] | None = None,
) -> list[dict]:
    """Download and verify each dataset into ``out_dir``; returns the manifest entries.

    ``check(path, source)`` is called on each verified file (the CLI loads it as the evaluation will); its
    dict goes into the file's manifest entry, and a :class:`FetchError` it raises stops the fetch.

    Raises:
        FetchError: a download fails, a checksum differs, or ``check`` refuses a file.
    """
    sources = list(sources)
    by_file = {s.filename: s for s in sources}
    on_file = (lambda path, remote: check(path, by_file[remote.name])) if check else None
    return fetch_files(fetcher, remote_files(sources, mirror), out_dir, check=on_file)
