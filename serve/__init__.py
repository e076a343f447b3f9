"""Ray Serve applications (thin adapters over the ``sws`` library), installed with it; one per app:

- ``serve.retrieval``: the retrieval service (HTTP tool endpoints, MCP, handle API, batched query
  embeddings), a package; ``build_app(ServeConfig)``, or ``import_path: serve.retrieval:app_builder``.
- ``serve.llm``: the actor LLM on Ray Serve LLM (vLLM), OpenAI-compatible; ``build_app(LLMServeConfig)``;
  ``serve.llm_deployments`` its deployments with sws's listener and request rules.
- ``serve.launch``: run the retrieval app (and with ``--llm`` the LLM app, ``serve.llm_launch``) on a local
  Ray and wait (``sws serve``), with ``serve.processes`` (the processes it started, ended on stop),
  ``serve.haproxy_exec`` (the HAProxy wrapper Ray runs) and ``serve.client_bounds`` (the slow-client bounds
  of Serve's uvicorn servers); ``serve.grpc_binding`` puts every replica's gRPC server on the node IP.

Deployment files: ``configs/serve/*.yaml`` (``serve deploy``), ``configs/cluster.yaml`` (``ray up``).
"""
