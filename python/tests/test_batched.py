"""Row-batched search (N-D keys, torch.searchsorted's semantics) against a per-row numpy loop
and, where torch imports, torch.searchsorted on CPU tensors."""

import numpy as np
import pytest

import gsearch
from conftest import ALGOS, ALL_DTYPES, random_values
from references import ref_sort

try:
    import torch
except Exception:  # torch is optional
    torch = None


def per_row(a, v, side, sorter=None):
    """The reference: numpy.searchsorted on each row."""
    lead = a.shape[:-1]
    out = np.empty(v.shape, dtype=np.int64)
    for idx in np.ndindex(*lead):
        s = None if sorter is None else sorter[idx]
        out[idx] = np.searchsorted(a[idx], v[idx], side=side, sorter=s)
    return out


def sorted_rows(rng, dtype, shape):
    return ref_sort(random_values(rng, dtype, int(np.prod(shape))).reshape(shape), axis=-1)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("lead,k,m", [((3,), 10, 7), ((2, 3), 33, 5), ((5,), 1, 3), ((4,), 0, 2),
                                      ((0,), 5, 3), ((3,), 4, 0), ((1,), 2000, 100), ((64,), 17, 40)])
def test_rows_against_numpy_loop(rng, dtype, side, lead, k, m):
    a = sorted_rows(rng, dtype, lead + (k,))
    v = random_values(rng, dtype, int(np.prod(lead + (m,)))).reshape(lead + (m,))
    got = gsearch.searchsorted(a, v, side=side)
    assert got.dtype == np.int64 and got.shape == v.shape
    np.testing.assert_array_equal(got, per_row(a, v, side))
    pred = gsearch.predecessor(a, v)
    np.testing.assert_array_equal(pred, per_row(a, v, "right") - 1)


@pytest.mark.parametrize("algo", ALGOS)
def test_rows_every_algorithm(rng, algo):
    a = sorted_rows(rng, "float32", (6, 300))
    v = random_values(rng, "float32", 6 * 50).reshape(6, 50)
    for side in ("left", "right"):
        np.testing.assert_array_equal(gsearch.searchsorted(a, v, side=side, algo=algo), per_row(a, v, side))


def test_rows_mixed_dtypes(rng):
    a = sorted_rows(rng, "int32", (3, 20))
    v = random_values(rng, "int64", 3 * 9).reshape(3, 9)
    np.testing.assert_array_equal(gsearch.searchsorted(a, v), per_row(a.astype(np.int64), v, "left"))
    with pytest.raises(TypeError):
        gsearch.searchsorted(a.astype(np.int64), v.astype(np.float64))


def test_rows_sorter_and_out(rng):
    raw = random_values(rng, "float64", 4 * 30).reshape(4, 30)
    sorter = np.argsort(raw, axis=-1, kind="stable")
    v = random_values(rng, "float64", 4 * 11).reshape(4, 11)
    want = per_row(raw, v, "right", sorter=sorter)
    np.testing.assert_array_equal(gsearch.searchsorted(raw, v, side="right", sorter=sorter), want)
    out = np.empty((4, 11), dtype=np.int32)
    assert gsearch.searchsorted(raw, v, right=True, sorter=sorter, out=out, out_int32=True) is out
    np.testing.assert_array_equal(out, want)
    with pytest.raises(ValueError):
        gsearch.searchsorted(raw, v, sorter=sorter[:, :5])
    with pytest.raises(ValueError, match="out of range"):
        gsearch.searchsorted(raw, v, sorter=sorter + 1)


def test_rows_non_contiguous(rng):
    a = sorted_rows(rng, "int64", (5, 40))[:, ::2]
    v = random_values(rng, "int64", 5 * 30).reshape(30, 5).T
    np.testing.assert_array_equal(gsearch.searchsorted(a, v), per_row(a, v, "left"))


def test_rows_check_sorted():
    a = np.array([[1, 2, 3], [3, 2, 1]])
    with pytest.raises(ValueError, match="sorted"):
        gsearch.searchsorted(a, np.zeros((2, 1), dtype=a.dtype), check_sorted=True)
    ok = np.array([[1, 2, 3], [1, 1, 1]])
    gsearch.searchsorted(ok, np.zeros((2, 1), dtype=ok.dtype), check_sorted=True)


def test_rows_shape_errors():
    a = np.zeros((3, 4))
    for v in (np.zeros((2, 5)), np.zeros(5), np.zeros((3, 2, 1)), 1.0, np.float64(1.0)):
        with pytest.raises(ValueError):
            gsearch.searchsorted(a, v)
    with pytest.raises(ValueError):
        gsearch.bucketize(np.zeros(3), a)  # boundaries must be 1-D


@pytest.mark.skipif(torch is None, reason="torch is not installed")
class TestTorchCPU:
    """CPU torch tensors are accepted (through DLPack, no copy) and give CPU torch tensors."""

    @pytest.mark.parametrize("dtype", ["int32", "int64", "float32", "float64", "uint8", "int16", "bfloat16", "float16"])
    @pytest.mark.parametrize("right", [False, True])
    def test_against_torch(self, dtype, right):
        g = torch.Generator().manual_seed(7)
        tdt = getattr(torch, dtype)
        a = torch.sort((torch.randn(4, 50, generator=g) * 20).to(tdt), dim=-1).values
        v = (torch.randn(4, 13, generator=g) * 25).to(tdt)
        for aa, vv in ((a, v), (a[0], v), (a[0], v[0, 0])):
            got = gsearch.searchsorted(aa, vv, right=right)
            want = torch.searchsorted(aa, vv, right=right)
            assert isinstance(got, torch.Tensor) and got.device.type == "cpu"
            assert got.dtype == torch.int64 and got.shape == want.shape
            assert torch.equal(got, want)
        got32 = gsearch.searchsorted(a, v, right=right, out_int32=True)
        assert got32.dtype == torch.int32
        assert torch.equal(got32, torch.searchsorted(a, v, right=right, out_int32=True))
        b = a[0]
        assert torch.equal(gsearch.bucketize(v, b, right=right), torch.bucketize(v, b, right=right))

    def test_sorter_and_out(self):
        raw = torch.randn(3, 20, dtype=torch.float64)
        sorter = torch.argsort(raw, dim=-1)
        v = torch.randn(3, 6, dtype=torch.float64)
        out = torch.empty(3, 6, dtype=torch.int64)
        assert gsearch.searchsorted(raw, v, sorter=sorter, out=out) is out
        assert torch.equal(out, torch.searchsorted(raw, v, sorter=sorter))

    def test_requires_grad_and_side(self):
        a = torch.linspace(0, 1, 11, requires_grad=True)
        v = torch.tensor([0.5, 0.05])
        assert torch.equal(gsearch.searchsorted(a, v, side="right"), torch.searchsorted(a.detach(), v, side="right"))
        with pytest.raises(ValueError):
            gsearch.searchsorted(a, v, side="left", right=True)

    def test_no_copy(self):
        a = torch.arange(100, dtype=torch.int64)
        assert gsearch._core._data_pointer(a) == a.data_ptr()
