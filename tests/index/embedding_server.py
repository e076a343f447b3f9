"""A ``/v1/embeddings`` server in the reference's shape (CONTRACT §1.7) over the packaged MiniLM, served on
127.0.0.1 by uvicorn (``tests/ui/helpers.ServedApp``), whose answers a test can spoil."""

from __future__ import annotations

import json

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.ui.helpers import ServedApp

MODES = ("ok", "no-index", "dim", "nan", "down")


class EmbeddingServer(ServedApp):
    """``mode``: "ok" (rows with their ``index``, listed in reverse), "no-index" (rows in input order without
    it), "dim" (one dimension too many), "nan" (a NaN in the first row), "down" (503). ``requests`` holds each
    request's body and ``auth`` header."""

    def __init__(self, embedder):
        self.embedder, self.mode, self.requests = embedder, "ok", []
        super().__init__(Starlette(routes=[Route("/v1/embeddings", self._embeddings, methods=["POST"])]))

    async def _embeddings(self, request: Request) -> Response:
        body = await request.json()
        self.requests.append({"auth": request.headers.get("authorization"), **body})
        if self.mode == "down":
            return Response('{"error": "down"}', 503, media_type="application/json")
        rows = self.embedder.embed_documents(body["input"]).tolist()
        if self.mode == "dim":
            rows = [row + [0.0] for row in rows]
        if self.mode == "nan":
            rows[0][0] = float("nan")
        data = [{"object": "embedding", "index": i, "embedding": row} for i, row in enumerate(rows)][::-1]
        if self.mode == "no-index":
            data = [{"object": "embedding", "embedding": row} for row in rows]
        payload = {"object": "list", "data": data, "model": body["model"]}
        return Response(json.dumps(payload), media_type="application/json")  # NaN written as NaN
