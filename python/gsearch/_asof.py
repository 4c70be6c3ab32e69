"""As-of joins (gsearch/asof.hpp): for every left row, the right row whose ordered key is the
closest in a direction, optionally within equal groups. ``asof_indices`` on arrays (numpy on the
CPU, torch / cupy CUDA arrays on the GPU) returns the gather map; ``merge_asof`` (pandas) and
``join_asof`` (polars) build their libraries' result tables from it.

The layers: the keys (datetimes as int64, narrow dtypes widened, pandas' and polars' null and
dtype rules) and the tolerance in the keys' units (_keys, _tolerance); the `by` columns
factorized jointly into group codes in [0, groups) (_group_codes: the same code for the same
value tuple on both sides, on the arrays' device); the library call (_gather_map); then the
frames (_pandas_result, _polars_result)."""

from __future__ import annotations

import datetime as _dt
import math as _math
from functools import lru_cache as _lru_cache
from typing import Any, Literal, NamedTuple, Optional, Sequence

import numpy as _np

from . import _core
from ._arrays import (
    _INT64,
    ArrayLike,
    _Arr,
    _Scalar,
    _StreamScope,
    _adopt,
    _classify,
    _convert,
    _cupy,
    _is_bfloat16,
    _new_empty,
    _shape,
    _torch,
    _torch_dtype,
    _where,
    _widened,
)
from ._docs import public as _public

AsofDirection = Literal["backward", "forward", "nearest"]

_DIRECTIONS: dict = dict(_core.ASOF_DIRECTIONS)
_FLOAT32 = _np.dtype(_np.float32)


# --- errors ------------------------------------------------------------------------------------


class MergeError(ValueError):
    """pandas.errors.MergeError's stand-in where pandas is not installed (a ValueError, as
    pandas' is); where it is, gsearch raises pandas.errors.MergeError itself."""


def _merge_error(msg: str) -> ValueError:
    try:
        from pandas.errors import MergeError as pandas_merge_error
    except ImportError:
        return MergeError(msg)
    return pandas_merge_error(msg)


@_lru_cache(maxsize=1)
def _negative_tolerance_words() -> str:
    """pandas' message for a negative tolerance, as the installed pandas words it ("tolerance must
    be positive" before pandas-dev/pandas#66290, "... non-negative" after; asked of pandas
    once), or the later words without pandas."""
    try:
        import pandas as pd
    except ImportError:
        return "tolerance must be non-negative"
    try:
        k = pd.DataFrame({"k": [0]})
        pd.merge_asof(k, k, on="k", tolerance=-1)
    except Exception as e:  # pandas.errors.MergeError
        return str(e)
    return "tolerance must be non-negative"  # pragma: no cover - a pandas that accepts it


def _null_keys(side: str) -> ValueError:
    return ValueError(f"Merge keys contain null values on {side} side")


def _incompatible_keys(i: int, a: Any, b: Any) -> ValueError:
    return _merge_error(f"incompatible merge keys [{i}] {a!r} and {b!r}, must be the same type")


def _incompatible_tolerance(tolerance: Any, dtype: Any) -> ValueError:
    return _merge_error(f"incompatible tolerance {tolerance}, must be compat with type {dtype!r}")


def _check_direction(direction: Any) -> int:
    if not isinstance(direction, str) or direction not in _DIRECTIONS:
        raise _merge_error(f"direction invalid: {direction}")
    return _DIRECTIONS[direction]


def _check_exact(allow_exact_matches: Any) -> bool:
    if not isinstance(allow_exact_matches, (bool, _np.bool_)):
        raise _merge_error(f"allow_exact_matches must be boolean, passed {allow_exact_matches}")
    return bool(allow_exact_matches)


# --- keys --------------------------------------------------------------------------------------


class _Keys(NamedTuple):
    """Both sides' keys as the library joins them: contiguous arrays of one native dtype."""

    left: Any
    right: Any
    kd: _np.dtype  # their dtype (int64 for datetimes, widened for narrow dtypes)
    dtype: _np.dtype  # the caller's dtype (datetime64[unit], float16, ...)
    fw: str
    dev: Optional[int]


def _flat_array(fn: str, x: Any, what: str) -> _Arr:
    X = _classify(x, what)
    if isinstance(X, _Scalar):
        raise ValueError(f"gsearch.{fn}: {what} must be a 1-D array, not a scalar")
    if len(_shape(X)) != 1:
        raise ValueError(f"gsearch.{fn}: {what} must be 1-D, not of shape {_shape(X)}")
    return X


def _key_dtype_name(A: _Arr) -> Any:
    return "bfloat16" if _is_bfloat16(A) else A.dtype


def _compute_dtype(fn: str, A: _Arr, what: str) -> _np.dtype:
    d = A.dtype
    if d.kind in "mM":
        return _INT64
    if d.kind not in "biuf" or d.itemsize > 8:
        raise TypeError(
            f"gsearch.{fn}: {what} of dtype {d}: as-of keys are integers, floats, bool, datetime64 or "
            "timedelta64"
        )
    return _widened(d)


def _nat(x: Any) -> bool:
    return bool(_np.isnat(x).any())


def _sorted(x: Any, handle: int) -> bool:
    return bool(_core.is_sorted(x, handle))


def _raise_nulls(left_null: bool, right_null: bool, left: Any, sort: bool, handle: int) -> None:
    """pandas' order of its key checks where nulls are known here (NaT, pandas' NA, polars'
    null): the left side's nulls, then its order, then the right side's nulls (the library checks
    NaN and the order itself, in the same order)."""
    if left_null:
        raise _null_keys("left")
    if right_null:
        if not sort and not _sorted(left, handle):
            raise ValueError("left keys must be sorted")
        raise _null_keys("right")


def _key_arrays(fn: str, left_on: Any, right_on: Any) -> tuple:
    """The classified keys of asof_indices: 1-D, on one device."""
    L = _flat_array(fn, left_on, "left_on")
    R = _flat_array(fn, right_on, "right_on")
    L, R = _adopt(L, R), _adopt(R, L)  # an empty list takes the other side's dtype
    if L.dev != R.dev:
        raise ValueError(
            f"gsearch.{fn}: left_on on {_where(L.dev)} but right_on on {_where(R.dev)}: move them to one device"
        )
    return L, R


def _same_dtype(A: _Arr, B: _Arr) -> bool:
    return A.dtype.newbyteorder("=") == B.dtype.newbyteorder("=") and _is_bfloat16(A) == _is_bfloat16(B)


def _keys(fn: str, L: _Arr, R: _Arr, sort: bool, handle: int) -> _Keys:
    """The keys in the dtype the library joins them in; datetimes viewed as int64 after pandas'
    NaT check."""
    kd = _compute_dtype(fn, L, "left_on")
    d = L.dtype.newbyteorder("=")
    if d.kind in "mM":
        lx = _np.ascontiguousarray(L.x).view(_np.int64)
        rx = _np.ascontiguousarray(R.x).view(_np.int64)
        _raise_nulls(_nat(L.x), _nat(R.x), lx, sort, handle)
    else:
        lx, rx = _convert(L, kd), _convert(R, kd)
    return _Keys(lx, rx, kd, d, L.fw, L.dev)


# --- tolerance ---------------------------------------------------------------------------------

# Attoseconds per unit of numpy's fixed-length time units: exact integer arithmetic for a
# tolerance converted to the keys' unit.
_ATTOSECONDS = {
    "W": 604800 * 10**18,
    "D": 86400 * 10**18,
    "h": 3600 * 10**18,
    "m": 60 * 10**18,
    "s": 10**18,
    "ms": 10**15,
    "us": 10**12,
    "ns": 10**9,
    "ps": 10**6,
    "fs": 10**3,
    "as": 1,
}


def _unit_attoseconds(dtype: _np.dtype) -> Optional[int]:
    unit, count = _np.datetime_data(dtype)
    a = _ATTOSECONDS.get(unit)
    return None if a is None else a * count


def _timedelta_attoseconds(t: Any) -> Optional[int]:
    """A timedelta (datetime.timedelta, pandas.Timedelta, numpy.timedelta64) in attoseconds,
    exactly; None for NaT or a calendar unit (months, years)."""
    asm8 = getattr(t, "asm8", None)  # pandas.Timedelta: its exact numpy value
    if asm8 is not None:
        t = asm8
    if isinstance(t, _np.timedelta64):
        if _np.isnat(t):
            return None
        a = _unit_attoseconds(t.dtype)
        return None if a is None else int(t.view(_np.int64)) * a
    return ((t.days * 86400 + t.seconds) * 10**6 + t.microseconds) * 10**12


def _is_integer(x: Any) -> bool:
    return isinstance(x, (int, _np.integer)) and not isinstance(x, (bool, _np.bool_))


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, _np.number, _np.bool_)) and not isinstance(x, complex)


def _tolerance(tolerance: Any, dtype: _np.dtype, kd: _np.dtype, numpy_timedeltas: bool = True) -> Any:
    """The tolerance as a value of the keys' computation dtype kd (a Python int or float), None
    for no limit, or ("flip", t) for a signed integer kd whose range does not hold t (the keys
    are then joined as unsigned, their order and distances kept). pandas' checks and messages
    (`dtype` the caller's keys' dtype): a timedelta for datetime keys (numpy's timedelta64 too
    unless `numpy_timedeltas` is False, as pandas), an integer for integer keys, a number for
    floats; >= 0."""
    if tolerance is None:
        return None
    if dtype.kind in "mM":
        ok = isinstance(tolerance, _dt.timedelta) or (numpy_timedeltas and isinstance(tolerance, _np.timedelta64))
        if not ok:
            raise _incompatible_tolerance(tolerance, dtype)
        atto = _timedelta_attoseconds(tolerance)
        unit = _unit_attoseconds(dtype)
        if atto is None or unit is None:
            raise _incompatible_tolerance(tolerance, dtype)
        if atto < 0:
            raise _merge_error(_negative_tolerance_words())
        return _integer_tolerance(atto // unit, kd)  # floor: distances are whole units
    if dtype.kind in "iub":
        if not _is_integer(tolerance):
            raise _incompatible_tolerance(tolerance, dtype)
        if tolerance < 0:
            raise _merge_error(_negative_tolerance_words())
        return _integer_tolerance(int(tolerance), kd)
    if not _is_number(tolerance):
        raise _incompatible_tolerance(tolerance, dtype)
    if tolerance < 0:
        raise _merge_error(_negative_tolerance_words())
    t = float(tolerance) if not isinstance(tolerance, int) or abs(tolerance) < 2**1000 else _math.inf
    if t != t:
        return None  # pandas compares `diff > tolerance`: a NaN tolerance refuses nothing
    if kd == _FLOAT32:
        with _np.errstate(over="ignore"):
            t = float(_np.float32(t))  # pandas compares in the keys' dtype
    return t


def _integer_tolerance(t: int, kd: _np.dtype) -> Any:
    bits = kd.itemsize * 8
    if t >= 2**bits - 1:
        return None  # every distance of the dtype is within it
    if kd.kind == "i" and t > 2 ** (bits - 1) - 1:
        return ("flip", t)
    return t


def _flip(x: Any, fw: str, kd: _np.dtype) -> Any:
    """Signed integer keys as unsigned ones of the same order and distances (the sign bit
    flipped)."""
    bits = kd.itemsize * 8
    if fw == "torch":
        torch = _torch()
        return (x ^ (-(2 ** (bits - 1)))).view(getattr(torch, f"uint{bits}"))
    ud = _np.dtype(f"uint{bits}")
    return x.view(ud) ^ ud.type(2 ** (bits - 1))


# --- groups ------------------------------------------------------------------------------------


def _by_columns(fn: str, by: Any, n: int, what: str, on: str) -> list:
    """A `by` argument as a list of 1-D arrays of n elements each: one array, or a list / tuple
    of arrays (several columns)."""
    if by is None:
        return []
    if isinstance(by, (list, tuple)) and len(by) and all(
        hasattr(c, "shape") or isinstance(c, (list, tuple, range)) for c in by
    ):
        cols = list(by)  # several columns (a list of scalars is one column)
    else:
        cols = [by]
    out = []
    for i, c in enumerate(cols):
        name = f"{what}[{i}]" if len(cols) > 1 else what
        C = _flat_array(fn, c, name)
        if _shape(C)[0] != n:
            raise ValueError(f"gsearch.{fn}: {name} has {_shape(C)[0]} elements but {on} has {n}")
        out.append(C)
    return out


def _integral(fw: str, x: Any) -> bool:
    if fw == "torch":
        return not x.dtype.is_floating_point and not x.dtype.is_complex
    return x.dtype.kind in "iu"


def _unique_codes(fw: str, x: Any) -> tuple:
    """(codes in [0, k), k) of the 1-D array x by a sort: unique's inverse (NaN one value in
    numpy's, -0.0 == 0.0)."""
    if fw == "torch":
        u, inv = _torch().unique(x, sorted=True, return_inverse=True)
        return inv.to(_torch().int64), int(u.shape[0])
    u, inv = (_np if fw == "numpy" else _cupy()).unique(x, return_inverse=True)
    return inv.astype(_np.int64).reshape(-1), int(u.shape[0])


def _as_int64(fw: str, x: Any) -> Any:
    return x.to(_torch().int64) if fw == "torch" else x.astype(_np.int64, copy=False)


def _pair_codes(fw: str, l: Any, r: Any) -> tuple:
    """(left codes, right codes, k) of one column pair, equal values one code in [0, k): an
    integer column of a small range by its offset from the least value, each side apart (no
    copy when that is 0 and the column int64); any other by a sort of both sides together."""
    n, m = l.shape[0], r.shape[0]
    if n + m == 0:
        return _as_int64(fw, l), _as_int64(fw, r), 1
    if _integral(fw, l):
        sides = [x for x in (l, r) if x.shape[0]]
        lo, hi = min(int(x.min()) for x in sides), max(int(x.max()) for x in sides)
        if hi - lo < 4 * (n + m) + 1024:
            if lo == 0:
                return _as_int64(fw, l), _as_int64(fw, r), hi + 1
            return _as_int64(fw, l - lo), _as_int64(fw, r - lo), hi - lo + 1
    c, k = _unique_codes(fw, _cat(fw, l, r))
    return c[:n], c[n:], k


def _column_parts(fw: str, l: Any, r: Any) -> list:
    """A pair of `by` columns as pairs of arrays _pair_codes factorizes as pandas does: bool
    and datetimes as integers; floats on torch and cupy, whose unique keeps NaNs apart, as (the
    value with NaN as 0, whether it is NaN); object columns as codes of pandas' hash
    factorization of both (nulls one value)."""
    if fw == "numpy":
        k = l.dtype.kind
        if k == "O":
            try:
                import pandas as pd
            except ImportError:  # without pandas: a sort (orderable objects only)
                return [(l, r)]
            codes, uniques = pd.factorize(_np.concatenate([l, r]), use_na_sentinel=True)
            codes = codes.astype(_np.int64)
            codes[codes < 0] = len(uniques)
            return [(codes[: len(l)], codes[len(l) :])]
        if k in "mM":
            return [(l.view(_np.int64), r.view(_np.int64))]
        if k == "b":
            return [(l.view(_np.uint8), r.view(_np.uint8))]
        return [(l, r)]
    xp = _torch() if fw == "torch" else _cupy()
    if fw == "torch" and l.dtype == xp.bool:
        return [(l.to(xp.uint8), r.to(xp.uint8))]
    if fw == "cupy" and l.dtype.kind == "b":
        return [(l.astype(_np.uint8), r.astype(_np.uint8))]
    floating = l.dtype.is_floating_point if fw == "torch" else l.dtype.kind == "f"
    if floating:
        ln, rn = xp.isnan(l), xp.isnan(r)
        if bool(ln.any()) or bool(rn.any()):
            flag = (lambda b: b.to(xp.uint8)) if fw == "torch" else (lambda b: b.astype(_np.uint8))
            return [(xp.where(ln, xp.zeros_like(l), l), xp.where(rn, xp.zeros_like(r), r)), (flag(ln), flag(rn))]
    return [(l, r)]


def _cat(fw: str, a: Any, b: Any) -> Any:
    if fw == "torch":
        return _torch().cat([a, b])
    return (_np if fw == "numpy" else _cupy()).concatenate([a, b])


def _group_codes(fw: str, lcols: list, rcols: list, n: int) -> tuple:
    """(left codes, right codes, groups): the `by` columns factorized jointly, the same code for
    the same tuple of values on both sides, codes in [0, groups) and groups about the rows'
    number at most. One small-range integer column (group ids) costs no copy."""
    lcodes = rcodes = None
    k = 1
    for lc, rc in zip(lcols, rcols):
        for lp, rp in _column_parts(fw, lc, rc):
            cl, cr, kc = _pair_codes(fw, lp, rp)
            if lcodes is None:
                lcodes, rcodes, k = cl, cr, kc
                continue
            lcodes, rcodes, k = lcodes * kc + cl, rcodes * kc + cr, k * kc
            rows = lcodes.shape[0] + rcodes.shape[0]
            if k > 4 * rows + 1024:  # keep the group count about the rows'
                c, k = _unique_codes(fw, _cat(fw, lcodes, rcodes))
                lcodes, rcodes = c[: lcodes.shape[0]], c[lcodes.shape[0] :]
    return lcodes, rcodes, max(k, 1)


# --- the join ----------------------------------------------------------------------------------


def _gather_map(
    keys: _Keys,
    lcodes: Any,
    rcodes: Any,
    groups: int,
    direction: int,
    tolerance: Any,
    exact: bool,
    sort: bool,
    handle: int,
) -> Any:
    """The library's join of prepared keys and codes: the int64 gather map, in the keys'
    framework and device."""
    lx, rx = keys.left, keys.right
    if isinstance(tolerance, tuple):  # ("flip", t): beyond the signed dtype's range
        lx, rx, tolerance = _flip(lx, keys.fw, keys.kd), _flip(rx, keys.fw, keys.kd), tolerance[1]
    out = _new_empty(keys.fw, keys.dev, (lx.shape[0],), _INT64)
    _core.asof_join(lx, rx, out, lcodes, rcodes, groups, direction, exact, tolerance, True, bool(sort), handle)
    return out


@_public
def asof_indices(
    left_on: ArrayLike,
    right_on: ArrayLike,
    *,
    left_by: Any = None,
    right_by: Any = None,
    direction: AsofDirection = "backward",
    tolerance: Any = None,
    allow_exact_matches: bool = True,
    sort: bool = False,
    stream: Any = None,
) -> Any:
    """The gather map of an as-of join (pandas.merge_asof's matches): for each left key, the
    right row whose key is the closest in `direction`, optionally among the right rows of the
    same group.

    ========== ===================================================================================
    direction  the right row matched to left key x
    ========== ===================================================================================
    backward   the last right row with key <= x (< x without exact matches)
    forward    the first right row with key >= x (> x without exact matches)
    nearest    the closer of those two; the backward one when both are as close
    ========== ===================================================================================

    "Last" and "first" are in the right rows' order: of equal right keys, backward takes the last
    and forward the first, as pandas does. A match farther than `tolerance` is no match.

    Parameters
    ----------
    left_on, right_on : array_like, 1-D
        The keys, each sorted ascending (pandas' rule; or any order with `sort`), of one dtype:
        integers, floats (float16 and bfloat16 widened to float32), bool, datetime64 or
        timedelta64 (numpy; joined as int64, NaT refused). numpy arrays are joined on the CPU,
        torch / cupy CUDA arrays on their GPU, in place (no copy).
    left_by, right_by : array_like or sequence of array_like, optional
        Groups (pandas' `by`; both or neither): one array per side, or a list / tuple of arrays
        (several columns), of one row per key, any dtype (the i-th column of each side of one
        dtype). A left row is matched only with the right rows of the same value (tuple); NaN
        equals NaN, -0.0 equals 0.0. Factorized jointly on the keys' device.
    direction : {'backward', 'forward', 'nearest'}, optional
        As above (default 'backward').
    tolerance : int, float or timedelta, optional
        The largest distance of a match, inclusive (>= 0): an integer for integer keys, a number
        for float keys (compared in the keys' dtype, as pandas), a datetime.timedelta,
        pandas.Timedelta or numpy.timedelta64 for datetime64 / timedelta64 keys (converted to
        their unit, whole units). Distances are exact, where pandas subtracts integers in the
        key's dtype (and wraps past its range).
    allow_exact_matches : bool, optional
        False: only right keys strictly before (backward) or after (forward) the left key.
    sort : bool, optional
        Keys in any order: each side is sorted stably first (a copy), and the map is still one
        entry per left row in its order, naming right rows by their positions.
    {stream}; the sortedness checks wait for their answers.

    Returns
    -------
    right_index : array of int64, len(left_on)
        The right row matched to each left row, -1 for none, as a numpy array (CPU) or a torch
        / cupy array (the keys' framework, on their device).

    Raises
    ------
    ValueError
        pandas' messages: "left keys must be sorted" / "right keys must be sorted", "Merge keys
        contain null values on left side" (NaN, NaT) / "... right side"; inputs not 1-D, on two
        devices, `by` columns of the wrong length.
    pandas.errors.MergeError
        (a ValueError; gsearch's own MergeError without pandas), pandas' messages: keys (or
        `by` columns) of different dtypes, a tolerance of the wrong kind or negative, an unknown
        direction, left_by and right_by of different numbers of columns.
    TypeError
        Unsupported dtypes.

    Examples
    --------
    >>> import numpy as np, gsearch
    >>> gsearch.asof_indices(np.array([1, 5, 10]), np.array([1, 2, 3, 6, 7]))
    array([0, 2, 4])
    >>> gsearch.asof_indices(np.array([1, 5, 10]), np.array([1, 2, 3, 6, 7]), direction="nearest", tolerance=1)
    array([ 0,  3, -1])
    >>> gsearch.asof_indices(np.array([2, 2]), np.array([1, 1]), left_by=np.array(["a", "b"]), right_by=np.array(["b", "a"]))
    array([1, 0])
    """
    fn = "asof_indices"
    d = _check_direction(direction)
    exact = _check_exact(allow_exact_matches)
    if (left_by is None) != (right_by is None):
        raise _merge_error("missing left_by" if left_by is None else "missing right_by")
    L, R = _key_arrays(fn, left_on, right_on)
    n, m = _shape(L)[0], _shape(R)[0]
    lcols = _by_columns(fn, left_by, n, "left_by", "left_on")
    rcols = _by_columns(fn, right_by, m, "right_by", "right_on")
    if len(lcols) != len(rcols):
        raise _merge_error("left_by and right_by must be the same length")
    lcols = [_adopt(lc, rc) for lc, rc in zip(lcols, rcols)]
    rcols = [_adopt(rc, lc) for lc, rc in zip(lcols, rcols)]
    for i, (lc, rc) in enumerate(zip(lcols, rcols)):  # pandas' order: the by columns, then the key
        if lc.dev != L.dev or rc.dev != L.dev:
            raise ValueError(f"gsearch.{fn}: the by columns must be on the keys' device ({_where(L.dev)})")
        if not _same_dtype(lc, rc):
            raise _incompatible_keys(i, _key_dtype_name(lc), _key_dtype_name(rc))
    if not _same_dtype(L, R):
        raise _incompatible_keys(len(lcols), _key_dtype_name(L), _key_dtype_name(R))
    kd = _compute_dtype(fn, L, "left_on")
    tol = _tolerance(tolerance, L.dtype.newbyteorder("="), kd)
    with _StreamScope(L.fw, L.dev, stream) as scope:
        keys = _keys(fn, L, R, bool(sort), scope.handle)
        lcodes = rcodes = None
        groups = 0
        if lcols:
            lcodes, rcodes, groups = _group_codes(L.fw, [c.x for c in lcols], [c.x for c in rcols], n)
            lcodes, rcodes = _contiguous_int64(L.fw, lcodes), _contiguous_int64(L.fw, rcodes)
        return _gather_map(keys, lcodes, rcodes, groups, d, tol, exact, bool(sort), scope.handle)


def _contiguous_int64(fw: str, x: Any) -> Any:
    if fw == "torch":
        return x.to(_torch().int64).contiguous()
    xp = _np if fw == "numpy" else _cupy()
    return xp.ascontiguousarray(x, dtype=_np.int64)


# --- pandas ------------------------------------------------------------------------------------


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError as e:
        raise ImportError("gsearch.merge_asof needs pandas: pip install pandas") from e
    return pd


def _pandas_operand(pd: Any, obj: Any) -> Any:
    if isinstance(obj, pd.DataFrame):
        return obj
    if isinstance(obj, pd.Series):
        if obj.name is None:
            raise ValueError("Cannot merge a Series without a name")
        return obj.to_frame()
    raise TypeError(f"Can only merge Series or DataFrame objects, a {type(obj)} was passed")


def _as_list(x: Any) -> Optional[list]:
    if x is None:
        return None
    if isinstance(x, (list, tuple)) or (hasattr(x, "__array__") and not isinstance(x, str) and _np.ndim(x) == 1):
        return list(x)
    return [x]


def _pandas_on(pd: Any, left: Any, right: Any, on: Any, left_on: Any, right_on: Any, li: bool, ri: bool) -> tuple:
    """pandas' resolution of on / left_on / right_on / the indexes (its messages): the key
    labels of each side, None where the key is the index."""
    left_on, right_on = _as_list(left_on), _as_list(right_on)
    if on is None and left_on is None and right_on is None:
        if li and ri:
            return [None], [None]
        if li:
            raise _merge_error("Must pass right_on or right_index=True")
        if ri:
            raise _merge_error("Must pass left_on or left_index=True")
        common = left.columns.intersection(right.columns)
        if len(common) == 0:
            raise _merge_error(
                "No common columns to perform merge on. "
                f"Merge options: left_on={left_on}, right_on={right_on}, left_index={li}, right_index={ri}"
            )
        if not left.columns.join(common, how="inner").is_unique or not right.columns.join(common, how="inner").is_unique:
            raise _merge_error(f"Data columns not unique: {common!r}")
        left_on = right_on = list(common)
    elif on is not None:
        if left_on is not None or right_on is not None:
            raise _merge_error('Can only pass argument "on" OR "left_on" and "right_on", not a combination of both.')
        if li or ri:
            raise _merge_error(
                'Can only pass argument "on" OR "left_index" and "right_index", not a combination of both.'
            )
        left_on = right_on = _as_list(on)
    elif left_on is not None:
        if li:
            raise _merge_error('Can only pass argument "left_on" OR "left_index" not both.')
        if not ri and right_on is None:
            raise _merge_error('Must pass "right_on" OR "right_index".')
        if ri and right_on is not None:
            raise _merge_error('Can only pass argument "right_on" OR "right_index" not both.')
        if ri:
            if len(left_on) != right.index.nlevels:
                raise ValueError('len(left_on) must equal the number of levels in the index of "right"')
            right_on = [None] * len(left_on)
    elif right_on is not None:
        if ri:
            raise _merge_error('Can only pass argument "right_on" OR "right_index" not both.')
        if not li and left_on is None:
            raise _merge_error('Must pass "left_on" OR "left_index".')
        if li:
            if len(right_on) != left.index.nlevels:
                raise ValueError('len(right_on) must equal the number of levels in the index of "left"')
            left_on = [None] * len(right_on)
    if len(right_on) != len(left_on):
        raise ValueError("len(right_on) must equal len(left_on)")
    if len(left_on) != 1 and not li:
        raise _merge_error("can only asof on a key for left")
    if len(right_on) != 1 and not ri:
        raise _merge_error("can only asof on a key for right")
    if li and isinstance(left.index, pd.MultiIndex):
        raise _merge_error("left can only have one index")
    if ri and isinstance(right.index, pd.MultiIndex):
        raise _merge_error("right can only have one index")
    return left_on[-1:], right_on[-1:]


def _pandas_column(fn: str, frame: Any, label: Any, key: bool = False) -> Any:
    """The column `label` of frame (pandas' KeyError when it has none, worded as pandas words it
    for an `on` key and a `by` column; index levels, which pandas also takes, are not supported
    here)."""
    if not isinstance(label, (str, int, float, tuple, _np.generic)) and label is not None:
        raise NotImplementedError(
            f"gsearch.{fn}: keys and by columns are column labels here (not arrays): add the array as a column"
        )
    if label in frame.columns:
        col = frame[label]
        if not hasattr(col, "dtype"):  # duplicate labels: a frame
            raise ValueError(f"The column label '{label}' is not unique.")
        return col
    if label in frame.index.names:
        raise NotImplementedError(
            f"gsearch.{fn}: {label!r} is an index level: pass frame.reset_index() (or left_index / "
            "right_index for a one-level index), or use pandas.merge_asof"
        )
    if key:  # pandas looks the key up among the index levels last
        if frame.index.nlevels > 1:
            raise KeyError(f"Level {label} not found")
        raise KeyError(f"Requested level ({label}) does not match index name ({frame.index.name})")
    raise KeyError(label)


def _pandas_key(pd: Any, values: Any) -> tuple:
    """A pandas key column or index as (the numpy array the library joins, whether it holds
    nulls, the numpy dtype its tolerance is converted for)."""
    dtype = values.dtype
    if isinstance(dtype, _np.dtype):
        x = values.to_numpy()
        if dtype.kind in "mM":
            return x.view(_np.int64), bool(_np.isnat(x).any()), dtype
        return x, False, dtype
    if isinstance(dtype, pd.DatetimeTZDtype):
        x = _np.asarray(values.array.asi8)
        return x, bool((x == _np.iinfo(_np.int64).min).any()), _np.dtype(f"M8[{dtype.unit}]")
    null = bool(values.isna().any())
    numpy_dtype = getattr(dtype, "numpy_dtype", None)  # pandas' masked dtypes (Int64, Float64, ...)
    if numpy_dtype is not None and not null:
        x = values.to_numpy(dtype=numpy_dtype)
    else:
        x = values.dropna().to_numpy() if null else values.to_numpy()
        if null:
            return x, True, x.dtype
    if x.dtype.kind in "mM":
        return x.view(_np.int64), null, x.dtype
    if x.dtype.kind not in "biuf":
        raise TypeError(f"gsearch.merge_asof: keys of dtype {dtype} are not supported")
    return x, null, x.dtype


def _pandas_tolerance(pd: Any, tolerance: Any, lt: Any) -> None:
    """pandas' checks of the tolerance against the left key's dtype lt, and its messages."""
    from pandas.api import types

    if tolerance is None:
        return
    if getattr(lt, "kind", None) in ("m", "M") or isinstance(lt, pd.PeriodDtype):
        if not isinstance(tolerance, _dt.timedelta):
            raise _incompatible_tolerance(tolerance, lt)
        if tolerance < pd.Timedelta(0):
            raise _merge_error(_negative_tolerance_words())
    elif types.is_integer_dtype(lt):
        if not types.is_integer(tolerance):
            raise _incompatible_tolerance(tolerance, lt)
        if tolerance < 0:
            raise _merge_error(_negative_tolerance_words())
    elif types.is_float_dtype(lt):
        if not types.is_number(tolerance):
            raise _incompatible_tolerance(tolerance, lt)
        if tolerance < 0:
            raise _merge_error(_negative_tolerance_words())
    else:
        raise _merge_error("key must be integer, timestamp or float")


def _pandas_by_parts(pd: Any, lcol: Any, rcol: Any) -> tuple:
    """A pair of `by` columns as arrays _group_codes factorizes as pandas does: numeric numpy
    columns as they are (datetimes as int64), any other dtype as codes of pandas' joint
    factorization (nulls one value, as pandas' merge keys)."""
    dtype = lcol.dtype
    if isinstance(dtype, _np.dtype) and dtype.kind in "biufmM":
        lx, rx = lcol.to_numpy(), rcol.to_numpy()
        if dtype.kind in "mM":
            lx, rx = lx.view(_np.int64), rx.view(_np.int64)
        elif dtype.kind == "f" and dtype.itemsize < 4:
            lx, rx = lx.astype(_np.float32), rx.astype(_np.float32)
        return lx, rx
    both = pd.concat([lcol.reset_index(drop=True), rcol.reset_index(drop=True)], ignore_index=True)
    codes, uniques = pd.factorize(both, use_na_sentinel=True)
    codes = _np.asarray(codes, dtype=_np.int64)
    codes[codes < 0] = len(uniques)
    return codes[: len(lcol)], codes[len(lcol) :]


def _overlap_suffixes(pd: Any, left: Any, right: Any, suffixes: Any) -> tuple:
    """pandas' column labels of a merge: the overlapping ones suffixed, its checks and messages."""
    if not pd.api.types.is_list_like(suffixes, allow_sets=False) or isinstance(suffixes, dict):
        raise TypeError(
            f"Passing 'suffixes' as a {type(suffixes)}, is not supported. Provide 'suffixes' as a tuple instead."
        )
    to_rename = left.intersection(right)
    if len(to_rename) == 0:
        return left, right
    lsuffix, rsuffix = suffixes
    if not lsuffix and not rsuffix:
        raise ValueError(f"columns overlap but no suffix specified: {to_rename}")

    def renamed(index: Any, suffix: Any) -> Any:
        return pd.Index(
            [f"{x}{suffix}" if x in to_rename and suffix is not None else x for x in index],
            name=index.name,
            tupleize_cols=False,
        )

    llabels, rlabels = renamed(left, lsuffix), renamed(right, rsuffix)
    dups = []
    if not llabels.is_unique:
        dups.extend(llabels[(llabels.duplicated()) & (~left.duplicated())].tolist())
    if not rlabels.is_unique:
        dups.extend(rlabels[(rlabels.duplicated()) & (~right.duplicated())].tolist())
    dups.extend(llabels.intersection(right.difference(to_rename)).tolist())
    dups.extend(rlabels.intersection(left.difference(to_rename)).tolist())
    if dups:
        raise _merge_error(f"Passing 'suffixes' which cause duplicate columns {set(dups)} is not allowed.")
    return llabels, rlabels


def _pandas_result(pd: Any, left: Any, right: Any, right_index: Any, index: Any, suffixes: Any) -> Any:
    """pandas.merge_asof's frame from the gather map: left's columns, then right's gathered
    (missing rows filled as pandas' reindex fills them: int -> float64 NaN, bool -> object,
    datetime -> NaT, extension dtypes their NA), on `index`."""
    import types

    llabels, rlabels = _overlap_suffixes(pd, left.columns, right.columns, suffixes)
    lres = left.copy(deep=False)
    lres.index = index
    rres = right.reset_index(drop=True)
    if len(right_index) and bool((right_index < 0).any()):
        # a missing row: reindexed to one more row (the fill's dtypes: pandas' reindex / take_nd
        # promotion), then taken; a RangeIndex target is no lookup
        m = len(rres)
        _np.putmask(right_index, right_index < 0, m)  # the map is this call's own
        rres = rres.reindex(pd.RangeIndex(m + 1)).take(right_index)
    else:
        rres = rres.take(right_index)
    rres.index = index
    lres.columns, rres.columns = llabels, rlabels
    result = pd.concat([lres, rres], axis=1)
    return result.__finalize__(types.SimpleNamespace(input_objs=[left, right], left=left, right=right), method="merge")


def _to_device(parts: list, device: str) -> list:
    torch = _torch()
    if torch is None:
        try:
            import torch  # type: ignore[no-redef]
        except ImportError as e:
            raise ImportError("gsearch.merge_asof(device='cuda') needs torch with CUDA") from e
    import warnings

    with warnings.catch_warnings():  # pandas' read-only views: only read (copied to the device)
        warnings.simplefilter("ignore", UserWarning)
        return [torch.from_numpy(_np.ascontiguousarray(p)).to(device) for p in parts]


def _host_join(
    fn: str,
    lx: Any,
    rx: Any,
    kd: _np.dtype,
    dtype: _np.dtype,
    lparts: list,
    rparts: list,
    direction: int,
    tolerance: Any,
    exact: bool,
    sort: bool,
    device: str,
) -> Any:
    """The gather map (numpy) of host keys and `by` parts joined on `device`: 'cpu', or 'cuda'
    / 'cuda:N' (the keys and parts copied there through torch, factorized and joined there, the
    map copied back)."""
    n = len(lx)
    lx, rx = _np.ascontiguousarray(lx, dtype=kd), _np.ascontiguousarray(rx, dtype=kd)
    if device == "cpu":
        keys = _Keys(lx, rx, kd, dtype, "numpy", None)
        lcodes = rcodes = None
        groups = 0
        if lparts:
            lcodes, rcodes, groups = _group_codes("numpy", lparts, rparts, n)
            lcodes, rcodes = _contiguous_int64("numpy", lcodes), _contiguous_int64("numpy", rcodes)
        return _gather_map(keys, lcodes, rcodes, groups, direction, tolerance, exact, sort, 0)
    if not isinstance(device, str) or not device.startswith("cuda"):
        raise ValueError(f"gsearch.{fn}: device must be 'cpu' or 'cuda' ('cuda:N'), not {device!r}")
    moved = _to_device([lx, rx] + lparts + rparts, device)
    k = len(lparts)
    gl, gr, glb, grb = moved[0], moved[1], moved[2 : 2 + k], moved[2 + k :]
    dev = gl.device.index if gl.device.index is not None else _torch().cuda.current_device()
    with _StreamScope("torch", dev, None) as scope:
        keys = _Keys(gl, gr, kd, dtype, "torch", dev)
        lcodes = rcodes = None
        groups = 0
        if k:
            lcodes, rcodes, groups = _group_codes("torch", glb, grb, n)
            lcodes, rcodes = _contiguous_int64("torch", lcodes), _contiguous_int64("torch", rcodes)
        return _gather_map(keys, lcodes, rcodes, groups, direction, tolerance, exact, sort, scope.handle).cpu().numpy()


@_public
def merge_asof(
    left: Any,
    right: Any,
    on: Any = None,
    left_on: Any = None,
    right_on: Any = None,
    left_index: bool = False,
    right_index: bool = False,
    by: Any = None,
    left_by: Any = None,
    right_by: Any = None,
    suffixes: Sequence = ("_x", "_y"),
    tolerance: Any = None,
    allow_exact_matches: bool = True,
    direction: AsofDirection = "backward",
    device: str = "cpu",
) -> Any:
    """pandas.merge_asof, by gsearch's as-of join: the same frame (columns, their order and
    dtypes, index, values) and the same errors.

    For each left row, the right row whose `on` key is the closest in `direction` (among the
    right rows of the same `by` values), as :func:`asof_indices`; the result is left's columns,
    then right's (less its `on` and `by` columns of the same names as left's, which pandas
    drops), gathered, with the right columns of unmatched rows missing (int columns become
    float64 with NaN, bool ones object, datetimes NaT, extension dtypes their NA), and
    overlapping names suffixed.

    Parameters
    ----------
    left, right : pandas.DataFrame or named pandas.Series
        Both sorted by their key (pandas' rule: "left keys must be sorted" otherwise).
    on, left_on, right_on : label, optional
        The key column (one), of one dtype on both sides: integers, floats, datetime64 (tz-aware
        too), timedelta64, pandas' nullable integer / float dtypes (without NA).
    left_index, right_index : bool, optional
        The key is the side's (one-level) index. Supported: both, and ``left_on=`` with
        ``right_index=True``; ``left_index=True`` with ``right_on=`` is not (pandas fills the
        right key column's unmatched rows from the left index there): NotImplementedError,
        pass ``left.reset_index()`` and ``left_on=`` instead.
    by, left_by, right_by : label or list of labels, optional
        Match only rows of equal values in these columns (any dtypes; nulls equal, as pandas).
    suffixes : (str or None, str or None), optional
        For overlapping column names, as pandas.
    tolerance : int, float or datetime.timedelta / pandas.Timedelta, optional
        The largest distance of a match, inclusive, of the key's kind (pandas' rule).
    allow_exact_matches : bool, optional
        False: strictly before (backward) or after (forward) the left key.
    direction : {'backward', 'forward', 'nearest'}, optional
        As in :func:`asof_indices`.
    device : {'cpu', 'cuda', 'cuda:N'}, optional
        Where the join runs. 'cuda' (torch with CUDA) copies the key columns (8 bytes a row of
        each side for int64 / datetime keys) and the `by` columns (numeric ones as they are,
        others as int64 codes factorized by pandas on the CPU) to the GPU, factorizes the `by`
        columns there, joins there, and copies the gather map back (8 bytes a left row); the
        frames themselves never move: the gather of the right's columns runs on the CPU. The
        copies cost about (bytes moved) / (the host link's bandwidth, ~25 GB/s on PCIe 5)
        plus a few launches: worth it for large joins with many groups.

    Returns
    -------
    pandas.DataFrame
        Equal to ``pandas.merge_asof(left, right, ...)`` with the same arguments.

    Raises
    ------
    pandas.errors.MergeError, ValueError, TypeError, KeyError
        Where pandas raises them, with its messages (unsorted keys, null keys, keys of different
        dtypes, a bad tolerance, direction or suffixes, missing columns).
    NotImplementedError
        Index levels as keys, arrays as keys, ``left_index=True`` with ``right_on``.

    Notes
    -----
    Where they differ from pandas' own: float16 keys are joined (widened to float32; pandas
    refuses them), and integer distances are exact (pandas subtracts in the key's dtype and
    wraps past its range: only keys near the dtype's limits, with a tolerance or 'nearest', can
    differ). See docs/semantics.md.

    Examples
    --------
    >>> import pandas as pd, gsearch
    >>> quotes = pd.DataFrame({"time": [1, 2, 5, 9], "bid": [10.0, 10.5, 11.0, 11.5]})
    >>> trades = pd.DataFrame({"time": [2, 6, 10], "qty": [100, 200, 300]})
    >>> gsearch.merge_asof(trades, quotes, on="time", tolerance=3)
       time  qty   bid
    0     2  100  10.5
    1     6  200  11.0
    2    10  300  11.5
    """
    pd = _pandas()
    fn = "merge_asof"
    d = _check_direction(direction)
    exact = _check_exact(allow_exact_matches)
    left, right = _pandas_operand(pd, left), _pandas_operand(pd, right)
    if left.columns.nlevels != right.columns.nlevels:
        raise _merge_error(
            "Not allowed to merge between different levels. "
            f"({left.columns.nlevels} levels on the left, {right.columns.nlevels} on the right)"
        )
    li, ri = bool(left_index), bool(right_index)
    lon, ron = _pandas_on(pd, left, right, on, left_on, right_on, li, ri)
    if by is not None:
        if left_by is not None or right_by is not None:
            raise _merge_error("Can only pass by OR left_by and right_by")
        left_by = right_by = by
    if left_by is None and right_by is not None:
        raise _merge_error("missing left_by")
    if left_by is not None and right_by is None:
        raise _merge_error("missing right_by")
    lkey = left.index if li else _pandas_column(fn, left, lon[0], key=True)
    rkey = right.index if ri else _pandas_column(fn, right, ron[0], key=True)
    types = pd.api.types
    if any(types.is_object_dtype(k.dtype) or types.is_string_dtype(k.dtype) for k in (lkey, rkey)):
        raise _merge_error(
            f"Incompatible merge dtype, {lkey.dtype!r} and {rkey.dtype!r}, both sides must have numeric dtype"
        )
    lby = [] if left_by is None else (list(left_by) if types.is_list_like(left_by) else [left_by])
    rby = [] if right_by is None else (list(right_by) if types.is_list_like(right_by) else [right_by])
    if len(lby) != len(rby):
        raise _merge_error("left_by and right_by must be the same length")
    lbycols = [_pandas_column(fn, left, b) for b in lby]
    rbycols = [_pandas_column(fn, right, b) for b in rby]
    for i, (lc, rc) in enumerate(zip(lbycols, rbycols)):
        if lc.dtype != rc.dtype:
            if isinstance(lc.dtype, pd.CategoricalDtype) and isinstance(rc.dtype, pd.CategoricalDtype):
                raise _merge_error(
                    f"incompatible merge keys [{i}] {lc.dtype!r} and {rc.dtype!r}, both sides category, but not equal ones"
                )
            raise _incompatible_keys(i, lc.dtype, rc.dtype)
    if lkey.dtype != rkey.dtype:
        raise _incompatible_keys(len(lby), lkey.dtype, rkey.dtype)
    _pandas_tolerance(pd, tolerance, lkey.dtype)
    if li and not ri:
        raise NotImplementedError(
            "gsearch.merge_asof: left_index=True with right_on is not supported (pandas fills the "
            "right key column's unmatched rows from the left index): pass left.reset_index() and "
            "left_on=, or use pandas.merge_asof"
        )
    # The right's key and by columns of the left's names are dropped, as pandas drops them.
    right_drop = [r for l, r in zip(lby + lon, rby + ron) if l is not None and l == r]
    lx, lnull, tdtype = _pandas_key(pd, lkey)
    rx, rnull, _ = _pandas_key(pd, rkey)
    kd = _compute_dtype(fn, _Arr(lx, "numpy", None, lx.dtype), "the key")
    tol = _tolerance(tolerance, tdtype, kd)
    _raise_nulls(lnull, rnull, _np.ascontiguousarray(lx, dtype=kd), False, 0)
    lparts, rparts = [], []
    for lc, rc in zip(lbycols, rbycols):
        lp, rp = _pandas_by_parts(pd, lc, rc)
        lparts.append(lp)
        rparts.append(rp)
    n = len(lx)
    gathered = _host_join(fn, lx, rx, kd, tdtype, lparts, rparts, d, tol, exact, False, device)
    if ri or li:
        index = left.index.take(_np.arange(n)) if n > 0 else right.index.take(gathered)
    else:
        index = pd.RangeIndex(n)
    if right_drop:
        right = right.drop(columns=right_drop)
    return _pandas_result(pd, left, right, gathered, index, suffixes)


# --- polars ------------------------------------------------------------------------------------


def _polars() -> Any:
    try:
        import polars as pl
    except ImportError as e:
        raise ImportError("gsearch.join_asof needs polars: pip install polars") from e
    return pl


def _polars_dtype_name(dt: Any) -> str:
    try:
        return dt._string_repr()
    except Exception:  # pragma: no cover - another polars
        return str(dt)


def _not_sorted_polars(pl: Any) -> Exception:
    return pl.exceptions.InvalidOperationError(
        "argument in operation 'asof_join' is not sorted, please sort the 'expr/series/column' first"
    )


def _names(x: Any) -> Optional[list]:
    if x is None:
        return None
    return [x] if isinstance(x, str) else list(x)


def _polars_key(pl: Any, s: Any, side: str, check: bool) -> tuple:
    """A polars key column as (its non-null values as numpy, physical (zero-copy where it has no
    nulls), the rows they are (None: all), whether the nulls all lead (polars' sorted order))."""
    nulls = s.null_count()
    if nulls == 0:
        return s.to_physical().to_numpy(), None, True
    lead = nulls == len(s) or not bool(s[:nulls].is_not_null().any())
    if lead:
        return s[nulls:].to_physical().to_numpy(), _np.arange(nulls, len(s), dtype=_np.int64), True
    valid = s.is_not_null().to_numpy()
    return s.filter(s.is_not_null()).to_physical().to_numpy(), _np.flatnonzero(valid).astype(_np.int64), False


_DURATION_UNITS = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9, "h": 3600 * 10**9, "d": 86400 * 10**9, "w": 604800 * 10**9}


def _polars_duration_ns(fn: str, text: str, calendar: bool) -> int:
    """polars' duration string ("1h30m", "2d") in nanoseconds: the fixed units, and days and
    weeks as 24 hours / 7 days (tz-naive keys); calendar months, quarters, years and tz-aware
    days are not supported."""
    import re

    t = text.strip()
    sign = -1 if t.startswith("-") else 1
    t = t.lstrip("-")
    parts = re.findall(r"(\d+)(ns|us|µs|ms|mo|s|m|h|d|w|q|y|i)", t)
    if not parts or "".join(a + b for a, b in parts) != t:
        raise ValueError(f"gsearch.{fn}: invalid duration string {text!r}")
    total = 0
    for value, unit in parts:
        unit = "us" if unit == "µs" else unit
        if unit in ("mo", "q", "y", "i") or (calendar and unit in ("d", "w")):
            raise NotImplementedError(
                f"gsearch.{fn}: the calendar duration {text!r} (months, quarters, years, or days of tz-aware "
                "datetimes) is not supported: pass a datetime.timedelta, or use polars' join_asof"
            )
        total += int(value) * _DURATION_UNITS[unit]
    return sign * total


def _polars_tolerance(pl: Any, fn: str, tolerance: Any, dtype: Any, kd: _np.dtype) -> Any:
    """polars' tolerance in the key's physical units and dtype kd: its magnitude (polars takes
    |tolerance|); integer keys truncate a float tolerance, temporal keys take a timedelta or a
    duration string (floored to whole units) or a number of units."""
    if tolerance is None:
        return None
    temporal = dtype.is_temporal()
    if temporal and (isinstance(tolerance, (str, _dt.timedelta, _np.timedelta64))):
        if isinstance(tolerance, str):
            ns = abs(_polars_duration_ns(fn, tolerance, getattr(dtype, "time_zone", None) is not None))
            atto = ns * 10**9
        else:
            atto = _timedelta_attoseconds(tolerance)
            if atto is None:
                raise ValueError(f"gsearch.{fn}: tolerance {tolerance!r} is not a duration")
            atto = abs(atto)
        if dtype == pl.Date:
            unit = 86400 * 10**18
        elif dtype == pl.Time:
            unit = 10**9
        else:
            unit = {"ns": 10**9, "us": 10**12, "ms": 10**15}[dtype.time_unit]
        return _integer_tolerance(atto // unit, kd)
    if not _is_number(tolerance) or isinstance(tolerance, str):
        raise TypeError(f"gsearch.{fn}: tolerance {tolerance!r} for keys of dtype {dtype}: a number (or a duration for temporal keys)")
    if kd.kind in "iu":
        return _integer_tolerance(abs(int(tolerance)), kd)
    return _tolerance(abs(float(tolerance)), kd, kd)


def _polars_by_parts(pl: Any, fn: str, lcols: list, rcols: list) -> tuple:
    """polars' `by` columns as parts for _group_codes, and each side's rows with a null in any
    of them (polars matches them with nothing), or None."""
    lparts, rparts = [], []
    lnull = rnull = None
    for lc, rc in zip(lcols, rcols):
        if lc.dtype != rc.dtype:
            raise pl.exceptions.ComputeError(
                f"mismatching dtypes in 'by' parameter of asof-join: `{_polars_dtype_name(lc.dtype)}` and "
                f"`{_polars_dtype_name(rc.dtype)}`"
            )
        for c, side in ((lc, "l"), (rc, "r")):
            if c.null_count():
                mask = c.is_null().to_numpy()
                if side == "l":
                    lnull = mask if lnull is None else (lnull | mask)
                else:
                    rnull = mask if rnull is None else (rnull | mask)
        if (lc.dtype.is_numeric() or lc.dtype.is_temporal()) and not lc.null_count() and not rc.null_count():
            lx, rx = lc.to_physical().to_numpy(), rc.to_physical().to_numpy()
            if lx.dtype == _np.float16:
                lx, rx = lx.astype(_np.float32), rx.astype(_np.float32)
        else:
            both = pl.concat([lc, rc], rechunk=False).rank("dense").fill_null(0).to_numpy().astype(_np.int64)
            lx, rx = both[: len(lc)], both[len(lc) :]
        lparts.append(lx)
        rparts.append(rx)
    return lparts, rparts, lnull, rnull


def _polars_nearest(
    fn: str, lx: Any, rx: Any, kd: Any, lparts: list, rparts: list, tol: Any, exact: bool, sort: bool, device: str
) -> Any:
    """polars' 'nearest': of the right rows at the least distance, the last one (pandas takes
    the backward match on a tie, and the first of equal forward keys). The backward and forward
    matches, the closer (forward on a tie), and a forward match moved to the last right row of
    its key in its group (the backward match of that key)."""
    if len(rx) == 0 or len(lx) == 0:
        return _np.full(len(lx), -1, dtype=_np.int64)
    dtype = _np.dtype(kd)
    back = _host_join(fn, lx, rx, kd, dtype, lparts, rparts, _DIRECTIONS["backward"], tol, exact, sort, device)
    fore = _host_join(fn, lx, rx, kd, dtype, lparts, rparts, _DIRECTIONS["forward"], tol, exact, sort, device)
    lk = _np.ascontiguousarray(lx, dtype=kd)
    rk = _np.ascontiguousarray(rx, dtype=kd)
    hb, hf = back >= 0, fore >= 0
    both = hb & hf
    kb, kf = rk[_np.maximum(back, 0)], rk[_np.maximum(fore, 0)]
    if kd.kind in "iu":
        u = _np.dtype(f"uint{kd.itemsize * 8}")
        db, df = lk.view(u) - kb.view(u), kf.view(u) - lk.view(u)  # exact distances, unsigned
    else:
        db, df = lk - kb, kf - lk
    take_fore = hf & (~hb | (both & (df <= db)))
    rows = _np.flatnonzero(take_fore)
    out = _np.where(hb, back, -1)
    if len(rows):
        q = rk[fore[rows]]
        qparts = [p[rows] for p in lparts]
        # ungrouped and sorted, q is sorted too (a subsequence of non-decreasing keys)
        last = _host_join(fn, q, rx, kd, dtype, qparts, rparts, _DIRECTIONS["backward"], None, True, sort or bool(qparts), device)
        out[rows] = last
    return out


@_public
def join_asof(
    left: Any,
    right: Any,
    on: Any = None,
    left_on: Any = None,
    right_on: Any = None,
    by: Any = None,
    by_left: Any = None,
    by_right: Any = None,
    strategy: AsofDirection = "backward",
    suffix: str = "_right",
    tolerance: Any = None,
    allow_exact_matches: bool = True,
    coalesce: bool = True,
    check_sortedness: bool = True,
    device: str = "cpu",
) -> Any:
    """polars' ``left.join_asof(right, ...)``, by gsearch's as-of join: the same frame (columns,
    their order and dtypes, nulls) from polars DataFrames (LazyFrames are collected, and the
    result is then a LazyFrame).

    For each left row, the right row whose key is the closest in `strategy`, among the right
    rows of equal `by` values. polars' rules, where they are not pandas': 'nearest' takes, of the
    right rows at the least distance, the last (pandas: the backward match on a tie, the first of
    equal forward keys); null keys and null `by` values match nothing (a null left key gives a
    null row); the keys must be sorted within each `by` group only (without `by`, sorted, nulls
    first); `tolerance` is taken by its magnitude; `by` on several columns.

    Parameters
    ----------
    left, right : polars.DataFrame or polars.LazyFrame
    on, left_on, right_on : str
        The key column: integers, floats (NaN refused), Date, Datetime, Duration, Time, read
        without a copy where it has no nulls. Integer keys of two dtypes are compared exactly.
    by, by_left, by_right : str or list of str, optional
        Group columns (any dtypes, of one dtype on both sides).
    strategy : {'backward', 'forward', 'nearest'}, optional
    suffix : str, optional
        For the right's columns whose names the left has.
    tolerance : number, str or datetime.timedelta, optional
        polars' tolerance: a number (of the key's units), a timedelta or a duration string of
        fixed units ("1h30m", "2d" for tz-naive keys) for temporal keys.
    allow_exact_matches : bool, optional
    coalesce : bool, optional
        False keeps the right's key column of the left's key name (suffixed).
    check_sortedness : bool, optional
        Without `by`: polars' error for unsorted keys (else they are sorted first).
    device : {'cpu', 'cuda', 'cuda:N'}, optional
        As in :func:`merge_asof`: only the keys and `by` columns move.

    Returns
    -------
    polars.DataFrame (a LazyFrame for a LazyFrame `left`)
        Equal to ``left.join_asof(right, ...)``.

    Raises
    ------
    polars.exceptions.InvalidOperationError, ComputeError, SchemaError, DuplicateError, TypeError
        Where polars raises them (unsorted keys, by columns of different dtypes, key dtypes with
        no common type, duplicate column names, missing key names).
    ValueError
        NaN keys (polars orders NaN after every number; gsearch refuses them), a bad strategy.
    NotImplementedError
        Expressions as keys, calendar durations (months, years, tz-aware days).

    Examples
    --------
    >>> import polars as pl, gsearch
    >>> quotes = pl.DataFrame({"time": [1, 2, 5, 9], "bid": [10.0, 10.5, 11.0, 11.5]})
    >>> trades = pl.DataFrame({"time": [2, 6, 10], "qty": [100, 200, 300]})
    >>> gsearch.join_asof(trades, quotes, on="time", strategy="nearest")["bid"].to_list()
    [10.5, 11.0, 11.5]
    """
    pl = _polars()
    fn = "join_asof"
    lazy = isinstance(left, pl.LazyFrame)
    if lazy:
        left = left.collect()
    if isinstance(right, pl.LazyFrame):
        right = right.collect()
    if not isinstance(left, pl.DataFrame) or not isinstance(right, pl.DataFrame):
        raise TypeError(f"gsearch.{fn}: left and right must be polars DataFrames or LazyFrames")
    if strategy not in _DIRECTIONS:
        raise ValueError(f"asof `strategy` must be one of {{'backward', 'forward', 'nearest'}}, got {strategy}")
    d = _DIRECTIONS[strategy]
    exact = bool(allow_exact_matches)
    if on is not None:
        left_on = right_on = on
    for name, k in (("left_on", left_on), ("right_on", right_on)):
        if not isinstance(k, str):
            if isinstance(k, pl.Expr):
                raise NotImplementedError(f"gsearch.{fn}: keys are column names here, not expressions")
            raise TypeError(f"expected `{name}` to be str or Expr, got {type(k).__name__!r}")
    if by is not None:
        by_left = by_right = by
    if (by_left is None) != (by_right is None):
        raise pl.exceptions.InvalidOperationError("expected both 'by_left' and 'by_right' to be set in 'asof_join'")
    lby, rby = _names(by_left) or [], _names(by_right) or []
    if len(lby) != len(rby):
        raise pl.exceptions.InvalidOperationError("the number of columns given as 'by_left' and 'by_right' must match")
    for frame, cols in ((left, [left_on] + lby), (right, [right_on] + rby)):
        for c in cols:
            if c not in frame.columns:
                raise pl.exceptions.ColumnNotFoundError(f'unable to find column "{c}"; valid columns: {frame.columns}')
    ls, rs = left[left_on], right[right_on]
    ldt, rdt = ls.dtype, rs.dtype
    if ldt != rdt and not (ldt.is_integer() and rdt.is_integer()):
        raise pl.exceptions.SchemaError(
            f"datatypes of join keys don't match - `{left_on}`: {_polars_dtype_name(ldt)} on left does not match "
            f"`{right_on}`: {_polars_dtype_name(rdt)} on right (and no other type was available to cast to)"
        )
    lparts, rparts, lnull, rnull = _polars_by_parts(pl, fn, [left[c] for c in lby], [right[c] for c in rby])
    check = check_sortedness and not lby
    lx, lrows, llead = _polars_key(pl, ls, "left", check)
    rx, rrows, rlead = _polars_key(pl, rs, "right", check)
    if check and (not llead or not rlead):
        raise _not_sorted_polars(pl)
    if lx.dtype.kind == "f" and (_np.isnan(lx).any() or _np.isnan(rx).any()):
        raise ValueError(
            f"gsearch.{fn}: NaN keys (polars orders NaN after every number and matches it; gsearch refuses NaN "
            "as pandas does): filter them out, or use polars' join_asof"
        )
    from ._arrays import _resolve

    kd = _resolve(lx.dtype, rx.dtype) if lx.dtype != rx.dtype else _compute_dtype(fn, _Arr(lx, "numpy", None, lx.dtype), "the key")
    tol = _polars_tolerance(pl, fn, tolerance, ldt, kd)
    # Rows that cannot match: null keys (left: a null row; right: never matched), null by values.
    if lrows is not None:
        lparts = [p[lrows] for p in lparts]
    if rrows is not None:
        rparts = [p[rrows] for p in rparts]
    lbad = None if lnull is None else (lnull if lrows is None else lnull[lrows])
    rbad = None if rnull is None else (rnull if rrows is None else rnull[rrows])
    if lbad is not None or rbad is not None:  # one more group each side: no rows of the other side
        lparts, rparts = _nulls_apart(lparts, rparts, lbad, rbad)
    sort = False
    if lparts:  # polars: sorted within each group only; the library sorts stably then
        lk, rk = _np.ascontiguousarray(lx, dtype=kd), _np.ascontiguousarray(rx, dtype=kd)
        sort = not (_sorted(lk, 0) and _sorted(rk, 0))
    elif not check_sortedness:
        sort = True
    try:
        if d == _DIRECTIONS["nearest"]:
            m = _polars_nearest(fn, lx, rx, kd, lparts, rparts, tol, exact, sort, device)
        else:
            m = _host_join(fn, lx, rx, kd, _np.dtype(kd), lparts, rparts, d, tol, exact, sort, device)
    except ValueError as e:
        if str(e) in ("left keys must be sorted", "right keys must be sorted"):
            raise _not_sorted_polars(pl) from None
        raise
    if rrows is not None:  # back to the right's rows, nulls included
        m = _np.where(m >= 0, rrows[_np.maximum(m, 0)], -1) if len(rrows) else _np.full(len(m), -1, _np.int64)
    if lrows is not None:
        full = _np.full(len(ls), -1, dtype=_np.int64)
        full[lrows] = m
        m = full
    result = _polars_result(pl, left, right, m, left_on, right_on, lby, rby, suffix, coalesce)
    return result.lazy() if lazy else result


def _nulls_apart(lparts: list, rparts: list, lbad: Any, rbad: Any) -> tuple:
    """The parts with one more column: 0 for rows without a null `by` value, 1 (left) or 2
    (right) for those with: a group of one side only, matching nothing."""
    n = len(lparts[0]) if lparts else 0
    m = len(rparts[0]) if rparts else 0
    lflag = _np.zeros(n, dtype=_np.int64) if lbad is None else lbad.astype(_np.int64)
    rflag = _np.zeros(m, dtype=_np.int64) if rbad is None else rbad.astype(_np.int64) * 2
    return lparts + [lflag], rparts + [rflag]


def _polars_result(pl: Any, left: Any, right: Any, m: Any, left_on: str, right_on: str, lby: list, rby: list, suffix: str, coalesce: bool) -> Any:
    """polars' join_asof frame: left's columns, then right's gathered (null rows where m is -1):
    less its `by` columns (whatever their names) and, with coalesce, its key of the left key's
    name; the others of the left's names suffixed."""
    drop = set(rby)
    if coalesce and left_on == right_on:
        drop.add(right_on)
    cols = [c for c in right.columns if c not in drop]
    idx = pl.Series("", m, dtype=pl.Int64)
    idx = pl.select(pl.when(idx >= 0).then(idx)).to_series() if len(m) else idx
    taken = right.select(cols).select(pl.all().gather(idx)) if cols else pl.DataFrame()
    names = set(left.columns)
    renamed = {}
    for c in cols:
        if c in names:
            new = c + suffix
            if new in names or new in cols:
                raise pl.exceptions.DuplicateError(f"column '{new}' is duplicate")
            renamed[c] = new
    if renamed:
        taken = taken.rename(renamed)
    if not cols:
        return left.clone()
    if len(m) == 0:
        taken = right.select(cols).clear().rename(renamed) if renamed else right.select(cols).clear()
    return left.hstack(taken)
