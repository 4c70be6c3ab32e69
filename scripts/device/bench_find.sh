#!/usr/bin/env bash
# The H100 benchmark of the unsorted search (issue 7): bench/find_bench.cu, on the GPU machine
# from the repository root, with the binaries of scripts/device/stage.sh (carry
# carry/bin.tar.xz; unpacked here when carry/bin is not there). JSON and logs go to $OUT.
#   bench_find.sh quick   find_bench --quick (seconds): the smoke test -> find_quick.json, find_quick.txt
#   bench_find.sh main    the full run (strategies at 500,000 and 2^28, modes, isin and the thrust
#                         and CUB peers at 2^28 int32)                 -> find.json, find.txt
# FIND_ARGS adds flags to both (e.g. FIND_ARGS="--parts modes,peers"). Plots and tables are
# drawn here afterwards: python3 bench/find/plot_find.py find.json --out DIR.
# Exit status: 1 when a run failed (find_bench's own status is in the log: 3 = a check failed).
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
B=carry/bin
if [ ! -d "$B" ] && [ -f carry/bin.tar.xz ]; then  # stage.sh's packed binaries
  python3 -c "import tarfile; tarfile.open('carry/bin.tar.xz').extractall('carry')" || exit 1
fi
[ -x "$B/find_bench" ] || { echo "bench_find.sh: no $B/find_bench (run scripts/device/stage.sh here first)"; exit 1; }
status=0
for what in "$@"; do
  case "$what" in
    quick|main)
      if [ "$what" = quick ]; then name=find_quick; flags=--quick; else name=find; flags=; fi
      {
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory --format=csv,noheader
        "$B/find_bench" $flags ${FIND_ARGS:-} --json "$OUT/$name.json"
        echo "find_bench $what: exit $?"
      } 2>&1 | tee "$OUT/$name.txt"
      grep -q "find_bench $what: exit 0" "$OUT/$name.txt" || status=1
      ;;
    *) echo "bench_find.sh: unknown step '$what' (quick, main)"; status=1 ;;
  esac
done
exit $status
