"""The array layer under every gsearch function: what an argument is (_classify: a numpy, torch
or cupy array, a Python or numpy scalar), the dtype two of them are compared in (_resolve: numpy's
promotion when exact, widened to a dtype the library has), a Python number compared exactly with
keys (_weak_query) or taken as a value of an array's dtype (_exact_value), the 1-D inputs that
more than one family checks alike (_find_data, _pair, _one), conversions and allocations in the
caller's framework (_convert, _new_empty, _full0d, _cast), the CUDA stream of a call
(_StreamScope), the check of an out= array, and the option tables' validation."""

from __future__ import annotations

import math as _math
import sys as _sys
from functools import lru_cache as _lru_cache
from typing import Any, NamedTuple as _NamedTuple, Optional, Union

import numpy as _np

from ._common import _KEY_DTYPE_NAMES, _KEY_DTYPES

ArrayLike = Any  # numpy arrays, sequences, scalars, torch tensors, cupy arrays, DLPack objects

# --- dtypes ------------------------------------------------------------------------------------

# The dtypes the library searches (_common._KEY_DTYPES): arrays of these are used in place.
_NATIVE = frozenset(_KEY_DTYPES)
_INT64 = _np.dtype(_np.int64)
_INT32 = _np.dtype(_np.int32)
_FLOAT64 = _np.dtype(_np.float64)
_BOOL = _np.dtype(_np.bool_)
_ndarray = _np.ndarray
_empty = _np.empty


def _python_exact(d: _np.dtype) -> tuple:
    """The Python numbers a native dtype d holds exactly, for the fast paths: (lo, hi, floats):
    the ints in [lo, hi], and whether every Python float is one (float64 only)."""
    if d.kind == "f":
        m = 2 ** (_np.finfo(d).nmant + 1)
        return -m, m, d.itemsize == 8
    info = _np.iinfo(d)
    return int(info.min), int(info.max), False


_PY_EXACT = {d: _python_exact(d) for d in _NATIVE}

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


def _widened(d: _np.dtype) -> _np.dtype:
    """d (a supported dtype) in native byte order, widened exactly where the library lacks it."""
    d = d.newbyteorder("=")
    return _WIDEN.get(d, d)


_KEYS_QUERIES = ("key", "query", "keys", "queries")
_ELEMENT_NAMES = ("element", "test_elements", "element", "test_elements")  # isin's names


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
    return _widened(p)


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
_TORCH_KEY_TYPE: dict = {}  # torch dtype -> its code in _KEY_DTYPE_NAMES (the key_type of search_pointers)
_INT64_T: Any = None
_INT32_T: Any = None
_FLOAT64_T: Any = None
_BFLOAT16_T: Any = None
_raw_stream: Any = None
_empty_like: Any = None  # torch.empty_like: 2.1 us a call on the H100's host, Tensor.new_empty 3.7
_torch_empty: Any = None  # torch.empty, for results of another shape (the selection's fast paths)


def _register_torch(torch: Any) -> None:
    global _TT, _TORCH_KEY_TYPE, _INT64_T, _INT32_T, _FLOAT64_T, _BFLOAT16_T, _raw_stream, _empty_like, _torch_empty
    if _TT is None:
        _empty_like, _torch_empty = torch.empty_like, torch.empty
        _FLOAT64_T, _BFLOAT16_T = torch.float64, getattr(torch, "bfloat16", None)
        _TORCH_KEY_TYPE = {getattr(torch, n): i for i, n in enumerate(_KEY_DTYPE_NAMES) if hasattr(torch, n)}
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


# --- exact values: a number as a value of an array's dtype (find, count, isin) -----------------


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


# --- 1-D inputs: find's data; the pairs and single arrays of merge, the set operations, join ---


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
    return A, _widened(A.dtype)


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
    return A, A.dtype.newbyteorder("="), _widened(A.dtype)


# --- outputs, frameworks, options ---------------------------------------------------------------


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


def _is_bfloat16(arr: _Arr) -> bool:
    return arr.fw == "torch" and arr.x.dtype is _BFLOAT16_T  # (registered: the array was classified)


def _xp(fw: str) -> Any:
    """The array module of framework fw."""
    if fw == "numpy":
        return _np
    return _torch() if fw == "torch" else _cupy()


def _size(x: Any) -> int:
    return int(x.numel()) if hasattr(x, "numel") and not isinstance(x, _np.ndarray) else int(x.size)


def _cast(x: Any, fw: str, d: _np.dtype) -> Any:
    """x (an array of framework fw) in dtype d: a no-op when it has it; exact here (the values
    came from arrays of dtype d, computed in a wider one)."""
    if fw == "numpy" or fw == "cupy":
        return x if x.dtype == d else x.astype(d)
    td = _torch_dtype(d)
    return x if x.dtype is td else x.to(td)


def _contiguous(fw: str, x: Any) -> Any:
    if fw == "torch":
        return x.contiguous()
    return _xp(fw).ascontiguousarray(x)


def _choice(fn: str, what: str, x: Any, options: dict) -> int:
    code = options.get(x) if isinstance(x, str) else None
    if code is None:
        raise ValueError(f"gsearch.{fn}: {what} must be one of {', '.join(map(repr, options))}, not {x!r}")
    return code
