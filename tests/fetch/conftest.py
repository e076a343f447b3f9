"""Fixtures: a Wikimedia-style dumps tree (the bundled sample packed as a real multistream dump + index, with
dumpstatus.json and sums files) and QA samples in their sources' formats, served from 127.0.0.1."""

from __future__ import annotations

import csv
import hashlib
import io
import json

import pytest

from sws.corpus.multistream import pack_multistream
from tests.conftest import DATA, SAMPLE
from tests.fetch.server import FileServer

DATE = "20260601"
DUMP = f"enwiki-{DATE}-pages-articles-multistream.xml.bz2"
INDEX = f"enwiki-{DATE}-pages-articles-multistream-index.txt.bz2"
QA = DATA / "qa"


def _meta(name: str, body: bytes, wiki: str = "enwiki", date: str = DATE) -> dict:
    return {
        "size": len(body),
        "url": f"/{wiki}/{date}/{name}",
        "md5": hashlib.md5(body).hexdigest(),
        "sha1": hashlib.sha1(body).hexdigest(),
    }


def _sums(files: dict[str, bytes], algorithm: str) -> bytes:
    return "".join(f"{hashlib.new(algorithm, b).hexdigest()}  {n}\n" for n, b in files.items()).encode()


@pytest.fixture(scope="session")
def dump_files(tmp_path_factory) -> dict[str, bytes]:
    """``{name: bytes}`` of the sample packed the way Wikimedia packs enwiki (streams of 20 pages here)."""
    where = tmp_path_factory.mktemp("packed")
    dump, index, _ = pack_multistream(SAMPLE, where / DUMP, where / INDEX, pages_per_stream=20)
    return {DUMP: dump.read_bytes(), INDEX: index.read_bytes()}


@pytest.fixture(scope="session")
def dumps_tree(dump_files) -> dict[str, bytes]:
    """URL path -> body of a dumps site: enwiki with three dates (20260701 still running), a split job
    next to the recombined one, and simplewiki as on a mirror with only an md5sums file."""
    tree: dict[str, bytes] = {}
    dates = ["20260501", DATE, "20260701"]
    tree["/enwiki/"] = "".join(f'<a href="{d}/">{d}/</a>\n' for d in dates).encode()
    parts = {  # split part files (any bytes do for listing them)
        f"enwiki-{DATE}-pages-articles-multistream1.xml-p1p41242.bz2": b"part one",
        f"enwiki-{DATE}-pages-articles-multistream-index1.txt-p1p41242.bz2": b"index one",
        f"enwiki-{DATE}-pages-articles-multistream2.xml-p41243p151573.bz2": b"part two",
        f"enwiki-{DATE}-pages-articles-multistream-index2.txt-p41243p151573.bz2": b"index two",
    }
    status = {
        "version": "0.8",
        "jobs": {
            "articlesmultistreamdump": {
                "status": "done",
                "updated": "2026-06-02 10:00:00",
                "files": {n: _meta(n, b) for n, b in parts.items()},
            },
            "articlesmultistreamdumprecombine": {
                "status": "done",
                "updated": "2026-06-02 12:00:00",
                "files": {n: _meta(n, b) for n, b in dump_files.items()},
            },
            "articlesdump": {"status": "done", "updated": "2026-06-02 08:00:00", "files": {}},
        },
    }
    tree[f"/enwiki/{DATE}/dumpstatus.json"] = json.dumps(status).encode()
    for name, body in {**dump_files, **parts}.items():
        tree[f"/enwiki/{DATE}/{name}"] = body
    tree[f"/enwiki/{DATE}/enwiki-{DATE}-sha1sums.txt"] = _sums({**dump_files, **parts}, "sha1")
    tree[f"/enwiki/{DATE}/enwiki-{DATE}-md5sums.txt"] = _sums({**dump_files, **parts}, "md5")
    running = {
        "version": "0.8",
        "jobs": {"articlesmultistreamdumprecombine": {"status": "waiting", "files": {}}},
    }
    tree["/enwiki/20260701/dumpstatus.json"] = json.dumps(running).encode()
    older = json.loads(json.dumps(status).replace(DATE, "20260501"))
    tree["/enwiki/20260501/dumpstatus.json"] = json.dumps(older).encode()
    simple = {n.replace("enwiki", "simplewiki"): b for n, b in dump_files.items()}
    for name, body in simple.items():
        tree[f"/simplewiki/{DATE}/{name}"] = body
    tree[f"/simplewiki/{DATE}/simplewiki-{DATE}-md5sums.txt"] = _sums(simple, "md5")
    return tree


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _tsv(header: list[str], rows: list[list]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode()


@pytest.fixture(scope="session")
def qa_tree() -> dict[str, bytes]:
    """URL path (host kept, as behind ``--mirror``) -> a small sample in the format of each real source,
    made from the real questions in tests/data/qa."""
    two_wiki = json.loads((QA / "2wikimultihop_test_questions_and_answers.json").read_text())[:400]
    musique = json.loads((QA / "musique_test_questions_and_answers.json").read_text())[:350]
    hotpot = json.loads((QA / "hotpotqa_test_questions_and_answers.json").read_text())[:50]
    with open(QA / "frames_test_set.csv", encoding="utf-8", newline="") as f:
        frames = list(csv.reader(f))[:41]
    popqa = [json.loads(line) for line in (QA / "popqa_test_sample1000_seed42.flashrag.jsonl").open()][:400]
    hf = "/huggingface.co/datasets"
    return {
        f"{hf}/RUC-NLPIR/FlashRAG_datasets/resolve/main/2wikimultihopqa/dev.jsonl": _jsonl(
            {"id": f"dev_{i}", "question": r["question"], "golden_answers": [r["answer"]]}
            for i, r in enumerate(two_wiki)
        ),
        f"{hf}/dgslibisey/MuSiQue/resolve/main/musique_ans_v1.0_dev.jsonl": _jsonl(
            {
                "id": f"{2 + i % 3}hop__{i}",
                "question": r["question"],
                "answer": r["answer"],
                "answer_aliases": [],
            }
            for i, r in enumerate(musique)
        ),
        f"{hf}/google/frames-benchmark/resolve/main/test.tsv": _tsv([""] + frames[0][1:], frames[1:]),
        f"{hf}/akariasai/PopQA/resolve/main/test.tsv": _tsv(
            ["id", "prop", "question", "possible_answers"],
            [
                [r["id"][5:], r["metadata"]["prop"], r["question"], json.dumps(r["golden_answers"])]
                for r in popqa
            ],
        ),
        f"{hf}/RUC-NLPIR/FlashRAG_datasets/resolve/main/bamboogle/test.jsonl": (
            QA / "bamboogle_test.flashrag.jsonl"
        ).read_bytes(),
        "/curtis.ml.cmu.edu/datasets/hotpot/hotpot_dev_distractor_v1.json": json.dumps(
            [{"_id": f"h{i}", "type": "bridge", **r} for i, r in enumerate(hotpot)]
        ).encode(),
    }


@pytest.fixture
def server(dumps_tree, qa_tree):
    """The dumps site and the QA hosts on one local server, with fresh counters for each test."""
    with FileServer() as srv:
        srv.state.files.update(dumps_tree)
        srv.state.files.update(qa_tree)
        yield srv
