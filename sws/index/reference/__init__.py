"""The paper's reference index layout (Tantivy ``chunk-1536`` + FAISS HNSW fp16 with ``ids.pkl``).

``export_reference`` writes an sws index in it, ``import_reference`` adopts it as an sws index, from one folder,
its Tantivy and FAISS parts given apart, or the paper's two ``.tar.zst`` archives (streamed, resumable:
``archive.py``; a damaged one is an ``ArchiveError``); ``WikiIndex.open`` then reads it with
``backend.open_reference``; ``read_ids_pkl`` reads its ``ids.pkl`` without running
anything in the file, and ``check_chunk_ids`` checks the ids as the reference needs them.
"""

from sws.index.reference.adopt import REFERENCE_EMBEDDER, import_reference
from sws.index.reference.archive import ArchiveError
from sws.index.reference.export import export_reference
from sws.index.reference.ids import IdsFileError, check_chunk_ids, read_ids_pkl
from sws.index.reference.layout import CHUNKS_DIR, IDS_FILE, INDEX_FILE, METRICS, TITLES_DIR, faiss_dir

__all__ = [
    "CHUNKS_DIR",
    "IDS_FILE",
    "INDEX_FILE",
    "METRICS",
    "REFERENCE_EMBEDDER",
    "TITLES_DIR",
    "ArchiveError",
    "IdsFileError",
    "check_chunk_ids",
    "export_reference",
    "faiss_dir",
    "import_reference",
    "read_ids_pkl",
]
