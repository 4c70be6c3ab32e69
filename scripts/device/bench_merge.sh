#!/usr/bin/env bash
# The H100 benchmark of the merge family (issue 8): bench/merge_bench.cu, on the GPU machine
# from the repository root, with the binaries of scripts/device/stage.sh (carry
# carry/bin.tar.xz; unpacked here when carry/bin is not there). JSON and logs go to $OUT.
#   bench_merge.sh quick   merge_bench --quick (seconds): the smoke test -> merge_quick.json, merge_quick.txt
#   bench_merge.sh main    the full run: merge (int32, int64, key-value) and set operations of
#                          two sorted 2^26 inputs, adversarial inputs, sorted search (2^24 keys,
#                          2^27 needles), merge sort of 2^27, joins of 2^24 x 2^24 and the inner
#                          join beyond 2^31 rows, with the thrust, CUB and CUB-join peers
#                                                                     -> merge.json, merge.txt
# MERGE_ARGS adds flags to both (e.g. MERGE_ARGS="--parts merge,set_ops" or "--large-join off").
# The Python peers (torch) run separately: python3 bench/merge/merge_bench.py --device cuda.
# Plots and tables are drawn here afterwards: python3 bench/merge/plot_merge.py merge.json --out DIR.
# Exit status: 1 when a run failed (merge_bench's own status is in the log: 3 = a check failed).
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
B=carry/bin
if [ ! -d "$B" ] && [ -f carry/bin.tar.xz ]; then  # stage.sh's packed binaries
  python3 -c "import tarfile; tarfile.open('carry/bin.tar.xz').extractall('carry')" || exit 1
fi
[ -x "$B/merge_bench" ] || { echo "bench_merge.sh: no $B/merge_bench (run scripts/device/stage.sh here first)"; exit 1; }
status=0
for what in "$@"; do
  case "$what" in
    quick|main)
      if [ "$what" = quick ]; then name=merge_quick; flags=--quick; else name=merge; flags=; fi
      {
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory --format=csv,noheader
        "$B/merge_bench" $flags ${MERGE_ARGS:-} --json "$OUT/$name.json"
        echo "merge_bench $what: exit $?"
      } 2>&1 | tee "$OUT/$name.txt"
      grep -q "merge_bench $what: exit 0" "$OUT/$name.txt" || status=1
      ;;
    *) echo "bench_merge.sh: unknown step '$what' (quick, main)"; status=1 ;;
  esac
done
exit $status
