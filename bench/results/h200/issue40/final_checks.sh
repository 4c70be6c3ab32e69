#!/usr/bin/env bash
# Issue 40's last GPU checks on one H200, after the backend lists of the search and the static
# index, the launch helpers at every launch site, the owner type of the stateful classes, the
# per-architecture merge policy and searchsorted's sorter=. Builds the tree when carry/bin has no
# gpu_tests.txt (a warm machine keeps it), then:
#   tests                  every GPU test of gpu_tests.txt (the list the build writes), three at
#                          a time on the one GPU (one after another they take longer than a
#                          call), the server's alone; then the CLI's GPU tests
#   rest                   the large tests, then memcheck over every suite and racecheck over the
#                          shared-memory ones, four at a time (LIMIT seconds each: 01b2711's run)
#   large                  the large tests
#   sanitize TOOL SUITE..  compute-sanitizer TOOL over the suites one at a time, LIMIT each
#   parallel TOOL/SUITE..  the same, all at once (one GPU, a core each), LIMIT each
#   budget TOOL SECONDS SUITE..  the suites one after another under TOOL until SECONDS are spent
#                          (each gets LIMIT or what is left, whichever is less); a line per suite,
#                          then which finished, which ran out of time and which were not started
# The sanitizer subsets (README.md, "Sanitizer subsets"): memcheck of one suite 2-3 min, racecheck
# 3-4 min on one H200 with NARROW=1, so the next session runs, a call each (LIMIT=540):
#   NARROW=1 LIMIT=540 final_checks.sh sanitize memcheck test_gpu_merge   (and so on), or
#   NARROW=1 LIMIT=300 final_checks.sh budget memcheck 560 test_gpu_server test_gpu_find ...
# NARROW=1 keeps the typed tests' int32 and int64 instances (/0, /2: the 4- and 8-byte tiles of
# every kernel; the other key types instantiate the same templates at the same sizes).
# Here, before the first call: bash scripts/device/pack_deps.sh; then
#   run(carry [".deps"], "bash bench/results/h200/issue40/final_checks.sh tests")
# Each writes $OUT/<what>.tar.gz (its logs) and prints a line per suite. No GPU test may skip
# (GSEARCH_REQUIRE_GPU=1; a SKIPPED line fails the run).
set -uo pipefail
what=${1:?tests or rest}
export OUT=${OUT:-out} NCCL_NVLS_ENABLE=0 GSEARCH_REQUIRE_GPU=1
L=$OUT/logs-$what; mkdir -p "$L"; B=carry/bin
trap 'tar -czf "$OUT/$what.tar.gz" -C "$OUT" "logs-$what"; rm -rf "$L"' EXIT
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; cat .deps/source_commit.txt; } | tee "$L/device.txt"
if [ ! -s "$B/gpu_tests.txt" ]; then
  { time bash scripts/device/build.sh; } > "$L/build.log" 2>&1 || { tail -60 "$L/build.log"; exit 1; }
  echo "built in ${SECONDS} s"
fi
small=() large=()
while read -r t labels; do
  [ -n "$t" ] || continue
  case " $labels " in *" large "*) large+=("$t") ;; *) small+=("$t") ;; esac
done < "$B/gpu_tests.txt"

# one TOOL TEST: the suite (TOOL "-") or compute-sanitizer TOOL over it (GSEARCH_TEST_SUBSET=1,
# a limit of LIMIT seconds), its line of results.
one() {
  local tool=$1 t=$2 log="$L/$1-$2.log" rc filter=${GTEST_FILTER:-*} api=()
  [ "$tool" = - ] && log="$L/$t.log"
  if [ "$tool" = - ]; then
    "$B/$t" > "$log" 2>&1; rc=$?
  else
    # (gpu_checks.sh's narrower racecheck cases: the partitioned matrix and two ranks take hours)
    [ "$tool/$t" = racecheck/test_gpu_partitioned ] && filter='*OneSmallPipeline*:*GlobalBuckets*'
    [ "$tool/$t" = racecheck/test_gpu_dist ] && filter='Ranks/GpuDistThreads.AllCases/0'
    # The functional arrays' persistent machines spin in CUDA calls under a tool: RingOnly is
    # their sanitizers' test (gpu_functional_arrays_test.cpp).
    [ "$t" = test_gpu_functional_arrays ] && filter='*RingOnly*'
    # The server's tests that make CUDA calls while its persistent kernel runs (key replacement:
    # a copy and an allocation; other work or a second server beside it): under a tool every
    # launch and copy waits for the running kernel, which never ends (ManyThreadsAcrossKeyReplacement
    # ran past 150 s and 390 s in the last two sessions; 57 ms without a tool), and the kernel
    # would see allocations made after its launch as out of bounds. Left out under the tools.
    [ "$t" = test_gpu_server ] && filter="$filter-*ManyThreadsAcrossKeyReplacement*:GpuServerSoak.*:GpuServerBeside.*"
    # racecheck, whose shared-memory checks cost 10-150x memcheck's: the tests that reach each
    # shared-memory kernel with the fewest calls. Merge: the merge (keys and pairs), the merge
    # sort's block sort and passes, the set operations and the sorted search (*OneSmall*), the
    # joins' expansion over tiles. Search: the staged searches over many blocks, the rows, and
    # every algorithm (index, partitioned, pary among them) at and past the staged limit under
    # three smaller limits.
    [ "$tool/$t" = racecheck/test_gpu_merge ] && filter='*MergeEquals*:*OneSmall*:*JoinOfHeavyKeys*'
    [ "$tool/$t" = racecheck/test_gpu_search ] &&
      filter='*ManyBlocksEqualCpu*:*RowsManyBlocksEqualCpu*:*ForcedSmallerSharedMemoryMatchesStd*:Gpu.*'
    # NCCL's communicator set-up asks cudaFuncGetAttributes of kernels it has no sm_90 image of
    # and handles the error: 8 such reports in 01b2711's memcheck, all inside libnccl's
    # ncclCommInitAll, no memory error. Not reported, so that an error is ours.
    [ "$tool/$t" = memcheck/test_gpu_dist ] && api=(--report-api-errors no)
    # (one '-' in a gtest filter: the negative patterns after it, ':'-separated)
    if [ "${NARROW:-0}" = 1 ]; then
      case $filter in *-*) filter="$filter:*/1.*:*/3.*:*/4.*:*/5.*" ;; *) filter="$filter-*/1.*:*/3.*:*/4.*:*/5.*" ;; esac
    fi
    GTEST_FILTER=$filter GSEARCH_TEST_SUBSET=1 timeout -k 5 "${LIMIT:-200}" \
      compute-sanitizer --tool "$tool" "${api[@]}" --error-exitcode 9 "$B/$t" > "$log" 2>&1; rc=$?
  fi
  echo "$tool $t: exit $rc; $(grep -E '^========= (ERROR SUMMARY|RACECHECK SUMMARY)' "$log" | tr '\n' ' ')$(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$log" | tr '\n' ' ')(${SECONDS} s)"
}
export -f one; export L B

case $what in
  tests)
    # The server's suite alone at the end (its tests wait on a persistent kernel's answers).
    printf '%s\n' "${small[@]}" | grep -vx test_gpu_server | xargs -P 3 -I{} bash -c 'one - {}'
    one - test_gpu_server
    cli=$(cat "$B/cli_path.txt") && mkdir -p "$(dirname "$cli")" && cp "$B/gsearch" "$cli"
    "$B/test_cli" --gtest_filter='Distributed.*:Cli*Cuda*:Cli*Gpu*:*Sorter*' > "$L/test_cli.log" 2>&1
    echo "test_cli (GPU): exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$L/test_cli.log" | tr '\n' ' ')(${SECONDS} s)"
    ;;
  large)
    for t in "${large[@]}"; do one - "$t"; done
    ;;
  sanitize)
    tool=${2:?memcheck or racecheck}; shift 2
    for t in "$@"; do one "$tool" "$t"; done
    ;;
  budget)
    tool=${2:?memcheck or racecheck}; total=${3:?seconds}; shift 3
    start=$SECONDS done_=() late=() skipped=()
    for t in "$@"; do
      left=$((total - (SECONDS - start)))
      if [ "$left" -lt 30 ]; then skipped+=("$t"); continue; fi
      lim=${LIMIT:-200}; [ "$left" -lt "$lim" ] && lim=$left
      line=$(LIMIT=$lim one "$tool" "$t"); echo "$line"
      case $line in *"exit 124"*|*"exit 137"*) late+=("$t") ;; *) done_+=("$t") ;; esac
    done
    echo "budget $tool ${total} s: finished: ${done_[*]:-none}; out of time: ${late[*]:-none}; not started: ${skipped[*]:-none}"
    ;;
  parallel)
    shift; printf '%s\n' "$@" | tr / ' ' | xargs -P "$#" -L 1 bash -c 'one "$0" "$1"'
    ;;
  rest)
    for t in "${large[@]}"; do one - "$t"; done
    { for t in "${small[@]}"; do echo "memcheck $t"; done
      for t in test_gpu_topk test_gpu_merge test_gpu_selection test_gpu_index_intervals test_gpu_search test_gpu_find; do
        echo "racecheck $t"; done; } | xargs -P 4 -L 1 bash -c 'one "$0" "$1"'
    ;;
esac
if grep -l '^\[  SKIPPED \]' "$L"/*.log; then echo "final_checks: the logs above hold skipped GPU tests"; exit 1; fi
