"""``sws serve --address-dir``: the files ASearcher and rLLM find a retrieval server by."""

from __future__ import annotations

import glob
from pathlib import Path

import httpx

from serve.address_files import remove_address_files, write_address_files


def test_the_files_are_named_and_filled_as_the_trainers_read_them(tmp_path):
    written = write_address_files(tmp_path / "addr", "10.0.0.7", 11536)
    (asearcher,) = glob.glob(str(tmp_path / "addr" / "Host*_IP*.txt"))  # AReaL's glob
    assert Path(asearcher).read_text().splitlines(keepends=True) == [
        "10.0.0.7:11536"
    ]  # it calls http://<line>
    assert (tmp_path / "addr" / "rag_url").read_text().splitlines() == ["http://10.0.0.7:11536"]
    assert sorted(p.name for p in (tmp_path / "addr").iterdir()) == ["Host10.0.0.7_IP11536.txt", "rag_url"]
    remove_address_files(written)
    assert not list((tmp_path / "addr").iterdir())


def test_a_wildcard_bind_announces_this_nodes_address(tmp_path):
    import ray

    write_address_files(tmp_path, "0.0.0.0", 8000)
    node = ray.util.get_node_ip_address()
    assert (tmp_path / "rag_url").read_text() == f"http://{node}:8000\n"


def test_sws_serve_writes_them_and_a_trainer_reaches_it_by_them(proxy_server):
    (asearcher,) = glob.glob(str(proxy_server.address_dir / "Host*_IP*.txt"))
    (line,) = Path(asearcher).read_text().splitlines(keepends=True)
    response = httpx.post(f"http://{line}/retrieve", json={"queries": ["Sudan"], "topk": 2}, timeout=60)
    assert response.status_code == 200 and len(response.json()["result"][0]) == 2
    root = (proxy_server.address_dir / "rag_url").read_text().strip()
    assert httpx.post(f"{root}/retrieve", json={"query": "Sudan", "top_k": 1}, timeout=60).json()["results"]
