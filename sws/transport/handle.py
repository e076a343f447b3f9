"""The tools through a Serve deployment handle: other Ray jobs call retrieval without HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

from sws.env.errors import BackendFailure, FatalToolError, TransientToolError
from sws.retry import RetryPolicy
from sws.transport.retries import acall_with_retries, call_with_retries


def _classify(exc: BaseException) -> BaseException:
    """A :class:`TransientToolError` for what is worth retrying; other exceptions as they are."""
    from ray.exceptions import GetTimeoutError, RayActorError
    from ray.serve.exceptions import (
        BackPressureError,
        DeploymentUnavailableError,
        RequestCancelledError,
    )

    if isinstance(exc, BackPressureError):
        return TransientToolError(str(exc), exc.retry_after_s)
    transient = (
        BackendFailure,
        DeploymentUnavailableError,
        RequestCancelledError,
        RayActorError,
        GetTimeoutError,
        TimeoutError,
    )
    if isinstance(exc, transient):
        return TransientToolError(f"{type(exc).__name__}: {exc}")
    return exc


class HandleTools:
    """``call_tool`` on the retrieval app's ingress deployment (``RetrievalIngress.call_tool``).

    Picklable (the handle is looked up again where it is unpickled), so a Ray task or actor can carry it.
    Needs a connected Ray with the Serve application running.

    Args:
        app_name: the Serve application name.
        policy: per-attempt timeout and retries.
    """

    def __init__(self, app_name: str = "sws", policy: RetryPolicy | None = None):
        self.app_name = app_name
        self.policy = policy or RetryPolicy()
        self._handle: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"app_name": self.app_name, "policy": self.policy, "_handle": None}

    def _get_handle(self) -> Any:
        if self._handle is None:
            from ray import serve

            self._handle = serve.get_app_handle(self.app_name)
        return self._handle

    def call_tool(self, name: str, arguments_json: str) -> str:
        return call_with_retries(
            self.policy, f"{name} via handle {self.app_name!r}", lambda: self._attempt(name, arguments_json)
        )

    async def acall_tool(self, name: str, arguments_json: str) -> str:
        return await acall_with_retries(
            self.policy, f"{name} via handle {self.app_name!r}", lambda: self._aattempt(name, arguments_json)
        )

    def _attempt(self, name: str, arguments_json: str) -> str:
        try:
            response = self._get_handle().call_tool.remote(name, arguments_json)
            return response.result(timeout_s=self.policy.timeout_s)
        except Exception as exc:
            raise self._reraise(name, exc) from exc

    async def _aattempt(self, name: str, arguments_json: str) -> str:
        try:
            if self._handle is None:
                await asyncio.to_thread(self._get_handle)
            response = self._handle.call_tool.remote(name, arguments_json)
            return await asyncio.wait_for(response, self.policy.timeout_s)
        except Exception as exc:
            raise self._reraise(name, exc) from exc

    @staticmethod
    def _reraise(name: str, exc: Exception) -> BaseException:
        classified = _classify(exc)
        if isinstance(classified, TransientToolError):
            return classified
        return FatalToolError(f"{name}: {type(exc).__name__}: {exc}")

    def close(self) -> None:
        self._handle = None
