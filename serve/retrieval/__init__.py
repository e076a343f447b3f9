"""The retrieval application: the tools over HTTP, MCP and a deployment handle, one opened index per replica.

- ``app``: the Serve deployments' ingress ``RetrievalIngress`` and the builders (``build_app(ServeConfig)``;
  ``import_path: serve.retrieval:app_builder`` in a Serve config).
- ``embedding``: the batched ``QueryEmbedder`` deployment and the ingress side that calls it.
- ``service``: the Ray-free core every route calls (tool calls, bounds, typed errors); ``http_app`` its
  Starlette app, ``mcp_endpoint`` its MCP endpoint, ``request_models`` the reference server's request models.
"""

from serve.retrieval.app import RetrievalIngress, app_builder, build_app, check_index, load_serve_config

__all__ = ["RetrievalIngress", "app_builder", "build_app", "check_index", "load_serve_config"]
