"""gsearch.Client (the socket protocol, issue 22) against gsearch.Server.listen in this process:
every dtype against numpy.searchsorted over a Unix-domain socket and 127.0.0.1, many threads,
a connection the server closed while idle, errors with the server's message, the socket file
removed at close. Bounded: fixed request counts, timeouts on every client, every server closed."""

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
            assert c.dtype is None  # never refused: never told
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
        with gsearch.Server(keys) as other, pytest.raises(ValueError, match="a server already answers"):
            other.listen(path)
        c = gsearch.Client(path, timeout=20)
        with pytest.raises(TypeError, match=r"answered wrong dtype: queries of dtype float64 for keys of dtype int32"):
            c.search(np.array([1.5]))
        assert c.dtype == np.int32
        with pytest.raises(TypeError, match="int64 for the server's int32"):
            c.search(np.array([1], np.int64))  # not a safe cast
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
