"""gsearch: batched search on GPUs, with a CPU backend.

``searchsorted`` (numpy's, and torch's row-batched form), ``predecessor``, ``equal_range`` and
``bucketize`` (torch's) for sorted data, ``Index`` (a static search index: sorted keys built
once into an S+ tree, searched many times), ``find``, ``count`` and ``isin`` (numpy's) for unsorted
data, the merge family (``merge``, stable ``sort`` and ``argsort``, the multiset
``set_intersection`` / ``set_union`` / ``set_difference`` / ``set_symmetric_difference``,
numpy's ``intersect1d`` / ``union1d`` / ``setdiff1d`` / ``setxor1d``, and ``join``), over
numpy arrays (the C++ CPU backend, all cores for large calls) and over CUDA
arrays (torch tensors, cupy arrays, anything with ``__dlpack__`` or
``__cuda_array_interface__`` on a CUDA device), which are searched on the GPU in place, on the
caller's current stream, and answered with an array of the same kind on the same device.

Keys sort in numpy's order: NaN after +inf, -0.0 equal to 0.0. Mixed key and query dtypes are
searched in numpy's promoted dtype when that promotion is exact, and rejected with TypeError
when it would round (int64 / uint64 with a float, uint64 with a signed integer): gsearch never
casts lossily. An empty Python sequence (``[]``, ``()``) has no dtype of its own (numpy makes it
float64): paired with an array, it takes the array's dtype, so ``searchsorted(int64_keys, [])``
and ``merge([], a)`` answer as numpy does.

Sortedness: what the caller tells gsearch is sorted beyond numpy's contract is checked by
default (the queries of ``sorted_queries=True``, the keys of ``Index``, the inputs of the merge
family); ``check_sorted=False`` / ``check=False`` skips the check. The keys of
``searchsorted`` are not checked unless ``check_sorted=True``, as in numpy and torch.

Examples
--------
>>> import numpy as np, gsearch
>>> gsearch.searchsorted(np.array([1, 2, 3, 5]), [0, 3, 4], side="right")
array([0, 3, 3])
>>> gsearch.predecessor(np.array([1.0, 2.0, np.nan]), 1.5)
np.int64(0)
>>> gsearch.find(np.array([5, 3, 8, 3]), 3)
1
>>> gsearch.isin(np.array([1, 2, 3]), [3, 1])
array([ True, False,  True])
"""

from __future__ import annotations

import math as _math
import operator as _operator
import sys as _sys
from functools import lru_cache as _lru_cache
from typing import Any, Literal, NamedTuple as _NamedTuple, Optional, Union

import numpy as _np

from . import _core

__version__: str = _core.__version__

__all__ = [
    "Index",
    "__version__",
    "argsort",
    "bucketize",
    "build_info",
    "built_with_cuda",
    "count",
    "cuda_available",
    "equal_range",
    "find",
    "intersect1d",
    "isin",
    "join",
    "merge",
    "predecessor",
    "searchsorted",
    "set_difference",
    "set_intersection",
    "set_symmetric_difference",
    "set_union",
    "setdiff1d",
    "setxor1d",
    "sort",
    "union1d",
]


def __dir__() -> list:
    """dir(gsearch), and so tab completion: the public API (__all__, __version__ included). The
    typing names and type aliases of the signatures (Any, Optional, ArrayLike, Side, ...) stay
    module attributes, for typing.get_type_hints and readable help(), but are not listed."""
    return sorted(__all__)

Side = Literal["left", "right"]
Algo = Literal["auto", "pbs", "pbs-cf", "pbs-cl", "binary", "index", "partitioned", "pary"]


class _DefaultSide(str):
    """'left', as the default of `side`: told apart from an explicit 'left' (torch's check
    that side and right do not conflict)."""

    __slots__ = ()


_LEFT: Side = _DefaultSide("left")  # type: ignore[assignment]
_ALGOS: dict[str, int] = dict(_core.ALGORITHMS)
_NATIVE = frozenset(_np.dtype(t) for t in ("int32", "uint32", "int64", "uint64", "float32", "float64"))
_INT64 = _np.dtype(_np.int64)
_INT32 = _np.dtype(_np.int32)
_FLOAT64 = _np.dtype(_np.float64)
_ndarray = _np.ndarray
_empty = _np.empty
_search_fast = _core.search_fast
_FAST_SIDES = {"left": 0, "right": 1}
_asarray = _np.asarray
# Python scalars the fast path takes, per key dtype: ints in [lo, hi] (held exactly), and
# whether any float is (only float64 keys: a Python float is a float64).
_SCALAR_FAST = {
    _np.dtype(t): (int(_np.iinfo(t).min), int(_np.iinfo(t).max), False)
    for t in ("int32", "uint32", "int64", "uint64")
}
_SCALAR_FAST[_np.dtype("float64")] = (-(2**53), 2**53, True)
_SCALAR_FAST[_np.dtype("float32")] = (-(2**24), 2**24, False)
_LEFT_I, _RIGHT_I, _PRED_I = 0, 1, 2


def build_info() -> dict:
    """What this build of gsearch is: the code behind a result.

    Returns
    -------
    dict
        ``{'version': '0.1.0', 'commit': <git commit of the source, or 'unknown'>, 'dirty':
        <the source tree had uncommitted changes>, 'cuda': <built with the CUDA backend>}``.
        The benchmarks write ``commit`` and ``dirty`` into every result file as ``"source"``.
    """
    return dict(_core.build_info())


def built_with_cuda() -> bool:
    """True when the extension was built with gsearch's CUDA backend."""
    return _core.built_with_cuda()


def cuda_available() -> bool:
    """True when CUDA arrays can be searched: the CUDA backend is built and a GPU is usable.

    Returns
    -------
    bool
        ``built_with_cuda()`` and at least one CUDA device with a working driver.
    """
    return _core.built_with_cuda() and _core.cuda_device_count() > 0


# --- dtypes ------------------------------------------------------------------------------------

# Exact widening of the dtypes the library lacks: compare in a supported dtype that holds every
# value exactly (bool, 8- and 16-bit integers, float16; bfloat16 arrives here as float32).
# int32 rather than uint32 for the unsigned ones: torch's uint32 has few operations.
_WIDEN = {
    _np.dtype(_np.bool_): _np.dtype(_np.int32),
    _np.dtype(_np.int8): _np.dtype(_np.int32),
    _np.dtype(_np.int16): _np.dtype(_np.int32),
    _np.dtype(_np.uint8): _np.dtype(_np.int32),
    _np.dtype(_np.uint16): _np.dtype(_np.int32),
    _np.dtype(_np.float16): _np.dtype(_np.float32),
}
_MANTISSA_BITS = {2: 11, 4: 24, 8: 53}


def _exact(src: _np.dtype, dst: _np.dtype) -> bool:
    """Every value of src is exactly a value of dst."""
    if src == dst or src.kind == "b":
        return True
    if dst.kind == "b":
        return False
    bits = src.itemsize * 8
    if src.kind == "f":
        return dst.kind == "f" and dst.itemsize >= src.itemsize
    if src.kind == "i":
        if dst.kind == "i":
            return dst.itemsize >= src.itemsize
        if dst.kind == "u":
            return False
        return bits - 1 <= _MANTISSA_BITS[dst.itemsize]  # |x| <= 2^(bits-1)
    # unsigned
    if dst.kind == "u":
        return dst.itemsize >= src.itemsize
    if dst.kind == "i":
        return dst.itemsize > src.itemsize
    return bits <= _MANTISSA_BITS[dst.itemsize]


def _check_supported(d: _np.dtype, what: str) -> None:
    if d.kind not in "biuf" or d.itemsize > 8:
        raise TypeError(
            f"gsearch: unsupported {what} dtype {d} (bool, int8-64, uint8-64, float16-64)"
        )


_KEYS_QUERIES = ("key", "query", "keys", "queries")


@_lru_cache(maxsize=256)
def _resolve(da: _np.dtype, dv: _np.dtype, names: tuple = _KEYS_QUERIES) -> _np.dtype:
    """The supported dtype keys of dtype da and queries of dtype dv are compared in: numpy's
    promotion of the pair, widened exactly; TypeError where that promotion would round.
    `names`: what the two are called in messages (singular, singular, plural, plural)."""
    _check_supported(da, names[0])
    _check_supported(dv, names[1])
    p = _np.result_type(da, dv)
    if not _exact(da, p) or not _exact(dv, p):
        lossy = " and ".join(str(d) for d in (da, dv) if not _exact(d, p))
        raise TypeError(
            f"gsearch: {da} {names[2]} and {dv} {names[3]}: numpy promotes them to {p}, which does not "
            f"hold every {lossy} value exactly; convert one of them explicitly"
        )
    p = p.newbyteorder("=")
    return _WIDEN.get(p, p)


# --- inputs ------------------------------------------------------------------------------------


class _Arr(_NamedTuple):
    x: Any  # the array in its framework (numpy, torch, cupy)
    fw: str  # "numpy" | "torch" | "cupy"
    dev: Optional[int]  # CUDA device index, None on the CPU
    dtype: _np.dtype  # its dtype for promotion (torch bfloat16 -> float32)
    untyped: bool = False  # an empty Python sequence: float64 only by numpy's default (_adopt)


class _Scalar(_NamedTuple):
    value: Any  # a Python int / float / bool (weak) or a numpy scalar (strong)
    dtype: Optional[_np.dtype]  # None for a Python scalar


_WEAK = (int, float, bool)


def _torch():
    return _sys.modules.get("torch")


def _cupy(required: bool = False):
    cp = _sys.modules.get("cupy")
    if cp is None and required:
        try:
            import cupy as cp  # type: ignore[import-not-found, no-redef]
        except Exception as e:  # pragma: no cover - depends on the machine
            raise TypeError(
                "gsearch: this CUDA array has only __cuda_array_interface__, which needs cupy"
            ) from e
    return cp


_TT: Any = None  # torch.Tensor, once a tensor was seen (for the fast path)
_TORCH_NATIVE: frozenset = frozenset()
_INT64_T: Any = None
_INT32_T: Any = None
_raw_stream: Any = None


def _register_torch(torch: Any) -> None:
    global _TT, _TORCH_NATIVE, _INT64_T, _INT32_T, _raw_stream
    if _TT is None:
        _TORCH_NATIVE = frozenset(
            getattr(torch, n) for n in ("int32", "int64", "float32", "float64", "uint32", "uint64") if hasattr(torch, n)
        )
        _INT64_T, _INT32_T = torch.int64, torch.int32
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        _raw_stream = raw if raw is not None else (lambda dev: torch.cuda.current_stream(dev).cuda_stream)
        _TT = torch.Tensor


_T2N: dict = {}  # torch dtype -> numpy dtype
_N2T: dict = {}  # numpy dtype -> torch dtype


def _torch_dtype_to_numpy(t: Any) -> _np.dtype:
    d = _T2N.get(t)
    if d is None:
        name = str(t).rsplit(".", 1)[-1]
        if name == "bfloat16":
            d = _np.dtype(_np.float32)  # exact widening; converted with torch
        else:
            try:
                d = _np.dtype(name)
            except TypeError:
                raise TypeError(f"gsearch: unsupported dtype {t}") from None
        _T2N[t] = d
    return d


def _classify(x: Any, what: str) -> Union[_Arr, _Scalar]:
    tx = type(x)
    if tx is _ndarray:
        return _Arr(x, "numpy", None, x.dtype)
    if tx in _WEAK:
        return _Scalar(x, None)
    if isinstance(x, _np.generic):
        return _Scalar(x, x.dtype)
    torch = _torch()
    if torch is not None and isinstance(x, torch.Tensor):
        _register_torch(torch)
        x = x.detach()
        dt = x.device.type
        if dt not in ("cpu", "cuda"):
            raise ValueError(f"gsearch: {what} on unsupported device {x.device}")
        dev = x.device.index if dt == "cuda" else None
        if dev is None and dt == "cuda":
            dev = torch.cuda.current_device()
        return _Arr(x, "torch", dev, _torch_dtype_to_numpy(x.dtype))
    cp = _cupy()
    if cp is not None and isinstance(x, cp.ndarray):
        return _Arr(x, "cupy", x.device.id, x.dtype)
    if isinstance(x, _ndarray):  # subclasses (np.matrix, masked arrays are taken as plain data)
        x = _np.asarray(x)
        return _Arr(x, "numpy", None, x.dtype)
    if hasattr(x, "__dlpack_device__") and hasattr(x, "__dlpack__"):
        kind, _ = x.__dlpack_device__()
        if kind == 2:  # kDLCUDA: wrap without a copy in torch (or cupy) to allocate the result
            if torch is None:
                try:
                    import torch  # type: ignore[import-not-found, no-redef]
                except Exception:
                    torch = None
            if torch is not None:
                return _classify(torch.from_dlpack(x), what)
            return _classify(_cupy(required=True).from_dlpack(x), what)
    if hasattr(x, "__cuda_array_interface__"):
        return _classify(_cupy(required=True).asarray(x), what)
    # A Python sequence (or any object without a dtype of its own): numpy's dtype for it.
    untyped = not (hasattr(x, "dtype") or hasattr(x, "__array__") or hasattr(x, "__array_interface__"))
    x = _np.asarray(x)
    if x.ndim == 0 and x.dtype.kind in "biuf":
        return _Scalar(x[()], x.dtype)
    return _Arr(x, "numpy", None, x.dtype, untyped and x.size == 0 and x.dtype == _FLOAT64)


def _adopt(x: Union[_Arr, _Scalar], other: Union[_Arr, _Scalar, _np.dtype]) -> Union[_Arr, _Scalar]:
    """x, when it is an empty Python sequence ([], (), [[]], range(0)), in the dtype of `other`
    (the other operand, or a dtype): numpy makes such a sequence float64, a dtype it only has by
    default, and float64 with int64 / uint64 would be a lossy pair (TypeError) where numpy
    answers. x unchanged otherwise (also when `other` has no dtype: a Python scalar, or an
    empty sequence itself)."""
    if not (isinstance(x, _Arr) and x.untyped):
        return x
    if isinstance(other, _np.dtype):
        d = other
    elif isinstance(other, _Arr) and other.untyped:
        return x
    else:
        d = other.dtype
    if d is None:
        return x
    return _Arr(x.x.astype(d), "numpy", None, d)


def _torch_dtype(d: _np.dtype):
    t = _N2T.get(d)
    if t is None:
        t = _N2T[d] = getattr(_torch(), d.name)
    return t


def _convert(arr: _Arr, d: _np.dtype) -> Any:
    """arr in dtype d, C-contiguous (a copy only when needed)."""
    x = arr.x
    if arr.fw == "numpy":
        return _np.ascontiguousarray(x, dtype=d)
    if arr.fw == "torch":
        td = _torch_dtype(d)
        if x.dtype is td and x.is_contiguous():
            return x
        return x.to(dtype=td).contiguous()
    return _cupy().ascontiguousarray(x, dtype=d)


def _full0d(fw: str, dev: Optional[int], value: Any, d: _np.dtype) -> Any:
    """A 0-d array holding value, of dtype d, in framework fw on device dev."""
    if fw == "numpy":
        return _np.asarray(value, dtype=d)
    if fw == "torch":
        torch = _torch()
        device = torch.device("cuda", dev) if dev is not None else torch.device("cpu")
        return torch.full((), value, dtype=_torch_dtype(d), device=device)
    return _cupy().full((), value, dtype=d)


def _new_empty(fw: str, dev: Optional[int], shape: tuple, d: _np.dtype) -> Any:
    if fw == "numpy":
        return _np.empty(shape, dtype=d)
    if fw == "torch":
        torch = _torch()
        device = torch.device("cuda", dev) if dev is not None else torch.device("cpu")
        return torch.empty(shape, dtype=_torch_dtype(d), device=device)
    return _cupy().empty(shape, dtype=d)


def _shape(arr: _Arr) -> tuple:
    return tuple(arr.x.shape)


def _where(dev: Optional[int]) -> str:
    return "the CPU" if dev is None else f"cuda:{dev}"


class _StreamScope:
    """The CUDA context of a call: the device and the stream (the framework's current stream,
    or the caller's), entered for the framework's own work (conversions, allocations) so that
    all of it and the search are ordered on one stream."""

    def __init__(self, fw: str, dev: Optional[int], stream: Any) -> None:
        self.fw, self.dev, self.handle = fw, dev, 0
        self._ctx: list = []
        if dev is None:
            if stream is not None:
                raise ValueError("gsearch: stream= applies to CUDA arrays; these are on the CPU")
            return
        if fw == "torch":
            # torch's work names the device itself (tensors, device=); the search sets it.
            torch = _torch()
            if stream is None:
                self.handle = _raw_stream(dev)
            else:
                s = stream
                if not isinstance(s, torch.cuda.Stream):
                    s = torch.cuda.ExternalStream(_stream_handle(stream), device=torch.device("cuda", dev))
                self.handle = s.cuda_stream
                self._ctx.append(torch.cuda.stream(s))
        else:
            cp = _cupy()
            self._ctx.append(cp.cuda.Device(dev))
            if stream is None:
                with cp.cuda.Device(dev):
                    self.handle = cp.cuda.get_current_stream().ptr
            else:
                self.handle = _stream_handle(stream)
                self._ctx.append(cp.cuda.ExternalStream(self.handle, dev))

    def __enter__(self) -> "_StreamScope":
        for c in self._ctx:
            c.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        for c in reversed(self._ctx):
            c.__exit__(*exc)


def _stream_handle(stream: Any) -> int:
    if isinstance(stream, int) and not isinstance(stream, bool):
        return stream
    for attr in ("cuda_stream", "ptr"):
        h = getattr(stream, attr, None)
        if isinstance(h, int):
            return h
    raise TypeError(
        "gsearch: stream= takes a cudaStream_t as an int, or an object with .cuda_stream "
        f"(torch) or .ptr (cupy), not {type(stream).__name__}"
    )


# --- Python scalars: exact comparison, no cast ---------------------------------------------------

_BELOW, _ABOVE = "below", "above"


def _weak_query(value: Any, kd: _np.dtype, key_dtype: _np.dtype) -> tuple[Any, bool, Optional[str]]:
    """A Python int / float query against keys compared in kd: (query in kd, search on the right
    instead of the left, or a constant answer _BELOW / _ABOVE). Exact: a value that kd cannot
    hold is replaced by the largest kd value below it, searched with side='right' (the same keys
    are < value and <= value); a value outside kd's range is below or above every key."""
    if isinstance(value, float) and key_dtype.kind in "iu" and key_dtype.itemsize == 8:
        raise TypeError(
            f"gsearch: {key_dtype} keys and a Python float query: numpy promotes them to "
            f"float64, which does not hold every {key_dtype} value exactly; convert explicitly"
        )
    if kd.kind == "f":
        t = kd.type
        if value != value:  # NaN
            return t(value), False, None
        try:
            with _np.errstate(over="ignore"):
                f = t(value)
        except OverflowError:  # a Python int beyond float64
            f = t(_math.inf if value > 0 else -_math.inf)
        ff = float(f)
        if ff == value:
            return f, False, None
        if ff > value:
            f = _np.nextafter(f, t(-_math.inf))
        return f, True, None
    info = _np.iinfo(kd)
    if isinstance(value, float):
        if value != value:
            return None, False, _ABOVE  # NaN sorts after every key
        if _math.isinf(value):
            return None, False, _ABOVE if value > 0 else _BELOW
        fl = _math.floor(value)
        inexact = fl != value
    else:
        fl, inexact = int(value), False
    if fl < info.min:
        return None, False, _BELOW
    if fl > info.max:
        return None, False, _ABOVE
    return kd.type(fl), inexact, None


# --- the general path --------------------------------------------------------------------------


def _side_code(side: Any, right: Any) -> int:
    if right is not None and not isinstance(right, (bool, _np.bool_)):
        raise TypeError(f"gsearch: right must be a bool, not {type(right).__name__}")
    if not isinstance(side, str):
        raise TypeError(f"search side must be str, not {type(side).__name__}")
    if side not in ("left", "right"):
        raise ValueError(f"search side must be 'left' or 'right' (got {side!r})")
    if right is None:
        return _RIGHT_I if side == "right" else _LEFT_I
    if side is _LEFT:
        return _RIGHT_I if right else _LEFT_I
    if right and side == "left":
        raise ValueError("gsearch: side and right can't be set to opposites (side='left', right=True)")
    return _RIGHT_I if side == "right" else _LEFT_I


def _algo_code(algo: Any) -> int:
    code = _ALGOS.get(algo) if isinstance(algo, str) else None
    if code is None:
        raise ValueError(f"gsearch: algo must be one of {', '.join(map(repr, _ALGOS))}, not {algo!r}")
    return code


def _apply_sorter(a: _Arr, sorter: Any) -> _Arr:
    """a[sorter] along the last axis (numpy's and torch's sorter), validated."""
    s = _classify(sorter, "sorter")
    if isinstance(s, _Scalar):
        s = _Arr(_np.asarray(s.value), "numpy", None, _np.asarray(s.value).dtype)
    if s.dtype.kind not in "iu":
        raise TypeError("sorter must only contain integers")
    if s.dev != a.dev:
        raise ValueError(f"gsearch: sorter on {_where(s.dev)} but the keys on {_where(a.dev)}")
    ashape, sshape = _shape(a), _shape(s)
    if len(ashape) == 1:
        if len(sshape) != 1:
            raise TypeError("could not parse sorter argument: sorter must be 1-D like a")
        if sshape != ashape:
            raise ValueError("sorter.size must equal a.size")
    elif sshape != ashape:
        raise ValueError(f"gsearch: sorter of shape {sshape} for keys of shape {ashape}: they must match")
    k = ashape[-1]
    x = s.x
    if s.fw == "numpy":
        bad = x.size and (int(x.min()) < 0 or int(x.max()) >= k)
    else:
        bad = x.numel() if s.fw == "torch" else x.size
        bad = bool(bad) and bool(((x < 0) | (x >= k)).any())  # synchronizes on the GPU
    if bad:
        raise ValueError("Sorter index out of range.")
    if a.fw == "numpy":
        xs = (x if s.fw == "numpy" else _np.asarray(x)).astype(_np.intp, copy=False)
        g = _np.take(a.x, xs) if len(ashape) == 1 else _np.take_along_axis(a.x, xs, -1)
    elif a.fw == "torch":
        torch = _torch()
        idx = x if s.fw == "torch" else torch.as_tensor(x, device=a.x.device)
        g = torch.gather(a.x, -1, idx.to(torch.int64))
    else:
        cp = _cupy()
        g = cp.take_along_axis(a.x, cp.asarray(x).astype(cp.int64), -1)
    return _Arr(g, a.fw, a.dev, a.dtype)


def _check_out(out: Any, fw: str, dev: Optional[int], shape: tuple, od: _np.dtype) -> Any:
    """The array to write the result into (out itself, or a detached torch view of it)."""
    r = _classify(out, "out")
    if isinstance(r, _Scalar) or r.fw != fw or r.dev != dev:
        raise ValueError(
            f"gsearch: out must be a {fw} array on {_where(dev)}, like the result"
            + ("" if isinstance(r, _Scalar) else f" (got a {r.fw} array on {_where(r.dev)})")
        )
    if r.x is not out and not (fw == "torch"):  # np.asarray made a copy: not writable in place
        raise ValueError("gsearch: out must be an array the result can be written into")
    if _shape(r) != shape:
        raise ValueError(f"gsearch: out has shape {_shape(r)}, the result {shape}")
    if r.dtype != od:
        raise TypeError(f"gsearch: out has dtype {r.dtype}, the result {od} (out_int32 selects int32)")
    x = r.x
    if fw == "numpy":
        ok, writable = x.flags.c_contiguous, x.flags.writeable
    elif fw == "torch":
        ok, writable = x.is_contiguous(), True
    else:
        ok, writable = x.flags.c_contiguous, True
    if not ok:
        raise ValueError("gsearch: out must be C-contiguous")
    if not writable:
        raise ValueError("gsearch: out is read-only")
    return x


def _search(
    a: Any,
    v: Any,
    side: int,
    sorter: Any,
    out: Any,
    algo: Any,
    check_sorted: Optional[bool],
    out_int32: bool,
    stream: Any,
    batched: bool = True,
    sorted_queries: Optional[bool] = False,
    max_temp_bytes: Optional[int] = None,
) -> Any:
    """The search of every function of the searchsorted family. check_sorted: True checks the
    keys (and, with sorted_queries, the queries: the library does both); None checks the
    queries when sorted_queries is True, and nothing else (the rule of docs/semantics.md, "What
    is checked sorted"); False checks nothing."""
    algo_code = _algo_code(algo)
    if sorted_queries is not None and not isinstance(sorted_queries, (bool, _np.bool_)):
        raise TypeError(f"gsearch: sorted_queries must be True, False or None, not {sorted_queries!r}")
    if check_sorted is not None and not isinstance(check_sorted, (bool, _np.bool_)):
        raise TypeError(f"gsearch: check_sorted must be True, False or None, not {check_sorted!r}")
    A = _classify(a, "keys")
    if isinstance(A, _Scalar):
        raise ValueError("gsearch: the keys must have at least one dimension (a is a scalar)")
    V = _classify(v, "queries")
    A = _adopt(A, V)
    V = _adopt(V, A)
    ashape = _shape(A)
    if len(ashape) == 0:
        raise ValueError("gsearch: the keys must have at least one dimension (a is 0-d)")
    if not batched and len(ashape) != 1:
        raise ValueError(f"gsearch: boundaries must be 1-D, not of shape {ashape}")

    # Where it runs and what it returns: the queries' framework (the keys' for a scalar query).
    if isinstance(V, _Arr):
        if V.dev != A.dev:
            raise ValueError(
                f"gsearch: keys on {_where(A.dev)} but queries on {_where(V.dev)}: "
                "move them to one device"
            )
        fw, dev, vshape = V.fw, V.dev, _shape(V)
    else:
        fw, dev, vshape = A.fw, A.dev, ()
    rows = -1
    if len(ashape) > 1:
        if len(vshape) != len(ashape) or vshape[:-1] != ashape[:-1]:
            raise ValueError(
                f"gsearch: keys of shape {ashape} (row-batched) need queries of shape "
                f"{ashape[:-1] + ('M',)}, not {vshape}"
            )
        rows = _math.prod(ashape[:-1])
        if sorted_queries:
            raise ValueError(
                "gsearch: sorted_queries=True applies to 1-D keys (one search of all the queries), "
                f"not to keys of shape {ashape}"
            )
    od = _INT32 if out_int32 else _INT64
    target = _check_out(out, fw, dev, vshape, od) if out is not None else None

    with _StreamScope(fw, dev, stream) as scope:
        if sorter is not None:
            A = _apply_sorter(A, sorter)
        const = None
        if isinstance(V, _Scalar) and V.dtype is None:  # a Python int / float / bool
            _check_supported(A.dtype, "key")
            kd = _WIDEN.get(A.dtype.newbyteorder("="), A.dtype.newbyteorder("="))
            q, to_right, const = _weak_query(V.value, kd, A.dtype)
            if to_right and side == _LEFT_I:
                side = _RIGHT_I
            if const is not None:
                q = kd.type(0)
            queries = _full0d(fw, dev, q if fw == "numpy" else q.item(), kd)
        else:
            vd = V.dtype
            kd = _resolve(A.dtype, vd)
            if isinstance(V, _Scalar):
                queries = _full0d(fw, dev, V.value if fw == "numpy" else V.value.item(), kd)
            else:
                queries = _convert(V, kd)
        keys = _convert(A, kd)
        res = target if target is not None else _new_empty(fw, dev, vshape, od)
        qs = bool(sorted_queries)
        if sorted_queries is None and rows < 0 and const is None:
            qs = _sorted_path_pays(dev, kd, ashape[-1], queries, scope.handle)
        elif qs and check_sorted is None and _size(queries) > 1 and not _core.is_sorted(queries.reshape(-1), scope.handle):
            raise ValueError(
                "gsearch: sorted_queries=True, but the queries are not sorted (ascending in flat "
                "order, NaN last): pass sorted_queries=None (or False) for queries in any order; "
                "check_sorted=False skips this check"
            )
        _core.search(keys, queries, res, side, algo_code, bool(check_sorted), rows, scope.handle, qs, max_temp_bytes)
        if const is not None:
            k = ashape[-1]
            res[...] = (0 if const == _BELOW else k) - (1 if side == _PRED_I else 0)
    if out is not None:
        return out
    if fw == "numpy" and not vshape:
        return res[()]
    return res


# sorted_queries=None takes the sorted path for at least this many queries (on a GPU, keys
# beyond shared memory, and at least a quarter as many queries as keys) when they are sorted.
_SORTED_AUTO_MIN_QUERIES = 1 << 20


def _sorted_path_pays(dev: Optional[int], kd: _np.dtype, k: int, queries: Any, handle: int) -> bool:
    """sorted_queries=None: search by Merge Path when it pays and the queries are sorted. On a
    GPU, with the keys too large for shared memory (where auto would run a global-memory search:
    the binary search or the index), at least _SORTED_AUTO_MIN_QUERIES queries and n >= k / 4, one O(n) check
    that the queries are sorted (it waits for its answer) decides. Never on the CPU."""
    if dev is None:
        return False
    n = _size(queries)
    if n < _SORTED_AUTO_MIN_QUERIES or 4 * n < k:
        return False
    if not _core.keys_beyond_shared(True, kd.itemsize, k):
        return False
    return bool(_core.is_sorted(queries, handle))


# --- the functions ----------------------------------------------------------------------------

ArrayLike = Any  # numpy arrays, sequences, scalars, torch tensors, cupy arrays, DLPack objects


def _temp_cap(cap: Any) -> Optional[int]:
    """max_temp_bytes checked: None or an int >= 0."""
    if cap is None:
        return None
    if isinstance(cap, (bool, _np.bool_)) or not isinstance(cap, (int, _np.integer)):
        raise TypeError(f"gsearch: max_temp_bytes must be None or an int, not {type(cap).__name__}")
    if cap < 0:
        raise ValueError(f"gsearch: max_temp_bytes must be None or >= 0, not {cap}")
    return int(cap)


def searchsorted(
    a: ArrayLike,
    v: ArrayLike,
    side: Side = _LEFT,
    sorter: Optional[ArrayLike] = None,
    *,
    out: Optional[Any] = None,
    algo: Algo = "auto",
    check_sorted: Optional[bool] = None,
    right: Optional[bool] = None,
    out_int32: bool = False,
    stream: Any = None,
    sorted_queries: Optional[bool] = None,
    max_temp_bytes: Optional[int] = None,
) -> Any:
    """Find the indices where elements should be inserted to maintain order.

    Find the indices into a sorted array `a` such that, if the corresponding elements in `v`
    were inserted before the indices, the order of `a` would be preserved: numpy.searchsorted
    for a 1-D `a`, and torch.searchsorted's row-batched form for an N-D `a`.

    ================  ====================================
    `side`            returned index `i` satisfies
    ================  ====================================
    left              ``a[i-1] < v <= a[i]``
    right             ``a[i-1] <= v < a[i]``
    ================  ====================================

    Parameters
    ----------
    a : array_like, shape (K,) or (..., K)
        Sorted keys (ascending; NaN last, -0.0 equal to 0.0). 1-D: numpy's semantics, `v` of any
        shape. N-D: torch's, one sorted row per leading index, `v` of shape (..., M) with the
        same leading dimensions, row r of `v` searching row r of `a` only.
    v : array_like
        Values to insert into `a`: a scalar, a sequence or an array of any shape (1-D `a`).
    side : {'left', 'right'}, optional
        'left' (the default): the first suitable index; 'right': the last one.
    sorter : array_like of ints, optional
        Indices that sort `a` along its last axis (e.g. from argsort): `a[sorter]` (1-D) or
        ``take_along_axis(a, sorter, -1)`` (N-D) is searched. It must have `a`'s shape and hold
        indices in [0, K) (ValueError otherwise: checked in full, which synchronizes on a GPU).
        gsearch gathers the sorted keys once (an O(K) copy).
    out : array, optional
        Where to write the result: an array of the result's kind (numpy, torch, cupy) on its
        device, of `v`'s shape, int64 (int32 with `out_int32`), C-contiguous. It is returned
        (also for a scalar `v`).
    algo : {'auto', 'pbs', 'pbs-cf', 'pbs-cl', 'binary', 'index', 'partitioned', 'pary'}, optional
        The search algorithm (all give the same indices; they differ in speed). 'auto' picks by
        backend, key count, dtype and query count. 'index' builds a static index of the keys
        for the call (an S+ tree, as :class:`Index`: O(K) to build, about a copy of the keys
        in memory, then one 64-byte node per level on the CPU, one 16-byte node on the GPU)
        and searches it: it pays for large key sets searched by many queries, and 'auto' takes
        it there (by the backends' tuning: today on the CPU from 2**16 keys with at least K/4
        queries, on a GPU beyond shared memory with at least K/2 queries, K/4 from 2**22 keys and
        K/16 from 2**25, where 'partitioned' is not taken). To search the same keys more than
        once, build an :class:`Index` once instead. 'partitioned' groups the queries by bucket of keys
        (192 KB of keys a bucket on a GPU, 256 KB on the CPU), searches each bucket's keys for
        all its queries (in shared memory on a GPU) and writes the results back in query
        order: meant for many queries in key sets beyond shared memory ('auto' takes it on a
        GPU for at least 2**20 queries and K/16 of them from 2**22 keys, and for 4-byte keys
        8K from 2**20 keys); it takes temporary memory of 8-20 bytes a query of a window
        (2**22 queries). 'pary' is P-ary
        search: on a GPU a warp of 32 threads per query, each step cutting the range into 33
        parts (log33 K steps), for the response time of one or a few queries ('auto' takes it
        on a GPU for at most 32 queries in keys beyond shared memory); on the CPU it runs the
        same arithmetic and is slower than 'binary'. N-D `a` (one key list per row) runs
        'index', 'partitioned' and 'pary' as 'binary' where rows outgrow shared memory.
    check_sorted : bool or None, optional
        True: check first that `a` (each row of it) is sorted, and with `sorted_queries=True`
        that `v` is; ValueError if not. O(K); on a GPU it waits for the check. None (the
        default): `a` is not checked (numpy's and torch's contract: unsorted keys give
        unspecified, in-range results), `v` is when `sorted_queries=True`. False: nothing is
        checked.
    right : bool, optional
        torch's flag: True is side='right'. An explicit side='left' with right=True is a
        ValueError; an explicit side wins over right=False.
    out_int32 : bool, optional
        Return int32 indices (torch's option; faster on GPUs). ValueError if K does not fit.
    stream : int or stream object, optional
        For CUDA arrays: the stream to run on (a cudaStream_t as an int, a torch.cuda.Stream,
        a cupy Stream, or any object with ``.cuda_stream`` or ``.ptr``). Default: the current
        stream of the result's framework on the arrays' device. The conversions and the
        allocation of the result are ordered on the same stream.
    sorted_queries : bool or None, optional
        Whether `v` (taken flat) is sorted too, which a 1-D `a` can use: the sorted queries are
        searched by Merge Path ("vectorized sorted search"), O(K + M) work with keys and
        queries each read once, instead of a binary search per query. True: take that path,
        after an O(M) check that `v` is sorted (ValueError naming the queries if not; on a
        GPU the check waits for its answer); ``check_sorted=False`` skips the check, and then
        unsorted queries give unspecified, in-range results; ValueError for N-D `a`. False:
        never. None (the default): decide
        cheaply: on a GPU, when the keys are too large for shared memory (where 'auto' would
        run a global-memory search: the binary search or the index), `v` has at least 2**20 elements and at least a
        quarter as many as `a`, one O(M) check of whether `v` is sorted (which waits for its
        answer) picks the sorted path if it is; on the CPU, and otherwise, never. `algo` is
        ignored on the sorted path.
    max_temp_bytes : int or None, optional
        The most temporary memory the search may allocate (None: no cap). 'auto' then picks
        only algorithms that fit (0: those that read the keys in place); an explicit 'index'
        or 'partitioned' that needs more raises ValueError naming both numbers.
        docs/semantics.md, "Temporary memory", says what each algorithm takes.

    Returns
    -------
    indices : int or array of ints
        Array of insertion points with the same shape as `v` (int64, or int32 with
        `out_int32`), or a numpy integer if `v` is a scalar or 0-d and numpy arrays are
        searched. For torch or cupy inputs, a tensor / array of the same kind on the same
        device (0-d for a scalar `v`).

    Raises
    ------
    ValueError
        Bad `side`, `algo`; shapes that do not match (N-D `a` and `v`, `sorter`, `out`); a 0-d
        `a`; side and right in conflict; unsorted keys with `check_sorted`; unsorted queries
        with `sorted_queries=True` (unless ``check_sorted=False``); keys and queries on
        different devices; a sorter index out of range.
    TypeError
        A dtype gsearch cannot search (complex, object, strings, ...), or a key and query dtype
        pair whose promotion would round (int64 or uint64 with a float, uint64 with a signed
        integer, and the like): convert explicitly. An `out` of the wrong dtype.
    MemoryError
        An allocation failed.
    RuntimeError
        A CUDA error (the message names it).

    Notes
    -----
    Binary search variants from Karsin, Casanova and Sitchinava (PBS, PBS-CF, PBS-CL) on the
    GPU, a branch-free binary search on the CPU (all cores from 16K queries per thread; small
    calls take a short path with the GIL held, large ones release the GIL), and for large key
    sets with many queries a static index built for the call ('index', see `algo`).

    Dtypes: keys and queries are compared in numpy's promoted dtype of the pair (``np.result_type``)
    when every value of both converts to it exactly; bool, 8- and 16-bit integers, float16 and
    bfloat16 are widened exactly to a 32-bit type. Python int and float scalars are compared
    exactly, as Python compares numbers: a query outside the keys' range is below or above every
    key, a float between two integer keys falls between them, an int too large for float32 keys
    compares as the integer it is (this is numpy's answer wherever numpy's own conversion is
    exact). A Python float with int64 / uint64 keys is a TypeError, as above. Lists are taken as
    numpy takes them (``np.asarray``), except that an empty one takes the other operand's dtype.

    Copies: contiguous inputs of the compared dtype are searched in place (numpy, torch and cupy
    alike: DLPack, no copy). Non-contiguous inputs are copied once, and inputs of another dtype
    are converted once, with their own framework (on the GPU, on the call's stream). CUDA arrays
    are searched on their own device (made current for the call and restored after) and the
    call returns once the search is enqueued, except with `check_sorted`, `sorter` or the
    check of `sorted_queries`, which wait. Keys and queries of two frameworks on one device are accepted; the result is of the
    queries' framework. CPU torch tensors are accepted and give CPU torch tensors.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.searchsorted(np.array([1, 2, 3, 4, 5]), 3)
    np.int64(2)
    >>> gsearch.searchsorted(np.array([1, 2, 3, 4, 5]), 3, side='right')
    np.int64(3)
    >>> gsearch.searchsorted(np.array([1, 2, 3, 4, 5]), [-10, 10, 2, 3])
    array([0, 5, 1, 2])
    >>> gsearch.searchsorted(np.array([[1, 3, 5], [2, 4, 6]]), np.array([[3], [3]]))
    array([[1],
           [1]])
    """
    # Fast paths: numpy keys, 1-D, of a supported dtype, default options; queries a numpy array
    # of the same dtype, or a Python int / float that the keys' dtype holds exactly.
    if (
        type(a) is _ndarray
        and sorter is None
        and out is None
        and right is None
        and stream is None
        and out_int32 is False
        and (check_sorted is None or check_sorted is False)
        and algo == "auto"
        and not sorted_queries
        and max_temp_bytes is None
    ):
        s = 0 if side is _LEFT else (_FAST_SIDES.get(side) if type(side) is str else None)
        tv = type(v)
        if s is not None and a.ndim == 1:
            dt = a.dtype
            if tv is _ndarray:
                if dt is v.dtype and dt in _NATIVE:
                    res = _empty(v.shape, _INT64)
                    if _search_fast(a, v, res, s):
                        return res if v.ndim else res[()]
            elif tv is int or tv is float:
                lim = _SCALAR_FAST.get(dt)
                if lim is not None and (lim[0] <= v <= lim[1] if tv is int else lim[2]):
                    res = _empty((), _INT64)
                    if _search_fast(a, _asarray(v, dt), res, s):
                        return res[()]
    # Fast path: torch tensors (CUDA or CPU) of one supported dtype, 1-D keys, no sorter, the
    # current stream, out= (if any) a contiguous tensor of the result's shape, dtype and device.
    if (
        type(a) is _TT
        and type(v) is _TT
        and sorter is None
        and stream is None
        and max_temp_bytes is None
        and (check_sorted is None or check_sorted is False)
        and (sorted_queries is False or (sorted_queries is None and (not v.is_cuda or v.numel() < _SORTED_AUTO_MIN_QUERIES)))
        and (out_int32 is False or out_int32 is True)
        and type(algo) is str
        and algo in _ALGOS
    ):
        s = _side_code(side, right)
        dt = a.dtype
        dev = v.device
        if (
            dt is v.dtype
            and dt in _TORCH_NATIVE
            and a.dim() == 1
            and not (a.requires_grad or v.requires_grad)
            and a.is_contiguous()
            and v.is_contiguous()
            and a.device == dev
        ):
            od = _INT32_T if out_int32 else _INT64_T
            if out is None:
                res = _TT.new_empty(v, v.shape, dtype=od)
            elif (
                type(out) is _TT
                and out.dtype is od
                and out.device == dev
                and out.shape == v.shape
                and out.is_contiguous()
                and not out.requires_grad
            ):
                res = out
            else:
                res = None
            if res is not None:
                _core.search(a, v, res, s, _ALGOS[algo], False, -1, _raw_stream(dev.index) if v.is_cuda else 0, False)
                return res
    return _search(
        a, v, _side_code(side, right), sorter, out, algo, check_sorted, out_int32, stream, sorted_queries=sorted_queries,
        max_temp_bytes=_temp_cap(max_temp_bytes),
    )


def predecessor(
    a: ArrayLike,
    v: ArrayLike,
    *,
    out: Optional[Any] = None,
    algo: Algo = "auto",
    check_sorted: bool = False,
    out_int32: bool = False,
    stream: Any = None,
) -> Any:
    """The index of the largest element of `a` that is less than or equal to each `v`.

    ``predecessor(a, v) == searchsorted(a, v, side='right') - 1``: the largest i with
    ``a[i] <= v``, or -1 when every element of `a` is greater than `v` (or `a` is empty).

    Parameters
    ----------
    a : array_like, shape (K,) or (..., K)
        Sorted keys (NaN last, -0.0 equal to 0.0); N-D: one sorted row per leading index, as in
        :func:`searchsorted`.
    v : array_like
        Queries: any shape (1-D `a`) or (..., M) with `a`'s leading dimensions (N-D `a`).
    out, algo, check_sorted, out_int32, stream
        As in :func:`searchsorted`.

    Returns
    -------
    indices : int or array of ints
        Indices in [-1, K), `v`'s shape, int64 (int32 with `out_int32`); a numpy integer for a
        scalar `v` over numpy keys; torch / cupy arrays on the inputs' device for those inputs.

    Raises
    ------
    ValueError, TypeError, MemoryError, RuntimeError
        As in :func:`searchsorted`.

    Notes
    -----
    The same dtype rules, copies and devices as :func:`searchsorted` (CPU and CUDA).

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.predecessor(np.array([10, 20, 30]), [5, 10, 25, 99])
    array([-1,  0,  1,  2])
    """
    return _search(a, v, _PRED_I, None, out, algo, check_sorted, out_int32, stream)


def bucketize(
    input: ArrayLike,
    boundaries: ArrayLike,
    *,
    out_int32: bool = False,
    right: bool = False,
    out: Optional[Any] = None,
    algo: Algo = "auto",
    check_sorted: bool = False,
    stream: Any = None,
) -> Any:
    """The indices of the buckets to which each value in `input` belongs (torch.bucketize).

    ================  =============================================
    `right`           returned index `i` satisfies
    ================  =============================================
    False             ``boundaries[i-1] < x <= boundaries[i]``
    True              ``boundaries[i-1] <= x < boundaries[i]``
    ================  =============================================

    Parameters
    ----------
    input : array_like
        Values: a scalar or an array of any shape.
    boundaries : array_like, shape (K,)
        1-D, sorted (NaN last, -0.0 equal to 0.0).
    out_int32 : bool, optional
        int32 indices instead of int64.
    right : bool, optional
        False (default): ``searchsorted(boundaries, input, side='left')``; True: side='right'.
    out, algo, check_sorted, stream
        As in :func:`searchsorted`.

    Returns
    -------
    indices : int or array of ints
        `input`'s shape, in [0, K]; a numpy integer for a scalar `input` over numpy
        boundaries; torch / cupy arrays on the inputs' device for those inputs.

    Raises
    ------
    ValueError
        `boundaries` not 1-D, unsorted boundaries with `check_sorted`, devices that differ.
    TypeError, MemoryError, RuntimeError
        As in :func:`searchsorted`.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> b = np.array([1, 3, 5, 7, 9])
    >>> gsearch.bucketize(np.array([[3, 6, 9], [3, 6, 9]]), b)
    array([[1, 3, 4],
           [1, 3, 4]])
    >>> gsearch.bucketize(np.array([[3, 6, 9], [3, 6, 9]]), b, right=True)
    array([[2, 3, 5],
           [2, 3, 5]])
    """
    if not isinstance(right, (bool, _np.bool_)):
        raise TypeError(f"gsearch: right must be a bool, not {type(right).__name__}")
    side = _RIGHT_I if right else _LEFT_I
    return _search(boundaries, input, side, None, out, algo, check_sorted, out_int32, stream, batched=False)


# --- unsorted search: find, count, isin ---------------------------------------------------------

FindMode = Literal["first", "any", "random", "count", "all"]
FindOp = Literal["==", "!=", "<", "<=", ">", ">=", "in", "eq", "ne", "lt", "le", "gt", "ge"]
FindStrategy = Literal["auto", "strided", "coalesced", "unrolled", "one-per-thread"]
IsinMethod = Literal["auto", "sorted", "hash"]

_FIND_MODES: dict[str, int] = dict(_core.FIND_MODES)
_FIND_OPS: dict[str, int] = dict(_core.FIND_OPS)
_FIND_STRATEGIES: dict[str, int] = dict(_core.FIND_STRATEGIES)
_ISIN_METHODS: dict[str, int] = dict(_core.ISIN_METHODS)
_IN_OP = _FIND_OPS["in"]
_FIND_MODE_CODES: dict[str, int] = {**_FIND_MODES, "all": -1}  # 'all' is _core.find_all
_BOOL = _np.dtype(_np.bool_)
_ELEMENT_NAMES = ("element", "test_elements", "element", "test_elements")
_f32 = _np.float32
_F32_MAX = float(_np.finfo(_np.float32).max)
# find's fast path, per native dtype: the Python ints it takes (those in [lo, hi], held
# exactly), whether it takes every Python float (float64), or those float32 holds (checked).
_FIND_FAST = {
    _np.dtype(t): (int(_np.iinfo(t).min), int(_np.iinfo(t).max), False, False)
    for t in ("int32", "uint32", "int64", "uint64")
}
_FIND_FAST[_np.dtype("float64")] = (-(2**53), 2**53, True, False)
_FIND_FAST[_np.dtype("float32")] = (-(2**24), 2**24, False, True)


def _alloc_numpy(count: int) -> _np.ndarray:
    return _empty(count, _INT64)


def _choice(fn: str, what: str, x: Any, options: dict) -> int:
    code = options.get(x) if isinstance(x, str) else None
    if code is None:
        raise ValueError(f"gsearch.{fn}: {what} must be one of {', '.join(map(repr, options))}, not {x!r}")
    return code


def _is_bfloat16(arr: _Arr) -> bool:
    return arr.fw == "torch" and str(arr.x.dtype) == "torch.bfloat16"


def _number(fn: str, what: str, value: Any) -> Union[int, float]:
    """A scalar value (Python number, numpy scalar, 0-d array of any framework) as the Python
    int or float that equals it exactly; TypeError for non-numbers, ValueError for arrays."""
    tv = type(value)
    if tv is int or tv is float:
        return value
    if isinstance(value, (bool, _np.bool_)):
        return int(value)
    if isinstance(value, int):  # subclasses (IntEnum, ...)
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, _np.generic):
        k = value.dtype.kind
        if k in "iu":
            return int(value)
        if k == "f":
            if value.dtype.itemsize <= 8:
                return float(value)
            # long double: an integer stays exact as a Python int; else it must be a float64
            if _np.isfinite(value) and value == _np.floor(value):
                return int(value)
            f = float(value)
            if f == value or f != f:
                return f
            raise ValueError(
                f"gsearch.{fn}: {what} {value!r} ({value.dtype}) is not representable in any "
                "dtype gsearch searches"
            )
        raise TypeError(f"gsearch.{fn}: {what} must be a real number, not {value.dtype} ({value!r})")
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, _np.ndarray) and hasattr(value, "item"):
        # torch / cupy and other frameworks' arrays
        if len(tuple(shape)) != 0:
            raise ValueError(
                f"gsearch.{fn}: {what} must be a scalar or a 0-d array, not an array of shape {tuple(shape)}"
            )
        item = value.item()
        if isinstance(item, (bool, int, float)):
            return _number(fn, what, item)
        raise TypeError(f"gsearch.{fn}: {what} must be a real number, not {type(item).__name__} ({item!r})")
    try:
        x = _np.asarray(value)
    except Exception:
        x = None
    if x is None or x.dtype.kind not in "biuf":
        raise TypeError(f"gsearch.{fn}: {what} must be a real number, not {type(value).__name__} ({value!r})")
    if x.ndim != 0:
        raise ValueError(
            f"gsearch.{fn}: {what} must be a scalar or a 0-d array, not an array of shape {x.shape}"
        )
    return _number(fn, what, x[()])


def _representable(num: Union[int, float], d: _np.dtype, bfloat16: bool = False) -> tuple:
    """(num as the Python int / float of d's kind, None) when d (bfloat16: torch's) holds num
    exactly, else (None, the reason)."""
    if d.kind in "biu":
        if isinstance(num, float):
            if num != num or _math.isinf(num):
                return None, f"{d.name} holds no NaN or infinity"
            if not num.is_integer():
                return None, "it is not an integer"
            num = int(num)
        lo, hi = (0, 1) if d.kind == "b" else (int(_np.iinfo(d).min), int(_np.iinfo(d).max))
        if not lo <= num <= hi:
            return None, f"{d.name} holds [{lo}, {hi}]"
        return num, None
    name = "bfloat16" if bfloat16 else d.name
    if isinstance(num, int):
        try:
            f = float(num)
        except OverflowError:
            return None, f"it is beyond the {name} range"
        if int(f) != num:
            return None, "it is not a float64, nor a value of any float dtype"
        num = f
    if num != num or _math.isinf(num):
        return num, None  # NaN and the infinities are values of every float dtype
    with _np.errstate(over="ignore"):
        c = d.type(num)
    if _math.isinf(c):
        return None, f"it is beyond the {name} range (max {float(_np.finfo(d).max)!r})"
    if bfloat16 and (float(c) != num or int(c.view(_np.uint32)) & 0xFFFF):
        return None, (
            "it is not a bfloat16 value: pass the one torch rounds it to, "
            "torch.tensor(value, dtype=torch.bfloat16).item()"
        )
    if float(c) != num:
        return None, (
            f"the nearest {name} is {float(c)!r}: pass np.{name}({num!r}) to search for that value"
        )
    return num, None


def _exact_value(fn: str, what: str, value: Any, arr: _Arr) -> Union[int, float]:
    """The value `x op value` compares with: exactly a value of arr's dtype (ValueError naming
    value and dtype otherwise), as the Python int (integer and bool dtypes) or float the
    extension takes."""
    num = _number(fn, what, value)
    bf = _is_bfloat16(arr)
    exact, why = _representable(num, arr.dtype, bf)
    if why is not None:
        raise ValueError(
            f"gsearch.{fn}: {what} {value!r} is not representable in {'bfloat16' if bf else arr.dtype.name} "
            f"(the array's dtype): {why}"
        )
    return exact


def _seed(seed: Any) -> int:
    if isinstance(seed, (bool, _np.bool_)):
        raise TypeError("gsearch.find: seed must be an int, not bool")
    try:
        s = _operator.index(seed)
    except TypeError:
        raise TypeError(f"gsearch.find: seed must be an int, not {type(seed).__name__}") from None
    if not 0 <= s < 2**64:
        raise ValueError(f"gsearch.find: seed must be in [0, 2**64), not {s}")
    return s


def _find_data(fn: str, a: Any) -> tuple[_Arr, _np.dtype]:
    """The 1-D array find searches, and the supported dtype it is searched in."""
    A = _classify(a, "a")
    if isinstance(A, _Scalar):
        raise ValueError(f"gsearch.{fn}: a must be a 1-D array, not a scalar")
    shape = _shape(A)
    if len(shape) != 1:
        raise ValueError(
            f"gsearch.{fn}: a must be 1-D, not of shape {shape}: pass a.ravel() (torch: a.ravel() "
            "or a.flatten()) to search all of its elements by flat index"
        )
    _check_supported(A.dtype, "array")
    d = A.dtype.newbyteorder("=")
    return A, _WIDEN.get(d, d)


def find(
    a: ArrayLike,
    value: Any,
    mode: FindMode = "first",
    op: FindOp = "==",
    *,
    hi: Any = None,
    seed: int = 0,
    strategy: FindStrategy = "auto",
    per_thread: int = 0,
    stream: Any = None,
) -> Any:
    """Search an unsorted 1-D array for the elements that compare with `value` as `op` says.

    With ``m = (a op value)`` elementwise (numpy's comparison), `mode` selects the answer:

    ==========  ==================================================  ===========================
    `mode`      returns                                             numpy equivalent
    ==========  ==================================================  ===========================
    'first'     the lowest matching index, or -1                    ``np.argmax(m)`` if any
    'any'       some matching index (the fastest to find), or -1
    'random'    a uniformly random matching index drawn from
                `seed` (reproducible, the same on CPU and GPU),
                or -1
    'count'     the number of matches                               ``np.count_nonzero(m)``
    'all'       every matching index, ascending (int64 array)       ``np.flatnonzero(m)``
    ==========  ==================================================  ===========================

    Parameters
    ----------
    a : array_like, shape (N,)
        The data, 1-D, in any order: a numpy array (searched on the CPU, all cores for large
        arrays), a torch tensor or cupy array on a CUDA device (searched on the GPU, in place),
        or anything ``np.asarray`` takes. Dtypes: int8-64, uint8-64, float16-64, bool (and
        torch's bfloat16).
    value : scalar
        The value to compare with: a Python int / float / bool, a numpy scalar or a 0-d array
        (of any framework). It must be exactly a value of `a`'s dtype (see Notes); ValueError
        otherwise.
    mode : {'first', 'any', 'random', 'count', 'all'}, optional
        What to return (table above). Default 'first'.
    op : {'==', '!=', '<', '<=', '>', '>=', 'in'}, optional
        The comparison ``x op value`` of each element x; 'in' is ``value <= x < hi``. The names
        'eq', 'ne', 'lt', 'le', 'gt', 'ge' are accepted too. Default '=='.
    hi : scalar, optional
        The exclusive upper end of op='in' (required there, refused with any other op), under
        the same rule as `value`.
    seed : int, optional
        The seed of mode='random', in [0, 2**64).
    strategy : {'auto', 'strided', 'coalesced', 'unrolled', 'one-per-thread'}, optional
        How the GPU reads the data: 'auto' (the tuned scan, with early exit) or one of the
        study kernels of the unsorted-search study (k = `per_thread` elements per thread, no
        early exit), for modes 'first', 'any' and 'count' only (ValueError otherwise). All give
        the same result; on the CPU they run as a simulated grid.
    per_thread : int, optional
        Elements per thread of 'strided', 'coalesced' and 'unrolled'; 0 (the default) = 12.
    stream : int or stream object, optional
        For CUDA arrays: the stream to run on, as in :func:`searchsorted`. find waits for its
        answer: the int it returns, or for 'all' the count that sizes the result (which is
        then allocated on that stream and filled in order on it).

    Returns
    -------
    int or array
        A Python int for 'first', 'any', 'random' (an index, -1 when nothing matches) and
        'count'. For 'all', a 1-D int64 array of the matching indices in ascending order: a
        numpy array for numpy (and other CPU) input, a tensor / array of the input's framework
        on its device for torch and cupy input.

    Raises
    ------
    ValueError
        `a` not 1-D (use ``a.ravel()``) or a scalar; `value` / `hi` not representable in `a`'s
        dtype; an array as `value`; op='in' without `hi`, or `hi` with another op; a bad
        `mode`, `op`, `strategy`; a study strategy with mode 'random' or 'all'; a negative
        `per_thread`; a `seed` out of range.
    TypeError
        A dtype gsearch cannot search (complex, object, strings, ...); a `value` that is not a
        real number.
    MemoryError
        An allocation failed.
    RuntimeError
        A CUDA error (the message names it).

    Notes
    -----
    Semantics are numpy's elementwise comparisons: NaN compares false with everything, so a
    NaN element matches only '!=' (and a NaN `value` matches nothing but '!=', which matches
    every element), and -0.0 == 0.0.

    The value rule: `value` (and `hi`) must be exactly representable in `a`'s dtype, else
    ValueError naming the value and the dtype. So 3e9 or -1 is refused for int32 / uint32 data,
    1.5, NaN and inf for integer data, 1e39 for float32 data, and also 0.1 for float32 data:
    0.1 is not a float32. numpy itself answers ``a == 0.1`` by rounding 0.1 to float32 first
    (NEP 50: a Python float is "weak") but ``a == np.float64(0.1)`` in float64, where no float32
    equals it; rather than choose one of those silently, gsearch asks for the value meant:
    ``np.float32(0.1)`` (the rounded one) is accepted. A float that is an integer (2.0) is
    accepted for integer data, and an integer that the float dtype holds (2**24 for float32)
    for float data. Any value that passes compares exactly as numpy compares it.

    Copies: a contiguous `a` of a native dtype (int32, uint32, int64, uint64, float32,
    float64) is searched in place; other inputs are converted once with their own framework
    (bool, 8- and 16-bit integers and float16 widen exactly to 32 bits).

    Early exit: 'first' and 'any' stop once the answer is certain ('any' at the first hit
    anywhere). 'random' and 'all' read the data once, and again only the 4,096-element blocks
    that hold matches ('all' allocates its result, of the size it counted, in between).

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> a = np.array([4, 7, 1, 7, 9, 7])
    >>> gsearch.find(a, 7)
    1
    >>> gsearch.find(a, 2)
    -1
    >>> gsearch.find(a, 7, mode='count')
    3
    >>> gsearch.find(a, 7, mode='all')
    array([1, 3, 5])
    >>> gsearch.find(a, 5, op='>', mode='all')
    array([1, 3, 4, 5])
    >>> gsearch.find(a, 4, op='in', hi=8, mode='all')
    array([0, 1, 3, 5])
    >>> gsearch.find(a, 7, mode='random', seed=3) in (1, 3, 5)
    True
    >>> gsearch.find(np.array([0.5, np.nan, -0.0]), 0.0)
    2
    >>> gsearch.find(np.array([1, 2], dtype=np.int32), 1.5)
    Traceback (most recent call last):
    ...
    ValueError: gsearch.find: value 1.5 is not representable in int32 (the array's dtype): it is not an integer
    """
    # Fast path: a contiguous 1-D numpy array of a native dtype, a Python int / float that the
    # dtype holds exactly, default options.
    if (
        type(a) is _ndarray
        and hi is None
        and stream is None
        and strategy == "auto"
        and per_thread == 0
        and type(seed) is int
        and type(mode) is str
        and type(op) is str
    ):
        lim = _FIND_FAST.get(a.dtype)
        tv = type(value)
        if lim is not None and a.ndim == 1 and a.flags.c_contiguous and 0 <= seed < 2**64:
            if tv is int:
                ok = lim[0] <= value <= lim[1]
            else:
                ok = tv is float and (
                    lim[2] or (lim[3] and -_F32_MAX <= value <= _F32_MAX and float(_f32(value)) == value)
                )
            code = _FIND_MODE_CODES.get(mode)
            opc = _FIND_OPS.get(op)
            if ok and code is not None and opc is not None and opc != _IN_OP:
                if code < 0:
                    return _core.find_all(a, opc, value, _alloc_numpy, None, 0)
                return _core.find(a, code, opc, value, None, 0, 0, seed, 0)
    mode_code = _choice("find", "mode", mode, _FIND_MODE_CODES)
    op_code = _choice("find", "op", op, _FIND_OPS)
    strategy_code = _choice("find", "strategy", strategy, _FIND_STRATEGIES)
    if mode_code < 0 and strategy_code != 0:
        raise ValueError(
            f"gsearch.find: strategy {strategy!r} is a study of modes 'first', 'any' and 'count', not 'all'"
        )
    try:
        k = _operator.index(per_thread)
    except TypeError:
        raise TypeError(f"gsearch.find: per_thread must be an int, not {type(per_thread).__name__}") from None
    if k < 0:
        raise ValueError(f"gsearch.find: per_thread must be >= 0 (0 = the default, 12), not {k}")
    s = _seed(seed)
    A, kd = _find_data("find", a)
    v = _exact_value("find", "value", value, A)
    h = None
    if op_code == _IN_OP:
        if hi is None:
            raise ValueError("gsearch.find: op='in' needs hi (it matches value <= x < hi)")
        h = _exact_value("find", "hi", hi, A)
    elif hi is not None:
        raise ValueError(f"gsearch.find: hi applies to op='in' only, not to op={op!r}")
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, stream) as scope:
        data = _convert(A, kd)
        if mode_code < 0:
            return _core.find_all(
                data, op_code, v, lambda c: _new_empty(fw, dev, (c,), _INT64), h, scope.handle
            )
        return _core.find(data, mode_code, op_code, v, h, strategy_code, k, s, scope.handle)


def count(a: ArrayLike, value: Any, op: FindOp = "==", *, hi: Any = None, stream: Any = None) -> int:
    """The number of elements of a 1-D array that compare with `value` as `op` says.

    ``count(a, v, op) == find(a, v, mode='count', op=op) == np.count_nonzero(a op v)``.

    Parameters
    ----------
    a : array_like, shape (N,)
        The data (numpy on the CPU; torch / cupy CUDA arrays on the GPU, in place).
    value : scalar
        Exactly a value of `a`'s dtype (the rule of :func:`find`).
    op : {'==', '!=', '<', '<=', '>', '>=', 'in'}, optional
        As in :func:`find` ('in': ``value <= x < hi``). Default '=='.
    hi : scalar, optional
        The exclusive upper end of op='in'.
    stream : int or stream object, optional
        As in :func:`find`.

    Returns
    -------
    int
        The number of matches (a Python int).

    Raises
    ------
    ValueError, TypeError, MemoryError, RuntimeError
        As in :func:`find`.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> a = np.array([1.0, np.nan, 3.0, -0.0, 0.0])
    >>> gsearch.count(a, 0.0)
    2
    >>> gsearch.count(a, 0.0, op='!=')
    3
    >>> gsearch.count(a, 0.0, op='>=')
    4
    """
    return find(a, value, "count", op, hi=hi, stream=stream)


def _as_numpy_scalar(x: _Scalar) -> _Arr:
    """A scalar as the 0-d numpy array np.isin makes of it."""
    arr = _np.asarray(x.value)
    return _Arr(arr, "numpy", None, arr.dtype)


def isin(
    element: ArrayLike,
    test_elements: ArrayLike,
    assume_unique: bool = False,
    invert: bool = False,
    *,
    kind: Optional[str] = None,
    method: IsinMethod = "auto",
    stream: Any = None,
) -> Any:
    """Calculates ``element in test_elements``, broadcasting over `element` only.

    numpy.isin (and torch.isin): a boolean array of the same shape as `element` that is True
    where an element of `element` is in `test_elements` and False otherwise (the opposite with
    `invert`).

    Parameters
    ----------
    element : array_like
        Input array, any shape (a scalar gives a 0-d result).
    test_elements : array_like
        The values against which to test each value of `element`: any shape (flattened), a
        scalar, a sequence.
    assume_unique : bool, optional
        numpy's hint that both inputs hold unique elements: accepted for compatibility; it
        does not change the result (and gsearch does not need it to be fast).
    invert : bool, optional
        If True, the values in the returned array are inverted: ``element not in
        test_elements`` (faster than ``~isin(...)``).
    kind : {None, 'sort', 'table'}, optional
        numpy's choice of algorithm: accepted for compatibility; it does not change the result
        or the algorithm (see `method`). Any other value is a ValueError, as in numpy.
    method : {'auto', 'sorted', 'hash'}, optional
        gsearch's algorithm: 'sorted' (the test elements sorted once, then a binary search
        per element: PBS-CL in shared memory on the GPU when they fit), 'hash' (a hash set of
        the test elements, one expected probe per element), 'auto' (sorted where the sorted
        test elements fit in shared memory, else hash on the GPU; sorted on the CPU). All give
        the same result.
    stream : int or stream object, optional
        For CUDA arrays: the stream to run on, as in :func:`searchsorted`. The call returns
        once the work is enqueued.

    Returns
    -------
    isin : ndarray, bool
        Has the same shape as `element` (0-d for a scalar `element`, as numpy gives). A numpy
        array for numpy input; a torch.bool tensor / cupy bool array on the inputs' device for
        torch / cupy input (of `element`'s framework; of `test_elements`' for a scalar
        `element`).

    Raises
    ------
    ValueError
        The inputs on different devices; a bad `kind` or `method`.
    TypeError
        A dtype gsearch cannot search, or an `element` / `test_elements` dtype pair whose
        promotion would round (int64 or uint64 with a float, uint64 with a signed integer):
        convert one explicitly.
    MemoryError
        An allocation failed.
    RuntimeError
        A CUDA error (the message names it).

    Notes
    -----
    Membership is numpy's equality: NaN is never a member (not even of a set holding NaN) and
    -0.0 and 0.0 are the same element.

    Dtypes: arrays (and numpy scalars) of two dtypes are compared in numpy's promotion of the
    pair when it holds every value of both exactly (bool, 8- and 16-bit integers and float16
    widen exactly to 32 bits), and refused with TypeError where it would round (where np.isin
    would compare rounded values). Lists are taken as ``np.asarray`` takes them (an empty one
    takes the other argument's dtype). A Python int
    or float (either argument) compares exactly as Python compares numbers: a value that the
    other argument's dtype does not hold equals none of its elements (``isin(int32_array,
    3.5)`` is all False, ``isin(uint64_array, 3)`` works). This is numpy's answer wherever
    numpy's own conversion is exact.

    Copies: contiguous inputs of the compared dtype are used in place (numpy, torch and cupy
    alike); others are converted once with their own framework.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> element = 2 * np.arange(4).reshape((2, 2))
    >>> element
    array([[0, 2],
           [4, 6]])
    >>> test_elements = [1, 2, 4, 8]
    >>> mask = gsearch.isin(element, test_elements)
    >>> mask
    array([[False,  True],
           [ True, False]])
    >>> element[mask]
    array([2, 4])
    >>> gsearch.isin(element, test_elements, invert=True)
    array([[ True, False],
           [False,  True]])
    >>> gsearch.isin(np.array([np.nan, -0.0, 1.0]), [np.nan, 0.0])
    array([False,  True, False])
    >>> gsearch.isin(3, [1, 2, 3])
    array(True)
    """
    # Fast path: numpy arrays of one native dtype, C-contiguous, default options.
    if (
        type(element) is _ndarray
        and type(test_elements) is _ndarray
        and kind is None
        and method == "auto"
        and stream is None
        and type(invert) is bool
    ):
        dt = element.dtype
        if (
            dt is test_elements.dtype
            and dt in _NATIVE
            and element.flags.c_contiguous
            and test_elements.flags.c_contiguous
        ):
            out = _empty(element.shape, _BOOL)
            _core.isin(element, test_elements, out, invert, 0, 0)
            return out
    if kind is not None and kind not in ("sort", "table"):
        raise ValueError(f"Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    method_code = _choice("isin", "method", method, _ISIN_METHODS)
    invert = bool(invert)
    E = _classify(element, "element")
    T = _classify(test_elements, "test_elements")
    E = _adopt(E, T)
    T = _adopt(T, E)
    if isinstance(E, _Scalar) and isinstance(T, _Scalar):
        E, T = _as_numpy_scalar(E), _as_numpy_scalar(T)  # as np.isin takes them: numpy, 0-d
    if isinstance(E, _Arr) and isinstance(T, _Arr) and E.dev != T.dev:
        raise ValueError(
            f"gsearch: element on {_where(E.dev)} but test_elements on {_where(T.dev)}: "
            "move them to one device"
        )
    base = E if isinstance(E, _Arr) else T
    fw, dev = base.fw, base.dev
    shape = _shape(E) if isinstance(E, _Arr) else ()

    with _StreamScope(fw, dev, stream) as scope:
        # A Python int / float against an array: exactly a value of the array's dtype, or none.
        if isinstance(E, _Scalar) and E.dtype is None:
            _check_supported(T.dtype, "test_elements")
            x, why = _representable(_number("isin", "element", E.value), T.dtype, _is_bfloat16(T))
            if why is not None:
                return _full0d(fw, dev, invert, _BOOL)
            d = T.dtype.newbyteorder("=")
            d = _WIDEN.get(d, d)
            elements = _full0d(fw, dev, x, d)
            tests = _convert(T, d)
        elif isinstance(T, _Scalar) and T.dtype is None:
            _check_supported(E.dtype, "element")
            x, why = _representable(_number("isin", "test_elements", T.value), E.dtype, _is_bfloat16(E))
            d = E.dtype.newbyteorder("=")
            d = _WIDEN.get(d, d)
            elements = _convert(E, d)
            tests = _new_empty(fw, dev, (0,), d) if why is not None else _full0d(fw, dev, x, d)
        else:
            d = _resolve(E.dtype, T.dtype, _ELEMENT_NAMES)
            elements = (
                _convert(E, d) if isinstance(E, _Arr) else _full0d(fw, dev, _number("isin", "element", E.value), d)
            )
            tests = (
                _convert(T, d)
                if isinstance(T, _Arr)
                else _full0d(fw, dev, _number("isin", "test_elements", T.value), d)
            )
        out = _new_empty(fw, dev, shape, _BOOL)
        _core.isin(elements, tests, out, invert, method_code, scope.handle)
    return out


# --- the merge-like operations: merge, sort, set operations, joins ----------------------------

SetOp = Literal["intersection", "union", "difference", "symmetric-difference"]
JoinHow = Literal["inner", "left", "right", "full", "semi", "anti"]

_SET_OPS: dict[str, int] = dict(_core.SET_OPS)
_JOIN_KINDS: dict[str, int] = dict(_core.JOIN_KINDS)
_LEFT_ONLY_JOINS = frozenset(("semi", "anti"))


def _xp(fw: str) -> Any:
    """The array module of framework fw."""
    if fw == "numpy":
        return _np
    return _torch() if fw == "torch" else _cupy()


def _cat(fw: str, parts: list) -> Any:
    return _torch().cat(parts) if fw == "torch" else _xp(fw).concatenate(parts)


def _isnan(fw: str, x: Any) -> Any:
    return _xp(fw).isnan(x)


def _true1(fw: str, dev: Optional[int]) -> Any:
    """A 1-element True array of framework fw on dev."""
    return _full0d(fw, dev, True, _BOOL).reshape(1)


def _arange(fw: str, dev: Optional[int], n: int) -> Any:
    if fw == "numpy":
        return _np.arange(n, dtype=_np.int64)
    if fw == "torch":
        torch = _torch()
        device = torch.device("cuda", dev) if dev is not None else torch.device("cpu")
        return torch.arange(n, dtype=torch.int64, device=device)
    return _cupy().arange(n, dtype=_np.int64)


def _size(x: Any) -> int:
    return int(x.numel()) if hasattr(x, "numel") and not isinstance(x, _np.ndarray) else int(x.size)


def _cast(x: Any, fw: str, d: _np.dtype) -> Any:
    """x (an array of framework fw) in dtype d: a no-op when it has it; exact here (the values
    came from arrays of dtype d, computed in a wider one)."""
    if fw == "numpy" or fw == "cupy":
        return x if x.dtype == d else x.astype(d)
    td = _torch_dtype(d)
    return x if x.dtype is td else x.to(td)


def _flat(fn: str, x: Any, what: str, ravel: bool = False) -> _Arr:
    """x as a 1-D array; with ravel (numpy's set functions) any shape, and scalars, flattened."""
    X = _classify(x, what)
    if isinstance(X, _Scalar):
        if not ravel:
            raise ValueError(f"gsearch.{fn}: {what} must be a 1-D array, not a scalar")
        arr = _np.asarray(X.value).reshape(1)
        return _Arr(arr, "numpy", None, arr.dtype)
    shape = _shape(X)
    if len(shape) != 1:
        if not ravel:
            raise ValueError(f"gsearch.{fn}: {what} must be 1-D, not of shape {shape} (pass {what}.ravel())")
        X = X._replace(x=X.x.reshape(-1))
    return X


def _pair(fn: str, a: Any, b: Any, names: tuple, ravel: bool = False) -> tuple:
    """Two 1-D inputs on one device: (A, B, the dtype of the result (numpy's promotion of the
    pair), the dtype they are computed in (it, widened exactly))."""
    A = _flat(fn, a, names[0], ravel)
    B = _flat(fn, b, names[1], ravel)
    A = _adopt(A, B)
    B = _adopt(B, A)
    if A.dev != B.dev:
        raise ValueError(
            f"gsearch.{fn}: {names[0]} on {_where(A.dev)} but {names[1]} on {_where(B.dev)}: "
            "move them to one device"
        )
    kd = _resolve(A.dtype, B.dtype, names + names)
    p = _np.result_type(A.dtype, B.dtype).newbyteorder("=")
    return A, B, p, kd


def _one(fn: str, a: Any) -> tuple:
    """One 1-D input: (A, its dtype, the dtype it is computed in)."""
    A = _flat(fn, a, "a")
    _check_supported(A.dtype, "array")
    p = A.dtype.newbyteorder("=")
    return A, p, _WIDEN.get(p, p)


def _values_in(fn: str, v: Any, what: str, keys: _Arr, n: int) -> tuple:
    """Values that go with n keys, as the int64 array the library carries: 8-byte dtypes bit
    for bit (a view), other integer and bool dtypes converted exactly. Returns (it, the values'
    dtype). v may be classified already."""
    V = v if isinstance(v, (_Arr, _Scalar)) else _classify(v, what)
    if isinstance(V, _Scalar):
        raise ValueError(f"gsearch.{fn}: {what} must be a 1-D array, not a scalar")
    if _shape(V) != (n,):
        raise ValueError(f"gsearch.{fn}: {what} has shape {_shape(V)}, but there are {n} keys (one value each)")
    if V.dev != keys.dev:
        raise ValueError(f"gsearch.{fn}: {what} on {_where(V.dev)} but the keys on {_where(keys.dev)}")
    d = V.dtype
    if _is_bfloat16(V) or d.kind not in "biuf" or (d.kind == "f" and d.itemsize != 8):
        raise TypeError(
            f"gsearch.{fn}: {what} of dtype {'bfloat16' if _is_bfloat16(V) else d}: values are integers "
            "(int8-64, uint8-32, bool: converted exactly) or of an 8-byte dtype (int64, uint64, "
            "float64: carried bit for bit)"
        )
    if d.itemsize == 8:
        x = _convert(V, d)  # contiguous
        if d == _INT64:
            return x, d
        return (x.view(_INT64_T) if V.fw == "torch" else x.view(_np.int64)), d
    return _convert(V, _INT64), d


def _values_out(x: Any, fw: str, d: _np.dtype) -> Any:
    """The carried int64 values back in their own dtype d."""
    if d == _INT64:
        return x
    if d.itemsize == 8:
        return x.view(_torch_dtype(d)) if fw == "torch" else x.view(d)
    return _cast(x, fw, d)


def _sorted_copy(x: Any, fw: str, dev: Optional[int], d: _np.dtype, handle: int) -> Any:
    """The contiguous 1-D array x of dtype d sorted by the library's stable sort: x itself when it
    is sorted already (one O(n) read, which costs a few percent of a sort; the stable sort would
    return it unchanged), else a sorted copy. Callers only read the result."""
    if _core.is_sorted(x, handle):
        return x
    out = _new_empty(fw, dev, (_size(x),), d)
    _core.merge_sort(x, out, None, None, handle)
    return out


def _unique_sorted(x: Any, fw: str, dev: Optional[int], d: _np.dtype) -> Any:
    """np.unique of the sorted 1-D array x (NaN last): the first of each run of equal elements
    (-0.0 == 0.0), and one NaN for all of them (numpy's equal_nan=True)."""
    if _size(x) < 2:
        return x
    differ = x[1:] != x[:-1]
    if d.kind == "f":
        nan = _isnan(fw, x)
        differ = differ & ~(nan[1:] & nan[:-1])
    return x[_cat(fw, [_true1(fw, dev), differ])]


def _split_nan(x: Any, fw: str, d: _np.dtype) -> tuple:
    """(the elements of x that are not NaN, those that are) for float dtypes; (x, None) else."""
    if d.kind != "f":
        return x, None
    nan = _isnan(fw, x)
    return x[~nan], x[nan]


def merge(
    a: ArrayLike,
    b: ArrayLike,
    a_values: Optional[ArrayLike] = None,
    b_values: Optional[ArrayLike] = None,
    *,
    check: bool = True,
    stream: Any = None,
) -> Any:
    """The stable merge of two sorted 1-D arrays, optionally carrying a value per key.

    ``merge(a, b)`` equals ``np.sort(np.concatenate([a, b]), kind='stable')`` for sorted `a` and
    `b` (in O(len(a) + len(b)), by Merge Path): equal keys keep `a`'s before `b`'s.

    Parameters
    ----------
    a, b : array_like, shape (N,) and (M,)
        Sorted (ascending; NaN last, -0.0 equal to 0.0). numpy arrays are merged on the CPU,
        torch tensors / cupy arrays on a CUDA device on the GPU, in place (no copy).
    a_values, b_values : array_like, optional
        One value per key of `a` and of `b` (both or neither; one dtype): integers and bool
        (converted exactly to int64 and back) or any 8-byte dtype (int64, uint64, float64:
        carried bit for bit). On the keys' device.
    check : bool, optional
        Check that `a` and `b` are sorted first (the default; ValueError naming the unsorted
        one, and nothing computed). O(N + M); on a GPU it waits for the check. False skips it:
        unsorted inputs then give an unspecified (but in-bounds) result.
    stream : int or stream object, optional
        For CUDA arrays: the stream to run on, as in :func:`searchsorted`.

    Returns
    -------
    merged : array, shape (N + M,)
        In numpy's promotion of the two dtypes, of `a`'s framework on its device.
    merged_values : array, shape (N + M,)
        With values only: ``merged_values[k]`` is the value of the key ``merged[k]`` came from,
        in the values' dtype. Returned as ``(merged, merged_values)``.

    Raises
    ------
    ValueError
        Inputs not 1-D, on different devices, unsorted (with `check`), values of the wrong
        length or only one of them.
    TypeError
        Key dtypes whose promotion would round (int64 with a float, ...), unsupported dtypes,
        values of two dtypes or of a dtype that is not carried.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.merge(np.array([1, 3, 5]), np.array([2, 3, 4]))
    array([1, 2, 3, 3, 4, 5])
    >>> gsearch.merge(np.array([1, 3]), np.array([3]), np.array([10, 11]), np.array([20]))
    (array([1, 3, 3]), array([10, 11, 20]))
    """
    A, B, p, kd = _pair("merge", a, b, ("a", "b"))
    if (a_values is None) != (b_values is None):
        raise ValueError("gsearch.merge: pass both a_values and b_values, or neither")
    na, nb = _shape(A)[0], _shape(B)[0]
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, stream) as scope:
        ka, kb = _convert(A, kd), _convert(B, kd)
        out = _new_empty(fw, dev, (na + nb,), kd)
        if a_values is None:
            _core.merge(ka, kb, out, None, None, None, bool(check), scope.handle)
            return _cast(out, fw, p)
        AV, BV = _classify(a_values, "a_values"), _classify(b_values, "b_values")
        AV = _adopt(AV, BV)
        BV = _adopt(BV, AV)
        av, vd = _values_in("merge", AV, "a_values", A, na)
        bv, vd2 = _values_in("merge", BV, "b_values", B, nb)
        if vd != vd2:
            raise TypeError(f"gsearch.merge: a_values are {vd} but b_values are {vd2}: one dtype")
        ov = _new_empty(fw, dev, (na + nb,), _INT64)
        _core.merge(ka, kb, out, av, bv, ov, bool(check), scope.handle)
        return _cast(out, fw, p), _values_out(ov, fw, vd)


def sort(a: ArrayLike, values: Optional[ArrayLike] = None, *, stream: Any = None) -> Any:
    """A stable sort of a 1-D array (merge sort), optionally carrying a value per key.

    ``sort(a) == np.sort(a, kind='stable')``: ascending, NaN last, equal keys (and -0.0 and
    0.0, which are equal) in their input order.

    Parameters
    ----------
    a : array_like, shape (N,)
        The keys, any order. numpy arrays are sorted on the CPU, torch / cupy CUDA arrays on the
        GPU (read in place; the result is a new array).
    values : array_like, shape (N,), optional
        One value per key (integers and bool, or any 8-byte dtype, as in :func:`merge`): the
        result's values are ``values[np.argsort(a, kind='stable')]``.
    stream : int or stream object, optional
        For CUDA arrays: the stream to run on (the call returns once the work is enqueued).

    Returns
    -------
    sorted : array, shape (N,)
        `a`'s dtype, framework and device; ``(sorted, sorted_values)`` with `values`.

    Raises
    ------
    ValueError
        `a` not 1-D, `values` of another length or device.
    TypeError
        Unsupported dtypes.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.sort(np.array([3.0, np.nan, -1.0, 2.0]))
    array([-1.,  2.,  3., nan])
    >>> gsearch.sort(np.array([2, 1, 2, 1]), np.array([0, 1, 2, 3]))
    (array([1, 1, 2, 2]), array([1, 3, 0, 2]))
    """
    A, p, kd = _one("sort", a)
    n = _shape(A)[0]
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, stream) as scope:
        keys = _convert(A, kd)
        out = _new_empty(fw, dev, (n,), kd)
        if values is None:
            _core.merge_sort(keys, out, None, None, scope.handle)
            return _cast(out, fw, p)
        v, vd = _values_in("sort", values, "values", A, n)
        ov = _new_empty(fw, dev, (n,), _INT64)
        _core.merge_sort(keys, out, v, ov, scope.handle)
        return _cast(out, fw, p), _values_out(ov, fw, vd)


def argsort(a: ArrayLike, *, stream: Any = None) -> Any:
    """The stable sorting permutation of a 1-D array: ``np.argsort(a, kind='stable')``.

    ``a[argsort(a)]`` is sorted (NaN last); equal keys (-0.0 and 0.0 among them) keep their
    input order. A key-value merge sort of `a` with the values 0, 1, ..., N - 1.

    Parameters
    ----------
    a : array_like, shape (N,)
        The keys (numpy on the CPU, torch / cupy CUDA arrays on the GPU).
    stream : int or stream object, optional
        For CUDA arrays: the stream to run on.

    Returns
    -------
    indices : array of int64, shape (N,)
        Of `a`'s framework, on its device.

    Raises
    ------
    ValueError
        `a` not 1-D.
    TypeError
        An unsupported dtype.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.argsort(np.array([3, 1, 2, 1]))
    array([1, 3, 2, 0])
    """
    A, p, kd = _one("argsort", a)
    n = _shape(A)[0]
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, stream) as scope:
        keys = _convert(A, kd)
        scratch = _new_empty(fw, dev, (n,), kd)
        perm = _new_empty(fw, dev, (n,), _INT64)
        _core.merge_sort(keys, scratch, _arange(fw, dev, n), perm, scope.handle)
    return perm


def _set_operation(fw, dev, kd, op: str, a, b, check, handle) -> Any:
    """The library's set operation `op` of the sorted contiguous a and b (dtype kd), into a new
    array of its size (allocated once the size is known)."""
    return _core.set_operation(
        a, b, _SET_OPS[op], lambda c: _new_empty(fw, dev, (c,), kd), bool(check), handle,
    )


def _multiset(fn: str, op: str, a: Any, b: Any, check: bool, stream: Any) -> Any:
    A, B, p, kd = _pair(fn, a, b, ("a", "b"))
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, stream) as scope:
        res = _set_operation(fw, dev, kd, op, _convert(A, kd), _convert(B, kd), check, scope.handle)
    return _cast(res, fw, p)


_MULTISET_DOC = """The multiset {what} of two sorted 1-D arrays (``std::{cpp}`` semantics).

    A value m times in `a` and n times in `b` is written {count} times{whose}; the result is
    sorted. NaN equals NaN and -0.0 equals 0.0 here (gsearch's order). For numpy's
    unique-element ``np.{np}``, see :func:`{np}`.

    Parameters
    ----------
    a, b : array_like, 1-D
        Sorted (NaN last). numpy arrays run on the CPU, torch / cupy CUDA arrays on the GPU
        (read in place).
    check : bool, optional
        Check that both are sorted first (default; ValueError naming the unsorted one).
    stream : int or stream object, optional
        For CUDA arrays: the stream to run on. The call waits for the result's size.

    Returns
    -------
    array, 1-D
        numpy's promotion of the two dtypes, `a`'s framework and device.

    Raises
    ------
    ValueError
        Inputs not 1-D, on two devices, or unsorted (with `check`).
    TypeError
        Dtypes whose promotion would round, unsupported dtypes.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.{name}(np.array([1, 2, 2, 2, 3]), np.array([2, 2, 4]))
    {example}
    """


def set_intersection(a: ArrayLike, b: ArrayLike, *, check: bool = True, stream: Any = None) -> Any:
    return _multiset("set_intersection", "intersection", a, b, check, stream)


def set_union(a: ArrayLike, b: ArrayLike, *, check: bool = True, stream: Any = None) -> Any:
    return _multiset("set_union", "union", a, b, check, stream)


def set_difference(a: ArrayLike, b: ArrayLike, *, check: bool = True, stream: Any = None) -> Any:
    return _multiset("set_difference", "difference", a, b, check, stream)


def set_symmetric_difference(a: ArrayLike, b: ArrayLike, *, check: bool = True, stream: Any = None) -> Any:
    return _multiset("set_symmetric_difference", "symmetric-difference", a, b, check, stream)


set_intersection.__doc__ = _MULTISET_DOC.format(
    what="intersection", cpp="set_intersection", count="min(m, n)", whose=" (a's copies)",
    np="intersect1d", name="set_intersection", example="array([2, 2])")
set_union.__doc__ = _MULTISET_DOC.format(
    what="union", cpp="set_union", count="max(m, n)", whose=" (a's copies first)",
    np="union1d", name="set_union", example="array([1, 2, 2, 2, 3, 4])")
set_difference.__doc__ = _MULTISET_DOC.format(
    what="difference a - b", cpp="set_difference", count="max(m - n, 0)", whose="",
    np="setdiff1d", name="set_difference", example="array([1, 2, 3])")
set_symmetric_difference.__doc__ = _MULTISET_DOC.format(
    what="symmetric difference", cpp="set_symmetric_difference", count="|m - n|", whose="",
    np="setxor1d", name="set_symmetric_difference", example="array([1, 2, 3, 4])")


def _unique_pair(fw, dev, kd, a, b, handle) -> tuple:
    """np.unique of a and of b (sorted by the library, then the first of each run)."""
    ua = _unique_sorted(_sorted_copy(a, fw, dev, kd, handle), fw, dev, kd)
    ub = _unique_sorted(_sorted_copy(b, fw, dev, kd, handle), fw, dev, kd)
    return ua, ub


def _setop(fw, dev, kd, op: str, a, b, handle) -> Any:
    """The library's set operation of sorted a and b (contiguous copies: masked results are)."""
    return _set_operation(fw, dev, kd, op, _contiguous(fw, a), _contiguous(fw, b), False, handle)


def _contiguous(fw: str, x: Any) -> Any:
    if fw == "torch":
        return x.contiguous()
    return _xp(fw).ascontiguousarray(x)


def _merged_sorted(fw, dev, kd, a, b, handle) -> Any:
    """np.sort(np.concatenate([a, b])): both sorted by the library, then merged."""
    sa, sb = _sorted_copy(a, fw, dev, kd, handle), _sorted_copy(b, fw, dev, kd, handle)
    out = _new_empty(fw, dev, (_size(sa) + _size(sb),), kd)
    _core.merge(sa, sb, out, None, None, None, False, handle)
    return out


def intersect1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False) -> Any:
    """The sorted unique values that are in both arrays: ``np.intersect1d`` exactly.

    Parameters
    ----------
    ar1, ar2 : array_like
        Any shapes (flattened), any order. numpy arrays run on the CPU, torch / cupy CUDA
        arrays on the GPU.
    assume_unique : bool, optional
        numpy's: the inputs hold no duplicates, which skips the unique step. With duplicates
        the result is numpy's for that case too (each adjacent equal pair of the sorted
        concatenation gives one element).

    Returns
    -------
    array, 1-D
        Sorted; numpy's promotion of the two dtypes; `ar1`'s framework and device.

    Raises
    ------
    ValueError
        The inputs on different devices.
    TypeError
        Dtypes whose promotion would round (int64 with float64, ...), unsupported dtypes.

    Notes
    -----
    As numpy: NaN is never in the intersection (NaN != NaN), -0.0 and 0.0 are one value (which
    of the two zeros represents it may differ from numpy, whose sort is not stable).
    gsearch sorts with its merge sort (an input found sorted by one O(n) check is not sorted
    again), removes duplicates by comparing neighbours, and intersects with its Balanced Path
    set operation. Dtypes whose promotion would round
    (int64 with float64, ...) are a TypeError, as everywhere in gsearch.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.intersect1d([1, 3, 4, 3], [3, 1, 2, 1])
    array([1, 3])
    """
    A, B, p, kd = _pair("intersect1d", ar1, ar2, ("ar1", "ar2"), ravel=True)
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, None) as scope:
        a, b = _convert(A, kd), _convert(B, kd)
        if assume_unique:
            aux = _merged_sorted(fw, dev, kd, a, b, scope.handle)
            res = aux[:-1][aux[1:] == aux[:-1]] if _size(aux) > 1 else aux[:0]
        else:
            ua, ub = _unique_pair(fw, dev, kd, a, b, scope.handle)
            res = _setop(fw, dev, kd, "intersection", _split_nan(ua, fw, kd)[0], ub, scope.handle)
    return _cast(res, fw, p)


def union1d(ar1: ArrayLike, ar2: ArrayLike) -> Any:
    """The sorted unique values that are in either array: ``np.union1d`` exactly.

    Parameters
    ----------
    ar1, ar2 : array_like
        Any shapes (flattened), any order (numpy on the CPU, torch / cupy CUDA arrays on the
        GPU).

    Returns
    -------
    array, 1-D
        Sorted, unique; one NaN if either has NaNs (numpy's ``np.unique``); -0.0 and 0.0 are
        one value. numpy's promotion of the dtypes; `ar1`'s framework and device.

    Raises
    ------
    ValueError
        The inputs on different devices.
    TypeError
        Dtypes whose promotion would round (int64 with float64, ...), unsupported dtypes.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.union1d([-1, 0, 1], [-2, 0, 2])
    array([-2, -1,  0,  1,  2])
    """
    A, B, p, kd = _pair("union1d", ar1, ar2, ("ar1", "ar2"), ravel=True)
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, None) as scope:
        ua, ub = _unique_pair(fw, dev, kd, _convert(A, kd), _convert(B, kd), scope.handle)
        res = _setop(fw, dev, kd, "union", ua, ub, scope.handle)  # NaN == NaN: one NaN, as numpy
    return _cast(res, fw, p)


def setdiff1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False) -> Any:
    """The unique values of `ar1` that are not in `ar2`: ``np.setdiff1d`` exactly.

    Parameters
    ----------
    ar1, ar2 : array_like
        Any shapes (flattened), any order (numpy on the CPU, torch / cupy CUDA arrays on the
        GPU).
    assume_unique : bool, optional
        numpy's: the inputs hold no duplicates. Then, as numpy, `ar1`'s elements not in `ar2`
        are returned in `ar1`'s order (not sorted): ``ar1[~isin(ar1, ar2)]``, which is also
        what gsearch returns when they do hold duplicates (numpy's answer then depends on the
        algorithm its isin picks).

    Returns
    -------
    array, 1-D
        Sorted unique values (without `assume_unique`), of `ar1`'s dtype, framework and device.

    Raises
    ------
    ValueError
        The inputs on different devices.
    TypeError
        Dtypes whose promotion would round (int64 with float64, ...), unsupported dtypes.

    Notes
    -----
    As numpy: a NaN of `ar1` is kept even when `ar2` has NaN (NaN is never a member), and
    -0.0 and 0.0 are one value.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.setdiff1d(np.array([1, 2, 3, 2, 4, 1]), np.array([3, 4, 5, 6]))
    array([1, 2])
    """
    A, B, p, kd = _pair("setdiff1d", ar1, ar2, ("ar1", "ar2"), ravel=True)
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, None) as scope:
        a, b = _convert(A, kd), _convert(B, kd)
        if assume_unique:
            mask = _new_empty(fw, dev, (_size(a),), _BOOL)
            _core.isin(a, b, mask, True, 0, scope.handle)
            res = a[mask]
        else:
            ua, ub = _unique_pair(fw, dev, kd, a, b, scope.handle)
            num, nan = _split_nan(ua, fw, kd)
            res = _setop(fw, dev, kd, "difference", num, ub, scope.handle)
            if nan is not None:
                res = _cat(fw, [res, nan])  # numpy keeps ar1's NaN
    return _cast(res, fw, A.dtype.newbyteorder("="))


def setxor1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: bool = False) -> Any:
    """The sorted unique values that are in exactly one of the arrays: ``np.setxor1d`` exactly.

    Parameters
    ----------
    ar1, ar2 : array_like
        Any shapes (flattened), any order (numpy on the CPU, torch / cupy CUDA arrays on the
        GPU).
    assume_unique : bool, optional
        numpy's: the inputs hold no duplicates, which skips the unique step (with duplicates
        the result is numpy's for that case too: a value that occurs twice or more in the
        sorted concatenation is dropped).

    Returns
    -------
    array, 1-D
        Sorted; numpy's promotion of the dtypes; `ar1`'s framework and device.

    Raises
    ------
    ValueError
        The inputs on different devices.
    TypeError
        Dtypes whose promotion would round (int64 with float64, ...), unsupported dtypes.

    Notes
    -----
    As numpy: NaN != NaN, so each array's NaN is kept (two NaNs when both have one); -0.0 and
    0.0 are one value.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.setxor1d(np.array([1, 2, 3, 2, 4]), np.array([2, 3, 5, 7, 5]))
    array([1, 4, 5, 7])
    """
    A, B, p, kd = _pair("setxor1d", ar1, ar2, ("ar1", "ar2"), ravel=True)
    fw, dev = A.fw, A.dev
    with _StreamScope(fw, dev, None) as scope:
        a, b = _convert(A, kd), _convert(B, kd)
        if assume_unique:
            aux = _merged_sorted(fw, dev, kd, a, b, scope.handle)
            if _size(aux) == 0:
                res = aux
            else:
                t = _true1(fw, dev)
                flag = _cat(fw, [t, aux[1:] != aux[:-1], t])
                res = aux[flag[1:] & flag[:-1]]
        else:
            ua, ub = _unique_pair(fw, dev, kd, a, b, scope.handle)
            na_, nan_a = _split_nan(ua, fw, kd)
            nb_, nan_b = _split_nan(ub, fw, kd)
            res = _setop(fw, dev, kd, "symmetric-difference", na_, nb_, scope.handle)
            if nan_a is not None:
                res = _cat(fw, [res, nan_a, nan_b])  # numpy keeps each side's NaN
    return _cast(res, fw, p)


def join(
    left: ArrayLike,
    right: ArrayLike,
    how: JoinHow = "inner",
    *,
    check: bool = True,
    stream: Any = None,
) -> tuple:
    """A sort-merge join of two sorted key arrays, as int64 gather maps.

    Each output row pairs a left index i and a right index j with ``left[i] == right[j]``
    (NaN equals NaN, -0.0 equals 0.0); duplicate keys give every pair (their cross product).

    ==========  ===========================================================================
    `how`       rows
    ==========  ===========================================================================
    'inner'     the matching pairs (i, j)
    'left'      those, and (i, -1) for each left row without a match
    'right'     those, and (-1, j) for each right row without a match
    'full'      both
    'semi'      the left rows with a match (left indices only)
    'anti'      the left rows without a match (left indices only)
    ==========  ===========================================================================

    Rows are ordered by key, then left index, then right index (the same on CPU and GPU).

    Parameters
    ----------
    left, right : array_like, 1-D
        Sorted keys (NaN last), numpy on the CPU or torch / cupy CUDA arrays on the GPU (read in
        place), of dtypes numpy promotes exactly.
    how : {'inner', 'left', 'right', 'full', 'semi', 'anti'}, optional
        The kind of join (default 'inner').
    check : bool, optional
        Check that both are sorted first (default; ValueError naming the unsorted one).
    stream : int or stream object, optional
        For CUDA arrays: the stream to run on. The call waits for the row count, then the
        maps are filled in order on the stream.

    Returns
    -------
    (left_index, right_index) : tuple of int64 arrays
        Of `left`'s framework and device, of the row count (which may exceed 2**31);
        `right_index` is None for 'semi' and 'anti'. -1 marks a missing side: gather with
        ``left_table[left_index]`` where ``left_index >= 0``.

    Raises
    ------
    ValueError
        A bad `how`, inputs not 1-D, on two devices, or unsorted (with `check`).
    TypeError
        Dtypes whose promotion would round, unsupported dtypes.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.join(np.array([1, 2, 2, 5]), np.array([2, 2, 3, 5]))
    (array([1, 1, 2, 2, 3]), array([0, 1, 0, 1, 3]))
    >>> gsearch.join(np.array([1, 2, 5]), np.array([2, 3]), how='full')
    (array([ 0,  1, -1,  2]), array([-1,  0,  1, -1]))
    >>> gsearch.join(np.array([1, 2, 5]), np.array([2, 3]), how='anti')
    (array([0, 2]), None)
    """
    kind = _choice("join", "how", how, _JOIN_KINDS)
    left_only = how in _LEFT_ONLY_JOINS
    A, B, p, kd = _pair("join", left, right, ("left", "right"))
    fw, dev = A.fw, A.dev

    def allocate(rows: int) -> tuple:
        li = _new_empty(fw, dev, (rows,), _INT64)
        return li, (None if left_only else _new_empty(fw, dev, (rows,), _INT64))

    with _StreamScope(fw, dev, stream) as scope:
        li, ri = _core.join(_convert(A, kd), _convert(B, kd), kind, allocate, bool(check), scope.handle)
    return li, ri


def equal_range(
    a: ArrayLike,
    v: ArrayLike,
    *,
    check_sorted: Optional[bool] = None,
    sorted_queries: Optional[bool] = None,
    out_int32: bool = False,
    algo: Algo = "auto",
    stream: Any = None,
) -> tuple:
    """The range of the keys equal to each query: ``(searchsorted(a, v, 'left'),
    searchsorted(a, v, 'right'))``.

    ``a[lower[j]:upper[j]]`` are the keys equal to ``v[j]`` (NaN equal to NaN, -0.0 to 0.0) and
    ``upper - lower`` their count.

    Parameters
    ----------
    a, v, check_sorted, sorted_queries, out_int32, algo, stream
        As in :func:`searchsorted` (1-D or N-D `a`); the checks run once (by default: of
        `v`, with ``sorted_queries=True``).

    Returns
    -------
    (lower, upper) : tuple of arrays (or numpy integers for a scalar `v`)
        `v`'s shape, int64 (int32 with `out_int32`).

    Raises
    ------
    ValueError, TypeError, MemoryError, RuntimeError
        As in :func:`searchsorted`.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.equal_range(np.array([1, 2, 2, 2, 5]), np.array([2, 3, 5]))
    (array([1, 4, 4]), array([4, 4, 5]))
    """
    lower = _search(a, v, _LEFT_I, None, None, algo, check_sorted, out_int32, stream, sorted_queries=sorted_queries)
    upper = _search(a, v, _RIGHT_I, None, None, algo, False, out_int32, stream, sorted_queries=sorted_queries)
    return lower, upper


# --- the static index ----------------------------------------------------------------------------


def _fill_where(fw: str, res: Any, mask: Any, value: int) -> None:
    """res[mask] = value in place, without a synchronizing boolean index on a GPU."""
    if fw == "torch":
        res.masked_fill_(mask, value)
    else:
        _xp(fw).putmask(res, mask, value)


def _index_queries(fw: str, dev: Optional[int], x: Any, p: _np.dtype, kd: _np.dtype, side: int) -> tuple:
    """Queries x of dtype p (numpy's exact promotion of the index's dtype kd and theirs, wider
    than kd) as kd queries that give the same answers on `side`, and the masks of those below
    (answer 0) and above (answer K) every kd value (None where there are none). kd float32, p
    float64: x rounded up (side left: the keys < x are those < the smallest float32 >= x) or down
    (right: the keys <= x are those <= the largest float32 <= x). kd an integer type, p a wider
    integer: x clamped to kd's range; p float64: ceil(x) (left: the integers < x are those <
    ceil(x)) or floor(x) (right), clamped, NaN above every key."""
    xp = _xp(fw)
    if kd.kind == "f":
        with _np.errstate(over="ignore"):
            f = _cast(x, fw, kd)
        back = _cast(f, fw, p)
        if side == _LEFT_I:
            step = xp.nextafter(f, _full0d(fw, dev, _math.inf, kd))
            f = xp.where(back < x, step, f)
        else:
            step = xp.nextafter(f, _full0d(fw, dev, -_math.inf, kd))
            f = xp.where(back > x, step, f)
        return _contiguous(fw, _cast(f, fw, kd)), None, None
    info = _np.iinfo(kd)
    lo, hi = int(info.min), int(info.max)
    if p.kind == "f":
        y = xp.ceil(x) if side == _LEFT_I else xp.floor(x)
        nan = xp.isnan(y)
        above = (y > hi) | nan
        below = y < lo
        y = xp.where(nan, _full0d(fw, dev, lo, p), xp.clip(y, lo, hi))
    else:
        above = x > hi
        below = None if p.kind == "u" else x < lo  # unsigned queries are never below
        y = xp.clip(x, lo, hi)
    return _contiguous(fw, _cast(y, fw, kd)), below, above


class Index:
    """A static search index over sorted keys: built once, searched many times.

    ``Index(keys)`` copies the sorted 1-D `keys` into an S+ tree (a B-ary search tree laid out
    level by level, gsearch::static_index in C++): the keys in nodes of B (one 64-byte cache line
    on the CPU, 16 bytes on the GPU: one vector load), and above them levels of separators, each node
    with B + 1 children. A search reads one node per level, log_{B+1}(K) nodes, where a binary
    search reads log2(K) keys scattered over as many cache lines. The answers are those of
    :func:`searchsorted` on the keys (numpy's order: NaN last, -0.0 equal to 0.0).

    Memory: the keys plus about 1/B of them, rounded up to whole nodes (`nbytes`), in host
    memory for CPU keys (numpy arrays, CPU tensors) and in the keys' device memory for CUDA keys
    (torch tensors, cupy arrays, DLPack objects), built there (on the GPU, by a kernel, on
    `stream`, waited for). The index keeps its own copy: the caller's keys can be freed or
    changed once it is built.

    When to use it: many searches of the same large key set (from about 2**16 keys: a binary
    search of keys beyond the caches, or beyond a GPU's shared memory, misses on nearly every
    step; the index misses about once per level). For a single batch ``searchsorted(a, v,
    algo='index')`` builds a temporary index for the call (and 'auto' does when it pays).

    Parameters
    ----------
    keys : array_like, shape (K,)
        Sorted keys (ascending; NaN last, -0.0 equal to 0.0), 1-D: numpy arrays or sequences
        (an index on the CPU), torch tensors, cupy arrays or DLPack objects (on their device;
        read in place, no copy). int32, uint32, int64, uint64, float32, float64; bool, 8- and
        16-bit integers and float16 (bfloat16) are widened exactly to int32 (float32).
    check_sorted : bool, optional
        Check that the keys are sorted (the default: one O(K) pass beside the build's own;
        ValueError if not). False skips it: unsorted keys then give unspecified (in-range)
        results.
    stream : int or stream object, optional
        For CUDA keys: the stream to build on (as in :func:`searchsorted`); the constructor
        waits for the build, so the index can be searched on any stream afterwards.

    Raises
    ------
    ValueError
        Keys that are not 1-D, unsorted keys (unless ``check_sorted=False``), `stream` with CPU
        keys.
    TypeError
        A dtype gsearch cannot search (complex, object, strings, ...).
    MemoryError
        An allocation failed.
    RuntimeError
        A CUDA error (the message names it).

    Notes
    -----
    Queries are searched on the index's device only (ValueError otherwise, naming both), with
    the dtype rules of :func:`searchsorted`: queries whose dtype converts exactly to the index's
    are converted; queries of a wider dtype that numpy's promotion holds exactly (int64 queries
    of an int32 index, float64 queries of a float32 or a 32-bit integer index) are mapped
    exactly to the index's dtype (rounded or clamped as the side needs) and give numpy's
    answers; pairs whose promotion would round (int64 keys and float queries, ...) are a
    TypeError. Python scalars compare exactly. On a GPU the search is enqueued on the
    queries' framework's current stream (or `stream`) and returns at once.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> index = gsearch.Index(np.array([10, 20, 20, 30]))
    >>> index.searchsorted([5, 20, 25])
    array([0, 1, 3])
    >>> index.searchsorted(20, side='right')
    np.int64(3)
    >>> index.predecessor(np.array([[5, 30], [20, 99]]))
    array([[-1,  3],
           [ 2,  3]])
    >>> len(index), index.dtype, index.device
    (4, dtype('int64'), 'cpu')
    """

    __slots__ = ("_ix", "_fw", "_dev", "_dtype", "_k", "__weakref__")

    def __init__(self, keys: ArrayLike, *, check_sorted: bool = True, stream: Any = None) -> None:
        if not isinstance(check_sorted, (bool, _np.bool_)):
            raise TypeError(f"gsearch.Index: check_sorted must be a bool, not {type(check_sorted).__name__}")
        K = _classify(keys, "keys")
        if isinstance(K, _Scalar):
            raise ValueError("gsearch.Index: keys must be a 1-D array, not a scalar")
        shape = _shape(K)
        if len(shape) != 1:
            raise ValueError(f"gsearch.Index: keys must be 1-D, not of shape {shape}")
        _check_supported(K.dtype, "key")
        kd = K.dtype.newbyteorder("=")
        kd = _WIDEN.get(kd, kd)
        with _StreamScope(K.fw, K.dev, stream) as scope:
            x = _convert(K, kd)
            if check_sorted and not _core.is_sorted(x, scope.handle):
                raise ValueError(
                    "gsearch.Index: the keys are not sorted (ascending, NaN last, -0.0 == 0.0); "
                    "check_sorted=False skips this check"
                )
            self._ix = _core.Index(x, False, scope.handle)
        self._fw, self._dev, self._dtype, self._k = K.fw, K.dev, kd, int(self._ix.size)

    # -- searches --

    def searchsorted(
        self,
        v: ArrayLike,
        side: Side = _LEFT,
        *,
        out: Optional[Any] = None,
        out_int32: bool = False,
        right: Optional[bool] = None,
        stream: Any = None,
    ) -> Any:
        """Find the indices where elements of `v` should be inserted into the keys to keep
        them sorted: ``numpy.searchsorted(keys, v, side)`` on the index.

        Parameters
        ----------
        v : array_like
            Queries: a scalar, a sequence or an array of any shape, on the index's device.
        side : {'left', 'right'}, optional
            'left' (the default): the keys < v, ``keys[i-1] < v <= keys[i]``; 'right': the keys
            <= v, ``keys[i-1] <= v < keys[i]``.
        out : array, optional
            Where to write the result: an array of the queries' kind on their device, of `v`'s
            shape, int64 (int32 with `out_int32`), C-contiguous. It is returned.
        out_int32 : bool, optional
            int32 indices (ValueError if K does not fit).
        right : bool, optional
            torch's flag: True is side='right' (as in :func:`searchsorted`).
        stream : int or stream object, optional
            For a CUDA index: the stream to search on (default: the current stream of the
            queries' framework), as in :func:`searchsorted`.

        Returns
        -------
        indices : int or array of ints
            `v`'s shape, in [0, K], int64 (int32 with `out_int32`); a numpy integer for a
            scalar `v` of a CPU index over numpy arrays; a tensor / array of the queries' kind
            on the index's device otherwise.

        Raises
        ------
        ValueError
            Queries on another device than the index, a bad `side`, an `out` of the wrong shape,
            `stream` for a CPU index.
        TypeError
            A query dtype gsearch cannot search, or whose promotion with the keys' would round;
            an `out` of the wrong dtype.

        Examples
        --------
        >>> import numpy as np, gsearch
        >>> gsearch.Index(np.array([1.0, 2.0, 2.0, np.nan])).searchsorted([2.0, np.nan, 9.0])
        array([1, 3, 3])
        """
        if (
            type(v) is _ndarray
            and out is None
            and right is None
            and stream is None
            and out_int32 is False
            and self._dev is None
            and v.dtype == self._dtype
            and v.flags.c_contiguous
        ):
            s = 0 if side is _LEFT else (_FAST_SIDES.get(side) if type(side) is str else None)
            if s is not None:
                res = _empty(v.shape, _INT64)
                self._ix.search(v, res, s, 0)
                return res if v.ndim else res[()]
        return self._search(v, _side_code(side, right), out, out_int32, stream)

    def lower_bound(self, v: ArrayLike, *, out: Optional[Any] = None, out_int32: bool = False, stream: Any = None) -> Any:
        """The number of keys < each of `v`: ``searchsorted(v, side='left')`` (arguments and
        result as there)."""
        return self._search(v, _LEFT_I, out, out_int32, stream)

    def upper_bound(self, v: ArrayLike, *, out: Optional[Any] = None, out_int32: bool = False, stream: Any = None) -> Any:
        """The number of keys <= each of `v`: ``searchsorted(v, side='right')`` (arguments
        and result as there)."""
        return self._search(v, _RIGHT_I, out, out_int32, stream)

    def predecessor(self, v: ArrayLike, *, out: Optional[Any] = None, out_int32: bool = False, stream: Any = None) -> Any:
        """The index of the largest key <= each of `v`, or -1: ``searchsorted(v, side='right')
        - 1``, in [-1, K) (arguments and result as in :meth:`searchsorted`)."""
        return self._search(v, _PRED_I, out, out_int32, stream)

    def _search(self, v: Any, side: int, out: Any, out_int32: Any, stream: Any) -> Any:
        if not isinstance(out_int32, (bool, _np.bool_)):
            raise TypeError(f"gsearch: out_int32 must be a bool, not {type(out_int32).__name__}")
        kd, k = self._dtype, self._k
        V = _adopt(_classify(v, "queries"), kd)
        if isinstance(V, _Arr):
            if V.dev != self._dev:
                raise ValueError(
                    f"gsearch.Index: the index is on {_where(self._dev)} but the queries on "
                    f"{_where(V.dev)}: search queries on the index's device"
                )
            fw, dev, vshape = V.fw, V.dev, _shape(V)
        else:
            fw, dev, vshape = self._fw, self._dev, ()
        od = _INT32 if out_int32 else _INT64
        target = _check_out(out, fw, dev, vshape, od) if out is not None else None
        off = -1 if side == _PRED_I else 0
        with _StreamScope(fw, dev, stream) as scope:
            const = below = above = None
            s = side
            if isinstance(V, _Scalar):
                value = V.value
                if V.dtype is not None:  # a numpy scalar: its dtype's rules, then its exact value
                    _resolve(kd, V.dtype)
                    value = value.item()
                q, to_right, const = _weak_query(value, kd, kd)
                if to_right and s == _LEFT_I:
                    s = _RIGHT_I
                if const is not None:
                    q = kd.type(0)
                queries = _full0d(fw, dev, q if fw == "numpy" else q.item(), kd)
            else:
                p = _resolve(kd, V.dtype)
                if p == kd:
                    queries = _convert(V, kd)
                else:
                    queries, below, above = _index_queries(fw, dev, _convert(V, p), p, kd, s)
            res = target if target is not None else _new_empty(fw, dev, vshape, od)
            self._ix.search(queries, res, s, scope.handle)
            if const is not None:
                res[...] = (0 if const == _BELOW else k) + off
            if below is not None:
                _fill_where(fw, res, below, off)
            if above is not None:
                _fill_where(fw, res, above, k + off)
        if out is not None:
            return out
        if fw == "numpy" and not vshape:
            return res[()]
        return res

    # -- properties --

    @property
    def size(self) -> int:
        """The number of keys indexed (K)."""
        return self._k

    def __len__(self) -> int:
        return self._k

    @property
    def dtype(self) -> _np.dtype:
        """The dtype of the keys as the index holds them (narrow dtypes widened: int8 keys give
        an int32 index)."""
        return self._dtype

    @property
    def device(self) -> Any:
        """Where the index lives, in the keys' framework: 'cpu' (numpy),
        torch.device('cpu') / torch.device('cuda', i) (torch), cupy.cuda.Device(i) (cupy)."""
        if self._fw == "torch":
            torch = _torch()
            return torch.device("cpu") if self._dev is None else torch.device("cuda", self._dev)
        if self._dev is None:
            return "cpu"
        return _cupy().cuda.Device(self._dev)

    @property
    def nbytes(self) -> int:
        """Bytes of the index's memory: the keys, padded to whole nodes, and the separators
        (about K * itemsize * (1 + 1/B))."""
        return int(self._ix.memory_bytes)

    @property
    def levels(self) -> int:
        """Levels of the tree, the leaves included (a search reads one node per level)."""
        return int(self._ix.levels)

    @property
    def node_keys(self) -> int:
        """Keys per node (B): a 64-byte cache line on the CPU, 16 bytes on the GPU."""
        return int(self._ix.node_keys)

    def __repr__(self) -> str:
        where = "cpu" if self._dev is None else f"cuda:{self._dev}"
        return (
            f"gsearch.Index(size={self._k}, dtype={self._dtype.name}, device='{where}', "
            f"levels={self.levels}, node_keys={self.node_keys}, nbytes={self.nbytes})"
        )
