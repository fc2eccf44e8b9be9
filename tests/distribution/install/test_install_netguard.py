"""The download guard: which hosts and addresses a download may reach."""

from __future__ import annotations

import pytest

from skillbook.distribution import InstallError
from skillbook.distribution.netguard import (
    BLOCKED_HOST_OR_IP_MESSAGE,
    BLOCKED_RESOLVED_IP_MESSAGE,
    NetworkPolicy,
    host_matches,
    is_blocked_hostname,
    is_special_use_ip,
    resolve_pinned,
)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",  # cloud metadata
        "100.64.0.1",  # carrier-grade NAT
        "0.0.0.0",
        "224.0.0.1",
        "198.18.0.1",  # benchmarking
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:127.0.0.1",  # IPv4-mapped
        "2002:7f00:1::",  # 6to4 of 127.0.0.1
        "[::1]",
    ],
)
def test_special_use_addresses(address: str) -> None:
    assert is_special_use_ip(address)


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "example.com"])
def test_public_addresses(address: str) -> None:
    assert not is_special_use_ip(address)


def test_blocked_names_and_patterns() -> None:
    for name in (
        "localhost",
        "LOCALHOST.",
        "x.localhost",
        "printer.local",
        "metadata.google.internal",
        "a.internal",
    ):
        assert is_blocked_hostname(name)
    assert not is_blocked_hostname("github.com")
    assert host_matches("github.com", "GitHub.com")
    assert host_matches("objects.githubusercontent.com", "*.githubusercontent.com")
    assert not host_matches("githubusercontent.com", "*.githubusercontent.com")
    assert not host_matches("evilgithub.com", "*.github.com")


def refusal(host: str, policy: NetworkPolicy, addresses: list[str]) -> str:
    with pytest.raises(InstallError) as info:
        resolve_pinned(host, 443, policy, resolver=lambda h, p: addresses)
    assert info.value.code == "install.download-failed"
    return info.value.message


def test_resolution_is_checked_and_pinned() -> None:
    strict = NetworkPolicy()
    assert resolve_pinned("dl.example", 443, strict, resolver=lambda h, p: ["93.184.216.34"]) == (
        "93.184.216.34",
    )
    assert refusal("127.0.0.1", strict, []) == BLOCKED_HOST_OR_IP_MESSAGE
    assert (
        refusal("dl.example", strict, ["93.184.216.34", "10.0.0.1"]) == BLOCKED_RESOLVED_IP_MESSAGE
    )
    assert refusal("dl.example", strict, []) == "Unable to resolve hostname: dl.example"
    only = NetworkPolicy(allowed_hosts=("*.github.com",))
    assert refusal("evil.example", only, ["8.8.8.8"]) == (
        "Blocked hostname (not in allowlist): evil.example"
    )
    local = NetworkPolicy(allow_private_network=True)
    assert resolve_pinned("localhost", 80, local, resolver=lambda h, p: ["127.0.0.1"]) == (
        "127.0.0.1",
    )


def test_unresolvable_names_say_so() -> None:
    def fail(host: str, port: int) -> list[str]:
        raise OSError(-2, "Name or service not known")

    with pytest.raises(
        InstallError, match=r"Unable to resolve hostname: nx\.example \(Name or service not known\)"
    ):
        resolve_pinned("nx.example", 443, NetworkPolicy(), resolver=fail)
