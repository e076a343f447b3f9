"""Profiles and overrides: the one way a config is read.

A run's config is a profile YAML (a name in ``sws/config/profiles``, also reachable as ``configs/<name>.yaml``,
or any YAML path) merged over the dataclass defaults, then ``key=value`` overrides from the command line. The
Serve application builders read one section of a profile the same way (``merge_section``). Library classes
never see these objects: entrypoints unpack them into plain keyword arguments.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import fields
from importlib import resources
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from sws.config.run import SwsConfig

PROFILES_DIR = Path(__file__).parent / "profiles"


def profile_path(profile: str) -> Path:
    """The YAML file of a profile: a name in ``PROFILES_DIR`` or a path with a suffix.

    Raises:
        ValueError: no such profile.
    """
    path = Path(profile)
    if not path.suffix:
        path = PROFILES_DIR / f"{profile}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in PROFILES_DIR.glob("*.yaml"))
        raise ValueError(f"config profile {profile!r} not found (known: {', '.join(known)}, or a .yaml path)")
    return path


def _read(path: Path) -> DictConfig:
    try:
        return OmegaConf.load(path)
    except Exception as exc:  # YAML and OmegaConf errors alike mean "bad config file"
        raise ValueError(f"invalid config ({path.name}): {exc}") from exc


def _parse_overrides(overrides: list[str] | tuple[str, ...]) -> DictConfig:
    """``key=value`` strings (OmegaConf dot-list) as a mapping.

    Raises:
        ValueError: an entry without ``=``, or a value that does not parse.
    """
    bad = [o for o in overrides if "=" not in o]
    if bad:
        raise ValueError(f"overrides must look like key=value, got {bad}")
    try:
        return OmegaConf.from_dotlist(list(overrides))
    except Exception as exc:  # YAML and OmegaConf grammar errors alike
        raise ValueError(f"invalid override: {exc}") from exc


def _merge(schema: Any, *layers: Any, what: str) -> Any:
    """``layers`` merged in order over ``schema`` (a dataclass type or instance), validated, as a dataclass.

    Raises:
        ValueError: ``invalid {what}: ...`` for unknown keys or values of the wrong type.
    """
    try:
        return OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(schema), *layers))
    except Exception as exc:  # omegaconf raises several error types; all mean "bad config"
        key = getattr(exc, "full_key", None)  # omegaconf's message has its details on lines of their own
        raise ValueError(
            f"invalid {what}: {str(exc).splitlines()[0]}" + (f" ({key})" if key else "")
        ) from exc


def _literal(value: Any) -> Any:
    """``value`` escaped for OmegaConf: a ``${`` in a string is text, not an interpolation."""
    if not isinstance(value, str):
        return value
    return re.sub(r"(\\*)\$\{", lambda m: m.group(1) * 2 + "\\${", value)


def bundled_sample_dump() -> str:
    """Path of the enwiki sample dump shipped inside the package (the embedded default)."""
    return str(resources.files("sws") / "data" / "enwiki-sample.xml.bz2")


def load_config(
    profile: str = "local",
    overrides: list[str] | tuple[str, ...] = (),
    settings: Mapping[str, Any] | None = None,
) -> SwsConfig:
    """Merge a profile (a name in ``sws/config/profiles`` or a YAML path), ``key=value`` overrides and then
    ``settings`` (dotted key -> value, as the command-line flags give them: ``sws.config.flags``) over the
    defaults; no dump paths means the bundled sample.

    Raises:
        ValueError: unknown profile, unknown key or a value of the wrong type.
    """
    path = profile_path(profile)
    given = OmegaConf.create()
    for key, value in (settings or {}).items():
        OmegaConf.update(given, key, _literal(value))
    cfg = _merge(SwsConfig, _read(path), _parse_overrides(overrides), given, what=f"config ({path.name})")
    if not cfg.dump.paths:
        cfg.dump.paths = [bundled_sample_dump()]
    return cfg


def apply_overrides(cfg: Any, overrides: list[str] | tuple[str, ...], key: str) -> Any:
    """``key=value`` overrides (keys relative to ``cfg``, the dataclass of section ``key``) applied to a copy.

    Raises:
        ValueError: an entry without ``=``, an unknown key or a value of the wrong type.
    """
    if not overrides:
        return cfg
    return _merge(cfg, _parse_overrides(overrides), what=f"{key} override")


def profile_section(profile: str, key: str) -> dict[str, Any]:
    """The ``key:`` mapping of a profile, {} if it has none.

    Lets a Serve application take its settings from ``configs/paper.yaml`` (``args: {profile: paper}``).

    Raises:
        ValueError: no such profile, or not YAML.
    """
    section = _read(profile_path(profile)).get(key)
    return OmegaConf.to_container(section, resolve=True) if section is not None else {}


def merge_section(schema: type, args: Any, key: str) -> Any:
    """``args`` (a ``schema`` instance, a dict, or None) validated against ``schema``; a ``profile`` entry
    first loads that profile's ``key:`` section, the other entries override it.

    Raises:
        ValueError: unknown keys, wrong types, unknown profile.
    """
    if isinstance(args, schema):
        return args
    args = dict(args or {})
    base = profile_section(args.pop("profile"), key) if args.get("profile") else {}
    return _merge(schema, base, args, what=f"{key} settings")


def to_dict(cfg: SwsConfig) -> dict:
    """The resolved config as plain data (saved next to every output)."""
    return OmegaConf.to_container(OmegaConf.structured(cfg), resolve=True)


def load_section(schema: type, source: str, key: str) -> Any:
    """Section ``key`` of ``source`` as ``schema``: a profile (a name, or a YAML path whose top-level keys are
    ``SwsConfig`` sections: its ``key:`` section over the defaults), or a YAML file of ``schema``'s fields.

    Raises:
        ValueError: no such profile or file, not YAML, unknown keys, wrong types.
    """
    path = profile_path(source)
    data = OmegaConf.to_container(_read(path)) or {}
    if not isinstance(data, dict):
        raise ValueError(f"invalid config ({path.name}): expected a mapping")  # noqa: TRY004 - a bad config
    if set(data) <= {f.name for f in fields(SwsConfig)}:
        return getattr(load_config(source), key)
    return _merge(schema, data, what=f"{key} settings ({path.name})")
