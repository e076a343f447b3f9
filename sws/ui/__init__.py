"""A page for people: the search playground and the trajectory viewer (``sws ui``).

``create_app(index_dir=None, run_dirs=())`` is the ASGI app; it can be mounted under a prefix.
"""

from sws.ui.app import create_app

__all__ = ["create_app"]
