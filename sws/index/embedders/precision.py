"""Reduced precision on the CPU, admitted by measurement: whether the CPU computes bf16 natively, and the
agreement gate a faster runtime's vectors must pass against the fp32 reference before it embeds anything.

The gate embeds :data:`PROBE_TEXTS` (questions of the six QA sets' kinds and passages of the sample corpus'
kind) with both and requires every cosine to be at least :data:`MIN_COSINE`.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

MIN_COSINE = 0.999
PROBE_TEXTS = (
    "Who was president of the United States when the Eiffel Tower was completed?",
    "What is the birth date of the director of the film Nosferatu?",
    "Are Jaws and Jurassic Park directed by the same person?",
    "In which country is the river that flows through Vienna's capital district?",
    "What genre is the band whose lead singer wrote 'Hey Jude'?",
    "How many moons does the planet named after the Roman god of war have?",
    "x",
    "1922",
    (
        "Anarchism is a political philosophy and movement that is skeptical of all justifications for authority and "
        "seeks to abolish the institutions it claims maintain unnecessary coercion and hierarchy, typically "
        "including the state and capitalism."
    ),
    (
        "The Battle of Hastings was fought on 14 October 1066 between the Norman-French army of William, the Duke of "
        "Normandy, and an English army under the Anglo-Saxon King Harold Godwinson, beginning the Norman Conquest."
    ),
    (
        "Albedo is the fraction of sunlight that is diffusely reflected by a body; it is measured on a scale from 0 "
        "(a black body that absorbs all incident radiation) to 1 (a body that reflects all incident radiation)."
    ),
    "| Year | Title | Role |\n| 1994 | Pulp Fiction | Vincent Vega |\n| 1996 | Michael | Frank Quinlan |",
)


class RuntimeQualityError(ValueError):
    """A runtime's vectors are too far from the fp32 reference's to be used."""


def cpu_has_bf16() -> bool:
    """Whether this CPU has bf16 matrix or vector units (AMX or AVX-512 BF16) that oneDNN and OpenVINO use: on
    Linux the flags the kernel enabled (``/proc/cpuinfo``; no PyTorch import), elsewhere PyTorch's probe."""
    cpuinfo = Path("/proc/cpuinfo")
    flags = re.search(r"^flags\s*:(.*)$", cpuinfo.read_text(), re.MULTILINE) if cpuinfo.is_file() else None
    if flags:  # x86 (ARM's lines are "Features")
        return bool(set(flags.group(1).split()) & {"amx_tile", "avx512_bf16"})
    import torch

    return bool(torch.cpu._is_amx_tile_supported() or torch.cpu._is_avx512_bf16_supported())


def min_cosine(rows: np.ndarray, reference: np.ndarray) -> float:
    """The least cosine between matching rows of two (n, dim) arrays."""
    a = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    b = reference / np.linalg.norm(reference, axis=1, keepdims=True)
    return float((a * b).sum(axis=1).min())


def check_agreement(runtime: str, rows: np.ndarray, reference: np.ndarray) -> float:
    """``min_cosine(rows, reference)``, rounded to 6 places.

    Raises:
        RuntimeQualityError: it is below :data:`MIN_COSINE` (named with the runtime).
    """
    cosine = round(min_cosine(rows, reference), 6)
    if cosine < MIN_COSINE:
        raise RuntimeQualityError(
            f"runtime {runtime!r}: least cosine to the fp32 vectors {cosine} on the probe texts, below "
            f"{MIN_COSINE}"
        )
    return cosine
