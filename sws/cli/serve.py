"""``sws serve``: the retrieval service (HTTP + MCP + handle API) on Ray Serve."""

from __future__ import annotations

import os
from dataclasses import replace

import click

from sws.cli.options import config_option, flag_options, overrides_argument, resolve_flags
from sws.config import CLUSTER_REPLICAS, AutoscalingSettings, apply_overrides, flags


def _serve_package():
    """``serve.launch``: the Serve apps are the top-level ``serve`` package, installed next to ``sws``."""
    try:
        from serve import launch
    except ImportError as exc:
        raise click.ClickException(
            f"the Serve applications (package `serve`) are not importable ({exc}): install sws "
            "(`pip install .`, or `pip install -e .` in a checkout)"
        ) from exc
    return launch


@click.command("serve")
@flag_options(flags.SERVE)
@config_option
@overrides_argument
def serve(profile, overrides, **values):
    """Serve the tools over HTTP (POST /call, /search, /open_url, /random; GET /tools, /health, /info),
    MCP (/mcp) and a Ray Serve deployment handle, until Ctrl-C; with --llm the actor LLM beside them.

    Set SWS_SERVE_TOKEN to require `Authorization: Bearer <token>` (all but /health; the LLM's OpenAI
    clients send it as their api_key). Prints one JSON line {"event": "ready", "url": ..., "ray_address": ...}
    (with --llm also "llm_url", "llm_model") on stdout when everything answers.

    \b
    Examples:
      sws serve --index sws-out/index
      SWS_SERVE_TOKEN=secret sws serve --index sws-out/index --port 8080 --replicas 2
      sws serve --index sws-out/index --llm llm-cpu.yaml llm.max_num_seqs=8
      curl -s localhost:11536/call -H 'content-type: application/json' \\
        -d '{"name": "search", "arguments": "{\\"query\\": \\"Ada Lovelace\\", \\"top_k\\": 3}"}'
    """
    launch = _serve_package()
    llm_overrides = [o.removeprefix("llm.") for o in overrides if o.startswith("llm.")]
    rest = tuple(o for o in overrides if not o.startswith("llm."))  # those go to --llm's settings
    cfg, given = resolve_flags(flags.SERVE, profile, rest, values)
    if llm_overrides and not given["llm_source"]:
        raise click.UsageError("llm.<field>=<value> overrides need --llm PROFILE_OR_YAML")
    try:
        llm = _llm_settings(given["llm_source"], llm_overrides) if given["llm_source"] else None
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    index = cfg.serve.index or cfg.index.out
    if not index:
        raise click.UsageError("no index: pass --index DIR (or set serve.index)")
    verify = cfg.serve.verify_on_open or cfg.index.verify_on_open
    on_cluster = bool(cfg.ray.address or os.environ.get("RAY_ADDRESS"))
    replicas = replicas_for(
        cfg.serve.replicas,
        on_cluster,
        values["replicas"] is not None or any(o.startswith("serve.replicas.") for o in rest),
    )
    settings = replace(cfg.serve, index=index, verify_on_open=verify, replicas=replicas)
    from sws.index import SwsIndexError

    announced: list = []

    def on_ready(event: dict) -> None:
        if settings.address_dir:
            from serve.address_files import write_address_files

            announced.extend(write_address_files(settings.address_dir, settings.host, settings.port))
        launch.print_ready(event)

    try:
        launch.run(
            settings, llm=llm, ray_address=cfg.ray.address, num_cpus=cfg.ray.num_cpus, on_ready=on_ready
        )
    except (ValueError, TimeoutError, ImportError, RuntimeError, SwsIndexError) as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        if announced:
            from serve.address_files import remove_address_files

            remove_address_files(announced)


def replicas_for(configured: AutoscalingSettings, on_cluster: bool, told: bool) -> AutoscalingSettings:
    """The retrieval replicas: on a cluster, unless ``told`` a count or range (``--replicas``,
    ``serve.replicas.*``) or a profile set one, ``CLUSTER_REPLICAS`` (they autoscale); else as configured."""
    if on_cluster and not told and configured == AutoscalingSettings():
        return CLUSTER_REPLICAS
    return configured


def _llm_settings(source: str, overrides: list[str]):
    """``LLMServeConfig`` of ``--llm`` with its ``llm.`` overrides (``serve.llm.load_llm_source``)."""
    from serve.llm import load_llm_source

    return apply_overrides(load_llm_source(source), overrides, "llm")


if __name__ == "__main__":
    serve()
