"""HAProxy for Serve's HAProxy ingress, started the way ``sws serve`` needs it.

``RAY_SERVE_HAPROXY_BINARY_PATH`` points at a script (written by ``serve.launch.haproxy_env``) that
execs ``python serve/haproxy_exec.py HOST STATS READ_TIMEOUT_S MAX_PER_SOURCE HAPROXY ARGS...``. Ray 2.60
binds HAProxy's Prometheus exporter (``bind :PORT``) and stats page (``bind *:PORT``) to every interface and
has no setting to move them; both are unauthenticated. Its service frontend waits for a request's headers
as long as the client keeps sending (``timeout client 3600s``, no ``timeout http-request``), so 4 096 slow
clients (``maxconn``) take the service offline. In a copy of Ray's config next to it (Ray's own file is left
as Ray wrote it), this:

- drops both listeners (STATS=0), or binds them to HOST (STATS=1);
- bounds the service frontend's clients: a whole request (headers, and the body as far as HAProxy buffers
  it) within READ_TIMEOUT_S (``timeout http-request``; else 408, HAProxy's own page while the headers are
  incomplete, the service's JSON error after), at most MAX_PER_SOURCE connections per client address (0: no
  bound; more are closed at once). ``timeout client`` stays, so long-lived responses (``GET /mcp`` streams)
  are not cut;
- makes HAProxy get SIGKILL when the Ray worker that started it dies (``PR_SET_PDEATHSIG``): Ray stops its
  HAProxy only when that worker shuts down cleanly;
- then execs HAProxy in this same process, so Ray's handle on it (PID, reloads with ``-sf``) stays right.
"""

from __future__ import annotations

import os
import signal
import sys

SIDE_LISTENERS = ("frontend prometheus", "listen stats")  # Ray's section names for them
SERVICE_FRONTEND = "frontend http_frontend"


def client_bounds(read_timeout_s: float, max_per_source: int) -> list[str]:
    """The service frontend's lines that bound what one client holds."""
    from serve.client_bounds import timeout_body

    lines = [
        f"    timeout http-request {round(read_timeout_s * 1000)}ms",
        "    option http-buffer-request",
        f"    http-error status 408 content-type application/json string '{timeout_body(read_timeout_s)}'",
    ]
    if max_per_source:
        lines += [
            "    stick-table type ipv6 size 1m expire 60s store conn_cur",
            "    tcp-request connection track-sc0 src",
            f"    tcp-request connection reject if {{ sc0_conn_cur gt {max_per_source} }}",
        ]
    return [f"{line}\n" for line in lines]


def rewrite_config(text: str, host: str, stats: bool, read_timeout_s: float, max_per_source: int) -> str:
    """Ray's HAProxy config with the side listeners dropped (``stats`` False) or bound to ``host``, and the
    service frontend's clients bounded (``client_bounds``)."""
    address = "*" if host in ("", "0.0.0.0", "::") else (f"[{host}]" if ":" in host else host)
    out, side = [], False
    for line in text.splitlines(keepends=True):
        if line.strip() and not line[0].isspace():  # a section header
            side = line.strip() in SIDE_LISTENERS
            if line.strip() == SERVICE_FRONTEND:
                out += [line, *client_bounds(read_timeout_s, max_per_source)]
                continue
        if side and not stats:
            continue
        words = line.split()
        if side and words[:1] == ["bind"]:
            port = words[1].rpartition(":")[2]
            line = line.replace(words[1], f"{address}:{port}", 1)
        out.append(line)
    return "".join(out)


def _die_with_parent() -> None:
    import ctypes

    parent = os.getppid()
    PR_SET_PDEATHSIG = 1
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # the parent died before the call
        sys.exit(1)


def main(argv: list[str]) -> None:
    host, stats, read_timeout_s, max_per_source, binary, *args = argv
    config = args.index("-f") + 1
    with open(args[config]) as f:
        text = rewrite_config(f.read(), host, stats == "1", float(read_timeout_s), int(max_per_source))
    rewritten = f"{args[config]}.sws"
    temporary = f"{rewritten}.{os.getpid()}"  # Ray may start a reload's HAProxy while one starts
    with open(temporary, "w") as f:
        f.write(text)
    os.replace(temporary, rewritten)
    args[config] = rewritten
    if sys.platform.startswith("linux"):
        _die_with_parent()
    os.execv(binary, [binary, *args])


if __name__ == "__main__":
    main(sys.argv[1:])
