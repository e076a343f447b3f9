"""Manifests: what every stage writes beside its outputs (inputs with checksums, config, counts, versions)
and the fingerprint that identifies the result."""

from __future__ import annotations

import hashlib
import json
import platform
from importlib import metadata
from pathlib import Path
from typing import Any

VERSIONED_PACKAGES = (
    "sws",
    "ray",
    "pyarrow",
    "lxml",
    "indexed-bzip2",
    "fastokens",
    "tokenizers",
    "tantivy",
    "faiss-cpu",
    "faiss-gpu-cuvs",
    "torch",
    "mcp",
    "starlette",
)
MANIFEST = "manifest.json"


class OtherArtefactError(ValueError):
    """An output directory whose ``manifest.json`` is another artefact's: building there would overwrite it."""


def file_digests(path: str | Path, algorithms=("sha256",), block: int = 1 << 22) -> dict[str, str]:
    """``{algorithm: hex}`` for each of ``algorithms`` (hashlib names), in one read of the file."""
    hashers = {a: hashlib.new(a) for a in algorithms}
    with open(path, "rb") as f:
        while chunk := f.read(block):
            for hasher in hashers.values():
                hasher.update(chunk)
    return {a: h.hexdigest() for a, h in hashers.items()}


def describe_input(path: str | Path, extra_digests=()) -> dict:
    """Path, name, size and sha256 of an input (plus ``extra_digests``, e.g. ``("sha1",)``, in the same read)."""
    path = Path(path)
    algorithms = ("sha256", *(a for a in extra_digests if a != "sha256"))
    return {
        "path": str(path.resolve()),
        "name": path.name,
        "bytes": path.stat().st_size,
        **file_digests(path, algorithms),
    }


def versions() -> dict[str, str]:
    """Python's and the installed libraries' versions, recorded in every manifest and by ``GET /info``."""
    found = {"python": platform.python_version()}
    for name in VERSIONED_PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def digest(obj: Any) -> str:
    """A 16-hex fingerprint of JSON-able data (key order does not matter; other values as ``str``)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object in the manifest at ``path``.

    Raises:
        FileNotFoundError: no file there.
        ValueError: unreadable, not JSON, or JSON of another type than an object.
    """
    data = json.loads(path.read_text())
    if not isinstance(data, dict):
        raise ValueError(f"{path} holds a JSON {type(data).__name__}, not an object")  # noqa: TRY004 (a bad file)
    return data


def refuse_other_artefact(out_dir: str | Path, kind: str, fingerprint: str | None = None) -> None:
    """Refuse to build a ``kind`` (what its manifest records as ``"kind"`` or ``"format"``) in ``out_dir``
    when the ``manifest.json`` there describes something else: another kind, a file sws did not write, or
    (with ``fingerprint``) the same kind built from other inputs. No manifest: nothing to refuse.

    Raises:
        OtherArtefactError: one line naming what ``out_dir`` holds.
    """
    path = Path(out_dir) / MANIFEST
    try:
        data = read_json_object(path)
    except (FileNotFoundError, NotADirectoryError):  # no manifest; or out_dir a file, which the build names
        return
    except (OSError, ValueError) as exc:
        held = f"an unreadable {MANIFEST} ({exc})"
    else:
        held = _other_than(data, kind, fingerprint)
        if held is None:
            return
    raise OtherArtefactError(
        f"{out_dir} holds {held}; building here would overwrite it: use another --out directory"
    )


def _other_than(manifest: dict[str, Any], kind: str, fingerprint: str | None) -> str | None:
    """What ``manifest`` describes when it is not a ``kind`` of ``fingerprint``; None when it is."""
    found = manifest.get("kind") or manifest.get("format")
    if not isinstance(found, str):
        return f"a {MANIFEST} that sws did not write"
    if found != kind:
        return f"an {found} manifest, not an {kind} one"
    if fingerprint not in (None, manifest.get("fingerprint")):
        return f"an {kind} of other inputs (fingerprint {manifest.get('fingerprint')}, not {fingerprint})"
    return None
