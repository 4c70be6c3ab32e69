"""gsearch.distributed against numpy on the concatenation of the ranks' data (dist_check.py holds
the cases): in-process ranks (threads, a communicator written in Python), mpirun -np 1, 2 and 4
(mpi4py), torch.distributed with gloo on the CPU, and NCCL with one GPU per rank; and the errors
of a call whose communicator, device or dtype does not fit."""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest

import gsearch
import gsearch.distributed as gd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import dist_check  # noqa: E402


class ThreadGroup:
    """`size` ranks as threads of this process, each with a communicator of the protocol that
    gsearch.distributed takes (rank, size, device, allgather, alltoallv): copies between the
    threads' buffers behind barriers. The library releases the GIL while it waits, so the
    threads meet in the callbacks."""

    def __init__(self, size):
        self.size = size
        self.barrier = threading.Barrier(size, timeout=60)
        self.slots = [None] * size

    def exchange(self, rank, mine):
        """Every rank's `mine`, in rank order (a copy where it is the library's memory, which
        its rank may reuse as soon as it leaves the callback)."""
        self.slots[rank] = mine
        self.barrier.wait()
        everyone = list(self.slots)
        self.barrier.wait()  # the slots stay until every rank has read them
        return everyone

    def run(self, body):
        """body(rank, comm) on every rank's thread; returns their results, raises the first error."""
        results, errors = [None] * self.size, []

        def one(rank):
            try:
                results[rank] = body(rank, Member(self, rank))
            except BaseException as e:  # noqa: BLE001 (re-raised below)
                errors.append(e)
                self.barrier.abort()

        threads = [threading.Thread(target=one, args=(r,)) for r in range(self.size)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
        return results


class Member:
    device = False

    def __init__(self, group, rank):
        self.group, self.rank, self.size = group, rank, group.size

    def allgather(self, send, recv):
        n = len(send)
        for r, s in enumerate(self.group.exchange(self.rank, send.copy())):
            recv[r * n : (r + 1) * n] = s

    def alltoallv(self, send, send_counts, recv, recv_counts):
        at = 0
        for r, (s, counts) in enumerate(self.group.exchange(self.rank, (send.copy(), send_counts))):
            start = sum(counts[: self.rank])
            recv[at : at + recv_counts[r]] = s[start : start + counts[self.rank]]
            at += recv_counts[r]


def test_threads_match_numpy(monkeypatch):
    monkeypatch.setattr(dist_check, "failures", [])
    group = ThreadGroup(3)

    def body(rank, comm):
        ranks = dist_check.Ranks(rank, group.size, lambda x: group.exchange(rank, x))
        dist_check.run(ranks, comm)

    group.run(body)
    assert dist_check.failures == []


def test_numpy_and_list_inputs_one_rank():
    comm = ThreadGroup(1).run(lambda rank, comm: comm)[0]
    keys = np.array([1, 3, 3, 7])
    assert gd.searchsorted(keys, 3, "right", comm=comm) == 3  # a scalar query: a numpy integer
    assert gd.searchsorted(keys, [[0, 8]], comm=comm).tolist() == [[0, 4]]  # v's shape
    assert gd.isin(np.array([[1, 2]]), [], comm=comm).tolist() == [[False, False]]
    assert gd.sort(np.array([2, 1], dtype=np.int8), comm=comm).dtype == np.int8  # widened, then back
    assert gd.find(keys, 3, op="in", hi=8, mode="all", comm=comm).tolist() == [1, 2, 3]
    assert gd.join(keys, [7, 1], "semi", comm=comm)[1] is None


def test_a_callback_error_reaches_every_rank():
    class Failing(Member):
        def alltoallv(self, *args):
            raise OSError(f"link down on rank {self.rank}")

    group = ThreadGroup(2)
    with pytest.raises(OSError, match="link down on rank"):
        group.run(lambda rank, comm: gd.sort(np.arange(10.0), comm=Failing(group, rank)))


def _outcomes(group, body):
    """body(rank, comm) on every rank: each rank's exception (or None). A rank left waiting in a
    collective fails the barrier's timeout instead (the ranks would hang without the agreement)."""
    errors = [None] * group.size

    def one(rank, comm):
        try:
            body(rank, comm)
        except threading.BrokenBarrierError:
            raise
        except Exception as e:  # noqa: BLE001 (returned)
            errors[rank] = e

    group.run(one)
    return errors


@pytest.mark.parametrize(
    "bad",
    [
        lambda comm: gd.sort(np.zeros((2, 2)), comm=comm),  # not 1-D
        lambda comm: gd.sort(np.zeros(4, np.complex64), comm=comm),  # no complex keys
        lambda comm: gd.searchsorted(np.arange(4), [1], side="middle", comm=comm),
        lambda comm: gd.find(np.arange(4), 1, op="~", comm=comm),
        lambda comm: gd.find(np.arange(4, dtype=np.int8), 300, comm=comm),  # not an int8
        lambda comm: gd.join(np.arange(4), np.arange(4), how="outer-ish", comm=comm),
        lambda comm: gd.isin(np.arange(4), [1], method="magic", comm=comm),
    ],
)
def test_an_argument_error_on_one_rank_is_raised_on_every_rank(bad):
    """Rank 0's call is wrong, rank 1's right: both raise (rank 0 its own error, rank 1 the same
    type naming rank 0), and neither waits for the other."""
    group = ThreadGroup(2)

    def body(rank, comm):
        return bad(comm) if rank == 0 else _good_call(bad, comm)

    errors = _outcomes(group, body)
    assert errors[0] is not None and errors[1] is not None, errors
    assert type(errors[1]) is type(errors[0]), errors
    assert str(errors[1]).startswith("gsearch.distributed."), errors[1]
    assert "rank 0 of 2 failed: " + str(errors[0]) in str(errors[1]), errors


def _good_call(bad, comm):
    """The operation that `bad` calls, with arguments that are right."""
    src = bad.__code__.co_names
    if "sort" in src:
        return gd.sort(np.zeros(4), comm=comm)
    if "searchsorted" in src:
        return gd.searchsorted(np.arange(4), [1], comm=comm)
    if "find" in src:
        return gd.find(np.arange(4), 1, comm=comm)
    if "join" in src:
        return gd.join(np.arange(4), np.arange(4), comm=comm)
    return gd.isin(np.arange(4), [1], comm=comm)


def test_replicated_keys_passed_as_sharded_are_an_error():
    """Every rank holds all the keys but says sharded (the default): numpy would give [5 9]; the
    order of the shards' ends catches it on every rank, and the message names sharded=False."""
    group = ThreadGroup(3)
    errors = _outcomes(group, lambda rank, comm: gd.searchsorted(np.arange(10), [5, 9], comm=comm))
    for e in errors:
        assert isinstance(e, ValueError) and "sharded=False" in str(e), errors
    got = group.run(lambda rank, comm: gd.searchsorted(np.arange(10), [5, 9], comm=comm, sharded=False))
    assert [g.tolist() for g in got] == [[5, 9]] * 3


def test_a_fault_at_any_step_of_an_operation_is_raised_on_every_rank(monkeypatch):
    """GSEARCH_DIST_FAULT=1:s fails rank 1 at the library's s-th agreement point of gd.sort
    (counted on each rank's thread): every rank raises, until s passes the last point."""
    group = ThreadGroup(2)
    for step in range(100):
        monkeypatch.setenv("GSEARCH_DIST_FAULT", f"1:{step}")
        errors = _outcomes(group, lambda rank, comm: gd.sort(np.arange(50.0)[::-1], comm=comm))
        if errors == [None, None]:
            break
        assert all(e is not None for e in errors), (step, errors)
        assert "fault injected on rank 1" in str(errors[0]) and "rank 1 of 2 failed" in str(errors[0]), errors
        assert "fault injected on rank 1" in str(errors[1]), errors
    assert step > 2, "gd.sort has agreement points"


def _parts(x, size, weights=None):
    """x split into `size` contiguous parts (by `weights`: some may be empty)."""
    w = np.asarray(weights if weights is not None else [1] * size, dtype=float)
    b = np.rint(np.concatenate([[0], np.cumsum(w)]) * len(x) / w.sum()).astype(int)
    return [x[b[r] : b[r + 1]] for r in range(size)]


def test_asof_indices_match_pandas_on_the_gathered_frames():
    """Datetime keys, string and object by columns (numbered by the ranks' union: a value on one
    rank's right rows only, a left value with no right row, None), with a tolerance: the ranks'
    maps concatenated are pandas.merge_asof's matches on the concatenated frames."""
    pd = pytest.importorskip("pandas", exc_type=ImportError)  # not with the oldest numpy CI tests
    rng = np.random.default_rng(7)
    n, m, size = 90, 70, 3
    lt = np.sort(rng.integers(0, 60, n)).astype("datetime64[s]")
    rt = np.sort(rng.integers(0, 60, m)).astype("datetime64[s]")
    lname = rng.choice(["a", "bb", "ccc", "zz"], n)  # "zz": no right row
    rname = rng.choice(["a", "bb", "ccc", "d"], m)
    lobj = rng.choice(np.array([1, "x", None], dtype=object), n)
    robj = rng.choice(np.array([1, "x", None, 2.5], dtype=object), m)
    left = pd.DataFrame({"t": lt, "k": lname, "o": lobj})
    right = pd.DataFrame({"t": rt, "k": rname, "o": robj, "row": np.arange(m)})
    tol = pd.Timedelta("5s")
    want = pd.merge_asof(left, right, on="t", by=["k", "o"], tolerance=tol)["row"].fillna(-1).to_numpy(np.int64)
    L = list(zip(_parts(lt, size), _parts(lname, size), _parts(lobj, size)))
    R = list(zip(_parts(rt, size, [0, 2, 1]), _parts(rname, size, [0, 2, 1]), _parts(robj, size, [0, 2, 1])))

    def body(rank, comm):
        (t, k, o), (u, j, p) = L[rank], R[rank]
        return gd.asof_indices(t, u, left_by=[k, o], right_by=[j, p], tolerance=tol, comm=comm)

    got = np.concatenate(ThreadGroup(size).run(body))
    assert got.tolist() == want.tolist()


def test_asof_indices_by_value_tuples_renumbered_across_the_ranks():
    """Three by columns of 30 values each (strings, floats, wide integers: numbered by the ranks'
    union) whose combined range outgrows the rows: the right's tuples numbered again by their
    union across the ranks; on 1, 2 and 3 ranks (one right part empty), gsearch.asof_indices'."""
    rng = np.random.default_rng(2)
    n, m = 300, 200
    lk, rk = np.sort(rng.integers(0, 50, n)), np.sort(rng.integers(0, 50, m))
    values = [np.array([f"s{i}" for i in range(30)]), np.arange(30) * 0.5 + 0.25, np.arange(30) * 2**45]
    li, ri = rng.integers(0, 30, n), rng.integers(0, 32, m) % 30
    lb, rb = [v[li] for v in values], [v[ri] for v in values]
    want = gsearch.asof_indices(lk, rk, left_by=lb, right_by=rb, direction="nearest")
    assert (want >= 0).all()
    for size in (1, 2, 3):
        w = [2, 0, 1][:size] if size > 1 else None
        L, R = _parts(lk, size), _parts(rk, size, w)
        LB, RB = [_parts(c, size) for c in lb], [_parts(c, size, w) for c in rb]

        def body(rank, comm):
            return gd.asof_indices(L[rank], R[rank], left_by=[c[rank] for c in LB], right_by=[c[rank] for c in RB],
                                   direction="nearest", comm=comm)

        assert np.concatenate(ThreadGroup(size).run(body)).tolist() == want.tolist(), size


def test_asof_indices_errors_are_every_rank_s():
    """pandas' errors on every rank: left keys that go down from one rank to the next, NaN keys on
    one rank, a tolerance of the wrong kind on one rank (pandas' MergeError there, the same type
    naming it elsewhere), and ranks passing different arguments."""
    group = ThreadGroup(2)
    keys = np.arange(8.0)
    errors = _outcomes(group, lambda rank, comm: gd.asof_indices(keys, keys + 8 * rank, comm=comm))  # left 0..7 on both
    assert all(isinstance(e, ValueError) and str(e).startswith("left keys must be sorted") for e in errors), errors
    nan = keys.copy()
    nan[3] = np.nan
    errors = _outcomes(group, lambda rank, comm: gd.asof_indices(nan if rank else keys, keys + 8 * rank, comm=comm))
    assert "Merge keys contain null values on left side" in str(errors[1]), errors
    assert "rank 1 of 2 failed: Merge keys contain null values on left side" in str(errors[0]), errors
    ints = np.arange(8)
    errors = _outcomes(
        group, lambda rank, comm: gd.asof_indices(ints + 8 * rank, ints + 8 * rank, tolerance=0.5 if rank == 0 else 1, comm=comm)
    )
    assert all(isinstance(e, ValueError) for e in errors), errors
    assert "incompatible tolerance" in str(errors[0]) and "rank 0 of 2 failed: incompatible tolerance" in str(errors[1])
    errors = _outcomes(
        group, lambda rank, comm: gd.asof_indices(ints + 8 * rank, ints + 8 * rank, tolerance=rank + 1, comm=comm)
    )
    for e in errors:
        assert isinstance(e, ValueError) and "the ranks pass different tolerance (rank 0: 1, rank 1: 2)" in str(e), errors
    errors = _outcomes(
        group,
        lambda rank, comm: gd.asof_indices(ints + 8 * rank, ints + 8 * rank, left_by=ints, right_by=ints, comm=comm)
        if rank
        else gd.asof_indices(ints, ints, comm=comm),
    )
    for e in errors:
        assert isinstance(e, ValueError) and "the ranks pass different numbers of by columns" in str(e), errors


def test_asof_indices_fault_at_any_step(monkeypatch):
    """GSEARCH_DIST_FAULT=1:s fails rank 1 at the library's s-th agreement point of a grouped,
    sharded asof_indices: every rank raises, until s passes the last point."""
    group = ThreadGroup(2)
    keys, codes = np.arange(20.0), np.arange(20) % 3

    def body(rank, comm):
        return gd.asof_indices(keys + 20 * rank, keys + 20 * rank, left_by=codes, right_by=codes, comm=comm)

    for step in range(100):
        monkeypatch.setenv("GSEARCH_DIST_FAULT", f"1:{step}")
        errors = _outcomes(group, body)
        if errors == [None, None]:
            break
        assert all(e is not None and "fault injected on rank 1" in str(e) for e in errors), (step, errors)
    assert step > 1, "asof_indices has agreement points"


def test_comm_errors():
    comm = ThreadGroup(1).run(lambda rank, comm: comm)[0]
    with pytest.raises(TypeError, match="comm must be None .* not int"):
        gd.sort(np.arange(3), comm=3)
    if "torch" not in sys.modules:  # comm=None needs torch.distributed initialized
        with pytest.raises(ValueError, match="no communicator"):
            gd.sort(np.arange(3))
    comm.device = True  # a transport of CUDA memory, and CPU arrays
    with pytest.raises(ValueError, match="CPU arrays but the communicator .* moves CUDA memory"):
        gd.searchsorted(np.arange(3), [1], comm=comm)
    comm.device = False
    with pytest.raises(TypeError, match="promotes them to float64"):
        gd.join(np.arange(3, dtype=np.int64), np.arange(3.0), comm=comm)
    with pytest.raises(ValueError, match="mode must be one of"):
        gd.find(np.arange(3), 1, "random", comm=comm)
    with pytest.raises(ValueError, match="not representable in int32"):
        gd.find(np.arange(3, dtype=np.int32), 1.5, comm=comm)
    with pytest.raises(ValueError, match="a must be 1-D"):
        gd.searchsorted(np.zeros((2, 2)), [1.0], comm=comm)
    with pytest.raises(ValueError, match="is not sorted"):
        gd.merge(np.array([2, 1]), comm=comm)


def test_mpi_comm_refuses_other_objects():
    pytest.importorskip("mpi4py", reason="mpi4py is not installed")
    with pytest.raises(TypeError, match="Intracomm"):
        gd.MpiComm(object())


# --- other processes --------------------------------------------------------------------------


def _env():
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", NCCL_NVLS_ENABLE="0")
    # The subprocesses import the gsearch this process imported (an installed one, or a build's).
    env["PYTHONPATH"] = os.pathsep.join([str(Path(gsearch.__file__).parents[1]), env.get("PYTHONPATH", "")])
    return env


def _check_output(procs, ranks):
    """Each process's output; fails naming the mismatches unless every rank reported ok."""
    outs = []
    for p in procs:
        out, _ = p.communicate(timeout=120)
        outs.append(out)
    text = "".join(outs)
    assert all(p.returncode == 0 for p in procs), text[-4000:]
    assert text.count(" ok (0 mismatches)") == ranks, text[-4000:]


@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_mpirun(ranks):
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        pytest.skip("mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)")
    pytest.importorskip("mpi4py", reason="mpi4py is not installed (pip install mpi4py)")
    cmd = [mpirun, "-np", str(ranks), "--oversubscribe", sys.executable, str(HERE / "dist_check.py"), "mpi"]
    proc = subprocess.Popen(cmd, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    _check_output([proc], ranks)


def _torch_ranks(how, ranks):
    with tempfile.TemporaryDirectory() as tmp:
        rendezvous = os.path.join(tmp, "rendezvous")
        procs = [
            subprocess.Popen(
                [sys.executable, str(HERE / "dist_check.py"), how, str(r), str(ranks), rendezvous],
                env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )
            for r in range(ranks)
        ]
        _check_output(procs, ranks)


def test_torch_gloo():
    pytest.importorskip("torch", reason="torch is not installed")
    _torch_ranks("torch", 2)


def test_torch_nccl():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if not gsearch.cuda_available() or torch.cuda.device_count() < 2:
        pytest.skip("NCCL takes one GPU per rank: needs 2 GPUs, torch with CUDA and gsearch's CUDA backend")
    _torch_ranks("torch-cuda", 2)
