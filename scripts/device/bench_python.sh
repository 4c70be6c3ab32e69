#!/usr/bin/env bash
# The H100 benchmarks of the Python package (issue 6), on the GPU machine from the repository
# root, with carry/bin from scripts/device/stage.sh (unpacked by gpu_checks.sh). The package is
# built there (its Python is 3.12) once: `wheel` writes the wheel to $OUT and installs it; a
# later machine installs a carried one (WHEEL=path). JSON and logs go to $OUT.
#   bench_python.sh wheel   build the wheel (pip wheel, no network) into $OUT, install it
#   bench_python.sh rows    rows_bench.py: row-batched gsearch vs torch and the roofline -> rows.json
#   bench_python.sh 1d      gsearch bench search (int32, float32; K = 1K, 16K, 48K; Q = 2^27),
#                           then search_peers.py adds torch, cupy, gsearch-py and jax on the same
#                           inputs, and py_vs_cpp.py compares the two gsearch ratios -> py1d.json
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
B=carry/bin
export PYTHONUNBUFFERED=1
status=0
[ -n "${WHEEL:-}" ] && { python3 -m pip install -q --no-deps --no-index --force-reinstall "$WHEEL" || exit 1; }
for what in "$@"; do
  case "$what" in
    wheel)
      python3 -m pip wheel -q --no-build-isolation --no-deps -w "$OUT" . > "$OUT/pip_wheel.log" 2>&1 &&
        python3 -m pip install -q --no-deps --no-index --force-reinstall "$OUT"/gsearch-*.whl || { status=1; tail -30 "$OUT/pip_wheel.log"; } ;;
    rows)
      python3 bench/search/rows_bench.py --json "$OUT/rows.json" 2>&1 | tee "$OUT/rows.txt" || status=1 ;;
    1d)
      "$B/gsearch" bench search --keys 1024,16384,49152 --key-type int32,float32 --query-kind random \
        --json "$OUT/py1d.json" > "$OUT/py1d.txt" 2>&1 || status=1
      python3 bench/search/search_peers.py --json "$OUT/py1d.json" --peers torch,cupy,gsearch-py || status=1
      python3 bench/search/search_peers.py --json "$OUT/py1d.json" --peers jax || status=1
      python3 bench/search/py_vs_cpp.py "$OUT/py1d.json" --json "$OUT/py_vs_cpp.json" | tee "$OUT/py_vs_cpp.txt" || status=1 ;;
  esac
done
exit $status
