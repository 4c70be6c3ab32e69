#!/usr/bin/env bash
# Issue 41 on one H200: the radix select's GPU checks and measurements, one call from a snapshot
# (carry .deps, after scripts/device/pack_deps.sh and `git archive`, as issue40/final_checks.sh):
#   build     test_gpu_selection, test_gpu_topk and selection_bench (scripts/device/build.sh)
#   tests     TESTS (default test_gpu_selection: every select, quantile, median and partition goes
#             through the radix select where it answers; then test_gpu_topk)
#   bench     selection_bench --parts PARTS (default select,quantile) at 2^26 and 2^28 float32
#             (int32 at 2^26), every input kind, the CUB peers and the read roofline beside
#   ncu       the radix kernels' durations in one select of 2^26 uniform float32
# Writes $OUT/radix.tar.gz (the logs, the JSON) and prints a line a step.
set -uo pipefail
export OUT=${OUT:-out} GSEARCH_REQUIRE_GPU=1
L=$OUT/radix; mkdir -p "$L"; B=carry/bin
trap 'tar -czf "$OUT/radix.tar.gz" -C "$OUT" radix; rm -rf "$L"' EXIT
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; cat .deps/source_commit.txt; } | tee "$L/device.txt"
if [ ! -x "$B/selection_bench" ]; then
  { time bash scripts/device/build.sh test_gpu_selection test_gpu_topk selection_bench; } > "$L/build.log" 2>&1 ||
    { tail -40 "$L/build.log"; exit 1; }
  echo "built in ${SECONDS} s"
fi
for step in ${STEPS:-tests bench ncu}; do
  case $step in
    tests)
      for t in ${TESTS:-test_gpu_selection test_gpu_topk}; do
        "$B/$t" > "$L/$t.log" 2>&1
        echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$L/$t.log" | tr '\n' ' ')(${SECONDS} s)"
        grep -E '^\[  FAILED|Failure' -A4 "$L/$t.log" | head -24
      done ;;
    bench)
      "$B/selection_bench" --parts "${PARTS:-select,quantile}" --sizes 67108864,268435456 --dtypes float32,int32 \
        --json "$L/selection.json" > "$L/selection.txt" 2>&1
      echo "selection_bench: exit $? (${SECONDS} s)"; cat "$L/selection.txt" ;;
    ncu)
      ncu --kernel-name regex:radix --launch-count 10 --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size \
        "$B/selection_bench" --parts select --sizes 67108864 --dtypes float32 --dists uniform --no-peers --repeat 10 \
        --warmup 1 > "$L/ncu.txt" 2>&1
      echo "ncu: exit $? (${SECONDS} s)"
      grep -E '^  [a-zA-Z_ ]+radix|^    [a-z_]+' "$L/ncu.txt" | sed -E 's/\(const T1.*//' | head -60 ;;
  esac
done
