#!/usr/bin/env bash
# Issue 41 on one H200, one call from the tree as it is (carried: .deps with the commit stamp, and
# build/_deps/cccl, CUB 3.6's headers from scripts/fetch-cccl.sh, for the DeviceTopK peers):
#   build    test_gpu_selection, test_gpu_topk, selection_bench (CUB 3.6 peers in) and the Python
#            extension (scripts/device/build.sh ... _core)
#   tests    radix_call.sh's: test_gpu_selection, test_gpu_topk, none skipped
#   bench    selection_bench --parts PARTS (default select,topk) at SIZES (default 2^26 and 2^28),
#            float32 and int32, every input kind, CUB's DeviceTopK and the read roofline beside
#            (QN: --quantile-n)
#   ncu      the radix kernels' times in one 2^26 uniform float32 select (radix_call.sh's), then
#            the first pass's profile (speed of light, occupancy, warp states, scheduler,
#            memory, instructions) at the boost clock (--clock-control none)
#   probe    bench/selection/radix_probe: the first pass at other ring shapes and with parts left
#            out (the tiles only read; no members; no end), the window kernel alone, and selects
#            of 1-4 ranks by the radix select and by gsearch::select's route; at each of
#            PROBE_NS (default 2^26 and 2^28 float32)
#   partition  selection_bench --parts partition at 2^26 (kth = n/2), float32 and int32, every
#            input kind, CUB's SortKeys and the copy roofline beside
#   row_shapes selection_bench --parts rows at the issue's four shapes (4096 x 16384 k = 64,
#            256 x 524,288 k = 256, 64 x 16,384 k = 512, 10^6 x 64 k = 8; ROW_SHAPES "rows,cols,k
#            ..."), uniform, alone and then with CUB beside (ROWS_S: each run's limit)
#   ncu_rows_full  the row top-k kernel's profile at 4096 x 16384, k = 64, with the warp states
#            sampled a SASS line (the report kept, its source page printed as CSV)
#   split_ab the row split against the rows whole (GSEARCH_TOPK_SPLIT=0), one binary, each shape
#            alone, then with CUB beside (SPLIT_SHAPES "rows,cols,k ...")
#   ncu_split the split's two row-kernel launches at 256 x 524,288, k = 256
#   ncu_split_source the split's first launch, warp states a SASS line (ncu_source: report, details, SASS page)
#   ncu_short the short rows' kernel at 10^6 x 64, k = 8 (report kept, SASS page as CSV)
#   san_split memcheck of SplitRows (int32, float, double), FilteredRows and StagedLimit (float),
#            racecheck of SplitRows and FilteredRows (float); subsets
#   san_topk memcheck of the short rows (int32, float, double) and the filtered rows (float),
#            racecheck of the short rows (float, double); subsets
#   san_partition  memcheck of the partition tests (int32, float; subset) and racecheck of
#            PartitionOnTheRadixRoute (float)
#   san_scatter memcheck of the partition tests (int32, float; argpartition double) and of
#            SelectManyRanksByRadixPasses (float: partition of 3-100 kth), racecheck of
#            PartitionOnTheRadixRoute and PartitionAndArgpartition (float); subsets
#   ncu_scatter partition's scatter at 2^26 float32 uniform: kth = n/2 (unsorted tiles), 100 kth (sorted)
#   san_many memcheck of SelectManyRanksByRadixPasses (int32, float, double), racecheck (float);
#            subsets
#   many     selection_bench --parts select,partition,quantile at 2^26 (MANY_PARTS, MANY_DISTS):
#            one rank and 100 ranks (the many-rank select), partition of one and of 100 kth,
#            quantile of 1 and 100 q, float32 and int32, the peers beside
#   ncu_many the many-rank select's passes (100 ranks of 2^26 float32 uniform, MANY_DIST): every
#            launch's duration, DRAM throughput, occupancy
#   ncu_many_source the many-rank select's first and second passes (100 ranks of 2^26 float32
#            uniform), warp states a SASS line (ncu_source, NCU_SKIP 0 and 1)
#   nsys_many the same select under nsys (when the machine has it): the kernels', copies' and CUDA
#            calls' sums, and the trace of the last 100-rank call (MANY_DTYPE, MANY_DIST)
#   ncu_rows the row top-k kernel's profile (selection_bench --parts rows: 4096 x 16384, k = 64)
#   ncu_source  the first pass's warp-state sampling a SASS line (SourceCounters, WarpStateStats;
#            the report kept, its source page printed as CSV): where the pass's warps wait
#   python   bench/selection/python_overhead.py: each Python entry point beside its C++ call
#   pytest   python/tests/test_selection.py and test_quantile*.py on the GPU (no GPU test may skip)
#   racecheck compute-sanitizer racecheck of the radix select's tests (int32, float; 4 tests:
#            some 180 s under the tool)
#   memcheck compute-sanitizer memcheck of test_gpu_selection (GSEARCH_TEST_SUBSET=1, int32 and
#            float instances)
# Writes $OUT/ordered.tar.gz (logs, JSON); prints a line a step.
set -uo pipefail
export OUT=${OUT:-out} GSEARCH_REQUIRE_GPU=1 PYTHONUNBUFFERED=1
L=$OUT/ordered; mkdir -p "$L"; B=carry/bin
trap 'tar -czf "$OUT/ordered.tar.gz" -C "$OUT" ordered; rm -rf "$L"' EXIT
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; cat .deps/source_commit.txt
  grep -m1 "define CUB_VERSION" build/_deps/cccl/include/cub/version.cuh; } | tee "$L/device.txt"
# sanitize NAME TOOL LIMIT TEST FILTER: compute-sanitizer TOOL (memcheck / racecheck) over test
# binary TEST's subset (GSEARCH_TEST_SUBSET=1) under gtest FILTER, its log $L/TOOL-NAME.log, one line.
sanitize() {
  local name=$1 tool=$2 limit=$3 test=$4 filter=$5 summary='ERROR SUMMARY'
  [ "$tool" = racecheck ] && summary='RACECHECK SUMMARY'
  GSEARCH_TEST_SUBSET=1 GTEST_FILTER=$filter timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 9 \
    "$B/$test" > "$L/$tool-$name.log" 2>&1
  echo "$tool $name: exit $? $(grep -E "^\[  (PASSED|FAILED|SKIPPED) |$summary" "$L/$tool-$name.log" | tr '\n' ' ')(${SECONDS} s)"
}
# ncu_source NAME KERNEL_REGEX SELECTION_BENCH_ARGS...: the first launch of the kernel profiled with
# warp states a SASS line (report $L/NAME.ncu-rep, details $L/NAME_details.txt, SASS page
# $L/NAME_sass.csv), the headline figures printed.
ncu_source() {
  local name=$1 kernel=$2; shift 2
  timeout 150 ncu --kernel-name "regex:$kernel" --launch-skip ${NCU_SKIP:-0} --launch-count 1 --clock-control none --import-source yes \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
    --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis --section SourceCounters \
    -f -o "$L/$name" "$B/selection_bench" "$@" --no-peers --quick > "$L/$name.txt" 2>&1
  echo "ncu $name: exit $? (${SECONDS} s)"
  ncu --import "$L/$name.ncu-rep" --print-details all > "$L/${name}_details.txt" 2>&1
  ncu --import "$L/$name.ncu-rep" --page source --csv --print-source sass > "$L/${name}_sass.csv" 2> /dev/null
  echo "ncu source page: exit $? $(wc -l < "$L/${name}_sass.csv") lines"
  grep -E "Duration|DRAM Throughput|L1/TEX Hit|L2 Hit|Achieved Occupancy|No Eligible|Registers Per|Grid Size|Warp Cycles Per Issued|Executed Instructions |Theoretical Occupancy|Stall" \
    "$L/${name}_details.txt" | head -50
}
for step in ${STEPS:-build tests bench ncu python pytest memcheck}; do  # racecheck: asked for
  case $step in
    build)
      t0=$SECONDS
      targets=${BUILD:-test_gpu_selection test_gpu_topk selection_bench radix_probe _core}
      bash scripts/device/build.sh $targets > "$L/build.log" 2>&1 ||
        { echo "build FAILED"; grep -E "error" -A3 "$L/build.log" | head -40; tail -20 "$L/build.log"; exit 1; }
      echo "build: $((SECONDS - t0)) s"
      # Descriptor registers nothing writes (the ring's LDGSTS under CUDA 13.0: an illegal instruction).
      python3 scripts/device/sass_desc_check.py $(for t in test_gpu_selection test_gpu_topk radix_probe; do [ -x "$B/$t" ] && echo "$B/$t"; done) \
        > "$L/sass_desc_check.txt" 2>&1
      echo "sass_desc_check: exit $? $(wc -l < "$L/sass_desc_check.txt") lines"; head -5 "$L/sass_desc_check.txt" ;;
    tests)  # (radix_call.sh's tests step wrote its logs into the archive its ncu step overwrote)
      for t in ${TESTS:-test_gpu_selection test_gpu_topk}; do  # SEL_FILTER: test_gpu_selection's gtest filter
        filter='*'; [ "$t" = test_gpu_selection ] && filter=${SEL_FILTER:-*}
        GTEST_FILTER=$filter timeout 200 "$B/$t" > "$L/$t.log" 2>&1
        echo "$t: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$L/$t.log" | tr '\n' ' ')(${SECONDS} s)"
        grep -E '^\[  FAILED|Failure' -A4 "$L/$t.log" | head -24 || true  # (no failure: grep's 1 is not the call's)
      done ;;
    bench)
      timeout ${BENCH_S:-240} "$B/selection_bench" --parts "${PARTS:-select,topk}" --sizes ${SIZES:-67108864,268435456} --dtypes float32,int32 ${QN:+--quantile-n $QN} \
        --json "$L/selection.json" > "$L/selection.txt" 2>&1
      echo "selection_bench: exit $? (${SECONDS} s)"; grep -vE "^#|^$" "$L/selection.txt" | head -150 ;;
    ncu)
      OUT=$L/ncu_times STEPS=ncu bash bench/results/h200/issue41/radix_call.sh | grep -v "^NVIDIA\|^[0-9a-f]\{40\}"
      timeout 120 ncu --kernel-name regex:radix_pass_kernel --launch-count 1 --clock-control none \
        --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
        --section MemoryWorkloadAnalysis --section LaunchStats --section InstructionStats \
        "$B/selection_bench" --parts select --sizes 67108864 --dtypes float32 --dists uniform --no-peers --quick \
        > "$L/ncu_first_pass.txt" 2>&1
      echo "ncu first pass: exit $? (${SECONDS} s)"
      grep -E "Duration|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Issue Slots Busy|No Eligible|Stall|Registers Per|Executed Ipc|Warp Cycles Per Issued|Memory Throughput|Executed Instructions " "$L/ncu_first_pass.txt" | head -30 ;;
    probe)
      for pn in ${PROBE_NS:-67108864 268435456}; do
        timeout 120 "$B/radix_probe" --n "$pn" --json "$L/radix_probe-$pn.json" > "$L/radix_probe-$pn.txt" 2>&1
        echo "radix_probe --n $pn: exit $? (${SECONDS} s)"; cat "$L/radix_probe-$pn.txt"
      done ;;
    partition)
      timeout 150 "$B/selection_bench" --parts partition --n 67108864 --dtypes float32,int32 \
        --json "$L/partition.json" > "$L/partition.txt" 2>&1
      echo "selection_bench partition: exit $? (${SECONDS} s)"; grep -vE "^#|^$|^roofline" "$L/partition.txt" | head -60 ;;
    row_shapes)
      # (each shape gsearch alone first, then with CUB beside: 10^6 rows of 64 outran 100 s with
      # both in the fifteenth session's call 2, neither row printed)
      for shape in ${ROW_SHAPES:-"4096 16384 64" "256 524288 256" "64 16384 512" "1000000 64 8"}; do
        set -- ${shape//,/ }
        for peers in --no-peers ""; do
          timeout ${ROWS_S:-100} "$B/selection_bench" --parts rows --rows $1 --cols $2 --row-k $3 --topk-dists uniform $peers \
            --json "$L/rows-$1x$2${peers:+-alone}.json" > "$L/rows-$1x$2${peers:+-alone}.txt" 2>&1
          echo "rows $1 x $2 k = $3 ${peers:-with CUB}: exit $? (${SECONDS} s)"; grep -E "^rows " "$L/rows-$1x$2${peers:+-alone}.txt"
        done
      done ;;
    split_ab)
      # The row split (tuning_topk.hpp's topk_row_split) against the rows whole, one binary:
      # GSEARCH_TOPK_SPLIT=0 then unset, each shape alone; then with CUB beside (SPLIT_SHAPES).
      for shape in ${SPLIT_SHAPES:-"256 524288 256" "64 16384 512" "4096 16384 64"}; do
        set -- ${shape//,/ }
        for mode in whole split peers; do
          env $([ $mode = whole ] && echo GSEARCH_TOPK_SPLIT=0) timeout ${ROWS_S:-100} "$B/selection_bench" --parts rows \
            --rows $1 --cols $2 --row-k $3 --topk-dists uniform $([ $mode = peers ] || echo --no-peers) \
            --json "$L/split-$1x$2-$mode.json" > "$L/split-$1x$2-$mode.txt" 2>&1
          echo "rows $1 x $2 k = $3 $mode: exit $? (${SECONDS} s)"; grep -E "^rows " "$L/split-$1x$2-$mode.txt"
        done
      done ;;
    ncu_split)  # the split's two launches of the row kernel at 256 x 524,288, k = 256
      timeout 150 ncu --kernel-name regex:topk_rows_kernel --launch-count 2 --clock-control none \
        --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
        --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis \
        "$B/selection_bench" --parts rows --rows 256 --cols 524288 --row-k 256 --topk-dists uniform --no-peers --quick \
        > "$L/ncu_split.txt" 2>&1
      echo "ncu split: exit $? (${SECONDS} s)"
      grep -E "topk_rows_kernel|Duration|DRAM Throughput|Achieved Occupancy|No Eligible|Registers Per|Grid Size|Dynamic Shared|Warp Cycles Per Issued|Executed Instructions |Theoretical Occupancy|Stall" "$L/ncu_split.txt" | head -50 ;;
    ncu_split_source)  # the split's first launch (the pieces) at 256 x 524,288, k = 256
      ncu_source pieces_kernel topk_rows_kernel --parts rows --rows 256 --cols 524288 --row-k 256 --topk-dists uniform ;;
    ncu_short)  # the short rows' kernel at 10^6 x 64, k = 8
      ncu_source short_kernel topk_short_rows_kernel --parts rows --rows 1000000 --cols 64 --row-k 8 --topk-dists uniform ;;
    san_split)
      sanitize split memcheck 200 test_gpu_topk 'GpuTopk/0.SplitRows:GpuTopk/4.SplitRows:GpuTopk/5.SplitRows:GpuTopk/4.FilteredRows:GpuTopk/4.StagedLimit'
      sanitize split racecheck 150 test_gpu_topk 'GpuTopk/4.SplitRows:GpuTopk/4.FilteredRows' ;;
    san_topk)
      sanitize topk memcheck 150 test_gpu_topk 'GpuTopk/0.ShortRows:GpuTopk/4.ShortRows:GpuTopk/5.ShortRows:GpuTopk/4.FilteredRows'
      sanitize topk racecheck 100 test_gpu_topk 'GpuTopk/4.ShortRows:GpuTopk/5.ShortRows' ;;
    ncu_rows_full)  # the row kernel at 4096 x 16384, k = 64
      ncu_source rows_kernel topk_rows_kernel --parts rows --rows 4096 --topk-dists uniform ;;
    san_partition)
      sanitize partition memcheck 150 test_gpu_selection 'GpuSelection/0.Partition*:GpuSelection/4.Partition*:GpuSelection/0.RadixSelect*:GpuSelection/4.RadixSelect*'
      sanitize partition racecheck 100 test_gpu_selection 'GpuSelection/4.PartitionOnTheRadixRoute' ;;
    san_scatter)
      sanitize scatter memcheck 200 test_gpu_selection 'GpuSelection/0.Partition*:GpuSelection/4.Partition*:GpuSelection/5.PartitionAndArgpartition:GpuSelection/4.SelectManyRanksByRadixPasses'
      sanitize scatter racecheck 150 test_gpu_selection 'GpuSelection/4.PartitionOnTheRadixRoute:GpuSelection/4.PartitionAndArgpartition' ;;
    ncu_scatter)  # the unsorted scatter (one kth), then the sorted one (100 kth)
      for sorted in 0 1; do  # (ncu's demangled name: partition_scatter_kernel<float, (int)256, (int)4, (bool)0>)
        timeout 100 ncu --kernel-name-base demangled --kernel-name "regex:partition_scatter_kernel<float.*bool.$sorted>" \
          --launch-count 1 --clock-control none \
          --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
          "$B/selection_bench" --parts partition --n 67108864 --dtypes float32 --dists uniform --no-peers \
          --quick --repeat 1 --warmup 0 > "$L/ncu_scatter_$sorted.txt" 2>&1
        echo "ncu scatter (sorted $sorted): exit $? (${SECONDS} s)"
        grep -E "partition_scatter|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Grid Size|Dynamic Shared|No Eligible|Warp Cycles Per Issued|L2 Hit|Mem Busy" "$L/ncu_scatter_$sorted.txt" | head -20
      done ;;
    san_many)
      sanitize many memcheck 200 test_gpu_selection 'GpuSelection/0.SelectManyRanksByRadixPasses:GpuSelection/4.SelectManyRanksByRadixPasses:GpuSelection/5.SelectManyRanksByRadixPasses'
      sanitize many racecheck 150 test_gpu_selection 'GpuSelection/4.SelectManyRanksByRadixPasses' ;;
    many)
      timeout ${BENCH_S:-240} "$B/selection_bench" --parts "${MANY_PARTS:-select,partition,quantile}" --sizes 67108864 \
        --n 67108864 --quantile-n 67108864 --dtypes float32,int32 ${MANY_DISTS:+--dists $MANY_DISTS} \
        --json "$L/many.json" > "$L/many.txt" 2>&1
      echo "selection_bench many: exit $? (${SECONDS} s)"; grep -vE "^#|^$|^roofline" "$L/many.txt" | head -150 ;;
    ncu_many)
      timeout 150 ncu --kernel-name regex:"many_" --clock-control none \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
        "$B/selection_bench" --parts select --sizes 67108864 --dtypes float32 --dists ${MANY_DIST:-uniform} --no-peers \
        --quick --repeat 1 --warmup 0 > "$L/ncu_many.txt" 2>&1
      echo "ncu many: exit $? (${SECONDS} s)"
      grep -E "many_|sort_sample_kernel|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Grid Size|Dynamic Shared|No Eligible|Warp Cycles Per Issued" "$L/ncu_many.txt" | head -80 ;;
    ncu_many_source)
      NCU_SKIP=0 ncu_source many_pass1 many_select_pass_kernel --parts select --sizes 67108864 --dtypes float32 --dists uniform
      NCU_SKIP=1 ncu_source many_pass2 many_select_pass_kernel --parts select --sizes 67108864 --dtypes float32 --dists uniform ;;
    nsys_many)
      if command -v nsys > /dev/null; then
        timeout 150 nsys profile -t cuda -f true -o "$L/many_nsys" "$B/selection_bench" --parts select --sizes 67108864 \
          --dtypes ${MANY_DTYPE:-float32} --dists ${MANY_DIST:-uniform} --no-peers --quick > "$L/nsys_many.txt" 2>&1
        echo "nsys many: exit $? (${SECONDS} s)"
        nsys stats -r cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum -f csv "$L/many_nsys.nsys-rep" > "$L/nsys_many_sums.csv" 2>&1
        nsys stats -r cuda_gpu_trace -f csv "$L/many_nsys.nsys-rep" > "$L/nsys_many_trace.csv" 2>&1
        cut -c1-220 "$L/nsys_many_sums.csv" | head -70; echo "-- trace, the last 45:"; tail -45 "$L/nsys_many_trace.csv" | cut -c1-200
      else
        echo "nsys many: no nsys on this machine"
      fi ;;
    ncu_rows)
      timeout 120 ncu --kernel-name regex:topk_rows_kernel --launch-count 1 --clock-control none \
        --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
        --section MemoryWorkloadAnalysis --section LaunchStats --section InstructionStats \
        "$B/selection_bench" --parts rows --topk-dists uniform --no-peers --quick > "$L/ncu_rows.txt" 2>&1
      echo "ncu rows: exit $? (${SECONDS} s)"
      grep -E "topk_rows_kernel|Duration|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Issue Slots Busy|No Eligible|Stall|Registers Per|Block Size|Grid Size|Dynamic Shared|Warp Cycles Per Issued|Executed Instructions |Theoretical Occupancy" "$L/ncu_rows.txt" | head -40 ;;
    ncu_source)
      timeout 80 ncu --kernel-name regex:radix_pass_kernel --launch-count 1 --clock-control none --import-source yes \
        --section WarpStateStats --section SourceCounters --print-details all -f -o "$L/first_pass" \
        "$B/selection_bench" --parts select --sizes 67108864 --dtypes float32 --dists uniform --no-peers --quick \
        > "$L/ncu_source.txt" 2>&1
      echo "ncu source: exit $? (${SECONDS} s)"
      ncu --import "$L/first_pass.ncu-rep" --page source --csv --print-source sass > "$L/first_pass_sass.csv" 2> "$L/first_pass_sass.err"
      echo "ncu source page: exit $? $(wc -l < "$L/first_pass_sass.csv") lines"; head -c 600 "$L/first_pass_sass.err"
      grep -iE "stall|Warp Cycles|eligible" "$L/ncu_source.txt" | head -40 ;;
    python)
      PYTHONPATH=$PWD/python timeout 200 python3 -m bench.selection.python_overhead --out "$L/python_overhead.json" \
        --cpp-bench "$B/selection_bench" > "$L/python_overhead.txt" 2>&1
      echo "python_overhead: exit $? (${SECONDS} s)"; tail -30 "$L/python_overhead.txt" ;;
    pytest)
      (cd python/tests && PYTHONPATH=$OLDPWD/python timeout 150 python3 -m pytest -q -x -p no:cacheprovider \
        test_selection.py $(ls test_quantile*.py 2>/dev/null)) > "$L/pytest_selection.log" 2>&1
      echo "pytest selection: exit $? (${SECONDS} s)"; tail -5 "$L/pytest_selection.log" ;;
    racecheck)  # the radix select's kernels (shared stage, counts, the pick), int32 and float
      sanitize test_gpu_selection racecheck 200 test_gpu_selection 'GpuSelection/0.SelectEqualsSortAndCpu:GpuSelection/4.SelectEqualsSortAndCpu:GpuSelection/0.RadixSelect*:GpuSelection/4.RadixSelect*' ;;
    memcheck)
      sanitize test_gpu_selection memcheck 150 test_gpu_selection 'GpuSelection/0.*:GpuSelection/4.*' ;;
  esac
done
