"""gsearch.FunctionalArrays (issue 23) against a plain Python specification (a dict per version,
copied on update): random mixes of updates, removes, lookups, next, size and releases, a full
machine (MemoryError, nothing lost), batch forms and bad input, handles tied to their machine
(another machine's, another dtype's, a released one's: ValueError); on the CPU and, where there is a
GPU, on device="cuda" (the persistent kernel, and a kernel per operation)."""

import warnings
import numpy as np
import pytest

import gsearch
from gpu_support import needs_torch

DTYPES = [np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64]
# The GPU's tests need only gsearch's CUDA backend; needs_torch is the marker that asks for a GPU.
DEVICES = ["cpu", pytest.param("cuda", marks=needs_torch)]


@pytest.mark.parametrize("device", DEVICES)
def test_example(device):
    fa = gsearch.FunctionalArrays(cells=64, dtype=np.int64, device=device)
    assert fa.device == ("cpu" if device == "cpu" else f"cuda:{gsearch._core.cuda_current_device()}")
    assert (fa.stats()["persistent_blocks"] > 0) == (device != "cpu")
    assert fa.stats()["collection_seconds"] >= 0.0
    a0 = fa.empty()
    a1 = fa.update(a0, 7, 70)
    a2 = fa.update(a1, 10**15, 5)
    assert fa.lookup(a2, 7) == 70 and fa.lookup(a0, 7) is None
    a3 = fa.remove(a2, 7)
    assert (fa.size(a2), fa.size(a3)) == (2, 1)
    assert fa.next(a2, 7) == 10**15 and fa.next(a2, 10**15) is None
    idx, vals = fa.items(a2)
    np.testing.assert_array_equal(idx, [7, 10**15])
    np.testing.assert_array_equal(vals, [70, 5])
    fa.release(a0)
    assert not fa.live(a0)
    with pytest.raises(ValueError, match="released"):
        fa.lookup(a0, 7)
    assert fa.check() == ""


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_random_mix_equals_the_spec(dtype, device):
    rng = np.random.default_rng(3)
    fa = gsearch.FunctionalArrays(cells=48, dtype=dtype, device=device)
    pool = [(fa.empty(), {})]
    full = 0
    for step in range(3000):
        a, m = pool[-1] if rng.random() < 0.5 else pool[int(rng.integers(len(pool)))]
        op = rng.random()
        i = int(rng.integers(0, 12)) if rng.random() < 0.8 else int(rng.integers(-(2**63), 2**63 - 1))
        try:
            if op < 0.4:
                v = dtype(rng.integers(0, 100))
                pool.append((fa.update(a, i, v), {**m, i: v}))
            elif op < 0.5:
                pool.append((fa.remove(a, i), {k: x for k, x in m.items() if k != i}))
            elif op < 0.75:
                assert fa.lookup(a, i) == m.get(i)
            elif op < 0.85:
                above = [k for k in m if k > i]
                assert fa.next(a, i) == (min(above) if above else None)
            elif op < 0.92:
                assert fa.size(a) == len(m)
            elif len(pool) > 1:
                k = int(rng.integers(1, len(pool)))
                fa.release(pool[k][0])
                del pool[k]
        except MemoryError:
            full += 1
            for b, mb in pool:  # nothing lost
                idx, vals = fa.items(b)
                assert list(idx) == sorted(mb) and [mb[k] for k in idx] == list(vals)
            for b, _ in pool[1 : len(pool) // 2]:
                fa.release(b)
            pool = pool[:1] + pool[len(pool) // 2 :]
        if step % 100 == 0:
            assert fa.check() == ""
    assert full > 0  # the machine filled up at least once


@pytest.mark.parametrize("device", DEVICES)
def test_batches_and_bad_input(device):
    fa = gsearch.FunctionalArrays(cells=64, dtype=np.float32, device=device)
    a = fa.update(fa.empty(), np.array([3, 1, 3, 8]), np.array([1, 2, 3, 4], np.float32))
    assert fa.size(a) == 3 and fa.lookup(a, 3) == 3.0
    values, found = fa.lookup(a, np.array([8, 2, 3]))
    np.testing.assert_array_equal(found, [True, False, True])
    np.testing.assert_array_equal(values[found], [4.0, 3.0])
    with pytest.raises(TypeError):
        fa.update(a, 1, "x")
    with pytest.raises(TypeError):
        fa.update(a, 1.5, 1.0)  # an index is an int
    with pytest.raises(TypeError):
        fa.update(a, np.array([1]), np.array([1.0]))  # float64 values for float32: not safe
    with pytest.raises(ValueError):
        fa.update(a, np.array([1, 2]), np.array([1.0], np.float32))
    ints = gsearch.FunctionalArrays(cells=8, dtype=np.uint32)
    with pytest.raises((TypeError, OverflowError)):
        ints.update(ints.empty(), 1, -1)
    with pytest.raises(TypeError):
        ints.update(ints.empty(), 1, 2.5)
    with pytest.raises(OverflowError):
        ints.lookup(ints.empty(), 2**64)
    with pytest.raises(ValueError):
        gsearch.FunctionalArrays(cells=0)
    with pytest.raises(TypeError):
        gsearch.FunctionalArrays(cells=8, dtype=np.int16)
    with pytest.raises(ValueError, match="'cpu' or 'cuda'"):
        gsearch.FunctionalArrays(cells=8, device="tpu")

    if not gsearch.built_with_cuda():
        with pytest.raises(ValueError, match="without CUDA"):
            gsearch.FunctionalArrays(cells=8, device="cuda")
    tiny = gsearch.FunctionalArrays(cells=2, dtype=np.int64, device=device)
    b = tiny.update(tiny.empty(), 1, 1)
    with pytest.raises(MemoryError):
        tiny.update(b, 2, 2)
    assert tiny.lookup(b, 1) == 1 and tiny.check() == ""


@pytest.mark.parametrize("device", DEVICES)
def test_handles_are_tied_to_their_machine(device):
    """Another machine's handle (the same slot and generation), a float64 machine's on an int64
    machine, a released handle whose slot holds a newer array: ValueError, nothing changed."""
    a = gsearch.FunctionalArrays(cells=16, dtype=np.int64, device=device)
    b = gsearch.FunctionalArrays(cells=16, dtype=np.int64, device=device)
    f = gsearch.FunctionalArrays(cells=16, dtype=np.float64, device=device)
    x = a.update(a.empty(), 1, 10)
    y = b.update(b.empty(), 1, 20)
    z = f.update(f.empty(), 1, 2.5)
    assert (x.slot, x.generation) == (y.slot, y.generation) == (z.slot, z.generation)
    assert len({x.machine, y.machine, z.machine}) == 3
    assert not b.live(x) and not a.live(z)
    before = b.stats()
    for call in (lambda: b.lookup(x, 1), lambda: b.lookup(x, np.array([1])), lambda: b.update(x, 1, 30),
                 lambda: b.update(x, np.array([1, 2]), np.array([3, 4])), lambda: b.remove(x, 1),
                 lambda: b.size(x), lambda: b.next(x, 0), lambda: b.items(x), lambda: b.release(x),
                 lambda: a.lookup(z, 1), lambda: a.release(z), lambda: f.lookup(x, 1)):
        with pytest.raises(ValueError, match="another machine's"):
            call()
    assert b.stats()["live_arrays"] == before["live_arrays"] == 2  # no array made, none released
    assert b.stats()["free_cells"] == before["free_cells"]
    assert (a.lookup(x, 1), b.lookup(y, 1), f.lookup(z, 1)) == (10, 20, 2.5)
    # A released array's slot, reused: the old handle is refused; the new one reads its own value.
    old = a.update(x, 2, 5)
    a.release(old)
    new = a.update(x, 2, 6)
    assert new.slot == old.slot and new.generation != old.generation
    for call in (lambda: a.lookup(old, 2), lambda: a.update(old, 3, 1), lambda: a.release(old)):
        with pytest.raises(ValueError, match="released"):
            call()
    assert a.lookup(new, 2) == 6 and a.stats()["live_arrays"] == 3
    # Refused operations keep no version slot: a full machine, an index outside int64.
    tiny = gsearch.FunctionalArrays(cells=2, dtype=np.int64, device=device, version_slots=3)
    t = tiny.update(tiny.empty(), 1, 1)
    for call, error in ((lambda: tiny.update(t, 2, 2), MemoryError), (lambda: tiny.update(t, 2**64, 2), OverflowError),
                        (lambda: tiny.update(t, [3, 2**64], [1, 2]), OverflowError)):
        with pytest.raises(error):
            call()
        assert tiny.stats()["live_arrays"] == 2
    tiny.release(tiny.remove(t, 1))  # the third slot is free
    assert tiny.check() == "" and a.check() == "" and b.check() == ""


@needs_torch
def test_cuda_launch_form_and_blocks():
    """The kernel-per-operation form, and a persistent kernel of more blocks than cells."""
    for fa in (gsearch.FunctionalArrays(cells=32, device="cuda", persistent=False),
               gsearch.FunctionalArrays(cells=4, device="cuda", blocks=8)):
        a = fa.update(fa.update(fa.empty(), 5, 50), 9, 90)
        b = fa.remove(a, 5)
        assert (fa.lookup(a, 5), fa.lookup(b, 5), fa.size(a), fa.next(b, 0)) == (50, None, 2, 9)
        assert fa.stats()["persistent_blocks"] == (0 if fa.stats()["cells"] == 32 else 8)
        assert fa.check() == ""


@needs_torch
def test_cuda_batch_lookup_of_torch_indices():
    """Indices in a torch CUDA tensor: searched on the device, the answers torch tensors there."""
    import torch

    idx = np.array([9, 4, 2**63 - 1, 3, -(2**63), 10], np.int64)
    # The framework's kernels run once before the machine starts (the rule for work beside a
    # persistent kernel, as for gsearch.Server).
    t = torch.from_numpy(idx).cuda()
    torch.empty(6, dtype=torch.uint8, device="cuda").bool()
    torch.cuda.synchronize()
    fa = gsearch.FunctionalArrays(cells=64, dtype=np.float64, device="cuda")
    a = fa.update(fa.empty(), np.array([9, 2**63 - 1, 3, -(2**63)]), np.array([9.0, 2.5, 7.0, -1.0]))
    values, found = fa.lookup(a, t)
    assert values.device.type == "cuda" and found.dtype == torch.bool
    want_found, want_values = [True, False, True, True, True, False], [9.0, 0.0, 2.5, 7.0, -1.0, 0.0]
    np.testing.assert_array_equal(found.cpu().numpy(), want_found)
    np.testing.assert_array_equal(values.cpu().numpy(), want_values)
    host_values, host_found = fa.lookup(a, idx)
    np.testing.assert_array_equal(host_found, want_found)
    np.testing.assert_array_equal(host_values, want_values)


def _replay(ops, cells, device="cpu"):
    """Applies `ops` (op, pick, index, value) to a machine of `cells` cells and to dicts; raises
    AssertionError at the first difference (hypothesis then shrinks the stream)."""
    fa = gsearch.FunctionalArrays(cells=cells, dtype=np.int64, device=device)
    pool = [(fa.empty(), {})]
    for op, pick, i, v in ops:
        a, m = pool[pick % len(pool)]
        try:
            if op == 0:
                pool.append((fa.update(a, i, v), {**m, i: v}))
            elif op == 1:
                pool.append((fa.remove(a, i), {k: x for k, x in m.items() if k != i}))
            elif op == 2:
                assert fa.lookup(a, i) == m.get(i)
            elif op == 3:
                above = [k for k in m if k > i]
                assert fa.next(a, i) == (min(above) if above else None)
            elif op == 4:
                assert fa.size(a) == len(m)
            elif len(pool) > 1:  # never the first array
                fa.release(pool.pop(pick % (len(pool) - 1) + 1)[0])
        except MemoryError:
            for b, mb in pool:
                idx, vals = fa.items(b)
                assert dict(zip(idx.tolist(), vals.tolist())) == mb
        assert fa.check() == ""


try:
    from hypothesis import given, settings
    from hypothesis import strategies as st
except ImportError:  # the property test skips
    given = None

if given is not None:

    @given(
        st.lists(
            st.tuples(
                st.integers(0, 5),
                st.integers(0, 1000),
                st.one_of(st.integers(-3, 3), st.integers(-(2**63), 2**63 - 1)),
                st.integers(-5, 5),
            ),
            max_size=60,
        ),
        st.integers(2, 24),
    )
    def test_property_streams_equal_dicts(ops, cells):
        _replay(ops, cells)

    @needs_torch
    @settings(deadline=None, max_examples=60)
    @given(
        st.lists(
            st.tuples(st.integers(0, 5), st.integers(0, 1000), st.integers(-3, 3), st.integers(-5, 5)),
            max_size=40,
        ),
        st.integers(2, 24),
    )
    def test_property_streams_equal_dicts_cuda(ops, cells):
        _replay(ops, cells, "cuda")


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_value_converts_as_numpys_assignment(dtype):
    """update(a, i, v) stores what numpy's ``arr[i] = v`` stores (np.float32(0.1) on float32),
    and refuses, with no RuntimeWarning, only a value the dtype cannot hold."""
    fa = gsearch.FunctionalArrays(cells=64, dtype=dtype)
    a = fa.empty()
    ref = np.zeros(1, dtype)
    candidates = [0.1, np.float64(2.0 / 3), 7, np.int64(-3), True, np.float16(2.5), 3.0, 2**40 + 1, np.uint64(2**63),
                  float("inf"), float("nan"), 2**64, -1, 1e40, 1.5, 2**70]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning leaks
        for v in candidates:
            try:
                with np.errstate(all="raise"):
                    ref[0] = v  # numpy's assignment, its overflow made an error
                    fits = ref[0] == v or np.isnan(ref[0]) or np.dtype(dtype).kind == "f"
            except (OverflowError, FloatingPointError, ValueError, TypeError):
                fits = False
            if fits and np.dtype(dtype).kind in "iu" and isinstance(v, (float, np.floating)) and v != int(v):
                fits = False  # numpy truncates 1.5 on an integer array; gsearch refuses it
            if not fits:
                with pytest.raises((OverflowError, TypeError)) as e:
                    fa.update(a, 0, v)
                if isinstance(v, int) or (isinstance(v, float) and np.isfinite(v) and v == int(v)):
                    assert e.type is OverflowError and f"out of range for {np.dtype(dtype)}" in str(e.value), e.value
                continue
            b = fa.update(a, 0, v)
            got = fa.lookup(b, 0)
            np.testing.assert_array_equal(np.asarray(got, dtype=dtype), ref[0])  # bit for bit numpy's stored value (NaN == NaN)
            fa.release(b)
    if np.dtype(dtype) == np.float32:
        assert fa.lookup(fa.update(a, 0, 0.1), 0) == np.float32(0.1)
        with pytest.raises(OverflowError, match=r"1e\+40 is out of range for float32"):
            fa.update(a, 0, 1e40)
    if np.dtype(dtype) == np.int64:
        with pytest.raises(OverflowError, match="out of range for int64"):
            fa.update(a, 0, 2**64)
