"""A tiny random-weight Qwen3 chat model directory, made locally, for serving checks without a download.

The real Qwen3 tokenizer and chat template (``tests/data/qwen3_tokenizer*.json``, copied unchanged), Qwen3's
architecture cut down to 2 layers of width 128 (about 20M parameters, most of them the 151 936-row embedding
of Qwen3's checkpoints), bf16 safetensors and Qwen3's generation defaults. Its text is noise: it exercises
the serving path (engine, tokenizer, chat template, tool-call and reasoning parsers), not answers.

    python benchmarks/tiny_qwen3.py OUT_DIR [--ends-turns]   # prints {"model": OUT_DIR, "parameters": ...}

``--ends-turns`` (``ends_turns=True``) gives every token one embedding vector and ``<|im_end|>`` twice it, so
the model ends every turn at once (its first token, with probability ~1): an agent episode of 20 empty rounds
then takes seconds instead of 20 completions of noise (``tests/serve/test_llm_served.py``).

The chat template is Qwen3's, which writes tool calls as JSON in ``<tool_call>`` tags (vLLM's ``hermes``
parser, which ``serve/llm.py`` picks from the template); the paper's Qwen3.5 models (``qwen3_coder``) use an
XML form inside the same tags.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOKENIZER = REPO / "tests" / "data" / "qwen3_tokenizer.json"
TOKENIZER_CONFIG = REPO / "tests" / "data" / "qwen3_tokenizer_config.json"
VOCAB_SIZE = 151_936  # Qwen3 checkpoints' embedding rows (the tokenizer's 151 669 ids, padded)
BOS, IM_END = 151_643, 151_645  # <|endoftext|>, <|im_end|>
SHAPE = {
    "hidden_size": 128,
    "intermediate_size": 384,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "head_dim": 64,  # a head size every vLLM attention backend takes
    "max_position_embeddings": 40_960,  # Qwen3's
    "rope_theta": 1_000_000,
    "tie_word_embeddings": True,
}
GENERATION = {  # Qwen3 instruct checkpoints' generation_config.json
    "bos_token_id": BOS,
    "eos_token_id": [IM_END, BOS],
    "pad_token_id": BOS,
    "do_sample": True,
    "temperature": 0.6,
    "top_k": 20,
    "top_p": 0.95,
}


def make_tiny_qwen3(out: str | Path, seed: int = 0, ends_turns: bool = False) -> Path:
    """Write the model directory (config, weights, generation config, tokenizer files); returns it.
    ``ends_turns``: a model that answers every turn with ``<|im_end|>`` at once (the module's docstring)."""
    import torch
    from transformers import GenerationConfig, Qwen3Config, Qwen3ForCausalLM

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(TOKENIZER, out / "tokenizer.json")
    shutil.copyfile(TOKENIZER_CONFIG, out / "tokenizer_config.json")
    torch.manual_seed(seed)
    config = Qwen3Config(vocab_size=VOCAB_SIZE, bos_token_id=BOS, eos_token_id=IM_END, **SHAPE)
    model = Qwen3ForCausalLM(config).to(torch.bfloat16)
    if ends_turns:  # tied embeddings: every hidden state is ~u, so <|im_end|>'s logit leads by ~|u|·sqrt(d)
        with torch.no_grad():
            u = torch.randn(SHAPE["hidden_size"])
            embeddings = model.model.embed_tokens.weight
            embeddings[:] = 2.0 * u / u.norm()
            embeddings[IM_END] *= 2
    model.generation_config = GenerationConfig(**GENERATION)
    model.save_pretrained(out)
    return out


def main() -> int:
    args = sys.argv[1:]
    ends_turns = "--ends-turns" in args
    paths = [a for a in args if a != "--ends-turns"]
    if len(paths) != 1 or paths[0].startswith("-"):
        print("usage: python benchmarks/tiny_qwen3.py OUT_DIR [--ends-turns]", file=sys.stderr)
        return 2
    out = make_tiny_qwen3(paths[0], ends_turns=ends_turns)
    from safetensors import safe_open

    with safe_open(str(out / "model.safetensors"), "pt") as weights:
        parameters = sum(math.prod(weights.get_slice(name).get_shape()) for name in weights.keys())  # noqa: SIM118
    print(json.dumps({"model": str(out), "parameters": parameters, "vocab_size": VOCAB_SIZE, **SHAPE}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
