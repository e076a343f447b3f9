"""Exported runtimes for sentence-transformers' mean-pooled models (MiniLM): the transformer is exported to
ONNX locally from the loaded PyTorch weights once, cached under ``<cache root>/onnx`` (``sws.cache``), never
downloaded, and run by ONNX Runtime (fp32: vectors equal PyTorch's within 1e-5) or OpenVINO (bf16 on a CPU with
bf16 units, ``sws.index.embedders.precision``; f32 elsewhere). A runtime is transport, not space: it leaves the
embedder's fingerprint alone and an index built with one runtime is queried with another.

Both are batch-invariant: a text's vector does not depend on the texts batched with it (tested).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from sws.cache import cache_dir
from sws.io import write_atomically

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


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


def export_transformer(model: Any, source: str) -> Path:
    """The ONNX file of ``model``'s transformer, exported on first use (atomic write) and reused after."""
    import torch

    key = hashlib.sha256(f"{Path(source).resolve()}|{torch.__version__}".encode()).hexdigest()[:16]
    path = cache_dir("onnx") / f"{Path(source).name.lower()}-{key}.onnx"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
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

    write_atomically(path, export)
    return path


class MeanPooledEncoder:
    """``encode(texts) -> (n, dim)`` mean-pooled rows of the exported transformer (length-sorted batches);
    subclasses run the export (:meth:`_hidden`).

    Args:
        model: the loaded ``SentenceTransformer`` (tokenizer, export source).
        source: its directory or name (cache key).
        max_length: tokens per input.
        batch_size: inputs per run.
        threads: the runtime's intra-op threads (None: torch's current setting).
    """

    precision = "fp32"
    bucketed = False  # pad each text to a width of its own (16, 32, 64, ...), not to its batch's longest

    def __init__(self, model: Any, source: str, max_length: int, batch_size: int, threads: int | None = None):
        import torch

        _check_mean_pooled(model)
        self._tokenizer, self.max_length, self.batch_size = model.tokenizer, max_length, batch_size
        self._open(export_transformer(model, source), threads or torch.get_num_threads())

    def _open(self, path: Path, threads: int) -> None:
        raise NotImplementedError

    def _hidden(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def encode(self, texts: list[str]) -> np.ndarray:
        ids = self._tokenizer(texts, truncation=True, max_length=self.max_length)["input_ids"]
        groups = self._groups([len(row) for row in ids])
        pooled = [self._pooled([ids[i] for i in group], width) for group, width in groups]
        out = np.empty((len(texts), pooled[0].shape[1]), dtype=np.float32)
        for (group, _), rows in zip(groups, pooled, strict=True):
            out[group] = rows
        return out

    def _groups(self, lengths: list[int]) -> list[tuple[list[int], int]]:
        """Batches of at most ``batch_size`` positions, longest first, each with its padded width: the
        longest length in it, or with :attr:`bucketed` the text's own bucket (a batch holds one bucket)."""
        width = (lambda i: self._bucket(lengths[i])) if self.bucketed else (lambda i: lengths[i])
        groups: list[tuple[list[int], int]] = []
        for i in sorted(range(len(lengths)), key=lambda i: -lengths[i]):
            if (
                groups
                and len(groups[-1][0]) < self.batch_size
                and (not self.bucketed or groups[-1][1] == width(i))
            ):
                groups[-1][0].append(i)
            else:
                groups.append(([i], width(i)))
        return groups

    def _bucket(self, length: int) -> int:
        return min(self.max_length, max(16, 1 << (length - 1).bit_length()))

    def _pooled(self, rows: list[list[int]], width: int) -> np.ndarray:
        ids = np.full((len(rows), width), self._tokenizer.pad_token_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for r, row in enumerate(rows):
            ids[r, : len(row)], mask[r, : len(row)] = row, 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._hidden(feed)
        weights = mask[..., None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


class OnnxMeanPooledEncoder(MeanPooledEncoder):
    """ONNX Runtime's CPU execution provider, fp32."""

    def _open(self, path: Path, threads: int) -> None:
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise ImportError("runtime 'onnx' needs: pip install onnxruntime==1.32.0 onnx==1.20.0") from exc
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def _hidden(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        return self._session.run(None, feed)[0]


class OpenVinoMeanPooledEncoder(MeanPooledEncoder):
    """OpenVINO's CPU plugin: bf16 inference precision where the CPU has bf16 units, f32 elsewhere.

    Its kernels depend on the padded width (bf16 vectors moved by ~5e-4 past 32 tokens), not on the batch
    size: widths by bucket make a text's vector the same in any batch."""

    bucketed = True

    def _open(self, path: Path, threads: int) -> None:
        try:
            import openvino as ov
        except ImportError as exc:
            raise ImportError("runtime 'openvino' needs: pip install openvino==2026.4.1") from exc
        from sws.index.embedders.precision import cpu_has_bf16

        self.precision = "bf16" if cpu_has_bf16() else "fp32"
        settings = {
            "INFERENCE_PRECISION_HINT": "bf16" if self.precision == "bf16" else "f32",
            "INFERENCE_NUM_THREADS": threads,
            "PERFORMANCE_HINT": "LATENCY",
        }
        self._compiled = ov.Core().compile_model(str(path), "CPU", settings)

    def _hidden(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        request = self._compiled.create_infer_request()  # one per call: callers may run in several threads
        return request.infer(feed)[self._compiled.outputs[0]]
