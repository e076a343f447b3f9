"""ONNX Runtime for sentence-transformers' mean-pooled models (MiniLM): the transformer is exported locally
from the loaded PyTorch weights once, cached under ``<cache root>/onnx`` (``sws.cache``), never
downloaded. Vectors equal the PyTorch ones within 1e-5, so the runtime is transport, not space: it leaves the
embedder's fingerprint alone and an index built with one runtime is queried with the other.
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
            f"runtime 'onnx' supports Transformer + mean Pooling [+ Normalize] models, not {_modules(model)}"
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


class OnnxMeanPooledEncoder:
    """``encode(texts) -> (n, dim)`` mean-pooled rows from an ONNX Runtime session (length-sorted batches).

    Args:
        model: the loaded ``SentenceTransformer`` (tokenizer, export source).
        source: its directory or name (cache key).
        max_length: tokens per input.
        batch_size: inputs per run.
        threads: ONNX Runtime intra-op threads (None: torch's current setting).
    """

    def __init__(self, model: Any, source: str, max_length: int, batch_size: int, threads: int | None = None):
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise ImportError("runtime 'onnx' needs: pip install onnxruntime==1.32.0 onnx==1.20.0") from exc
        import torch

        _check_mean_pooled(model)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or torch.get_num_threads()
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            str(export_transformer(model, source)), options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer, self.max_length, self.batch_size = model.tokenizer, max_length, batch_size

    def encode(self, texts: list[str]) -> np.ndarray:
        order = np.argsort([-len(text) for text in texts], kind="stable")
        rows: list[np.ndarray] = []
        for start in range(0, len(texts), self.batch_size):
            rows.append(self._run([texts[i] for i in order[start : start + self.batch_size]]))
        out = np.empty((len(texts), rows[0].shape[1]), dtype=np.float32)
        out[order] = np.concatenate(rows)
        return out

    def _run(self, texts: list[str]) -> np.ndarray:
        enc = self._tokenizer(
            texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="np"
        )
        feed = {name: np.asarray(enc[name], dtype=np.int64) for name in _INPUTS}
        hidden = self._session.run(None, feed)[0]
        mask = feed["attention_mask"][..., None].astype(np.float32)
        return (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
