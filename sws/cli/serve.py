"""``sws serve``: the retrieval service (HTTP + MCP + handle API) on Ray Serve."""

from __future__ import annotations

from dataclasses import replace

import click

from sws.cli.options import config_option, overrides_argument, resolve_config, verify_option
from sws.config import apply_overrides


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
@click.option(
    "--index",
    "index_dir",
    envvar="SWS_INDEX",
    type=click.Path(file_okay=False),
    help="Index directory (default: serve.index, then index.out of the config; env SWS_INDEX).",
)
@click.option("--host", help="Bind address (default 127.0.0.1; 0.0.0.0 to serve other machines).")
@click.option("--port", type=int, help="HTTP port (default 11536, the reference tool server's).")
@click.option("--replicas", type=click.IntRange(1), help="Retrieval replicas (fixed count).")
@click.option("--ingress", type=click.Choice(["haproxy", "proxy"]), help="HTTP ingress (default haproxy).")
@click.option("--no-batching", is_flag=True, help="Embed queries inside each retrieval replica, unbatched.")
@click.option("--no-mcp", is_flag=True, help="Do not expose the MCP endpoint at /mcp.")
@click.option("--ray-address", help="Deploy to this running Ray cluster instead of starting a local one.")
@click.option(
    "--num-cpus",
    type=int,
    help="CPUs of the local Ray (default: all; with --llm at least what the apps reserve).",
)
@click.option(
    "--llm",
    "llm_source",
    metavar="PROFILE_OR_YAML",
    help="Also serve the actor LLM (Ray Serve LLM, vLLM) at /llm (OpenAI base URL <url>/llm/v1): a profile's "
    "llm: section or a YAML file of its fields; llm.<field>=<value> overrides.",
)
@verify_option
@config_option
@overrides_argument
def serve(
    index_dir,
    host,
    port,
    replicas,
    ingress,
    no_batching,
    no_mcp,
    ray_address,
    num_cpus,
    llm_source,
    verify,
    profile,
    overrides,
):
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
    from serve.retrieval import load_serve_config

    serve_overrides = [o.removeprefix("serve.") for o in overrides if o.startswith("serve.")]
    llm_overrides = [o.removeprefix("llm.") for o in overrides if o.startswith("llm.")]
    if llm_overrides and not llm_source:
        raise click.UsageError("llm.<field>=<value> overrides need --llm PROFILE_OR_YAML")
    rest = tuple(o for o in overrides if not o.startswith(("serve.", "llm.")))
    cfg = resolve_config(profile, rest)
    try:
        settings = load_serve_config(getattr(cfg, "serve", None))
        settings = apply_overrides(settings, serve_overrides, "serve")
        llm = _llm_settings(llm_source, llm_overrides) if llm_source else None
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    index_cfg = getattr(cfg, "index", None)
    index = index_dir or settings.index or getattr(index_cfg, "out", None)
    if not index:
        raise click.UsageError("no index: pass --index DIR (or set serve.index)")
    changes = {"index": index}
    if verify or getattr(index_cfg, "verify_on_open", False):
        changes["verify_on_open"] = True
    if host:
        changes["host"] = host
    if port:
        changes["port"] = port
    if ingress:
        changes["ingress"] = ingress
    if no_mcp:
        changes["mcp"] = False
    if replicas:
        changes["replicas"] = replace(settings.replicas, min_replicas=replicas, max_replicas=replicas)
    if no_batching:
        changes["embedding"] = replace(settings.embedding, batching=False)
    settings = replace(settings, **changes)
    ray_address = ray_address or getattr(getattr(cfg, "ray", None), "address", None)
    from sws.index import SwsIndexError

    try:
        launch.run(settings, llm=llm, ray_address=ray_address, num_cpus=num_cpus, on_ready=launch.print_ready)
    except (ValueError, TimeoutError, ImportError, RuntimeError, SwsIndexError) as exc:
        raise click.ClickException(str(exc)) from exc


def _llm_settings(source: str, overrides: list[str]):
    """``LLMServeConfig`` of ``--llm`` with its ``llm.`` overrides (``serve.llm.load_llm_source``)."""
    from serve.llm import load_llm_source

    return apply_overrides(load_llm_source(source), overrides, "llm")


if __name__ == "__main__":
    serve()
