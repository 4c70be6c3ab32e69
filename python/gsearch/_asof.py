"""As-of joins (gsearch/asof.hpp): for every left row, the right row whose ordered key is the
closest in a direction, optionally within equal groups. ``asof_indices`` on arrays (numpy on the
CPU, torch / cupy CUDA arrays on the GPU) returns the gather map; ``merge_asof`` (pandas) and
``join_asof`` (polars) build their libraries' result tables from it (_asof_pandas.py,
_asof_polars.py).

The layers: the keys (datetimes as int64, narrow dtypes widened, pandas' and polars' null and
dtype rules) and the tolerance in the keys' units (_keys, _tolerance); the `by` columns
factorized jointly into group codes in [0, groups) (_group_codes: the same code for the same
value tuple on both sides, on the arrays' device); the library call (_gather_map). The frames are built in
_asof_pandas.py (merge_asof) and _asof_polars.py (join_asof), on this module's layers."""

from __future__ import annotations

import datetime as _dt
import math as _math
from functools import lru_cache as _lru_cache
from typing import Any, Literal, NamedTuple, Optional

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


def _min_max(fw: str, x: Any) -> tuple:
    """(least, greatest) of a non-empty integer array as Python ints: torch in one pass and one
    wait (aminmax), where min() and max() read the codes twice (0.19 ms each for 10^8 int64
    codes on an H200, by ncu) and waited twice."""
    if fw == "torch":
        return tuple(int(v) for v in _torch().stack(_torch().aminmax(x)).tolist())
    return int(x.min()), int(x.max())


def _pair_codes(fw: str, l: Any, r: Any) -> tuple:
    """(left codes, right codes, k) of one column pair, equal values one code in [0, k): an
    integer column of a small range by its offset from the least value, each side apart (no
    copy when that is 0 and the column int64); any other by a sort of both sides together."""
    n, m = l.shape[0], r.shape[0]
    if n + m == 0:
        return _as_int64(fw, l), _as_int64(fw, r), 1
    if _integral(fw, l):
        bounds = [_min_max(fw, x) for x in (l, r) if x.shape[0]]
        lo, hi = min(b[0] for b in bounds), max(b[1] for b in bounds)
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
