"""Where the two parts of a reference-layout index lie among the folders ``sws index import`` is given.

An index in the reference's layout has two parts, which the paper ships as two archives: the **Tantivy** part,
a folder holding ``chunks/`` and ``titles/`` (``tantivy/chunk-1536/`` in the layout), and the **FAISS** part,
a folder ``<name>/`` holding ``index.faiss`` and ``ids.pkl`` (``faiss/<name>/``). A folder given to the import
may hold either part or both, at any of these places:

- Tantivy: ``FOLDER/tantivy/chunk-1536/``, ``FOLDER/chunk-1536/`` or ``FOLDER`` itself (the first of them
  that holds ``chunks/`` or ``titles/``, which must then hold both);
- FAISS: ``FOLDER`` itself, else each ``FOLDER/faiss/<name>/``, else each ``FOLDER/<name>/`` (``FOLDER`` is
  the ``faiss/`` folder) that holds both files; ``<name>`` names the part in the index (``faiss/<name>/``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sws.index.errors import IndexMissingError
from sws.index.reference.layout import CHUNKS_DIR, IDS_FILE, INDEX_FILE, TANTIVY_DIR, TITLES_DIR

TANTIVY, FAISS = "Tantivy", "FAISS"
WHAT = {
    TANTIVY: f"the Tantivy indexes ({CHUNKS_DIR.name}/ and {TITLES_DIR.name}/, in {TANTIVY_DIR}/)",
    FAISS: f"the FAISS index ({INDEX_FILE} and {IDS_FILE}, in faiss/<name>/)",
}


@dataclass(frozen=True)
class ReferenceParts:
    """The two parts of an index in the reference's layout.

    Args:
        tantivy: the folder holding ``chunks/`` and ``titles/``.
        faiss: the folder holding ``index.faiss`` and ``ids.pkl``; its name is ``<name>`` in ``faiss/<name>/``.
    """

    tantivy: Path
    faiss: Path

    def folders(self) -> dict[Path, Path]:
        """Each folder of the index's layout (relative) -> the folder holding its files."""
        return {
            CHUNKS_DIR: self.tantivy / CHUNKS_DIR.name,
            TITLES_DIR: self.tantivy / TITLES_DIR.name,
            Path("faiss") / self.faiss.name: self.faiss,
        }


def _tantivy_part(folder: Path, label: str) -> Path | None:
    """The Tantivy part in ``folder`` (module docstring), or None.

    Raises:
        IndexMissingError: it holds one of ``chunks/`` and ``titles/`` only.
    """
    for found in (folder / TANTIVY_DIR, folder / TANTIVY_DIR.name, folder):
        held = {part: (found / part.name).is_dir() for part in (CHUNKS_DIR, TITLES_DIR)}
        if any(held.values()):
            for part, is_dir in held.items():
                if not is_dir:
                    missing = (found / part.name).relative_to(folder)
                    raise IndexMissingError(
                        f"{label} is not in the reference's layout: {missing}/ is missing"
                    )
            return found
    return None


def _faiss_part(folder: Path, label: str) -> Path | None:
    """The FAISS part in ``folder`` (module docstring), or None.

    Raises:
        ValueError: it holds several.
    """

    def holds(path: Path) -> bool:
        return (path / INDEX_FILE).is_file() and (path / IDS_FILE).is_file()

    if holds(folder):
        return folder
    for pattern in ("faiss/*", "*"):
        found = sorted(p for p in folder.glob(pattern) if p.is_dir() and holds(p))
        if len(found) > 1:
            raise ValueError(
                f"{label} holds {len(found)} FAISS folders ({', '.join(p.name for p in found)}): keep one"
            )
        if found:
            return found[0]
    return None


def folder_parts(folder: Path, label: str | None = None) -> dict[str, Path]:
    """The parts ``folder`` holds (``TANTIVY``, ``FAISS``: their folders); ``label`` names it in errors.

    Raises:
        IndexMissingError: a Tantivy part missing ``chunks/`` or ``titles/``; ValueError: several FAISS parts.
    """
    label = label or str(folder)
    parts = {TANTIVY: _tantivy_part(folder, label), FAISS: _faiss_part(folder, label)}
    return {kind: path for kind, path in parts.items() if path is not None}


def reference_parts(found: dict[str, dict[str, Path]]) -> ReferenceParts:
    """The one Tantivy and the one FAISS part among ``found`` (each source's label -> its ``folder_parts``).

    Raises:
        IndexMissingError: a part is in none of the sources, or one of two sources holds neither;
            ValueError: a part is in both.
    """
    for label, parts in found.items():
        if len(found) > 1 and not parts:
            raise IndexMissingError(f"{label} holds neither {WHAT[TANTIVY]} nor {WHAT[FAISS]}")
    chosen = {}
    for kind in (TANTIVY, FAISS):
        holders = [label for label, parts in found.items() if kind in parts]
        if len(holders) > 1:
            raise ValueError(
                f"{' and '.join(holders)} both hold {WHAT[kind]}: give one Tantivy and one FAISS source"
            )
        if not holders:  # one source: two, each holding a part and none the same, hold both
            (label, parts), missing = next(iter(found.items())), f"{CHUNKS_DIR}/ is missing"
            if kind == FAISS:
                missing = f"no faiss/*/{{{INDEX_FILE},{IDS_FILE}}}"
            second = (
                f" (or give the {kind} part, a folder or its archive, as a second source)" if parts else ""
            )
            raise IndexMissingError(f"{label} is not in the reference's layout: {missing}{second}")
        chosen[kind] = found[holders[0]][kind]
    return ReferenceParts(tantivy=chosen[TANTIVY], faiss=chosen[FAISS])
