"""The files RL trainers find a retrieval server by, written by ``sws serve --address-dir DIR`` once the service
answers and removed when it stops:

- ``Host<host>_IP<port>.txt`` holding ``host:port``: ASearcher (AReaL's ``AsyncSearchBrowserClient``) globs
  ``$RAG_SERVER_ADDR_DIR/Host*_IP*.txt`` and calls ``http://<line>``, as its own server's files are named;
- ``rag_url`` holding ``http://host:port``: rLLM's deep-research ``LocalRetrievalTool(url_file=...)`` reads one
  server root per line.

The host is the service's, or this node's IP address when it listens on every interface (the address other
nodes reach).
"""

from __future__ import annotations

from pathlib import Path

WILDCARDS = ("0.0.0.0", "::", "")


def announced_host(host: str) -> str:
    """``host``, or this node's IP address (as Ray sees it) for a wildcard bind address."""
    if host not in WILDCARDS:
        return host
    import ray

    return ray.util.get_node_ip_address()


def write_address_files(directory: str | Path, host: str, port: int) -> list[Path]:
    """Write both files into ``directory`` (created), each atomically; the paths written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    host = announced_host(host)
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    contents = {f"Host{host}_IP{port}.txt": netloc, "rag_url": f"http://{netloc}\n"}
    written = []
    for name, text in contents.items():
        path = directory / name
        partial = path.with_name(f".{name}.partial")
        partial.write_text(text)
        partial.replace(path)
        written.append(path)
    return written


def remove_address_files(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)
