"""Ray Serve applications (thin adapters over the ``sws`` library), one builder module per app:

- ``serve.retrieval``: the retrieval service (HTTP tool endpoints, MCP, handle API, batched query
  embeddings); ``build_app(ServeConfig)``, or ``import_path: serve.retrieval:app_builder`` in a Serve config.
- ``serve.llm``: the actor LLM on Ray Serve LLM (vLLM), OpenAI-compatible; ``build_app(LLMServeConfig)``.
- ``serve.launch``: run the retrieval app on a local Ray and wait (``sws serve``).

Deployment files: ``configs/serve/*.yaml`` (``serve deploy``), ``configs/cluster.yaml`` (``ray up``).
"""
