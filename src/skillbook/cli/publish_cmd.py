"""``skillbook publish PATH``: publish a skill folder (or archive) to a ClawHub-compatible registry.

The same wire sequence as ``clawhub publish`` (0.23.3), so it works against
``skillbook registry serve`` and any registry that accepts the CLI. Exit codes: 0
published (or already published), 1 held for review by the registry's scan, 2
could not publish.
"""

from __future__ import annotations

from pathlib import Path

import click

from skillbook.cli.context import ERR_USAGE, EXIT_FINDINGS, Context, emit_json, emit_lines, fail

EXAMPLES = """\b
Examples:
  SKILLBOOK_REGISTRY_TOKEN=clh_… skillbook publish skills/weather --registry http://127.0.0.1:8787
      publish as 1.0.0 (or the next patch), tag latest
  skillbook publish weather.zip --version 2.0.0 --tags latest,stable --changelog "New API"
      an archive, with its version, tags and changelog"""

#: Tried first for the registry URL and the token (then the clawhub clients' variables).
REGISTRY_ENV = "SKILLBOOK_REGISTRY_URL"
TOKEN_ENV = "SKILLBOOK_REGISTRY_TOKEN"
#: Registries nobody chose: the clawhub CLI's cached one and the default.
_NOT_CHOSEN = ("cached", "default")


@click.command("publish", epilog=EXAMPLES)
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--registry",
    metavar="URL",
    help="Registry base URL (else $SKILLBOOK_REGISTRY_URL, $OPENCLAW_CLAWHUB_URL, "
    "$CLAWHUB_URL, $CLAWHUB_REGISTRY, $CLAWDHUB_REGISTRY, skills.registry.url, "
    "$CLAWHUB_SITE's discovery document; never a default).",
)
@click.option("--slug", help="The skill's slug (default: the folder name, lowercased).")
@click.option("--name", help="Display name (default: the folder name, title-cased).")
@click.option("--version", "version", help="Semver version (default 1.0.0, or the next patch).")
@click.option("--changelog", default="", help="What changed in this version.")
@click.option(
    "--tags",
    default="latest",
    show_default=True,
    help="Comma-separated tags to move to this version.",
)
@click.option("--owner", help="Publish as this handle (default: the token's, from whoami).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def publish_cmd(
    obj: Context,
    path: Path,
    registry: str | None,
    slug: str | None,
    name: str | None,
    version: str | None,
    changelog: str,
    tags: str,
    owner: str | None,
    as_json: bool,
) -> None:
    """Publish the skill at PATH (a folder, .zip or .tar.gz) to a registry.

    The token comes from $SKILLBOOK_REGISTRY_TOKEN, $OPENCLAW_CLAWHUB_TOKEN,
    $CLAWHUB_TOKEN or $CLAWHUB_AUTH_TOKEN, else from `clawhub login`'s config file
    when it was saved for that registry.
    """

    from skillbook.cli.registry_support import endpoint_of, say_stderr
    from skillbook.distribution.http import new_http
    from skillbook.distribution.hub.client import PublishOptions, publish_path
    from skillbook.distribution.registry import PublishFailed

    # The one registry choice of every command (skillbook.distribution.registry.endpoint), minus its
    # fallbacks: a registry cached by `clawhub login` or clawhub.ai is never chosen
    # here, so nothing is published to a public registry by mistake.
    endpoint = endpoint_of(obj.settings(), registry, None)
    if endpoint.kind in _NOT_CHOSEN:
        fail(
            f"no registry: pass --registry URL, set ${REGISTRY_ENV} or skills.registry.url",
            error=ERR_USAGE,
        )
    base = endpoint.base_url
    token = endpoint.token
    if not token:
        fail(
            "no token: set $SKILLBOOK_REGISTRY_TOKEN (see `skillbook registry token create`)",
            error=ERR_USAGE,
        )
    options = PublishOptions(
        slug=slug,
        name=name,
        version=version,
        changelog=changelog,
        tags=tuple(t.strip() for t in tags.split(",") if t.strip()),
        owner=owner,
    )
    try:
        with new_http(timeout=120) as client:
            outcome = publish_path(client, base, token, path, options, on_wait=say_stderr)
    except PublishFailed as exc:
        fail(str(exc), error=exc.code)
    if as_json:
        emit_json(outcome.to_json())
    elif outcome.status == "already-published":
        emit_lines([f"{outcome.slug}@{outcome.version} is already published (same files)."])
    elif outcome.status == "pending":
        emit_lines(
            [
                f"{outcome.slug}@{outcome.version}: held for review — the registry's scan "
                "found patterns it holds (critical, or high by default); an admin must "
                "release it."
            ]
        )
    else:
        emit_lines(
            [f"Published {outcome.slug}@{outcome.version} ({outcome.files} files) to {base}"]
        )
    if outcome.status == "pending":
        raise SystemExit(EXIT_FINDINGS)
