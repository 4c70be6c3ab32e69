#!/usr/bin/env bash
# The Python benchmark of the unsorted search (issue 7) on the GPU machine, from the repository
# root: bench/find/find_bench.py --device cuda (gsearch.find / count / isin against torch and
# cupy on 2^28 int32, one process). The package is installed as bench_python.sh installs it (that
# script does it: WHEEL=path installs a carried wheel; otherwise, when the installed gsearch has
# no find, its `wheel` step builds one there, into $OUT, and installs it). The read roofline comes
# from the C++ find benchmark's JSON, CPP_JSON (default bench/results/h100/find.json, when it is
# in the tree); without it the JSON says the roofline was not measured. JSON and log go to $OUT.
#   bench_find_python.sh [more find_bench.py flags, e.g. --repeat 20]
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
here=$(dirname "$0")
export PYTHONUNBUFFERED=1
if [ -n "${WHEEL:-}" ]; then
  "$here/bench_python.sh" || exit 1
elif ! (cd /tmp && python3 -c "import gsearch; gsearch.find; assert gsearch.cuda_available()") 2>/dev/null; then
  "$here/bench_python.sh" wheel || exit 1
fi
(cd /tmp && python3 -c "import gsearch; print('gsearch', gsearch.__version__, 'cuda', gsearch.cuda_available())")
cpp=${CPP_JSON:-bench/results/h100/find.json}
args=()
if [ -f "$cpp" ]; then args+=(--cpp-json "$cpp"); else echo "bench_find_python: no C++ find JSON at $cpp: no roofline"; fi
python3 bench/find/find_bench.py --device cuda --json "$OUT/find_python.json" "${args[@]}" "$@" 2>&1 |
  tee "$OUT/find_python.txt"
exit "${PIPESTATUS[0]}"
