"""Excerpts never print a secret."""

from __future__ import annotations

import pytest

from skillbook.security.mask import EXCERPT_MAX, excerpt, mask_secrets


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("export OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234567890", "abcdefghijklmnop1234567890"),
        ("token: ghp_abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz"),
        ("AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"),
        ("git clone https://bob:hunter2secret@git.example.invalid/r.git", "hunter2secret"),
        ("curl -H 'Authorization: Bearer abcdef0123456789abcdef'", "abcdef0123456789abcdef"),
        ("password = 'correct-horse-battery'", "correct-horse-battery"),
        ("xoxb-123456789012-abcdefghijkl", "abcdefghijkl"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----b3BlbnNzaC1rZXktdjEAAAAA", "b3BlbnNzaC1rZXktdjE"),
        (
            "https://discord.com/api/webhooks/123456/abcdefghijklmnopqrstuvwxyz",
            "abcdefghijklmnopqrst",
        ),
    ],
)
def test_secrets_are_masked(text: str, secret: str) -> None:
    masked = mask_secrets(text)
    assert secret not in masked
    assert "****" in masked


def test_placeholders_are_kept() -> None:
    assert mask_secrets("api_key=$API_KEY") == "api_key=$API_KEY"
    assert mask_secrets("token: <your-token>") == "token: <your-token>"


def test_long_lines_are_cut_around_the_column_after_masking() -> None:
    line = "x" * 300 + " sk-proj-" + "a" * 40 + " " + "y" * 300
    shown = excerpt(line, column=305)
    assert len(shown) <= EXCERPT_MAX + 2
    assert "sk-proj-****" in shown and "a" * 20 not in shown


def test_invisible_characters_are_made_visible() -> None:
    assert excerpt("a\u200bb\u202ec") == "a<U+200B>b<U+202E>c"
