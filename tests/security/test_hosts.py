"""URL hosts: raw IPs, paste sites, tunnels and known installers."""

from __future__ import annotations

import pytest

from skillbook.security import hosts


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://203.0.113.7/x", hosts.RAW_IP),
        ("https://[2001:db8::1]/x", hosts.RAW_IP),
        ("http://91.92.242.30/x", hosts.KNOWN_BAD),
        ("http://127.0.0.1:8080/x", hosts.OTHER),
        ("http://192.168.1.1/x", hosts.OTHER),
        ("https://pastebin.com/raw/abc", hosts.PASTE),
        ("https://glot.io/snippets/x", hosts.PASTE),
        ("https://transfer.sh/abc/x.sh", hosts.FILE_DROP),
        ("https://bore.pub:4000/", hosts.TUNNEL),
        ("https://abc.ngrok-free.app/hook", hosts.TUNNEL),
        ("https://bit.ly/abc", hosts.SHORTENER),
        ("https://gist.githubusercontent.com/u/1/raw/x.sh", hosts.RAW_GIST),
        ("https://cdn.discordapp.com/attachments/1/2/x.exe", hosts.CHAT_CDN),
        ("https://astral.sh/uv/install.sh", hosts.KNOWN_INSTALLER),
        (
            "https://raw.githubusercontent.com/Homebrew/install/HEAD/install.sh",
            hosts.KNOWN_INSTALLER,
        ),
        ("http://example.invalid/x", hosts.PLAIN_HTTP),
        ("http://localhost:3000/", hosts.OTHER),
        ("https://user:pw@example.invalid/x", hosts.OTHER),
    ],
)
def test_classify(url: str, kind: str) -> None:
    assert hosts.classify(url).kind == kind


def test_worst_host_prefers_the_most_suspicious() -> None:
    verdict = hosts.worst_host("curl https://astral.sh/a http://203.0.113.7/b")
    assert verdict is not None and verdict.host == "203.0.113.7"
    bare = hosts.worst_host("curl -s 198.51.100.4/p.sh")
    assert bare is not None and bare.kind == hosts.RAW_IP
    assert hosts.worst_host("no urls here") is None
