"""Which ``Host`` and ``Origin`` headers a local HTTP service answers: the DNS-rebinding guard of
``sws serve`` and ``sws ui``.

A web page can point its own name at 127.0.0.1 (DNS rebinding) and then read a loopback service as if it
were its own site: those requests carry the page's name as ``Host``. A page can also send requests straight
to ``http://127.0.0.1:PORT``: those carry its ``Origin``. So a request is answered only when

- its ``Host`` (any port) is a loopback name (``localhost``, ``127.0.0.1``, ``::1``), the address the
  service is bound to, or one of ``allowed_hosts``; on a wildcard bind (``0.0.0.0``, ``::``) every IP literal
  is one of its addresses (a rebinding page has a name, never an IP literal); a request without ``Host``
  (HTTP/1.0 health checks) is answered;
- and its ``Origin``, when it has one (browsers send it; curl and SDK clients do not), is the request's own
  origin, a loopback one (any port) or one of ``allowed_origins`` (the MCP streamable-HTTP transport requires
  servers to check it).

``"*"`` in either list turns that check off.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARD_BINDS = frozenset({"", "0.0.0.0", "::"})
DEFAULT_PORTS = {"http": 80, "https": 443}
# a Host (matched lower-cased): a name or a bracketed IPv6 literal, then a port
NETLOC = re.compile(r"(?:\[(?P<ipv6>[0-9a-f:.]+)\]|(?P<name>[a-z0-9._-]+))(?::(?P<port>[0-9]{0,5}))?")
SPLIT_CACHE = 1024  # distinct Host / Origin netlocs remembered: a service sees a handful


@dataclass(frozen=True)
class HostPolicy:
    """The ``Host`` / ``Origin`` rule of one service.

    Args:
        bind_host: the address the service listens on.
        allowed_hosts: more host names or addresses it answers (any port); ``"*"``: every one.
        allowed_origins: more origins (``scheme://host[:port]``) it answers; ``"*"``: every one.
        hosts_option: how the refusal message names the ``allowed_hosts`` setting.
        origins_option: how it names the ``allowed_origins`` setting.
    """

    bind_host: str = "127.0.0.1"
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    hosts_option: str = "allowed_hosts"
    origins_option: str = "allowed_origins"

    def refusal(self, host: str | None, origin: str | None) -> tuple[str, str] | None:
        """``(code, message)`` of the 403 for a request with these headers; None when it is answered."""
        if host is not None and not self.host_allowed(host):
            return "host_not_allowed", (
                f"Host {host!r} is not a name of this service (DNS-rebinding guard); "
                f"add it to {self.hosts_option} to serve it"
            )
        if origin is not None and not self.origin_allowed(origin, host):
            return "origin_not_allowed", (
                f"cross-origin request from {origin!r} refused; add the origin to {self.origins_option} "
                "to serve it"
            )
        return None

    def host_allowed(self, host: str) -> bool:
        name = _split(host)[0]
        if "*" in self.allowed_hosts or name in LOOPBACK_NAMES:
            return True
        if name in {_split(h)[0] for h in (self.bind_host, *self.allowed_hosts)}:
            return True
        return self.bind_host in WILDCARD_BINDS and _is_ip(name)

    def origin_allowed(self, origin: str, host: str | None) -> bool:
        wanted = origin.strip().rstrip("/").lower()
        if "*" in self.allowed_origins or wanted in {o.rstrip("/").lower() for o in self.allowed_origins}:
            return True
        try:
            parts = urlsplit(wanted)
        except ValueError:
            return False
        if parts.scheme not in DEFAULT_PORTS or not parts.netloc:  # "null": a sandboxed or file:// page
            return False
        if parts.path or "?" in wanted or "#" in wanted:  # a URL, not an origin
            return False
        name, port = _split(parts.netloc)
        if name in LOOPBACK_NAMES:
            return True
        if host is None:
            return False
        default = DEFAULT_PORTS[parts.scheme]
        host_name, host_port = _split(host)
        return (name, port or default) == (host_name, host_port or default)


@lru_cache(maxsize=SPLIT_CACHE)
def _split(netloc: str) -> tuple[str, int | None]:
    """``(host name, port)`` of ``host[:port]`` or of a bare IP literal: IPs in their canonical form, names
    lower-cased without a final dot. Parsed strictly (a name of letters, digits, ``.``, ``-``, ``_``; a
    bracketed IPv6 literal; a port of digits): anything else (``evil.example@localhost``, ``localhost#.x``,
    ``localhost/x``) is malformed and its own name, so matches no allowed one. Memoised: every request asks
    it of its ``Host`` (parsing it was 1 % of a keyword search's time in the replica)."""
    text = netloc.strip().lower()
    if _is_ip(text):  # a bare IPv6 literal, which has no brackets
        return str(ipaddress.ip_address(text)), None
    match = NETLOC.fullmatch(text)
    if match is None or (match["ipv6"] and not _is_ip(match["ipv6"])) or int(match["port"] or 0) > 65535:
        return text, None
    name = (match["ipv6"] or match["name"]).rstrip(".")
    return (str(ipaddress.ip_address(name)) if _is_ip(name) else name), int(match["port"] or 0) or None


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
