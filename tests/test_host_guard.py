"""The DNS-rebinding guard's rule (``sws.host_guard``): which ``Host`` and ``Origin`` headers are answered."""

from __future__ import annotations

import pytest

from sws.host_guard import HostPolicy

LOOPBACK = HostPolicy()
CLUSTER = HostPolicy("0.0.0.0", allowed_hosts=("head.internal",), allowed_origins=("https://app.example",))


@pytest.mark.parametrize(
    ("policy", "host", "origin", "code"),
    [
        (LOOPBACK, None, None, None),  # HTTP/1.0 health checks send no Host
        (LOOPBACK, "127.0.0.1:11536", None, None),
        (LOOPBACK, "localhost:8765", None, None),
        (LOOPBACK, "LocalHost.", None, None),
        (LOOPBACK, "[::1]:11536", None, None),
        (LOOPBACK, "127.0.0.1:11536", "http://localhost:6274", None),  # a local tool's page, any port
        (LOOPBACK, "127.0.0.1:11536", "http://127.0.0.1:11536", None),
        (LOOPBACK, "evil.example", None, "host_not_allowed"),
        (LOOPBACK, "evil.example:11536", "http://evil.example:11536", "host_not_allowed"),  # rebinding
        (LOOPBACK, "localhost.evil.example", None, "host_not_allowed"),
        (LOOPBACK, "10.0.0.5:11536", None, "host_not_allowed"),  # not the bound address
        (LOOPBACK, "x]", None, "host_not_allowed"),  # malformed
        (LOOPBACK, "localhost:", None, None),  # an empty port is the default one
        # userinfo, fragment, path, query, a backslash, a space: not a Host, whatever a URL parser makes of it
        (LOOPBACK, "evil.example@localhost", None, "host_not_allowed"),
        (LOOPBACK, "evil.example@localhost:11536", None, "host_not_allowed"),
        (LOOPBACK, "localhost#.evil.example", None, "host_not_allowed"),
        (LOOPBACK, "localhost/.evil.example", None, "host_not_allowed"),
        (LOOPBACK, "localhost?.evil.example", None, "host_not_allowed"),
        (LOOPBACK, "localhost\\.evil.example", None, "host_not_allowed"),
        (LOOPBACK, "localhost .evil.example", None, "host_not_allowed"),
        (LOOPBACK, "localhost:99999", None, "host_not_allowed"),
        (LOOPBACK, "[::1%eth0]:11536", None, "host_not_allowed"),
        (LOOPBACK, "127.0.0.1:11536", "http://evil.example@localhost", "origin_not_allowed"),
        (LOOPBACK, "127.0.0.1:11536", "http://localhost#.evil.example", "origin_not_allowed"),
        (CLUSTER, "evil.example@10.0.0.5:11536", None, "host_not_allowed"),
        (LOOPBACK, "127.0.0.1:11536", "http://evil.example", "origin_not_allowed"),  # cross-site page
        (LOOPBACK, "127.0.0.1:11536", "null", "origin_not_allowed"),  # sandboxed or file:// page
        (LOOPBACK, "127.0.0.1:11536", "http://[x", "origin_not_allowed"),
        (HostPolicy("10.0.0.5"), "10.0.0.5:11536", "http://10.0.0.5:11536", None),
        (HostPolicy("::1"), "[::1]:1", None, None),
        (CLUSTER, "10.0.0.5:11536", None, None),  # every IP literal is an address of a wildcard bind
        (CLUSTER, "[fd00::5]:11536", None, None),
        (CLUSTER, "HEAD.internal:11536", "http://head.internal:11536", None),
        (CLUSTER, "head.internal:11536", "https://app.example/", None),
        (CLUSTER, "head.internal", "https://head.internal:443", None),  # default ports
        (CLUSTER, "evil.example:11536", None, "host_not_allowed"),
        (CLUSTER, "10.0.0.5:11536", "http://1.2.3.4", "origin_not_allowed"),  # an IP-literal page elsewhere
        (CLUSTER, "head.internal:11536", "http://head.internal:8765", "origin_not_allowed"),  # another port
        (HostPolicy(allowed_hosts=("*",), allowed_origins=("*",)), "any.example", "http://any.example", None),
    ],
)
def test_host_and_origin_rule(policy, host, origin, code):
    refused = policy.refusal(host, origin)
    assert (refused and refused[0]) == code, refused


def test_refusal_names_the_setting():
    policy = HostPolicy(hosts_option="serve.allowed_hosts", origins_option="serve.allowed_origins")
    assert "serve.allowed_hosts" in policy.refusal("evil.example", None)[1]
    assert "serve.allowed_origins" in policy.refusal("localhost", "http://evil.example")[1]
