"""HAProxy for Serve's HAProxy ingress, started the way ``sws serve`` needs it.

``RAY_SERVE_HAPROXY_BINARY_PATH`` points at a script (written by ``serve.launch.haproxy_env``) that
execs ``python serve/haproxy_exec.py HOST STATS HAPROXY ARGS...``. Ray 2.60 binds HAProxy's Prometheus
exporter (``bind :PORT``) and stats page (``bind *:PORT``) to every interface and has no setting to move
them; both are unauthenticated. This:

- drops both listeners from Ray's config (STATS=0), or binds them to HOST (STATS=1), in a copy of the config
  next to it (Ray's own file is left as Ray wrote it);
- makes HAProxy get SIGKILL when the Ray worker that started it dies (``PR_SET_PDEATHSIG``): Ray stops its
  HAProxy only when that worker shuts down cleanly;
- then execs HAProxy in this same process, so Ray's handle on it (PID, reloads with ``-sf``) stays right.
"""

from __future__ import annotations

import os
import signal
import sys

SIDE_LISTENERS = ("frontend prometheus", "listen stats")  # Ray's section names for them


def rewrite_config(text: str, host: str, stats: bool) -> str:
    """Ray's HAProxy config with the side listeners dropped (``stats`` False) or bound to ``host``."""
    address = "*" if host in ("", "0.0.0.0", "::") else (f"[{host}]" if ":" in host else host)
    out, side = [], False
    for line in text.splitlines(keepends=True):
        if line.strip() and not line[0].isspace():  # a section header
            side = line.strip() in SIDE_LISTENERS
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
    host, stats, binary, *args = argv
    config = args.index("-f") + 1
    with open(args[config]) as f:
        text = rewrite_config(f.read(), host, stats == "1")
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
