#!/usr/bin/env bash
# Issue 42's CPU target: `gsearch search` at K = 2^24, Q = 2^22 against numpy for the whole
# process (start, the .npy files read, the search, the result written), both in one run.
#   bash bench/results/cpu/issue42/process_bench.sh GSEARCH_CLI OUT_DIR [RUNS]
# Inputs (made once in OUT_DIR/inputs, seed 1): sorted keys uniform over [-10^9, 10^9), queries
# uniform over a range 10% wider; int32 and int64. Each run times, alternating, `gsearch search
# --device cpu --algo A` for A in auto, index, merge and a python3 process doing
# np.save(out, np.searchsorted(np.load(keys), np.load(queries))); every output is compared with
# numpy's (cmp of the .npy files) before its time counts. Prints one line per (dtype, what):
# the best and median of RUNS wall times (s), and numpy's best / this best.
set -euo pipefail
cli=$1 out=$2 runs=${3:-5}
mkdir -p "$out/inputs"
python3 - "$out/inputs" <<'PY'
import sys, os, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(1)
for dt in ("int32", "int64"):
    if os.path.exists(f"{d}/q_{dt}.npy"):
        continue
    np.save(f"{d}/k_{dt}.npy", np.sort(rng.integers(-10**9, 10**9, 1 << 24)).astype(dt))
    np.save(f"{d}/q_{dt}.npy", rng.integers(-1.1 * 10**9, 1.1 * 10**9, 1 << 22).astype(dt))
PY
wall() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
summary() { sort -g | awk '{a[NR]=$1} END{printf "best %.3f s, median %.3f s", a[1], a[int((NR+1)/2)]}'; }
for dt in int32 int64; do
  k="$out/inputs/k_$dt.npy" q="$out/inputs/q_$dt.npy"
  python3 -c "import numpy as np; np.save('$out/want.npy', np.searchsorted(np.load('$k'), np.load('$q')))"
  declare -A times=()
  for r in $(seq "$runs"); do
    times[numpy]+="$(wall python3 -c "import numpy as np; np.save('$out/np.npy', np.searchsorted(np.load('$k'), np.load('$q')))") "
    for a in auto index merge; do
      times[$a]+="$(wall "$cli" search --keys "$k" --queries "$q" --out "$out/g.npy" --device cpu --algo $a) "
      cmp -s "$out/g.npy" "$out/want.npy" || { echo "gsearch --algo $a differs from numpy ($dt)" >&2; exit 1; }
    done
  done
  nbest=$(tr ' ' '\n' <<<"${times[numpy]}" | grep . | sort -g | head -1)
  for w in numpy auto index merge; do
    best=$(tr ' ' '\n' <<<"${times[$w]}" | grep . | sort -g | head -1)
    printf "%s %-6s %s; numpy best / this best %.1fx\n" "$dt" "$w" \
      "$(tr ' ' '\n' <<<"${times[$w]}" | grep . | summary)" "$(echo "$nbest / $best" | bc -l)"
  done
  unset times
done
rm -f "$out/want.npy" "$out/np.npy" "$out/g.npy"
