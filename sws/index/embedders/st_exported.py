"""Exported runtimes for sentence-transformers' mean-pooled models (MiniLM), run by ONNX Runtime (fp32: vectors
equal PyTorch's within 1e-5) or OpenVINO (bf16 on a CPU with bf16 units, ``sws.index.embedders.precision``; f32
elsewhere). A runtime is transport, not space: it leaves the embedder's fingerprint alone and an index built with
one runtime is queried with another.

The export is made locally from the loaded PyTorch model once, never downloaded, into a folder of the cache
(``<cache root>/onnx/<model>-<key>``, ``sws.cache``): the transformer as ONNX, its tokenizer as ``tokenizers``
JSON, and per ``max_length`` the fp32 reference the agreement gate compares a runtime with (the probe texts' token
ids and PyTorch's vectors). A later open reads only that folder (:func:`find_export`): no PyTorch,
transformers or sentence-transformers import, which is most of a replica's start. The key covers the model
folder's files (name, size, mtime) and the versions that made the export, so a changed model or library makes
a new one.

Both runtimes are batch-invariant: a text's vector does not depend on the texts batched with it (tested).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from sws.cache import cache_dir
from sws.io import write_atomically, write_text_atomically

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_MAKERS = ("torch", "transformers", "sentence-transformers", "tokenizers")  # their versions key the export


def _modules(model: Any) -> list[str]:
    return [type(module).__name__ for module in model]


def is_mean_pooled(model: Any) -> bool:
    """Whether ``model`` is Transformer + mean Pooling [+ Normalize], the shape this runtime serves."""
    names = _modules(model)
    pooling = model[1] if len(names) > 1 else None
    mode = getattr(pooling, "pooling_mode", None) or (pooling.get_config_dict() if pooling else {}).get(
        "pooling_mode"
    )
    return names[:2] == ["Transformer", "Pooling"] and mode == "mean" and names[2:] in ([], ["Normalize"])


def _check_mean_pooled(model: Any) -> None:
    if not is_mean_pooled(model):
        raise ValueError(
            f"the exported runtimes support Transformer + mean Pooling [+ Normalize] models, not {_modules(model)}"
        )


def export_dir(source: str) -> Path:
    """The cache folder of ``source``'s export (a local model folder: keyed by its files' names, sizes and
    mtimes; and by the versions of the libraries that export it)."""
    root = Path(source).resolve()
    files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else []
    stats = [(str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns) for p in files]
    versions = [metadata.version(name) for name in _MAKERS]
    key = hashlib.sha256(json.dumps([str(root), stats, versions]).encode()).hexdigest()[:16]
    return cache_dir("onnx") / f"{root.name.lower()}-{key}"


@dataclass(frozen=True)
class Reference:
    """The fp32 reference at one ``max_length``: the probe texts' token ids and PyTorch's vectors of them."""

    max_length: int
    ids: list[list[int]]
    vectors: np.ndarray


@dataclass(frozen=True)
class Export:
    """An export folder: ``model.onnx``, ``tokenizer.json``, ``meta.json`` (written last) and
    ``reference-<max_length>.json`` files."""

    folder: Path
    dim: int
    max_length: int  # the model's own limit (sentence-transformers' max_seq_length)
    pad_token_id: int

    @property
    def onnx(self) -> Path:
        return self.folder / "model.onnx"

    def tokenizer(self, max_length: int) -> Any:
        """The model's tokenizer (``tokenizers``), truncating at ``max_length`` and padding nothing."""
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        tokenizer.enable_truncation(max_length)
        tokenizer.no_padding()
        return tokenizer

    def reference(self, max_length: int) -> Reference | None:
        """The reference at ``max_length``, None if it was not written (or cannot be read)."""
        try:
            saved = json.loads((self.folder / f"reference-{max_length}.json").read_text())
            return Reference(max_length, saved["ids"], np.asarray(saved["vectors"], dtype=np.float32))
        except (OSError, ValueError, KeyError):
            return None

    def write_reference(self, reference: Reference) -> None:
        saved = {"ids": reference.ids, "vectors": reference.vectors.astype(np.float32).tolist()}
        write_text_atomically(self.folder / f"reference-{reference.max_length}.json", json.dumps(saved))


def find_export(source: str) -> Export | None:
    """``source``'s complete export in the cache, None if there is none (or it is damaged: written again)."""
    folder = export_dir(source)
    try:
        meta = json.loads((folder / "meta.json").read_text())
        if (folder / "model.onnx").stat().st_size != meta["onnx_bytes"] or not (
            folder / "tokenizer.json"
        ).is_file():
            return None
        return Export(folder, int(meta["dim"]), int(meta["max_length"]), int(meta["pad_token_id"]))
    except (OSError, ValueError, KeyError):
        return None


def write_export(model: Any, source: str) -> Export:
    """Export ``model`` (a loaded mean-pooled ``SentenceTransformer``) from ``source`` into its cache folder:
    each file written atomically, ``meta.json`` last, so a killed export leaves no folder that looks complete.

    Raises:
        ValueError: the model is not mean-pooled.
    """
    import torch

    _check_mean_pooled(model)
    folder = export_dir(source)
    auto = model[0].auto_model.cpu().eval()

    class _Hidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.auto = auto

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.auto(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    sample = model.tokenizer(["a b", "a longer sample text"], padding=True, return_tensors="pt")
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "hidden")}

    def export(tmp: Path) -> None:
        with torch.no_grad():
            torch.onnx.export(
                _Hidden(),
                tuple(sample[name] for name in _INPUTS),
                str(tmp),
                input_names=list(_INPUTS),
                output_names=["hidden"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )

    write_atomically(folder / "model.onnx", export)
    write_text_atomically(folder / "tokenizer.json", model.tokenizer.backend_tokenizer.to_str())
    meta = {
        "dim": int(model.get_embedding_dimension()),
        "max_length": int(model.max_seq_length),
        "pad_token_id": int(model.tokenizer.pad_token_id),
        "onnx_bytes": (folder / "model.onnx").stat().st_size,
        "source": str(Path(source).resolve()),
    }
    write_text_atomically(folder / "meta.json", json.dumps(meta, indent=1))
    return Export(folder, meta["dim"], meta["max_length"], meta["pad_token_id"])


def default_threads() -> int | None:
    """PyTorch's intra-op threads where the process imported it (a caller's ``torch.set_num_threads`` holds for
    every runtime), else ``OMP_NUM_THREADS`` where it is set (Ray sets it to an actor's CPUs), else None: the
    runtime's default."""
    if "torch" in sys.modules:
        return sys.modules["torch"].get_num_threads()
    return int(os.environ["OMP_NUM_THREADS"]) if os.environ.get("OMP_NUM_THREADS") else None


class MeanPooledEncoder:
    """``encode(texts) -> (n, dim)`` mean-pooled rows of the exported transformer (length-sorted batches);
    subclasses run the export (:meth:`_hidden`).

    Args:
        export: the export folder.
        max_length: tokens per input.
        batch_size: inputs per run.
        threads: the runtime's intra-op threads (None: :func:`default_threads`).
    """

    precision = "fp32"

    def __init__(self, export: Export, max_length: int, batch_size: int, threads: int | None = None):
        self._tokenizer, self._pad = export.tokenizer(max_length), export.pad_token_id
        self.max_length, self.batch_size = max_length, batch_size
        self._open(export.onnx, threads or default_threads())

    def _open(self, path: Path, threads: int | None) -> None:
        raise NotImplementedError

    def _hidden(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        return [encoding.ids for encoding in self._tokenizer.encode_batch(texts)]

    def encode(self, texts: list[str]) -> np.ndarray:
        ids = self.token_ids(texts)
        groups = self._groups([len(row) for row in ids])
        pooled = [self._pooled([ids[i] for i in group], width) for group, width in groups]
        out = np.empty((len(texts), pooled[0].shape[1]), dtype=np.float32)
        for (group, _), rows in zip(groups, pooled, strict=True):
            out[group] = rows
        return out

    def _groups(self, lengths: list[int]) -> list[tuple[list[int], int]]:
        """Batches of at most ``batch_size`` positions, longest first, each of one padded width: its texts'
        own (:meth:`_width`), so a text is padded alike in any batch and its vector does not depend on the
        texts it was sent with."""
        groups: list[tuple[list[int], int]] = []
        for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
            width = self._width(lengths[i])
            if groups and len(groups[-1][0]) < self.batch_size and groups[-1][1] == width:
                groups[-1][0].append(i)
            else:
                groups.append(([i], width))
        return groups

    def _width(self, length: int) -> int:
        """The padded width of a text of ``length`` tokens: the next multiple of 8. Padding a batch to its
        longest text cost more than the batching saved (MiniLM, ONNX Runtime fp32 on an AVX2 CPU: 13.4 ms a
        question in batches of 16, 9.1 alone; with these widths 7.3 and 10.0)."""
        return min(self.max_length, -(-length // 8) * 8)

    def _pooled(self, rows: list[list[int]], width: int) -> np.ndarray:
        ids = np.full((len(rows), width), self._pad, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, row in enumerate(rows):
            ids[r, : len(row)], mask[r, : len(row)] = row, 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._hidden(feed)
        weights = mask[..., None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


class OnnxMeanPooledEncoder(MeanPooledEncoder):
    """ONNX Runtime's CPU execution provider, fp32."""

    def _open(self, path: Path, threads: int | None) -> None:
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise ImportError("runtime 'onnx' needs: pip install onnxruntime==1.32.0 onnx==1.20.0") from exc
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or 0
        options.inter_op_num_threads = 1
        # idle pool threads sleep instead of spinning: a query replica shares its cores with the ingress and
        # HAProxy (sws serve on 2 cores, 16 clients: vector 1.20x, rrf 1.18x the QPS)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def _hidden(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        return self._session.run(None, feed)[0]


class OpenVinoMeanPooledEncoder(MeanPooledEncoder):
    """OpenVINO's CPU plugin: bf16 inference precision where the CPU has bf16 units, f32 elsewhere.

    Its kernels depend on the padded width (bf16 vectors moved by ~5e-4 past 32 tokens), not on the batch
    size; its widths are powers of two (16, 32, 64, ...)."""

    def _width(self, length: int) -> int:
        return min(self.max_length, max(16, 1 << (length - 1).bit_length()))

    def _open(self, path: Path, threads: int | None) -> None:
        try:
            import openvino as ov
        except ImportError as exc:
            raise ImportError("runtime 'openvino' needs: pip install openvino==2026.4.1") from exc
        from sws.index.embedders.precision import cpu_has_bf16

        self.precision = "bf16" if cpu_has_bf16() else "fp32"
        settings = {
            "INFERENCE_PRECISION_HINT": "bf16" if self.precision == "bf16" else "f32",
            "PERFORMANCE_HINT": "LATENCY",
        } | ({"INFERENCE_NUM_THREADS": threads} if threads else {})
        self._compiled = ov.Core().compile_model(str(path), "CPU", settings)

    def _hidden(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        request = self._compiled.create_infer_request()  # one per call: callers may run in several threads
        return request.infer(feed)[self._compiled.outputs[0]]
