"""gsearch.Client (the socket protocol, issue 22) against gsearch.Server.listen in this process:
every dtype against numpy.searchsorted over a Unix-domain socket and 127.0.0.1, many threads,
a connection the server closed while idle, errors with the server's message, the socket file
removed at close. Bounded: fixed request counts, timeouts on every client, every server closed."""

import errno
import os
import socket
import struct
import tempfile
import threading
import time

import numpy as np
import pytest

import gsearch

DTYPES = [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]


@pytest.fixture
def sock_dir():
    with tempfile.TemporaryDirectory(prefix="gsearch-client-") as d:
        yield d


def keys_of(rng, dtype, n, hi=1000):
    return np.sort(rng.integers(0, hi, n).astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_equals_searchsorted(sock_dir, dtype):
    rng = np.random.default_rng(3)
    keys = keys_of(rng, dtype, 2000)
    path = os.path.join(sock_dir, "s.sock")
    with gsearch.Server(keys) as s:
        assert s.listen(path) == path
        with gsearch.Client(path, timeout=20) as c:
            for side in ("left", "right"):
                q = rng.integers(0, 1100, (9, 13)).astype(dtype)
                got = c.search(q, side)
                assert got.dtype == np.int64 and got.shape == q.shape
                np.testing.assert_array_equal(got, np.searchsorted(keys, q, side))
            q = rng.integers(0, 1100, 300).astype(dtype)
            np.testing.assert_array_equal(c.search(q, "pred"), np.searchsorted(keys, q, "right") - 1)
            np.testing.assert_array_equal(c.search(np.empty(0, dtype)), np.empty(0, np.int64))
            big = rng.integers(0, 1100, 100_000).astype(dtype)  # more than one send
            np.testing.assert_array_equal(c.search(big, "right"), np.searchsorted(keys, big, "right"))
            assert c.dtype == np.dtype(dtype)  # learnt from the first answer
    assert not os.path.exists(path)  # close() stops listening and removes the socket file


def test_nan_big_endian_and_learnt_dtype(sock_dir):
    keys = np.array([-np.inf, -1.0, 0.0, 2.5, np.inf, np.nan], np.float64)
    path = os.path.join(sock_dir, "s.sock")
    with gsearch.Server(keys) as s:
        s.listen(path)
        c = gsearch.Client(path, timeout=20)
        q = np.array([np.nan, -0.0, 3.0, -np.inf])
        for side in ("left", "right"):
            np.testing.assert_array_equal(c.search(q, side), np.searchsorted(keys, q, side))
        qbe = q.astype(">f8")
        np.testing.assert_array_equal(c.search(qbe), np.searchsorted(keys, q))
        # float32 and int32 queries: refused once (status 2), then cast safely and sent again.
        q32 = np.array([0.5, 2.5, 7.0], np.float32)
        np.testing.assert_array_equal(c.search(q32, "right"), np.searchsorted(keys, q32, "right"))
        assert c.dtype == np.float64
        np.testing.assert_array_equal(c.search([1, 2, 3]), np.searchsorted(keys, [1, 2, 3]))
        assert c.search(2) == 3 and type(c.search(2)) is np.int64
        c.close()


def test_tcp_port_and_threads(sock_dir):
    rng = np.random.default_rng(5)
    keys = keys_of(rng, np.int64, 5000, 4000)
    with gsearch.Server(keys, max_delay=0.0002, preferred_batch_queries=64) as s:
        port = s.listen(port=0)
        assert isinstance(port, int) and port > 0
        wrong, errors = [], []

        def work(w):
            r = np.random.default_rng(100 + w)
            try:
                with gsearch.Client(port, timeout=20) as c:
                    for i in range(60):
                        q = r.integers(-10, 4100, int(r.integers(0, 40))).astype(np.int64)
                        side = ("left", "right")[i % 2]
                        if not np.array_equal(c.search(q, side), np.searchsorted(keys, q, side)):
                            wrong.append((w, i))
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append(repr(e))

        threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors and not wrong
        assert s.stats()["requests"] >= 8 * 60
        # One client shared by threads: its requests take turns.
        with gsearch.Client(port, timeout=20) as shared:
            q = np.arange(0, 4000, 7, dtype=np.int64)
            want = np.searchsorted(keys, q)
            results = []
            ts = [threading.Thread(target=lambda: results.append(shared.search(q))) for _ in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join(60)
            assert len(results) == 4 and all(np.array_equal(r, want) for r in results)


def test_errors_name_the_server_message(sock_dir):
    keys = np.arange(100, dtype=np.int32)
    path = os.path.join(sock_dir, "s.sock")
    with pytest.raises(ConnectionError, match="cannot connect to the gsearch server at .*none.sock"):
        gsearch.Client(os.path.join(sock_dir, "none.sock"), timeout=5).search([1])
    with gsearch.Server(keys) as s:
        s.listen(path, max_queries=50)
        with pytest.raises(ValueError, match="listening already"):
            s.listen(os.path.join(sock_dir, "t.sock"))
        with gsearch.Server(keys) as other, pytest.raises(ValueError, match="a server already (answers|serves)"):
            other.listen(path)
        with gsearch.Client(path, timeout=20, dtype=np.float64) as wrong:  # told a wrong dtype: refused
            with pytest.raises(TypeError, match=r"answered wrong dtype: queries of dtype float64 for keys of dtype "
                                                r"int32"):
                wrong.search(np.array([1.5]))
        c = gsearch.Client(path, timeout=20)
        # float64 and int64 queries of int32 keys: compared exactly, as searchsorted compares them
        # (the first refused by the server, which names its dtype: then made ready and sent again).
        np.testing.assert_array_equal(c.search(np.array([1.5, -1e10, 1e10])), [2, 0, 100])
        assert c.dtype == np.int32
        np.testing.assert_array_equal(c.search(np.array([1, 2**40], np.int64)), [1, 100])
        with pytest.raises(ValueError, match="answered too large: 51 queries in one request; this server takes at "
                                             "most 50"):
            c.search(np.zeros(51, np.int32))
        with pytest.raises(ValueError, match="too large"):
            c.search(np.zeros(500_000, np.int32))  # refused while it is still being sent
        with pytest.raises(ValueError, match="side must be"):
            c.search([1], "middle")
        with pytest.raises(TypeError, match="unsupported dtype"):
            gsearch.Client(path, dtype=np.int16)
        np.testing.assert_array_equal(c.search(np.array([3, 99, 200], np.int32), "right"), [4, 100, 100])
        with gsearch.Client(path, timeout=20, dtype=np.int32) as typed:
            np.testing.assert_array_equal(typed.search(np.array([5], np.int16)), [5])  # a safe cast
        # A raw request of an unknown version: answered, and only that connection closed.
        with socket.socket(socket.AF_UNIX) as raw:
            raw.settimeout(10)
            raw.connect(path)
            raw.sendall(struct.pack("<4sHHBBHQ", b"GSRQ", 9, 1, 0, 0, 0, 0))
            magic, status, length = struct.unpack("<4sII", raw.recv(12))
            assert (magic, status) == (b"GSRS", 1)
            assert b"version 9" in raw.recv(length)
        np.testing.assert_array_equal(c.search(np.array([7], np.int32)), [7])
        s.stop_listening()
        assert not os.path.exists(path)
        with pytest.raises(ConnectionError):
            c.search(np.array([7], np.int32))
        np.testing.assert_array_equal(s.search(np.array([7], np.int32)), [7])  # still serving this process
    # Shut down while a client is connected: a closed connection, then nobody there.
    with gsearch.Server(keys) as s:
        s.listen(path)
        c = gsearch.Client(path, timeout=20)
        c.search(np.array([1], np.int32))
    with pytest.raises(ConnectionError):
        c.search(np.array([1], np.int32))


def test_idle_connections_are_reopened(sock_dir):
    keys = np.arange(0, 100, 2, dtype=np.uint64)
    path = os.path.join(sock_dir, "s.sock")
    with gsearch.Server(keys) as s:
        s.listen(path, idle_timeout=0.2)
        with gsearch.Client(path, timeout=20) as c:
            q = np.array([1, 2, 3], np.uint64)
            np.testing.assert_array_equal(c.search(q), np.searchsorted(keys, q))
            time.sleep(0.6)  # the server closes the idle connection; the client sends again once
            np.testing.assert_array_equal(c.search(q, "right"), np.searchsorted(keys, q, "right"))
        assert "Client(" in repr(c)


# --- what search takes (issue 39, item 7) ---------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("told", [False, True])
def test_search_takes_what_searchsorted_takes(sock_dir, dtype, told):
    """Python ints, floats, lists, [] and scalars, numpy arrays of other dtypes: the answer of
    numpy.searchsorted on the server's keys, whether the client was told the keys' dtype or
    learns it; refused (TypeError) where gsearch.searchsorted refuses."""
    d = np.dtype(dtype)
    if d.kind == "f":
        keys = np.sort(np.array([-np.inf, -2.5, 0.0, np.float32(0.1), 0.1, 2.5, 7.0, 1e30, np.inf, np.nan], d))
        values = [0.1, 2.5, -3, 7, 2**70, float("nan"), 1e300, -1e300, True]
        lists = [[0.1, 2.5, 8.0], [[0.5], [7.0]]]
    else:
        i = np.iinfo(d)
        keys = np.sort(np.array([i.min, 0, 0, 7, 8, 1000, i.max], d))
        values = [7, 0, 2**31, 2**40, 2**70, -2**70, i.max, i.min] + ([] if d.itemsize == 8 else [7.5, -1e300])
        # (Python int lists are int64 arrays, which gsearch.searchsorted refuses for uint64 keys)
        lists = ([] if d == np.uint64 else [[7, 8, 2**40], [[0, -1], [1000, 5]]]) + \
                ([] if d.itemsize == 8 else [[0.5, 7.0, 7.5]])
    path = os.path.join(sock_dir, "s.sock")
    with gsearch.Server(keys) as s:
        s.listen(path)
        with gsearch.Client(path, timeout=20, dtype=dtype if told else None) as c:
            for side in ("left", "right", "pred"):
                nside, adj = ("right", -1) if side == "pred" else (side, 0)
                for v in values:
                    got = c.search(v, side)
                    assert type(got) is np.int64, (v, side)
                    if not (d == np.int64 and v == 2**70):  # (numpy's own conversion rounds it)
                        assert got == np.searchsorted(keys, v, nside) + adj, (v, side)
                    assert got == gsearch.searchsorted(keys, v, nside) + adj, (v, side)
                for q in lists:
                    got = c.search(q, side)
                    assert got.shape == np.shape(q)
                    np.testing.assert_array_equal(got, np.searchsorted(keys, q, nside) + adj, err_msg=f"{q} {side}")
                empty = c.search([], side)
                assert empty.shape == (0,) and empty.dtype == np.int64
                q = np.array([0, 7, 100], np.uint16)
                np.testing.assert_array_equal(c.search(q, side), np.searchsorted(keys, q, nside) + adj)
                wide = np.array([-1e300, 0.0, 0.1, 7.0, 7.5, 1e300, np.nan])
                if d.kind in "iu" and d.itemsize == 8:
                    with pytest.raises(TypeError, match="gsearch.Client.search: .*float64 queries"):
                        c.search(wide, side)
                else:
                    np.testing.assert_array_equal(c.search(wide, side), np.searchsorted(keys, wide, nside) + adj)
            assert c.dtype == d
            if d.kind in "iu" and d.itemsize == 8:
                with pytest.raises(TypeError, match="gsearch.Client.search: .*Python float"):
                    c.search(0.5)
            if d == np.uint64:
                with pytest.raises(TypeError, match="gsearch.Client.search: uint64 keys and int64 queries"):
                    c.search([1, 2])


# --- timeouts: one deadline for the whole request (issue 39, item 4) ------------------------------


def test_default_timeout_and_its_checks(sock_dir):
    path = os.path.join(sock_dir, "s.sock")
    assert gsearch.Client(path).timeout == 60.0  # `gsearch client --timeout`'s default
    assert gsearch.Client(path, timeout=None).timeout is None
    assert gsearch.Client(path, timeout=2).timeout == 2.0
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="timeout must be a positive number of seconds"):
            gsearch.Client(path, timeout=bad)
    with pytest.raises(TypeError, match="timeout must be a number"):
        gsearch.Client(path, timeout="5")


class FakeServer:
    """A Unix-domain socket that speaks as a gsearch server would, as each test scripts it:
    `answer(conn, header, body)` is called for each request read whole. Counts the requests and
    connections; stops at close (bounded: every accept and read has a timeout)."""

    def __init__(self, path, answer):
        self.path, self.answer = path, answer
        self.requests = self.connections = 0
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(path)
        self.listener.listen(8)
        self.listener.settimeout(0.1)
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stopping:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        conn.settimeout(10)
        with conn:
            try:
                while not self.stopping:
                    header = self._read(conn, 20)
                    if header is None:
                        return
                    count = struct.unpack("<4sHHBBHQ", header)[6]
                    itemsize = (4, 4, 8, 8, 4, 8)[header[8]]
                    body = self._read(conn, count * itemsize)
                    self.requests += 1
                    self.answer(conn, header, body)
            except OSError:
                return

    @staticmethod
    def _read(conn, n):
        data = b""
        while len(data) < n:
            chunk = conn.recv(n - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def close(self):
        self.stopping = True
        self.thread.join(10)
        self.listener.close()


@pytest.fixture
def fake(sock_dir):
    servers = []

    def make(answer):
        servers.append(FakeServer(os.path.join(sock_dir, "fake.sock"), answer))
        return servers[-1]

    yield make
    for f in servers:
        f.close()


def _ok_head(count):
    return struct.pack("<4sIQ", b"GSRS", 0, count)


def test_timeout_is_one_deadline(fake):
    """A server that trickles its answer (a byte every 50 ms, each within a per-call timeout):
    the client gives up at its one deadline, not after the whole answer; and does not send the
    request again."""

    def trickle(conn, header, body):
        count = struct.unpack("<Q", header[12:20])[0]
        for byte in _ok_head(count) + bytes(8 * count):
            conn.sendall(bytes([byte]))
            time.sleep(0.05)

    f = fake(trickle)
    with gsearch.Client(f.path, timeout=1.0, dtype=np.int32) as c:
        start = time.monotonic()
        with pytest.raises(TimeoutError, match=r"did not answer within the timeout \(1 s for the whole request"):
            c.search(np.arange(10, dtype=np.int32))  # 96 bytes: about 5 s
        took = time.monotonic() - start
    assert 0.9 <= took < 2.5, took
    assert f.requests == 1  # not sent again after the timeout


def test_timeout_not_resent_when_unanswered(fake):
    """A server that takes the request and never answers: TimeoutError at the deadline, the
    request sent once (a resend after a timeout would double the load of an overloaded server)."""
    f = fake(lambda conn, header, body: time.sleep(3))
    with gsearch.Client(f.path, timeout=0.5, dtype=np.float64) as c:
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            c.search([1.0, 2.0])
        assert time.monotonic() - start < 2.0
    time.sleep(0.2)
    assert f.requests == 1 and f.connections == 1


def test_connect_within_the_deadline(sock_dir):
    """A listener that never accepts, its backlog full: connecting counts against the deadline
    (TimeoutError once it passes), and does not fail at once nor wait for ever."""
    path = os.path.join(sock_dir, "full.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(0)
    held = []
    try:
        for _ in range(1000):  # fill the backlog
            s = socket.socket(socket.AF_UNIX)
            s.setblocking(False)
            try:
                s.connect(path)
            except BlockingIOError:
                s.close()
                break
            held.append(s)
        else:
            raise AssertionError("the backlog never filled")
        c = gsearch.Client(path, timeout=0.5)
        start = time.monotonic()
        with pytest.raises(TimeoutError, match="did not take the connection"):
            c.search([1])
        took = time.monotonic() - start
        assert 0.45 <= took < 2.0, took
    finally:
        for s in held:
            s.close()
        listener.close()


def test_resent_only_on_a_connection_closed_before_the_answer(fake):
    """The server closes the connection after reading the request (before any byte of the
    answer): sent once more on a new connection (the idle-connection case), then ConnectionError
    (a new connection closed too). Closed mid-answer: ConnectionError, not sent again."""
    f = fake(lambda conn, header, body: conn.shutdown(socket.SHUT_RDWR))
    with gsearch.Client(f.path, timeout=10, dtype=np.int32) as c:
        with pytest.raises(ConnectionError, match="closed the connection without answering"):
            c.search([1])
    assert f.requests == 1  # a fresh connection: not sent again
    f.close()
    os.unlink(f.path)
    answered = []

    def once_then_close(conn, header, body):
        if not answered:
            answered.append(1)
            conn.sendall(_ok_head(1) + struct.pack("<q", 5))
        else:
            conn.shutdown(socket.SHUT_RDWR)

    f = fake(once_then_close)
    with gsearch.Client(f.path, timeout=10, dtype=np.int32) as c:
        assert c.search(1) == 5
        with pytest.raises(ConnectionError, match="closed the connection without answering"):
            c.search(1)  # the kept connection closed before the answer: sent again, once
    assert f.requests == 3 and f.connections == 2
    f.close()
    os.unlink(f.path)
    f = fake(lambda conn, header, body: (conn.sendall(_ok_head(4) + b"\0" * 12), conn.shutdown(socket.SHUT_RDWR)))
    with gsearch.Client(f.path, timeout=10, dtype=np.int32) as c:
        with pytest.raises(ConnectionError, match="mid-answer"):
            c.search([1, 2, 3, 4])
    assert f.requests == 1


# --- statuses: busy (6) and failed (5) (issue 39, item 3 of the brief) -----------------------------


def _error(status, message):
    m = message.encode()
    return lambda conn, header, body: conn.sendall(struct.pack("<4sII", b"GSRS", status, len(m)) + m)


def test_busy_and_failed_statuses(fake):
    f = fake(_error(6, "the server has 4 connections open (its limit): try again later"))
    with gsearch.Client(f.path, timeout=10, dtype=np.int32) as c:
        with pytest.raises(gsearch.Client.Busy, match=r"answered busy: the server has 4 connections open .*try again "
                                                      r"later") as e:
            c.search([1])
        assert isinstance(e.value, RuntimeError)
    f.close()
    os.unlink(f.path)
    f = fake(_error(6, "no memory for this request"))
    with gsearch.Client(f.path, timeout=10, dtype=np.int32) as c:
        with pytest.raises(gsearch.Client.Busy, match=r"busy: no memory for this request \(the server is healthy: "
                                                      r"try again later\)"):
            c.search([1])
    f.close()
    os.unlink(f.path)
    f = fake(_error(5, "a CUDA error"))
    with gsearch.Client(f.path, timeout=10, dtype=np.int32) as c:
        with pytest.raises(RuntimeError, match="answered failed: a CUDA error") as e:
            c.search([1])
        assert not isinstance(e.value, gsearch.Client.Busy)
    assert gsearch.Client.Busy.__module__ == "gsearch" and gsearch.Client.Busy.__qualname__ == "Client.Busy"


def test_busy_at_the_connection_limit(sock_dir):
    """A real server at max_connections answers a new connection busy at once (Client.Busy), and
    serves again once a connection closes."""
    keys = np.arange(100, dtype=np.int64)
    with gsearch.Server(keys) as s:
        port = s.listen(port=0, max_connections=2)
        idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(2)]
        try:
            time.sleep(0.1)
            with gsearch.Client(port, timeout=10) as c:
                start = time.monotonic()
                with pytest.raises(gsearch.Client.Busy, match="busy"):
                    c.search([5])
                assert time.monotonic() - start < 5
                assert s.stats()["socket"]["busy"] >= 1
                idle.pop().close()
                end = time.monotonic() + 10
                while True:  # the server sees the close
                    try:
                        assert c.search([5, 50]).tolist() == [5, 50]
                        break
                    except gsearch.Client.Busy:
                        assert time.monotonic() < end
                        time.sleep(0.05)
        finally:
            for sock in idle:
                sock.close()


def test_permission_denied_names_the_permission(sock_dir, monkeypatch):
    path = os.path.join(sock_dir, "s.sock")

    def denied(self, address):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(socket.socket, "connect", denied)
    with pytest.raises(ConnectionError, match=r"Permission denied \(this user may not connect to that socket: .*"
                                              r"mode 0600.*socket_mode=0o660, group="):
        gsearch.Client(path, timeout=5).search([1])


def test_client_path_expands_home(sock_dir, monkeypatch):
    monkeypatch.setenv("HOME", sock_dir)
    keys = np.arange(10, dtype=np.int32)
    with gsearch.Server(keys) as s:
        s.listen(os.path.join(sock_dir, "h.sock"))
        with gsearch.Client("~/h.sock", timeout=20) as c:
            assert c.address == os.path.join(sock_dir, "h.sock")
            assert c.search(4, "right") == 5
