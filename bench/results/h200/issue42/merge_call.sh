#!/usr/bin/env bash
# Issue 42 on one H200: algorithm::merge (the queries sorted, merged with the keys by Merge Path,
# the answers scattered back; src/search/cuda/merge_search.cu) beside the large-key methods it is
# meant to replace, one call. Binaries: carry/bin (built here for sm_90 and carried, as issue40's
# fourth session did: `cmake --build build/sm90 --target test_gpu_search test_gpu_sorter
# search_bench` with -DGSEARCH_BUILD_BENCH=ON, then carry/bin.tar.xz), or built there when absent
# (scripts/device/build.sh). Steps (STEPS, default "tests bench"):
#   tests   test_gpu_search and test_gpu_sorter (merge is in their algorithm matrices)
#   bench   search_bench at K = 2^20 / 2^24 / 2^27, Q = 2^27, int32 and int64, random queries:
#           auto, partitioned, index and merge in one run (the targets: int32 >= 80 / 30 /
#           20 and int64 >= 50 / 20 / 12 G queries/s, every sort and index build counted in)
# Writes $OUT/merge.tar.gz (logs, JSON) and prints a line a step.
set -uo pipefail
export OUT=${OUT:-out} GSEARCH_REQUIRE_GPU=1
L=$OUT/merge; mkdir -p "$L"; B=carry/bin
trap 'tar -czf "$OUT/merge.tar.gz" -C "$OUT" merge; rm -rf "$L"' EXIT
[ -x "$B/search_bench" ] || { [ -f carry/bin.tar.xz ] && tar -xJf carry/bin.tar.xz -C carry; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; cat "$B/source_commit.txt" .deps/source_commit.txt 2>/dev/null; } | tee "$L/device.txt"
if [ ! -x "$B/search_bench" ]; then
  { time bash scripts/device/build.sh test_gpu_search test_gpu_sorter search_bench; } > "$L/build.log" 2>&1 ||
    { tail -40 "$L/build.log"; exit 1; }
  echo "built in ${SECONDS} s"
fi
for step in ${STEPS:-tests bench}; do
  case $step in
    tests)
      for t in test_gpu_search test_gpu_sorter; do
        GTEST_FILTER=${GTEST_FILTER:-*} "$B/$t" > "$L/$t.log" 2>&1
        echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$L/$t.log" | tr '\n' ' ')(${SECONDS} s)"
        grep -E '^\[  FAILED|Failure' -A4 "$L/$t.log" | head -24
      done ;;
    bench)
      "$B/search_bench" --keys 1048576,16777216,134217728 --queries 134217728 --key-type int32,int64 \
        --query-kind random --algo auto,partitioned,index,merge --repeat 5 --json "$L/merge.json" > "$L/merge.txt" 2>&1
      echo "search_bench: exit $? (${SECONDS} s)"; tail -40 "$L/merge.txt" ;;
  esac
done
