"""gsearch.Server.listen: the socket front end as a service seen from Python (issue 39): the
listen options checked and equal to gsearch::socket_options' defaults, listen's return and
refusal after close, ~ in paths, the socket private by default, concurrent stop / close /
listen, the front end's stats. The server itself: test_server.py; the client: test_client.py."""

import errno
import grp
import os
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import pytest

import gsearch



@pytest.mark.parametrize("options, match", [
    ({"max_queries": 2**32 + 1}, "max_queries must be 1 to 4294967296"),
    ({"max_queries": 0}, "max_queries must be 1 to"),
    ({"request_timeout": -1}, "request_timeout must be a number of seconds from 0"),
    ({"idle_timeout": float("nan")}, "idle_timeout must be a number of seconds from 0"),
    ({"idle_timeout": 1e30}, "idle_timeout must be"),
    ({"socket_mode": 0o1000}, "socket_mode must be 0 to 511"),
    ({"socket_mode": -1}, "socket_mode must be 0 to"),
    ({"workers": -1}, "workers must be 0 to"),
    ({"max_bytes_in_flight": 0}, "max_bytes_in_flight must be 1 to"),
    ({"max_connections": 0}, "max_connections must be 1 to"),
    ({"max_connections": 8, "max_connections_per_peer": 9}, "max_connections_per_peer must be 0 to 8"),
    ({"port": 65536}, "port must be 0 to 65535"),
    ({"group": "root"}, "group='root' with socket_mode=0o600"),
])
def test_listen_options_checked(tmp_path, options, match):
    with gsearch.Server(np.arange(10)) as s:
        with pytest.raises(ValueError, match=f"^gsearch.Server.listen: {match}"):
            s.listen(str(tmp_path / "s.sock"), **options)
        assert not (tmp_path / "s.sock").exists() and s.stats()["socket"] is None  # nothing listened


def test_listen_arguments_checked(tmp_path):
    with gsearch.Server(np.arange(10)) as s:
        with pytest.raises(ValueError, match="group='root' applies to the Unix-domain socket"):
            s.listen(port=0, group="root", socket_mode=0o660)
        with pytest.raises(ValueError, match="the socket path is empty"):
            s.listen("")
        with pytest.raises(ValueError, match="give a socket path, a port"):
            s.listen()
        with pytest.raises(TypeError, match="max_queries must be an integer"):
            s.listen(str(tmp_path / "s.sock"), max_queries=1.5)
        with pytest.raises(TypeError, match="request_timeout must be a number of seconds"):
            s.listen(str(tmp_path / "s.sock"), request_timeout="30")
        with pytest.raises(TypeError, match="group must be a group's name"):
            s.listen(str(tmp_path / "s.sock"), group=0, socket_mode=0o660)
        with pytest.raises(TypeError, match="path must be a socket path"):
            s.listen(7)
        assert s.stats()["socket"] is None


def test_listen_defaults_are_the_libraries():
    """Server.listen's defaults are gsearch::socket_options' (read from the extension)."""
    import inspect

    cpp = gsearch._core.SOCKET_DEFAULTS
    p = inspect.signature(gsearch.Server.listen).parameters
    assert p["socket_mode"].default == cpp["socket_mode"] == 0o600
    assert (p["group"].default or "") == cpp["group"]
    for name in ("max_queries", "max_bytes_in_flight", "max_connections", "max_connections_per_peer", "workers"):
        assert p[name].default == cpp[name], name
    assert p["request_timeout"].default * 1000 == cpp["request_timeout_ms"]
    assert p["idle_timeout"].default * 1000 == cpp["idle_timeout_ms"] == 60000
    assert cpp["max_queries"] == 1 << 22 and cpp["max_queries_limit"] == 1 << 32


# --- listen: its return, after close, paths, the socket's mode (issue 39, items 3 and 7) ----------


def test_listen_returns_the_port_and_refuses_after_close(tmp_path):
    keys = np.arange(0, 100, 3, dtype=np.int32)
    path = str(tmp_path / "s.sock")
    s = gsearch.Server(keys)
    try:
        got = s.listen(path, port=0)
        assert isinstance(got, tuple) and got[0] == path and isinstance(got[1], int) and got[1] > 0
        for address in got:  # both addresses serve
            with gsearch.Client(address, timeout=20) as c:
                np.testing.assert_array_equal(c.search([4, 99], "right"), np.searchsorted(keys, [4, 99], "right"))
        s.stop_listening()
        port = s.listen(port=0)
        assert isinstance(port, int) and port > 0
        s.stop_listening()
        assert s.listen(path) == path
    finally:
        s.close()
    assert not os.path.exists(path)
    with pytest.raises(ValueError, match=r"gsearch.Server.listen: the server is closed"):
        s.listen(path)
    with pytest.raises(ValueError, match=r"closed"):
        s.listen(port=0)
    assert not os.path.exists(path)
    s.stop_listening()  # still idempotent
    s.close()


def test_listen_expands_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    keys = np.arange(10, dtype=np.float32)
    with gsearch.Server(keys) as s:
        got = s.listen("~/k.sock")
        assert got == str(tmp_path / "k.sock") and (tmp_path / "k.sock").is_socket()
        with gsearch.Client("~/k.sock", timeout=20) as c:
            assert c.address == str(tmp_path / "k.sock")
            assert c.search(2.5) == 3  # a Python float of float32 keys
    assert not (tmp_path / "k.sock").exists()


_CONNECT_AS_NOBODY = """
import os, socket, sys
os.setgid(65534); os.setuid(65534)
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
    print("connected")
except OSError as e:
    print("errno", e.errno)
"""


def _connect_as_another_user(path):
    """'connected', or 'errno N': a plain socket connect to path from the user nobody (root only)."""
    r = subprocess.run([sys.executable, "-I", "-c", _CONNECT_AS_NOBODY, path], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


@pytest.fixture
def open_dir():
    """A temporary directory under /tmp that every user may reach (its files' modes alone decide
    who can use them), and a umask of 0 (a socket whose mode came from the umask would be 0777)."""
    old = os.umask(0)
    try:
        with tempfile.TemporaryDirectory(prefix="gsearch-mode-") as d:
            os.chmod(d, 0o755)
            yield d
    finally:
        os.umask(old)


def test_socket_private_by_default(open_dir):
    """The Unix-domain socket is 0600 whatever the umask (another user cannot connect: checked
    as the user nobody where the tests run as root), 0660 and the group's with a group, and as
    wide as socket_mode says."""
    keys = np.arange(10, dtype=np.int64)
    path = os.path.join(open_dir, "s.sock")
    with gsearch.Server(keys) as s:
        s.listen(path)
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        if os.geteuid() == 0:
            assert _connect_as_another_user(path) == f"errno {errno.EACCES}"
        s.stop_listening()
        group = grp.getgrgid(os.getgid()).gr_name
        s.listen(path, socket_mode=0o660, group=group)
        st = os.stat(path)
        assert stat.S_IMODE(st.st_mode) == 0o660 and st.st_gid == os.getgid()
        s.stop_listening()
        s.listen(path, socket_mode=0o666)
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o666
        if os.geteuid() == 0:
            assert _connect_as_another_user(path) == "connected"
        with gsearch.Client(path, timeout=20) as c:
            assert c.search(3) == 3


# --- the socket front end under concurrent stop / close / listen (issue 39, item 6) ---------------


def _half_request(path, keys_dtype, n):
    """A raw connection that has sent a request's header and half of its body (a request begun,
    which a stop must wait for), and the rest of the body."""
    raw = socket.socket(socket.AF_UNIX)
    raw.settimeout(30)
    raw.connect(path)
    code = ("int32", "uint32", "int64", "uint64", "float32", "float64").index(np.dtype(keys_dtype).name)
    body = np.arange(n, dtype=keys_dtype).astype(np.dtype(keys_dtype).newbyteorder("<")).tobytes()
    raw.sendall(struct.pack("<4sHHBBHQ", b"GSRQ", 1, 1, code, 0, 0, n) + body[: len(body) // 2])
    return raw, body[len(body) // 2:]


def _until_held(s):
    """Waits (10 s at most) until the server's socket front end holds a request's bytes (the
    request begun is the server's: a stop waits for it)."""
    end = time.monotonic() + 10
    while s.stats()["socket"]["bytes_in_flight"] == 0:
        assert time.monotonic() < end, "the server never read the request begun"
        time.sleep(0.005)


def _answer(raw, n):
    """The int64 results of an ok response on raw (AssertionError otherwise)."""
    head = b""
    while len(head) < 16:
        chunk = raw.recv(16 - len(head))
        assert chunk, "closed without an answer"
        head += chunk
    magic, status, count = struct.unpack("<4sIQ", head)
    assert (magic, status, count) == (b"GSRS", 0, n)
    data = b""
    while len(data) < 8 * n:
        chunk = raw.recv(8 * n - len(data))
        assert chunk
        data += chunk
    return np.frombuffer(data, "<i8")


def test_concurrent_close(tmp_path):
    """Four threads close() the server at once while a request is half sent (the stop waits for
    it): each returns, the request is answered, the socket file is gone, the server closed. Five
    rounds."""
    keys = np.arange(0, 4000, 2, dtype=np.int64)
    for round_ in range(5):
        path = str(tmp_path / f"s{round_}.sock")
        s = gsearch.Server(keys)
        s.listen(path)
        raw, rest = _half_request(path, np.int64, 1000)
        _until_held(s)
        errors, done = [], []

        def close():
            try:
                s.close()
                done.append(1)
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(repr(e))

        threads = [threading.Thread(target=close) for _ in range(4)]
        for t in threads:
            t.start()
        time.sleep(0.2)  # the closes are waiting for the request begun
        raw.sendall(rest)
        np.testing.assert_array_equal(_answer(raw, 1000), np.searchsorted(keys, np.arange(1000)))
        raw.close()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads) and not errors and len(done) == 4
        assert not os.path.exists(path)
        with pytest.raises(ValueError, match="shut down"):
            s.search(keys[:3])
        with pytest.raises(ValueError, match="closed"):
            s.listen(path)


def test_listen_waits_for_a_concurrent_stop(tmp_path):
    """listen() while another thread's stop_listening() waits for a request begun: the listen
    waits for the stop (it is not refused as "listening already", nor run beside it), then
    serves; two concurrent stop_listening() calls both return."""
    keys = np.arange(0, 4000, 2, dtype=np.int32)
    first, second = str(tmp_path / "a.sock"), str(tmp_path / "b.sock")
    with gsearch.Server(keys) as s:
        s.listen(first)
        raw, rest = _half_request(first, np.int32, 500)
        _until_held(s)
        results = {}

        def stop(name):
            try:
                s.stop_listening()
                results[name] = "stopped"
            except Exception as e:  # noqa: BLE001
                results[name] = repr(e)

        def listen():
            try:
                results["listen"] = s.listen(second)
            except Exception as e:  # noqa: BLE001
                results["listen"] = repr(e)

        stoppers = [threading.Thread(target=stop, args=(f"stop{i}",)) for i in range(2)]
        for t in stoppers:
            t.start()
        time.sleep(0.2)  # the stops wait for the request begun
        listener = threading.Thread(target=listen)
        listener.start()
        time.sleep(0.2)
        raw.sendall(rest)
        np.testing.assert_array_equal(_answer(raw, 500), np.searchsorted(keys, np.arange(500)))
        raw.close()
        for t in stoppers + [listener]:
            t.join(60)
        assert results == {"stop0": "stopped", "stop1": "stopped", "listen": second}
        assert not os.path.exists(first) and os.path.exists(second)
        with gsearch.Client(second, timeout=20) as c:
            np.testing.assert_array_equal(c.search([3, 4]), np.searchsorted(keys, [3, 4]))
        s.stop_listening()
        assert not os.path.exists(second)


def test_socket_stats(tmp_path):
    keys = np.arange(100, dtype=np.uint32)
    path = str(tmp_path / "s.sock")
    with gsearch.Server(keys) as s:
        assert s.stats()["socket"] is None
        s.listen(path)
        with gsearch.Client(path, timeout=20) as c:
            for _ in range(5):
                c.search(np.arange(10, dtype=np.uint32))
            st = s.stats()
            assert st["requests"] >= 5
            sock = st["socket"]
            assert set(sock) == {"connections", "requests", "errors", "busy", "open", "bytes_in_flight",
                                 "peak_bytes_in_flight"}
            assert sock["connections"] == 1 and sock["requests"] == 5 and sock["errors"] == 0 and sock["busy"] == 0
            assert sock["open"] == 1 and sock["peak_bytes_in_flight"] >= 10 * 4
        s.stop_listening()
        assert s.stats()["socket"] is None
