"""polars' join_asof on gsearch's as-of join (_asof.py's layers, _asof_pandas.py's host join):
polars' keys, null and sortedness rules, its tolerance strings and strategies, its result frame
(_polars_result)."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Optional

import numpy as _np

from ._arrays import _Arr
from ._asof import (
    _DIRECTIONS,
    AsofDirection,
    _compute_dtype,
    _integer_tolerance,
    _is_number,
    _sorted,
    _timedelta_attoseconds,
    _tolerance,
)
from ._asof_pandas import _host_join
from ._docs import public as _public


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
