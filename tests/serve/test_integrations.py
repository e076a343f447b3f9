"""``configs/integrations/``: each trainer's settings name the route and port ``sws serve`` answers."""

from __future__ import annotations

from pathlib import Path

import yaml

from serve.retrieval.http_app import make_http_app
from serve.retrieval.service import RetrievalService
from sws.config.serving import DEFAULT_PORT

INTEGRATIONS = Path(__file__).parents[2] / "configs" / "integrations"
RETRIEVE = f"http://127.0.0.1:{DEFAULT_PORT}/retrieve"


def _routes(engine) -> set[str]:
    service = RetrievalService(engine)
    try:
        return {route.path for route in make_http_app(service).app.routes}
    finally:
        service.close()


def test_every_trainer_is_pointed_at_retrieve(engine):
    verl = yaml.safe_load((INTEGRATIONS / "verl_search_tool.yaml").read_text())["tools"][0]
    assert (verl["class_name"], verl["config"]["retrieval_service_url"]) == (
        "verl.tools.search_tool.SearchTool",
        RETRIEVE,
    )
    skyrl = yaml.safe_load((INTEGRATIONS / "skyrl_search_env.yaml").read_text())["environment"]
    assert skyrl["skyrl_gym"]["search"]["search_url"] == RETRIEVE
    rllm = dict(
        line.split("=", 1) for line in (INTEGRATIONS / "rllm.env").read_text().splitlines() if "=" in line
    )
    assert f"{rllm['RETRIEVAL_SERVER_URL']}/retrieve" == RETRIEVE
    roots = [
        line for line in (INTEGRATIONS / "rllm_rag_url").read_text().splitlines() if not line.startswith("#")
    ]
    assert [f"{root}/retrieve" for root in roots] == [RETRIEVE]  # deep-research train.py's URL file
    # ASearcher globs $RAG_SERVER_ADDR_DIR/Host*_IP*.txt, named and written as its own server writes them
    (address,) = (INTEGRATIONS / "asearcher").glob("Host*_IP*.txt")
    assert (address.name, address.read_text()) == (
        f"Host127.0.0.1_IP{DEFAULT_PORT}.txt",
        f"127.0.0.1:{DEFAULT_PORT}",
    )
    assert {"/retrieve", "/access"} <= _routes(engine)
