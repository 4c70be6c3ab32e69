#!/usr/bin/env bash
# Issue 42 on one H200, one call from the tree as it is (carried: .snap, scripts/device/snapshot.sh):
#   build     test_gpu_search and search_bench (scripts/device/build.sh)
#   tests     test_gpu_search, none skipped
#   bench     search_bench at K = 2^20 / 2^24 / 2^27, Q = 2^27, int32 and int64: auto,
#             partitioned, index, merge, thrust and the roofline (the issue's table)
#   ncu       the kernels' times of one merge search, int32 K = 2^24 and int64 K = 2^27
#   ncu_search  the bucket search kernel's profile (speed of light, occupancy, warp states, memory)
#   qsweep    search_bench at K = 2^25 / 2^26 / 2^27, Q = 2^22 / 2^24 / 2^26 (partitioned, index,
#             merge: auto's rules), and float32 / float64 keys at Q = 2^27
#   sentinel  search_bench with one outlier key (--query-kind sentinel) beside random keys,
#             partitioned and merge, K = 2^24 / 2^27
#   sort_probe  bench/search/sort_probe: CUB's passes as the library runs them and packed (built
#             with the rest)
#   memcheck  compute-sanitizer memcheck of test_gpu_search (GSEARCH_TEST_SUBSET=1; int32, int64,
#             double instances)
#   racecheck compute-sanitizer racecheck of the many-block searches (int32, uint64)
#   probe     PROBE_TREE's radix_probe built and run (issue 41's branch), when PROBE_TREE is set
# Writes $OUT/bucket.tar.gz (logs, JSON); prints a line a step.
set -uo pipefail
export OUT=${OUT:-out} GSEARCH_REQUIRE_GPU=1
L=$OUT/bucket; mkdir -p "$L"; B=carry/bin
trap 'tar -czf "$OUT/bucket.tar.gz" -C "$OUT" bucket; rm -rf "$L"' EXIT
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; cat .deps/source_commit.txt; } | tee "$L/device.txt"
for step in ${STEPS:-build tests bench ncu}; do
  case $step in
    build)
      t0=$SECONDS
      bash scripts/device/build.sh test_gpu_search search_bench sort_probe > "$L/build.log" 2>&1 ||
        { echo "build FAILED"; grep -E "error" -A3 "$L/build.log" | head -40; tail -20 "$L/build.log"; exit 1; }
      echo "build: $((SECONDS - t0)) s" ;;
    tests)
      timeout 240 "$B/test_gpu_search" > "$L/test_gpu_search.log" 2>&1
      echo "test_gpu_search: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$L/test_gpu_search.log" | tr '\n' ' ')(${SECONDS} s)"
      grep -E '^\[  FAILED|Failure' -A6 "$L/test_gpu_search.log" | head -30 ;;
    bench)
      timeout 260 "$B/search_bench" --keys 1048576,16777216,134217728 --queries 134217728 --key-type int32,int64 \
        --query-kind random --algo auto,partitioned,index,merge --peers roofline,thrust --repeat 5 \
        --json "$L/search.json" > "$L/search.txt" 2>&1
      echo "search_bench: exit $? (${SECONDS} s)"; grep -E "gsearch|thrust|roofline" "$L/search.txt" ;;
    ncu)
      for kt in "int32 16777216" "int64 134217728"; do
        set -- $kt
        timeout 60 ncu --metrics gpu__time_duration.sum --csv "$B/search_bench" --keys "$2" --queries 134217728 \
          --key-type "$1" --query-kind random --algo merge --peers roofline --warmup 0 --repeat 1 \
          > "$L/ncu_merge_$1.csv" 2> "$L/ncu_merge_$1.err"
        echo "ncu merge $1 K=$2: exit $? (${SECONDS} s)"
        python3 - "$L/ncu_merge_$1.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if rows:
    h = rows[0]; ki = h.index("Kernel Name"); vi = h.index("Metric Value")
    for r in rows[1:]:
        print(f"  {float(r[vi].replace(',', '')) / 1e6:8.3f} ms  {r[ki][:110]}")
PY
      done ;;
    ncu_search)  # the bucket search kernel's profile, int32 K = 2^24
      timeout 90 ncu --kernel-name regex:bucket_search_kernel --launch-count 1 --section SpeedOfLight --section Occupancy \
        --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats --section InstructionStats \
        "$B/search_bench" --keys 16777216 --queries 134217728 --key-type int32 --query-kind random --algo merge \
        --peers roofline --warmup 0 --repeat 1 > "$L/ncu_bucket_search.txt" 2>&1
      echo "ncu bucket search: exit $? (${SECONDS} s)"
      grep -E "Duration|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|No Eligible|Stall|Registers Per|Executed Ipc|Warp Cycles Per Issued|Memory Throughput|L1/TEX Hit|L2 Hit|Shared Memory|Bank" "$L/ncu_bucket_search.txt" | head -40 ;;
    qsweep)  # the Q sweep auto's rules come from (merge_auto_rules), and float keys at Q = 2^27
      for q in 4194304 16777216 67108864; do
        timeout 100 "$B/search_bench" --keys 33554432,67108864,134217728 --queries $q --key-type int32,int64 \
          --query-kind random --algo partitioned,index,merge --repeat 3 --json "$L/qsweep-q$q.json" > "$L/qsweep-q$q.txt" 2>&1
        echo "qsweep Q=$q: exit $? (${SECONDS} s)"; grep -E "gsearch" "$L/qsweep-q$q.txt"
      done
      timeout 100 "$B/search_bench" --keys 16777216,134217728 --queries 134217728 --key-type float32,float64 \
        --query-kind random --algo auto,partitioned,merge --repeat 3 --json "$L/floats.json" > "$L/floats.txt" 2>&1
      echo "floats: exit $? (${SECONDS} s)"; grep -E "gsearch" "$L/floats.txt" ;;
    sentinel)  # one outlier key (the type's highest) against random keys: the buckets' range
      timeout 120 "$B/search_bench" --keys 16777216,134217728 --queries 134217728 --key-type int32,int64 \
        --query-kind random,sentinel --algo partitioned,merge --repeat 3 --json "$L/sentinel.json" > "$L/sentinel.txt" 2>&1
      echo "sentinel: exit $? (${SECONDS} s)"; grep -E "gsearch" "$L/sentinel.txt" ;;
    sort_probe)  # CUB's passes by layout (bench/search/sort_probe.cu)
      timeout 60 "$B/sort_probe" --json "$L/sort_probe.json" > "$L/sort_probe.txt" 2>&1
      echo "sort_probe: exit $? (${SECONDS} s)"; cat "$L/sort_probe.txt" ;;
    memcheck)
      GSEARCH_TEST_SUBSET=1 GTEST_FILTER='GpuSearch/0.*:GpuSearch/2.*:GpuSearch/5.*' timeout 200 compute-sanitizer \
        --tool memcheck --error-exitcode 9 "$B/test_gpu_search" > "$L/memcheck-test_gpu_search.log" 2>&1
      echo "memcheck test_gpu_search: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |ERROR SUMMARY' "$L/memcheck-test_gpu_search.log" | tr '\n' ' ')(${SECONDS} s)" ;;
    racecheck)
      GSEARCH_TEST_SUBSET=1 GTEST_FILTER='GpuSearch/0.ManyBlocksEqualCpu:GpuSearch/3.ManyBlocksEqualCpu' timeout 200 \
        compute-sanitizer --tool racecheck --error-exitcode 9 "$B/test_gpu_search" > "$L/racecheck-test_gpu_search.log" 2>&1
      echo "racecheck test_gpu_search: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) |RACECHECK SUMMARY' "$L/racecheck-test_gpu_search.log" | tr '\n' ' ')(${SECONDS} s)" ;;
    probe)
      [ -n "${PROBE_TREE:-}" ] || { echo "probe: PROBE_TREE not set"; continue; }
      (cd "$PROBE_TREE" && bash scripts/device/build.sh radix_probe) > "$L/probe_build.log" 2>&1 ||
        { echo "probe build FAILED"; tail -20 "$L/probe_build.log"; continue; }
      echo "probe tree: $(cat "$PROBE_TREE/.deps/source_commit.txt") (${SECONDS} s)"
      timeout 120 "$PROBE_TREE/carry/bin/radix_probe" --json "$L/radix_probe.json" > "$L/radix_probe.txt" 2>&1
      echo "radix_probe: exit $? (${SECONDS} s)"; cat "$L/radix_probe.txt" ;;
  esac
done
