"""What a new user hits in the first hour, piped as in CI logs: full text, no traceback, exit 2."""

from pathlib import Path

import pytest

from lhbench.store import Store
from lhbench.testing import ModelStub, StubReply
from tests.cli.helpers import cli
from tests.factories import make_run


def test_bracketed_text_survives_in_messages() -> None:
    res = cli("judge", "--pack", "lhbench-samples", "--tier", "process", "--panel", "foo")
    assert res.exit_code == 2
    assert "an alias from [models] in lhbench.toml" in res.stderr


def test_a_regex_in_a_validation_message_is_printed_whole(tmp_path: Path) -> None:
    pack = tmp_path / "bad"
    pack.mkdir()
    (pack / "pack.yaml").write_text('id: "Bad Id!"\nversion: "1"\nenvironment: filesystem\n')
    res = cli("packs", "validate", str(pack))
    assert res.exit_code == 2
    assert "pack.yaml:1: id: String should match pattern '^[a-z0-9][a-z0-9_.\\-]*$'" in res.stderr


def test_a_cli_harness_that_is_not_installed_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LHBENCH_CLAUDE_BIN", raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    db = f"sqlite:///{tmp_path / 's.db'}"
    res = cli(
        "run", "lhbench-samples", "--harness", "claude-code", "--model",
        "anthropic:m@http://127.0.0.1:9", "--db", db,
    )  # fmt: skip
    assert res.exit_code == 2 and "Traceback" not in res.stderr
    assert "npm i --prefix DIR @anthropic-ai/claude-code@" in res.stderr
    assert "LHBENCH_CLAUDE_BIN=DIR/node_modules/.bin/claude" in res.stderr
    with Store.open(db) as store:
        assert store.list_runs() == []  # no run recorded as crashed
    wrong = cli(
        "run", "lhbench-samples", "--harness", "claude-code", "--model",
        "anthropic:m@http://127.0.0.1:9", "--db", db, env={"LHBENCH_CLAUDE_BIN": "/nope/claude"},
    )  # fmt: skip
    assert wrong.exit_code == 2 and "LHBENCH_CLAUDE_BIN=/nope/claude: no such file" in wrong.stderr


def test_an_unknown_harness_names_the_ones_there_are(tmp_path: Path) -> None:
    # in a directory of its own: the default store is ./.lhbench, never the checkout's
    res = cli(
        "run", "lhbench-samples", "--harness", "nope", "--model", "openai:m@http://x/v1",
        cwd=tmp_path,
    )  # fmt: skip
    assert res.exit_code == 2
    assert "--harness 'nope': expected one of native, claude-code, codex, gemini-cli" in res.stderr
    assert "not built yet" not in res.stderr


@pytest.mark.parametrize(
    "command", [("runs", "list"), ("report",), ("aj", "score"), ("users", "list")]
)
def test_a_reading_command_never_creates_a_store(tmp_path: Path, command: tuple[str, ...]) -> None:
    path = tmp_path / "nonexistent.db"
    res = cli(*command, "--db", f"sqlite:///{path}")
    assert res.exit_code == 2 and not path.exists()
    assert f"no store at {path}" in res.stderr and "lhbench db upgrade --db" in res.stderr


def test_users_read_the_password_from_a_pipe(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'u.db'}"
    added = cli("users", "add", "ada", "--db", db, input="correct horse\n")
    assert added.exit_code == 0, added.stderr
    listed = cli("users", "list", "--db", db, "--json")
    assert '"ada"' in listed.stdout
    changed = cli("users", "passwd", "ada", "--admin", "--db", db, input="battery staple\n")
    assert changed.exit_code == 0, changed.stderr
    from lhbench.web.auth import verify_user

    with Store.open(db) as store:
        user = verify_user(store, "ada", "battery staple")
        assert user is not None and user.is_admin
        assert verify_user(store, "ada", "correct horse") is None
    empty = cli("users", "add", "bob", "--db", db, input="")
    assert empty.exit_code == 2 and "no password on standard input" in empty.stderr
    assert cli("users", "rm", "ada", "--db", db).exit_code == 0
    assert '"ada"' not in cli("users", "list", "--db", db, "--json").stdout


def test_piped_tables_keep_every_value_whole(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    long_id = "aj-ds-mini--fixture-with-a-rather-long-name--r0123456789"
    with Store.open(db) as store:
        store.save_run(make_run(long_id, harness="gemini-cli", model="google-gla:gemini-2.5-pro"))
    res = cli("runs", "list", "--db", db)
    assert res.exit_code == 0
    assert long_id in res.stdout and "google-gla:gemini-2.5-pro" in res.stdout
    assert "…" not in res.stdout
    packs = cli("packs", "list")
    assert "lhbench-samples" in packs.stdout and "…" not in packs.stdout


def test_failure_extraction_with_a_model_answering_badly_is_one_line(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    with Store.open(db) as store:
        from tests.factories import make_trajectory

        store.save_run(make_run("r1"))
        store.save_trajectory(make_trajectory("r1"))
    with ModelStub(lambda req: StubReply(content="I refuse {not json")) as stub:
        res = cli("failures", "--llm", f"openai:bad@{stub.base_url}", "--db", db)
    assert res.exit_code == 2 and "Traceback" not in res.stderr
    assert "extraction failed" in res.stderr and len(res.stderr.strip().splitlines()) <= 2
