"""The tool errors every layer shares: the service's (fatal or transient), the input it refused, the backend's.

The model's own mistakes are never exceptions: ``WikiTools.call_tool`` renders them as error observations.
These are the rest, raised by the call guard (:mod:`sws.env.guard`), the tool clients (``sws.transport``) and
the agent's tool runner (``sws.agent.ToolRunner``), which aborts the episode on :class:`FatalToolError`.
"""

from __future__ import annotations


class FatalToolError(RuntimeError):
    """A tool failure the model cannot fix (the service is down); the episode is aborted and recorded."""


class TransientToolError(RuntimeError):
    """A tool failure worth retrying (overload, a lost replica or connection, a timeout).

    Args:
        message: what failed.
        retry_after_s: the server's ``Retry-After`` hint, if any (the backoff waits at least this long).
    """

    def __init__(self, message: str, retry_after_s: float | None = None):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ToolRequestError(ValueError):
    """The service rejected the call's input (HTTP 4xx, e.g. an oversize query); the message is the server's.

    The agent shows it to the model as an error observation.
    """


class BackendFailure(RuntimeError):
    """The search backend failed (index, embedder, a deployment), not the model's arguments."""
