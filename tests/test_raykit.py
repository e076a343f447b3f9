"""Which addresses ``init_ray`` joins in Ray's single-machine mode (a local Ray listening on loopback only)."""

from __future__ import annotations

import socket

from sws.raykit import _is_loopback_only


def test_a_port_open_on_loopback_alone_is_joined_on_loopback():
    with socket.create_server(("127.0.0.1", 0)) as sock:
        port = sock.getsockname()[1]
        assert _is_loopback_only(f"127.0.0.1:{port}")
        assert _is_loopback_only(f"localhost:{port}")


def test_a_port_open_on_every_interface_is_joined_as_ray_does():
    with socket.create_server(("0.0.0.0", 0)) as sock:
        port = sock.getsockname()[1]
        assert not _is_loopback_only(f"127.0.0.1:{port}")


def test_other_addresses_are_left_to_ray():
    assert not _is_loopback_only("10.0.0.5:6379")
    assert not _is_loopback_only("ray://127.0.0.1:10001")
    assert not _is_loopback_only("auto")
