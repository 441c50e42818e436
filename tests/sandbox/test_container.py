"""The container backend's command line (no daemon runs here: the argv is what is checked)."""

from pathlib import Path

from lhbench.sandbox import ContainerSandbox, Endpoint, Limits, policy_for


def test_container_command_confines_like_bubblewrap(tmp_path: Path) -> None:
    ws, ro = tmp_path / "ws", tmp_path / "checks"
    ws.mkdir()
    ro.mkdir()
    policy = policy_for(
        ws,
        writable=[ws],
        readable=[ro],
        endpoints=[Endpoint("api.example.com", 443, 18443)],
        limits=Limits(processes=64, memory_mb=512, cpu_s=30, file_mb=8),
        env={"EXTRA": "1"},
    )
    prepared = ContainerSandbox(image="python:3.11-slim", runtime="docker").prepare(
        ["python", "-c", "print(1)"], policy
    )
    try:
        argv = prepared.argv
        joined = " ".join(argv)
        assert argv[:2] == ["docker", "run"]
        for flag in ("--rm", "--init", "--read-only", "no-new-privileges"):
            assert flag in argv
        assert argv[argv.index("--network") + 1] == "none"
        assert argv[argv.index("--cap-drop") + 1] == "ALL"
        assert argv[argv.index("--user") + 1] == "1000:1000"
        assert argv[argv.index("--pids-limit") + 1] == "64"
        assert argv[argv.index("--memory") + 1] == "512m"
        assert f"{ws}:{ws}:rw" in argv and f"{ro}:{ro}:ro" in argv
        assert "--add-host" in argv and "api.example.com:127.0.0.1" in argv
        assert "lhbench.sandbox.relay" in joined and "127.0.0.1:18443=" in joined
        assert "-e" in argv and "EXTRA=1" in argv
        assert not any("OPENAI_API_KEY" in a for a in argv)
        name = argv[argv.index("--name") + 1]
        assert name.startswith("lhbench-")
        assert prepared.env == {"PATH": "/usr/bin:/bin"}  # the client gets nothing of ours
    finally:
        prepared.close()
