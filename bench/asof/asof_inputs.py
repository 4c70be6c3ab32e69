"""asof_bench.py's inputs and checks (issue 44): the sorted int64 timestamps with random gaps and
the group codes of one case, the rows a check reads, the exact reference map by pandas' rule and
the comparison of a map with it."""
import numpy as np

T0 = 1_700_000_000_000_000_000  # the keys' origin (ns since the epoch: 2023-11-14)
LEFT_GAP = 100  # the left keys' mean gap
GROUP_SHIFT = 40  # the checks' composite key: group * 2^40 + (key - origin)


# ---- inputs ------------------------------------------------------------------------------------


def make_inputs(n, m, groups, seed):
    """(left keys, right keys, left codes, right codes, x, v): codes None for groups <= 1. The keys
    depend on (seed, n, m) only, so one size's cases of 1 and G groups join the same keys."""
    rng = np.random.default_rng([seed, n, m])
    span = max(1, n) * LEFT_GAP
    lt = np.cumsum(rng.integers(0, 2 * LEFT_GAP + 1, n, dtype=np.int64))
    lt += T0
    rgap = max(1, 2 * span // max(1, m))
    rt = np.cumsum(rng.integers(0, rgap + 1, m, dtype=np.int64))
    rt += T0
    lg = rg = None
    if groups > 1:
        grng = np.random.default_rng([seed, n, m, groups])
        lg = grng.integers(0, groups, n, dtype=np.int64)
        rg = grng.integers(0, groups, m, dtype=np.int64)
    return lt, rt, lg, rg, np.arange(n, dtype=np.float64), np.arange(m, dtype=np.float64)


def check_rows(n, full, sample, seed):
    """The left rows the exact reference checks: None (all) up to `full` rows, else `sample`
    random ones with the first and the last, sorted."""
    if n <= full:
        return None
    rng = np.random.default_rng([seed, n, 7])
    rows = np.unique(np.concatenate([rng.integers(0, n, sample), [0, n - 1]]))
    return rows.astype(np.int64)


class Reference:
    """pandas' matches by definition: the right rows sorted stably by group, a composite key
    group * 2^40 + (key - origin) (exact for these inputs), the backward match the last right row
    of the left row's group with key <= x (searchsorted right, less 1), the forward one the first
    with key >= x; nearest the backward one unless the forward one is strictly closer."""

    def __init__(self, lt, rt, lg, rg, rows):
        if not len(lt) or not len(rt):
            raise ValueError("the reference needs rows on both sides")
        base = min(int(lt[0]), int(rt[0]))
        if max(int(lt[-1]), int(rt[-1])) - base >= 1 << GROUP_SHIFT:
            raise ValueError("keys span more than 2^40: the reference's composite key would overflow")
        self.rows = rows
        q = lt if rows is None else lt[rows]
        qg = None if lg is None else (lg if rows is None else lg[rows])
        m = len(rt)
        if rg is None:
            order = np.arange(m, dtype=np.int64)
            rk, qk = rt - base, q - base
        else:
            order = np.argsort(rg, kind="stable")
            rk = (rg[order] << GROUP_SHIFT) + (rt[order] - base)
            qk = (qg << GROUP_SHIFT) + (q - base)
        b = np.searchsorted(rk, qk, side="right") - 1
        f = np.minimum(np.searchsorted(rk, qk, side="left"), m)
        ok_b, ok_f = b >= 0, f < m
        fc = np.minimum(f, m - 1)
        if rg is not None:
            sg = rg[order]
            ok_b &= sg[np.maximum(b, 0)] == qg
            ok_f &= sg[fc] == qg
        self.back = np.where(ok_b, order[np.maximum(b, 0)], -1)
        self.fore = np.where(ok_f, order[fc], -1)
        self.q, self.rt = q, rt

    def map(self, direction):
        if direction == "backward":
            return self.back
        if direction == "forward":
            return self.fore
        hb, hf = self.back >= 0, self.fore >= 0
        db = self.q - self.rt[np.maximum(self.back, 0)]
        df = self.rt[np.maximum(self.fore, 0)] - self.q
        take_f = hf & (~hb | (df < db))
        return np.where(take_f, self.fore, self.back)


def compare(got, want, lt, rt, lg, rg, rows, ties_ok):
    """(mismatches, ties) of the map `got` (full length) against `want` (on `rows`, None: all):
    ties are mismatches where both name a right row of the left row's group at the same distance
    from its key (ties_ok: those count as agreeing)."""
    g = got if rows is None else got[rows]
    if g.shape != want.shape:
        return int(max(len(g), len(want))), 0
    diff = np.flatnonzero(g != want)
    if not len(diff) or not ties_ok:
        return int(len(diff)), 0
    gd, wd = g[diff], want[diff]
    q = (lt if rows is None else lt[rows])[diff]
    both = (gd >= 0) & (wd >= 0)
    same = both & (np.abs(q - rt[np.maximum(gd, 0)]) == np.abs(q - rt[np.maximum(wd, 0)]))
    if rg is not None:
        qg = (lg if rows is None else lg[rows])[diff]
        same &= (rg[np.maximum(gd, 0)] == qg) & (rg[np.maximum(wd, 0)] == qg)
    return int(len(diff)), int(same.sum())


def map_from_values(vals):
    """The right rows named by a gathered "v" column (its values are the right's row numbers),
    -1 where it is NaN / null."""
    vals = np.asarray(vals, dtype=np.float64)
    return np.where(np.isnan(vals), -1, np.nan_to_num(vals, nan=-1.0)).astype(np.int64)
