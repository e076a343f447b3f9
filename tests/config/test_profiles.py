"""The packaged profiles: one copy each (``configs/`` points at ``sws/config/profiles``), and their resolved
configs pinned (they are saved in manifests and hashed into fingerprints)."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from sws.config import PROFILES_DIR, SwsConfig, bundled_sample_dump, load_config, to_dict

REPO = Path(__file__).resolve().parents[2]
EXPECTED = REPO / "tests" / "data" / "config"
PACKAGED = sorted(p.name for p in PROFILES_DIR.glob("*.yaml"))


def _is_profile(path: Path) -> bool:
    """A YAML whose top-level keys are all ``SwsConfig`` sections (``cluster.yaml`` is not one)."""
    data = yaml.safe_load(path.read_text())
    return isinstance(data, dict) and set(data) <= {f.name for f in fields(SwsConfig)}


def test_repository_profiles_are_the_packaged_ones():
    repo_profiles = sorted(p.name for p in (REPO / "configs").glob("*.yaml") if _is_profile(p))
    assert PACKAGED and repo_profiles == PACKAGED, (
        "configs/<name>.yaml must link to sws/config/profiles/<name>.yaml"
    )
    for name in PACKAGED:
        link = REPO / "configs" / name
        assert link.is_symlink() and link.resolve() == (PROFILES_DIR / name).resolve(), (
            f"configs/{name} drifted"
        )


@pytest.mark.parametrize("name", PACKAGED)
def test_resolved_profile_is_pinned(name):
    resolved = to_dict(load_config(Path(name).stem))
    resolved["dump"]["paths"] = [
        "<bundled sample>" if p == bundled_sample_dump() else p for p in resolved["dump"]["paths"]
    ]
    expected = EXPECTED / f"resolved-{Path(name).stem}.json"
    assert expected.is_file(), f"pin the new profile: write {expected.relative_to(REPO)}"
    assert json.dumps(resolved, indent=1) + "\n" == expected.read_text()  # keys, defaults and key order


def test_the_agent_section_is_the_agents_config():
    """``eval.agent`` is ``AgentConfig`` itself, one definition of its defaults: every setting of the agent
    comes from a profile or an override, its model from ``eval.model``."""
    from sws.config import AgentConfig

    cfg = load_config("local", ["eval.agent.temperature=0.0", "eval.agent.round_budget_reminder=false"])
    assert cfg.eval.agent == AgentConfig(temperature=0.0, round_budget_reminder=False)
    with pytest.raises(ValueError, match=r"eval.agent.model='m': the run's model is eval.model \(--model\)"):
        load_config("local", ["eval.agent.model=m"])
    with pytest.raises(ValueError, match="tool_choice='none': expected one of"):
        load_config("local", ["eval.agent.tool_choice=none"])
