"""inputs.py against `gsearch gen`: bit-identical keys and queries for every dtype, K, Q, query
kind and seed of the grid, and the checksum's definition.

    python3 -m pytest bench/common/test_inputs.py

The CLI is $GSEARCH_CLI, else build/cpu/tools/cli/gsearch (build it with
`cmake --build build/cpu --target gsearch_cli`); the comparisons skip without it.
Q = 2^27 timing: GSEARCH_LARGE=1.
"""
import os
import pathlib
import subprocess
import time

import numpy as np
import pytest

from . import inputs

HERE = pathlib.Path(__file__).resolve().parent

ROOT = HERE.parent.parent
CLI = pathlib.Path(os.environ.get("GSEARCH_CLI", ROOT / "build/cpu/tools/cli/gsearch"))
needs_cli = pytest.mark.skipif(not CLI.exists(), reason=f"no gsearch CLI at {CLI}")

DTYPES = list(inputs.DTYPES)
KS = [1, 31, 1000, 4096]
QS = [1, 1000, 100003]
KINDS = ["random", "worst"]
SEEDS = [1, 12345]


def gen_files(tmp_path, dtype, k, q, kind, seed):
    kp, qp = tmp_path / "k.npy", tmp_path / "q.npy"
    subprocess.run(
        [str(CLI), "gen", "--keys", str(k), "--queries", str(q), "--dtype", dtype,
         "--query-kind", kind, "--seed", str(seed), "--keys-out", str(kp), "--queries-out", str(qp)],
        check=True, capture_output=True)
    return np.load(kp), np.load(qp)


def assert_same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


@needs_cli
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k", KS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_matches_gsearch_gen(tmp_path, dtype, k, kind, seed):
    for q in QS:
        ck, cq = gen_files(tmp_path, dtype, k, q, kind, seed)
        pk, pq = inputs.generate(dtype, k, q, kind, seed)
        assert_same_bits(pk, ck)
        assert_same_bits(pq, cq)
        assert inputs.checksum(pk) == inputs.checksum(ck)
        assert inputs.checksum(pq) == inputs.checksum(cq)


@needs_cli
@pytest.mark.parametrize("dtype", ["int32", "float64"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("chunk", [96, 100])  # whole warps, and not
def test_chunk_boundaries(tmp_path, monkeypatch, dtype, kind, chunk):
    monkeypatch.setattr(inputs, "CHUNK", chunk)
    ck, cq = gen_files(tmp_path, dtype, 5000, 10007, kind, 7)
    pk, pq = inputs.generate(dtype, 5000, 10007, kind, 7)
    assert_same_bits(pk, ck)
    assert_same_bits(pq, cq)


@needs_cli
@pytest.mark.parametrize("dtype", ["uint64", "float32"])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k", [0, 32, 65536 + 17])
def test_edges_and_seed_wrap(tmp_path, dtype, kind, k):
    # k = 0 (random values / sorted values as queries), and the seed 2^64 - 1 whose queries use
    # seed 0; larger K: stride > 1 and indices above 2^16.
    for seed in [0, 2**64 - 1]:
        ck, cq = gen_files(tmp_path, dtype, k, 3000, kind, seed)
        pk, pq = inputs.generate(dtype, k, 3000, kind, seed)
        assert_same_bits(pk, ck)
        assert_same_bits(pq, cq)


@pytest.mark.parametrize("kind", KINDS)
def test_threads_do_not_change_results(monkeypatch, kind):
    monkeypatch.setattr(inputs, "CHUNK", 1000)
    monkeypatch.setattr(inputs, "THREADS", 1)
    one = inputs.generate("float32", 5000, 200_001, kind, 3)
    monkeypatch.setattr(inputs, "THREADS", 8)
    many = inputs.generate("float32", 5000, 200_001, kind, 3)
    assert all(a.tobytes() == b.tobytes() for a, b in zip(one, many))


def test_splitmix64_reference():
    # The reference sequence of splitmix64 seeded with 0 (Vigna's splitmix64.c).
    ref = [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F, 0xF88BB8A8724C81EC]
    assert [int(x) for x in inputs.splitmix64(0, 0, 4)] == ref
    assert [int(x) for x in inputs.splitmix64(0, 2, 2)] == ref[2:]


def test_mulhi64_exact():
    rng = np.random.default_rng(3)
    z = rng.integers(0, 2**64, size=2000, dtype=np.uint64, endpoint=False)
    z[:4] = [0, 1, 2**64 - 1, 2**63]
    for n in [1, 2, 31, 1000, 2**32 - 1, 2**32, 2**32 + 5, 2**63 + 12345, 2**64 - 1]:
        got = inputs.mulhi64(z, n)
        assert [int(g) for g in got] == [(int(x) * n) >> 64 for x in z]


def test_checksum_definition():
    # Little-endian uint64 words, the last partial word zero-padded, summed mod 2^64.
    a = np.array([1, 2, 3], dtype=np.int32)  # words 0x0000000200000001, 0x0000000000000003
    assert inputs.checksum(a) == 0x0000000200000001 + 3
    b = np.array([-1, -1], dtype=np.int64)
    assert inputs.checksum(b) == (2 * (2**64 - 1)) % 2**64
    assert inputs.checksum(np.array([], dtype=np.float32)) == 0
    f = np.array([1.0], dtype=np.float32)  # 0x3f800000, zero-padded
    assert inputs.checksum(f) == 0x3F800000
    big = np.arange(1, 10**6 + 2, dtype=np.uint32)[::-1].copy()
    raw = big.tobytes() + b"\0" * (-len(big.tobytes()) % 8)
    ref = sum(int.from_bytes(raw[i : i + 8], "little") for i in range(0, len(raw), 8)) % 2**64
    assert inputs.checksum(big) == ref
    # Byte order of the array object does not matter: the value's little-endian bytes count.
    assert inputs.checksum(big.astype(">u4")) == ref


def test_unknown_names():
    with pytest.raises(ValueError):
        inputs.generate("int16", 4, 4, "random", 1)
    with pytest.raises(ValueError):
        inputs.generate("int32", 4, 4, "sorted", 1)


@pytest.mark.skipif(os.environ.get("GSEARCH_LARGE") != "1", reason="set GSEARCH_LARGE=1")
@pytest.mark.parametrize("kind", KINDS)
def test_q_2_27_is_fast(kind):
    t = time.perf_counter()
    keys, queries = inputs.generate("int64", 4096, 1 << 27, kind, 1)
    inputs.checksum(queries)
    assert time.perf_counter() - t < 30
