"""Secret resolution: env / file / exec providers and ``${ENV}`` templates.

Every failure must raise ``SecretError`` naming the config key and the ref, and the
secret value must not appear in ``str(exc)``, ``repr(exc)`` or the formatted
traceback (chained exceptions included).
"""

from __future__ import annotations

import json
import pickle
import stat
import sys
import time
import traceback
from pathlib import Path

import pytest
from factories import process_alive, wait_until

from skillbook.config.file import Config, SecretRef
from skillbook.errors import SkillbookError
from skillbook.runtime import SecretError
from skillbook.runtime.secrets import Secret, SecretResolver, ref_label, template_ref

KEY = "skills.entries.weather.apiKey"
SECRET = "sk-live-5ecr3t-VALUE-42"


def resolver(providers: dict[str, object] | None = None, **env: str) -> SecretResolver:
    raw: dict[str, object] = {}
    if providers is not None:
        raw["secrets"] = {"providers": providers}
    return SecretResolver(Config.from_mapping(raw), env=env)


def assert_clean(exc: SecretError, *, label: str, leaked: tuple[str, ...] = (SECRET,)) -> None:
    """The error names the key and the ref and holds none of ``leaked``."""
    text = "".join(traceback.format_exception(exc))
    assert KEY in str(exc)
    assert f'"{label}"' in str(exc)
    assert exc.key == KEY and exc.ref == label
    for value in leaked:
        assert value not in str(exc)
        assert value not in repr(exc)
        assert value not in text
    assert exc.__context__ is None or all(v not in repr(exc.__context__) for v in leaked)


def script(path: Path, body: str) -> Path:
    path.write_text(f"#!{sys.executable}\n{body}", encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# ----------------------------------------------------------------------- Secret


def test_secret_wrapper_redacts_in_str_repr_and_format() -> None:
    s = Secret(SECRET)
    assert str(s) == "***"
    assert repr(s) == "Secret('***')"
    assert f"{s}" == "***" and f"{s:>4}" == " ***"
    assert SECRET not in repr([s, {"k": s}])
    assert s.reveal() == SECRET
    assert s == Secret(SECRET) and s != Secret("other")


def test_secret_cannot_be_pickled() -> None:
    with pytest.raises(TypeError):
        pickle.dumps(Secret(SECRET))


def test_secret_error_is_a_skillbook_error() -> None:
    assert issubclass(SecretError, SkillbookError)


# ----------------------------------------------------------------------- env


def test_env_ref_reads_the_given_mapping() -> None:
    r = resolver(WEATHER_KEY=f"  {SECRET}\n")
    got = r.resolve(SecretRef("env", "default", "WEATHER_KEY"), key=KEY)
    assert got.reveal() == SECRET


def test_env_ref_missing_variable_names_key_and_ref() -> None:
    with pytest.raises(SecretError) as info:
        resolver(OTHER=SECRET).resolve(SecretRef("env", "default", "WEATHER_KEY"), key=KEY)
    assert_clean(info.value, label="env:default:WEATHER_KEY")
    assert "WEATHER_KEY" in str(info.value) and "missing or empty" in str(info.value)


def test_env_ref_empty_variable_is_an_error() -> None:
    with pytest.raises(SecretError):
        resolver(WEATHER_KEY="  ").resolve(SecretRef("env", "default", "WEATHER_KEY"), key=KEY)


def test_env_ref_unknown_provider_is_an_error() -> None:
    with pytest.raises(SecretError) as info:
        resolver(W=SECRET).resolve(SecretRef("env", "vault", "W"), key=KEY)
    assert_clean(info.value, label="env:vault:W")
    assert "not configured" in str(info.value)


def test_env_provider_allowlist_is_honoured() -> None:
    r = resolver({"locked": {"source": "env", "allowlist": ["OK_KEY"]}}, OK_KEY="a", NO_KEY=SECRET)
    assert r.resolve(SecretRef("env", "locked", "OK_KEY"), key=KEY).reveal() == "a"
    with pytest.raises(SecretError) as info:
        r.resolve(SecretRef("env", "locked", "NO_KEY"), key=KEY)
    assert_clean(info.value, label="env:locked:NO_KEY")


def test_provider_source_mismatch_is_an_error() -> None:
    r = resolver({"vault": {"source": "exec", "command": ["true"]}}, X=SECRET)
    with pytest.raises(SecretError) as info:
        r.resolve(SecretRef("env", "vault", "X"), key=KEY)
    assert "source" in str(info.value)


def test_env_template_strings() -> None:
    assert template_ref("${WEATHER_KEY}") == SecretRef("env", "default", "WEATHER_KEY")
    assert template_ref("  ${A_1}  ") == SecretRef("env", "default", "A_1")
    assert template_ref("${lower}") is None  # OpenClaw's pattern: upper case only
    assert template_ref("Bearer ${TOKEN}") is None  # whole value only
    assert template_ref("literal-key") is None
    # A template resolves as its ref does (what an ``apiKey`` written as one goes through).
    ref = template_ref("${WEATHER_KEY}")
    assert ref is not None
    assert resolver(WEATHER_KEY=SECRET).resolve(ref, key=KEY).reveal() == SECRET
    with pytest.raises(SecretError) as info:
        resolver().resolve(ref, key=KEY)
    assert_clean(info.value, label="env:default:WEATHER_KEY")


def test_ref_label_is_openclaw_format() -> None:
    assert ref_label(SecretRef("file", "vault", "/a/b")) == "file:vault:/a/b"


# ----------------------------------------------------------------------- file


def test_file_provider_json_pointer(tmp_path: Path) -> None:
    doc = {"openai": {"apiKey": SECRET}, "a/b": {"c~d": "escaped"}, "list": ["zero", "one"]}
    (tmp_path / "s.json").write_text(json.dumps(doc), encoding="utf-8")
    r = resolver({"vault": {"source": "file", "path": str(tmp_path / "s.json"), "mode": "json"}})
    assert r.resolve(SecretRef("file", "vault", "/openai/apiKey"), key=KEY).reveal() == SECRET
    assert r.resolve(SecretRef("file", "vault", "/a~1b/c~0d"), key=KEY).reveal() == "escaped"
    assert r.resolve(SecretRef("file", "vault", "/list/1"), key=KEY).reveal() == "one"


def test_file_provider_json_is_the_default_mode(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps({"k": SECRET}), encoding="utf-8")
    r = resolver({"vault": {"source": "file", "path": str(tmp_path / "s.json")}})
    assert r.resolve(SecretRef("file", "vault", "/k"), key=KEY).reveal() == SECRET


def test_file_provider_missing_pointer_does_not_leak_other_values(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps({"openai": {"apiKey": SECRET}}), encoding="utf-8")
    r = resolver({"vault": {"source": "file", "path": str(tmp_path / "s.json")}})
    with pytest.raises(SecretError) as info:
        r.resolve(SecretRef("file", "vault", "/openai/missing"), key=KEY)
    assert_clean(info.value, label="file:vault:/openai/missing")
    assert "/openai/missing" in str(info.value) and "not found" in str(info.value)


def test_file_provider_pointer_to_non_string_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text(json.dumps({"openai": {"apiKey": SECRET}}), encoding="utf-8")
    r = resolver({"vault": {"source": "file", "path": str(tmp_path / "s.json")}})
    with pytest.raises(SecretError) as info:
        r.resolve(SecretRef("file", "vault", "/openai"), key=KEY)
    assert_clean(info.value, label="file:vault:/openai")


def test_file_provider_invalid_json_does_not_leak_contents(tmp_path: Path) -> None:
    (tmp_path / "s.json").write_text('{"k": "' + SECRET + '",', encoding="utf-8")
    r = resolver({"vault": {"source": "file", "path": str(tmp_path / "s.json")}})
    with pytest.raises(SecretError) as info:
        r.resolve(SecretRef("file", "vault", "/k"), key=KEY)
    assert_clean(info.value, label="file:vault:/k")
    assert "not valid JSON" in str(info.value)


def test_file_provider_single_value_is_trimmed(tmp_path: Path) -> None:
    (tmp_path / "key.txt").write_text(f"\n  {SECRET}  \n\n", encoding="utf-8")
    r = resolver(
        {"one": {"source": "file", "path": str(tmp_path / "key.txt"), "mode": "singleValue"}}
    )
    assert r.resolve(SecretRef("file", "one", "value"), key=KEY).reveal() == SECRET


def test_file_provider_tilde_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "key.txt").write_text(SECRET, encoding="utf-8")
    r = resolver({"one": {"source": "file", "path": "~/key.txt", "mode": "singleValue"}})
    assert r.resolve(SecretRef("file", "one", "value"), key=KEY).reveal() == SECRET


def test_file_without_provider_reads_an_absolute_id(tmp_path: Path) -> None:
    (tmp_path / "key.txt").write_text(SECRET + "\n", encoding="utf-8")
    ref = SecretRef("file", "default", str(tmp_path / "key.txt"))
    assert resolver().resolve(ref, key=KEY).reveal() == SECRET
    with pytest.raises(SecretError) as info:
        resolver().resolve(SecretRef("file", "default", "relative/key.txt"), key=KEY)
    assert_clean(info.value, label="file:default:relative/key.txt")


def test_file_missing_names_key_and_ref(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    r = resolver({"vault": {"source": "file", "path": str(missing)}})
    with pytest.raises(SecretError) as info:
        r.resolve(SecretRef("file", "vault", "/k"), key=KEY)
    assert_clean(info.value, label="file:vault:/k")
    assert "cannot read" in str(info.value)


def test_file_too_large_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text(SECRET * 10, encoding="utf-8")
    r = resolver(
        {
            "v": {
                "source": "file",
                "path": str(tmp_path / "big.txt"),
                "mode": "singleValue",
                "maxBytes": 16,
            }
        }
    )
    with pytest.raises(SecretError) as info:
        r.resolve(SecretRef("file", "v", "value"), key=KEY)
    assert_clean(info.value, label="file:v:value")


def test_file_not_utf8_does_not_leak_bytes(tmp_path: Path) -> None:
    (tmp_path / "bin").write_bytes(SECRET.encode() + b"\xff\xfe")
    r = resolver({"v": {"source": "file", "path": str(tmp_path / "bin"), "mode": "singleValue"}})
    with pytest.raises(SecretError) as info:
        r.resolve(SecretRef("file", "v", "value"), key=KEY)
    assert_clean(info.value, label="file:v:value")


# ----------------------------------------------------------------------- exec


def test_exec_provider_list_form_gets_id_as_last_argument(tmp_path: Path) -> None:
    prog = script(
        tmp_path / "get.py",
        "import sys\nprint('  ' + sys.argv[-1].upper() + '-' + sys.argv[1] + '  ')\n",
    )
    r = resolver({"cmd": {"source": "exec", "command": [str(prog), "pfx"]}})
    got = r.resolve(SecretRef("exec", "cmd", "weather"), key=KEY)
    assert got.reveal() == "WEATHER-pfx"


def test_exec_provider_openclaw_protocol(tmp_path: Path) -> None:
    prog = script(
        tmp_path / "proto.py",
        "import json, sys\n"
        "req = json.load(sys.stdin)\n"
        "assert req['protocolVersion'] == 1 and req['provider'] == 'vault'\n"
        f"print(json.dumps({{'protocolVersion': 1, 'values': {{i: {SECRET!r} for i in req['ids']}}}}))\n",
    )
    r = resolver({"vault": {"source": "exec", "command": str(prog)}})
    assert r.resolve(SecretRef("exec", "vault", "openai/key"), key=KEY).reveal() == SECRET


def test_exec_provider_openclaw_form_requires_json_unless_disabled(tmp_path: Path) -> None:
    prog = script(tmp_path / "raw.py", f"print({SECRET!r})\n")
    strict = resolver({"vault": {"source": "exec", "command": str(prog)}})
    with pytest.raises(SecretError) as info:
        strict.resolve(SecretRef("exec", "vault", "k"), key=KEY)
    assert_clean(info.value, label="exec:vault:k")
    lax = resolver({"vault": {"source": "exec", "command": str(prog), "jsonOnly": False}})
    assert lax.resolve(SecretRef("exec", "vault", "k"), key=KEY).reveal() == SECRET


def test_exec_provider_pass_env(tmp_path: Path) -> None:
    prog = script(
        tmp_path / "env.py",
        "import os\nprint(os.environ.get('SEED', 'none') + ('+OTHER' * ('OTHER' in os.environ)))\n",
    )
    r = SecretResolver(
        {
            "secrets": {
                "providers": {"p": {"source": "exec", "command": [str(prog)], "passEnv": ["SEED"]}}
            }
        },
        env={"SEED": "s", "OTHER": "o"},
    )
    assert r.resolve(SecretRef("exec", "p", "x"), key=KEY).reveal() == "s"


def test_exec_provider_failure_does_not_leak_stdout(tmp_path: Path) -> None:
    prog = script(tmp_path / "fail.py", f"import sys\nprint({SECRET!r})\nsys.exit(3)\n")
    r = resolver({"cmd": {"source": "exec", "command": [str(prog)]}})
    with pytest.raises(SecretError) as info:
        r.resolve(SecretRef("exec", "cmd", "weather"), key=KEY)
    assert_clean(info.value, label="exec:cmd:weather")
    assert "exited with code 3" in str(info.value)


def test_exec_provider_timeout(tmp_path: Path) -> None:
    prog = script(
        tmp_path / "slow.py", f"import time\nprint({SECRET!r}, flush=True)\ntime.sleep(10)\n"
    )
    r = resolver({"cmd": {"source": "exec", "command": [str(prog)], "timeoutMs": 300}})
    started = time.monotonic()
    with pytest.raises(SecretError) as info:
        r.resolve(SecretRef("exec", "cmd", "w"), key=KEY)
    assert time.monotonic() - started < 5
    assert_clean(info.value, label="exec:cmd:w")
    assert "timed out after 300ms" in str(info.value)


@pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")
@pytest.mark.parametrize("outcome", ["timeout", "exit"])
def test_exec_provider_process_group_is_killed(tmp_path: Path, outcome: str) -> None:
    """A provider that started a child: the child is killed with it, whether the provider
    timed out or answered (a secret helper leaves nothing running)."""
    pidfile = tmp_path / "child.pid"
    tail = "time.sleep(10)\n" if outcome == "timeout" else "print('the-value')\n"
    prog = script(
        tmp_path / "spawner.py",
        "import subprocess, sys, time\n"
        "child = subprocess.Popen(['sleep', '300'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n" + tail,
    )
    r = resolver({"cmd": {"source": "exec", "command": [str(prog)], "timeoutMs": 2000}})
    if outcome == "timeout":
        with pytest.raises(SecretError, match="timed out after 2000ms"):
            r.resolve(SecretRef("exec", "cmd", "w"), key=KEY)
    else:
        assert r.resolve(SecretRef("exec", "cmd", "w"), key=KEY).reveal() == "the-value"
    pid = int(pidfile.read_text())
    assert wait_until(lambda: not process_alive(pid))


def test_exec_provider_empty_output_and_missing_program(tmp_path: Path) -> None:
    prog = script(tmp_path / "empty.py", "print('   ')\n")
    r = resolver(
        {
            "empty": {"source": "exec", "command": [str(prog)]},
            "gone": {"source": "exec", "command": [str(tmp_path / "missing-prog")]},
            "bad": {"source": "exec", "command": []},
        }
    )
    for provider in ("empty", "gone", "bad"):
        with pytest.raises(SecretError) as info:
            r.resolve(SecretRef("exec", provider, "id"), key=KEY)
        assert_clean(info.value, label=f"exec:{provider}:id")


def test_exec_without_provider_is_an_error() -> None:
    with pytest.raises(SecretError) as info:
        resolver().resolve(SecretRef("exec", "nothing", "id"), key=KEY)
    assert "not configured" in str(info.value)


def test_resolver_caches_per_ref(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    prog = script(tmp_path / "count.py", f"open({str(counter)!r}, 'a').write('x')\nprint('v')\n")
    r = resolver({"cmd": {"source": "exec", "command": [str(prog)]}})
    ref = SecretRef("exec", "cmd", "id")
    for _ in range(3):
        assert r.resolve(ref, key=KEY).reveal() == "v"
    assert counter.read_text() == "x"
    uncached = SecretResolver(
        {"secrets": {"providers": {"cmd": {"source": "exec", "command": [str(prog)]}}}},
        env={},
        cache=False,
    )
    uncached.resolve(ref, key=KEY)
    assert counter.read_text() == "xx"
