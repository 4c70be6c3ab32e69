"""gsearch.predecessor and gsearch.bucketize against numpy formulas (and torch.bucketize where
torch imports)."""

import numpy as np
import pytest

import gsearch
from conftest import ALGOS, ALL_DTYPES, random_values, sorted_keys

try:
    import torch
except Exception:
    torch = None


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("k", [0, 1, 2, 100, 3000])
def test_predecessor(rng, dtype, k):
    a = sorted_keys(rng, dtype, k, duplicates=k > 50)
    v = np.concatenate([random_values(rng, dtype, 300), a[:20]])
    got = gsearch.predecessor(a, v)
    # The largest i with a[i] <= v, else -1.
    want = np.searchsorted(a, v, side="right") - 1
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int64 and ((got >= -1) & (got < max(k, 1))).all()
    if k:
        hit = got >= 0
        assert not (np.asarray(a[got[hit]] > v[hit])).any()


def test_predecessor_scalars_and_options():
    a = np.array([10, 20, 30])
    assert gsearch.predecessor(a, 5) == -1 and isinstance(gsearch.predecessor(a, 5), np.int64)
    assert gsearch.predecessor(a, 10) == 0
    assert gsearch.predecessor(a, 10**30) == 2
    assert gsearch.predecessor(a, -(10**30)) == -1
    assert gsearch.predecessor(np.array([], dtype=np.int32), 3) == -1
    r = gsearch.predecessor(a, [5, 25], out_int32=True)
    assert r.dtype == np.int32 and r.tolist() == [-1, 1]
    for algo in ALGOS:
        assert gsearch.predecessor(a, [5, 25, 30], algo=algo).tolist() == [-1, 1, 2]
    with pytest.raises(TypeError):
        gsearch.predecessor(a, np.array([1.5]))  # int64 with float64: lossy


def bucketize_formula(x, b, right):
    # torch.bucketize: right=False -> b[i-1] < x <= b[i]; right=True -> b[i-1] <= x < b[i].
    return np.searchsorted(b, x, side="right" if right else "left")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("right", [False, True])
def test_bucketize(rng, dtype, right):
    b = sorted_keys(rng, dtype, 40)
    x = random_values(rng, dtype, 60).reshape(3, 4, 5)
    got = gsearch.bucketize(x, b, right=right)
    assert got.shape == x.shape and got.dtype == np.int64
    np.testing.assert_array_equal(got, bucketize_formula(x, b, right))
    # The definition, element by element (non-NaN values).
    bl = b.tolist()
    for xi, gi in zip(x.ravel().tolist(), got.ravel().tolist()):
        if xi != xi or any(t != t for t in bl):
            continue
        lo = bl[gi - 1] if gi > 0 else None
        hi = bl[gi] if gi < len(bl) else None
        if right:
            assert (lo is None or lo <= xi) and (hi is None or xi < hi)
        else:
            assert (lo is None or lo < xi) and (hi is None or xi <= hi)


def test_bucketize_scalar_and_options():
    b = np.array([1, 3, 5, 7, 9])
    assert gsearch.bucketize(3, b) == 1 and gsearch.bucketize(3, b, right=True) == 2
    assert isinstance(gsearch.bucketize(3, b), np.int64)
    r = gsearch.bucketize(np.array([[3, 6, 9], [3, 6, 9]]), b, out_int32=True)
    assert r.dtype == np.int32 and r.tolist() == [[1, 3, 4], [1, 3, 4]]
    with pytest.raises(TypeError):
        gsearch.bucketize(3, b, right="no")
    with pytest.raises(ValueError):
        gsearch.bucketize(3, np.zeros((2, 2)))


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("out_int32", [False, True])
def test_bucketize_against_torch(right, out_int32):
    b = torch.tensor([1.0, 3.0, 5.0, 7.0, 9.0])
    x = torch.tensor([[3.0, 6.0, 9.0], [0.0, 10.0, 5.0]])
    got = gsearch.bucketize(x, b, right=right, out_int32=out_int32)
    want = torch.bucketize(x, b, right=right, out_int32=out_int32)
    assert isinstance(got, torch.Tensor) and got.dtype == want.dtype
    assert torch.equal(got, want)
    assert torch.equal(gsearch.bucketize(torch.tensor(4.0), b), torch.bucketize(torch.tensor(4.0), b))
