"""Qwen3-Embedding through transformers: EOS-terminated inputs, left padding, last-token pooling."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from sws.index.embedders.base import Embedder

logger = logging.getLogger(__name__)
RUNTIMES = ("torch", "torch-bf16", "auto")


def last_token_pool(hidden: Any, attention_mask: Any) -> Any:
    """Hidden state of each sequence's last real token (works for left and right padding)."""
    import torch

    if bool(attention_mask[:, -1].all()):
        return hidden[:, -1]
    last = attention_mask.sum(dim=1) - 1
    return hidden[torch.arange(hidden.shape[0], device=hidden.device), last]


def length_batches(lengths: list[int], batch_size: int, max_batch_tokens: int) -> list[list[int]]:
    """Indices grouped longest first, each batch within ``batch_size`` rows and ``max_batch_tokens`` padded tokens."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    batches: list[list[int]] = []
    for i in order:
        if (
            batches
            and len(batches[-1]) < batch_size
            and lengths[batches[-1][0]] * (len(batches[-1]) + 1) <= max_batch_tokens
        ):
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


class Qwen3Embedder(Embedder):
    """Qwen3-Embedding (0.6B/4B/8B) in process with SDPA; bf16 on GPU; on the CPU float32, or bf16 by runtime.

    Every input ends with ``<|endoftext|>`` (appended when the tokenizer does not add it), as the
    model was trained; the hidden state of that token, L2-normalised, is the embedding.

    Args:
        model: Hugging Face name or local directory.
        device: "cuda", "cpu", ...; None picks CUDA when available.
        max_length: tokens per input, EOS included; longer inputs are truncated.
        batch_size: most inputs per forward pass.
        max_batch_tokens: most padded tokens per forward pass (inputs are sorted by length first).
        query_task: see ``Embedder``.
        runtime: on the CPU, "torch" (default: float32, the reference), "torch-bf16" (bf16 weights: ~2.5x the
            queries per core on AMX) or "auto" (bf16 where the CPU has bf16 units, else float32); bf16 on the
            CPU must pass the agreement gate against float32 at start (``sws.index.embedders.precision``),
            which "auto" falls back from (a warning). On a GPU every runtime is bf16.
        threads: PyTorch's CPU threads (None: as the process has them).
    """

    kind = "qwen3"

    def __init__(
        self,
        model: str = "Qwen/Qwen3-Embedding-0.6B",
        *,
        device: str | None = None,
        max_length: int = 8192,
        batch_size: int = 16,
        max_batch_tokens: int = 65536,
        query_task: str | None = None,
        runtime: str = "torch",
        threads: int | None = None,
    ):
        import torch
        from transformers import AutoTokenizer

        if threads:
            torch.set_num_threads(threads)

        if runtime not in RUNTIMES:
            raise ValueError(f"unknown runtime {runtime!r}; expected one of {', '.join(RUNTIMES)}")
        if max_length < 2 or batch_size < 1 or max_batch_tokens < max_length:
            raise ValueError(
                f"need max_length >= 2, batch_size >= 1, max_batch_tokens >= max_length; got "
                f"{max_length=}, {batch_size=}, {max_batch_tokens=}"
            )
        super().__init__(model, query_task)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.max_length, self.batch_size, self.max_batch_tokens = max_length, batch_size, max_batch_tokens
        self._tokenizer = AutoTokenizer.from_pretrained(model, padding_side="left")
        self._eos = self._tokenizer.convert_tokens_to_ids("<|endoftext|>")
        self._pad = self._tokenizer.pad_token_id if self._tokenizer.pad_token_id is not None else self._eos
        self._adds_eos = self._tokenizer("a")["input_ids"][-1] == self._eos
        on_gpu = self.device.startswith("cuda")
        self.runtime, self.min_cosine = "torch", 1.0
        self._model = self._load(torch.bfloat16 if on_gpu else torch.float32)
        if not on_gpu and runtime != "torch":
            self._to_cpu_bf16(runtime)

    def _load(self, dtype: Any) -> Any:
        from transformers import AutoModel

        return (
            AutoModel.from_pretrained(self.model, dtype=dtype, attn_implementation="sdpa")
            .to(self.device)
            .eval()
        )

    def _to_cpu_bf16(self, runtime: str) -> None:
        """bf16 weights on the CPU once they pass the agreement gate; "auto" keeps float32 where the CPU has no
        bf16 units or the gate fails.

        Raises:
            RuntimeQualityError: "torch-bf16" fails the gate.
        """
        import torch

        from sws.index.embedders.precision import (
            PROBE_TEXTS,
            RuntimeQualityError,
            check_agreement,
            cpu_has_bf16,
        )

        if runtime == "auto" and not cpu_has_bf16():
            return
        texts = list(PROBE_TEXTS)
        reference = self._embed(texts)
        self._model = self._model.to(torch.bfloat16)
        try:
            self.min_cosine = check_agreement("torch-bf16", self._embed(texts), reference)
        except RuntimeQualityError as exc:
            if runtime != "auto":
                raise
            logger.warning("runtime 'auto' keeps float32: %s", exc)
            self._model = self._load(torch.float32)
            return
        self.runtime = "torch-bf16"

    def runtime_info(self) -> dict[str, Any]:
        bf16 = self.device.startswith("cuda") or self.runtime == "torch-bf16"
        return {
            "runtime": self.runtime,
            "precision": "bf16" if bf16 else "fp32",
            "min_cosine_to_fp32": self.min_cosine,
        }

    @property
    def dim(self) -> int:
        return int(self._model.config.hidden_size)

    def spec(self) -> dict[str, Any]:
        extra = {"runtime": self.runtime} if self.runtime != "torch" else {}
        return super().spec() | {"max_length": self.max_length} | extra

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Token ids per text, truncated to ``max_length`` and ending with EOS."""
        limit = self.max_length if self._adds_eos else self.max_length - 1
        ids = self._tokenizer(texts, truncation=True, max_length=limit)["input_ids"]
        return ids if self._adds_eos else [row + [self._eos] for row in ids]

    def _embed(self, texts: list[str]) -> np.ndarray:
        import torch

        ids = self.token_ids(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for batch in length_batches([len(r) for r in ids], self.batch_size, self.max_batch_tokens):
            width = max(len(ids[i]) for i in batch)
            input_ids = torch.full((len(batch), width), self._pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, i in enumerate(batch):  # left padding: real tokens end at the last column
                input_ids[row, width - len(ids[i]) :] = torch.tensor(ids[i])
                mask[row, width - len(ids[i]) :] = 1
            with torch.inference_mode():
                hidden = self._model(input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device))
                pooled = last_token_pool(hidden.last_hidden_state, mask.to(self.device))
            out[batch] = pooled.float().cpu().numpy()
        return out
