"""find_bench.py's inputs and cases: the settings per device, the calls each impl makes, the
parsing of sizes and positions, the data (bit for bit the C++ find benchmark's: the formulas in
find_bench.py's docstring), the cases and the bytes each pass must move. Pure functions, tested
without a GPU (test_find_bench.py)."""
import math

import numpy as np

from ..common import inputs  # the splitmix64 words

SCHEMA = "gsearch-bench-find-python/1"
KEY_TYPE = "int32"
KEY_BYTES = 4
DEFAULTS = {
    "cuda": {"size": 1 << 28, "warmup": 3, "repeat": 15, "ops": ["first", "any", "count", "all", "isin"],
             "impls": ["gsearch-py", "torch", "cupy"], "fractions": [1e-5, 0.01, 0.5, 1.0],
             "peer": "torch", "gsearch": "gsearch-py"},
    "cpu": {"size": 1 << 26, "warmup": 0, "repeat": 10, "ops": ["first", "count", "all", "isin"],
            "impls": ["gsearch", "numpy"], "fractions": [1e-5, 0.01],
            "peer": "numpy", "gsearch": "gsearch"},
}
OPS = ["first", "any", "random", "count", "all", "isin"]
POSITIONS = ["0", "N/100", "N/2", "N-1"]
NEEDLES = [1 << 10, 1 << 20]
# Targets of issue 7 against the Python peer: keys "op" or "op case". cpu: gsearch vs numpy;
# cuda: gsearch-py vs torch.isin (the C++ targets against CUB are the C++ benchmark's business).
TARGETS = {"cpu": {"first": 2.0, "count": 2.0, "all": 2.0, "isin": 5.0},
           "cuda": {"isin m=2^10": 50.0, "isin m=2^20": 10.0}}
SAMPLE = 1 << 16  # isin: random positions checked against np.isin (plus every True)
SCAN_OPS = ("first", "any", "random")  # ops that stop at a match
CASE_OPS = {"none": ("first", "any", "random", "count", "all"), "pos": ("first", "any", "random"),
            "frac": ("count", "all"), "needles": ("isin",)}

# What each impl runs, per op (the "call" recorded in every row).
CALLS = {
    ("gsearch-py", "first", None): "gsearch.find(a, v, mode='first')",
    ("gsearch-py", "any", None): "gsearch.find(a, v, mode='any')",
    ("gsearch-py", "random", None): "gsearch.find(a, v, mode='random', seed=12345)",
    ("gsearch-py", "count", None): "gsearch.count(a, v)",
    ("gsearch-py", "all", None): "gsearch.find(a, v, mode='all')",
    ("gsearch-py", "isin", None): "gsearch.isin(a, needles)",
    ("torch", "first", "nonzero"): "nz = (a == v).nonzero(); int(nz[0, 0]) if len(nz) else -1",
    ("torch", "first", "argmax"): "m = a == v; i = m.view(torch.uint8).argmax(); "
                                  "int(torch.where(m[i], i, -1))",
    ("torch", "count", None): "torch.count_nonzero(a == v)",
    ("torch", "all", None): "(a == v).nonzero()",
    ("torch", "isin", None): "torch.isin(a, needles)",
    ("cupy", "first", "flatnonzero"): "nz = cupy.flatnonzero(a == v); int(nz[0]) if nz.size else -1",
    ("cupy", "first", "argmax"): "m = a == v; i = cupy.argmax(m); int(cupy.where(m[i], i, -1))",
    ("cupy", "count", None): "cupy.count_nonzero(a == v)",
    ("cupy", "all", None): "cupy.flatnonzero(a == v)",
    ("cupy", "isin", None): "cupy.isin(a, needles)",
    ("numpy", "first", "flatnonzero"): "nz = np.flatnonzero(a == v); int(nz[0]) if nz.size else -1",
    ("numpy", "first", "argmax"): "m = a == v; i = int(np.argmax(m)); i if m[i] else -1",
    ("numpy", "count", None): "np.count_nonzero(a == v)",
    ("numpy", "all", None): "np.flatnonzero(a == v)",
    ("numpy", "isin", None): "np.isin(a, needles)",
}
CALLS.update({("gsearch", op, var): call for (impl, op, var), call in CALLS.items()
              if impl == "gsearch-py"})



def parse_size(text):
    """"2^28", "1<<28", "268435456", "2**28", "1e6" -> int."""
    t = str(text).strip().replace("_", "")
    for sep in ("^", "**"):
        if sep in t:
            b, e = t.split(sep)
            return int(b) ** int(e)
    if "<<" in t:
        b, e = t.split("<<")
        return int(b) << int(e)
    if "e" in t.lower():
        return int(float(t))
    return int(t, 0)


def parse_list(text, conv):
    return [conv(x.strip()) for x in str(text).split(",") if x.strip()]


def position_of(label, n):
    """"0", "N/100", "N/2", "N-1" or a number -> an index in [0, n)."""
    t = label.strip().upper().replace(" ", "")
    if t == "N/100":
        p = n // 100
    elif t == "N/2":
        p = n // 2
    elif t == "N-1":
        p = n - 1
    else:
        p = parse_size(label)
    if not 0 <= p < n:
        raise ValueError(f"position {label} = {p} is outside [0, {n})")
    return p


def pow2_text(n):
    if n and n > 0 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def frac_text(f):
    return f"{f:g}"


VALUE = -1  # the value searched: the filler is never negative
RANDOM_SEED = 12345  # find(mode='random')'s seed, the C++ benchmark's --random-seed
SHIFT = np.uint64(33)


def _seed(s):
    return int(s) & (2**64 - 1)


def words(seed, n):
    """word(seed, i) for i in [0, n): uint64."""
    out = np.empty(n, dtype=np.uint64)

    def chunk(start, k):
        out[start:start + k] = inputs.splitmix64(_seed(seed), start, k)

    inputs._for_chunks(n, inputs.CHUNK, chunk)
    return out


def make_base(n, seed):
    """(data, V): filler(i) = int32(word(seed, i) >> 33) for i in [0, n), in which V = -1 does
    not occur."""
    data = np.empty(n, dtype=np.int32)

    def chunk(start, k):
        z = inputs.splitmix64(_seed(seed), start, k)
        z >>= SHIFT
        data[start:start + k] = z.astype(np.int32)

    inputs._for_chunks(n, inputs.CHUNK, chunk)
    return data, VALUE


def fraction_threshold(f):
    """Element i matches when word(seed + 1, i) < this: floor(f * 2^64); None for f >= 1 (every
    element), as the C++ benchmark's uint64_t(std::ldexp(f, 64))."""
    if not 0.0 <= f <= 1.0:
        raise ValueError(f"fraction {f} is outside [0, 1]")
    return None if f >= 1 else int(math.ldexp(f, 64))


def fraction_mask(n, f, seed):
    """Bool mask of the positions that hold V at fraction f."""
    t = fraction_threshold(f)
    if t is None:
        return np.ones(n, dtype=bool)
    t = np.uint64(t)
    mask = np.empty(n, dtype=bool)

    def chunk(start, k):
        np.less(inputs.splitmix64(_seed(seed + 1), start, k), t, out=mask[start:start + k])

    inputs._for_chunks(n, inputs.CHUNK, chunk)
    return mask


def make_needles(m, base, seed):
    """m test elements: j even: base[word(seed + 2, j) mod N] (an element), j odd:
    int32(word(seed + 3, j) >> 33)."""
    n = len(base)
    hits = base[(words(seed + 2, m)[0::2] % np.uint64(n)).astype(np.int64)]
    misses = (words(seed + 3, m)[1::2] >> SHIFT).astype(np.int32)
    out = np.empty(m, dtype=np.int32)
    out[0::2] = hits
    out[1::2] = misses
    return out


def numpy_isin_kind(n, needles):
    """The method np.isin(a, needles) (kind=None) takes for an int array of n elements, by
    numpy's rule (numpy/lib/_arraysetops_impl.py, numpy 1.24-2.x): "table" when the needles'
    range fits their dtype and is <= 6 * (n + m); else "loop" (one pass of == per needle) when
    m < 10 * n ** 0.145; else "sort" (np.unique with inverse, then a stable argsort)."""
    needles = np.asarray(needles)
    m = needles.size
    if m == 0:
        return "table"
    if needles.dtype.kind in "iub":
        rng = int(needles.max()) - int(needles.min())
        if rng <= np.iinfo(needles.dtype).max and rng <= 6 * (n + m):
            return "table"
    if m < 10 * n ** 0.145:
        return "loop"
    return "sort"


def make_cases(n, positions, fractions, needles, ops):
    """[{"case", "kind", "position", "fraction", "needles", "ops"}] in run order; cases with no
    op to run are left out."""
    cases = []

    def add(case, kind, ops_here, **kw):
        run_ops = [o for o in ops if o in ops_here]
        if run_ops:
            cases.append({"case": case, "kind": kind, "position": kw.get("position"),
                          "fraction": kw.get("fraction"), "needles": kw.get("needles"),
                          "ops": run_ops})

    add("none", "none", CASE_OPS["none"])
    seen = set()
    for label in positions:
        p = position_of(label, n)
        if p in seen:
            continue
        seen.add(p)
        add(f"p={label.strip().upper().replace(' ', '')}", "pos", CASE_OPS["pos"], position=p)
    for f in fractions:
        add(f"f={frac_text(f)}", "frac", CASE_OPS["frac"], fraction=f)
    for m in needles:
        add(f"m={pow2_text(m)}", "needles", CASE_OPS["needles"], needles=m)
    return cases


def case_data(base, value, case, seed):
    """The case's data (a new array; the base for "none" and "needles")."""
    if case["kind"] == "pos":
        d = base.copy()
        d[case["position"]] = value
        return d
    if case["kind"] == "frac":
        d = base.copy()
        d[fraction_mask(len(base), case["fraction"], seed)] = value
        return d
    return base


def traffic_bytes(op, n, matches, needles=None, position=None):
    """Bytes a pass must move, as the C++ benchmark counts them: 4 n read (first / any with the
    match at p: 4 (p + 1), the data up to the match), + 8 per index written (find-all), + the
    needles read and a 1-byte mask written (isin)."""
    if op in ("first", "any") and position is not None:
        return (position + 1) * KEY_BYTES
    b = n * KEY_BYTES
    if op == "all":
        b += 8 * matches
    elif op == "isin":
        b += (needles or 0) * KEY_BYTES + n
    return b
