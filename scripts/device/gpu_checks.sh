#!/usr/bin/env bash
# Runs on the GPU machine (through the device tool), from the repository root, with the
# binaries built here for sm_90 carried in carry/bin (scripts/device/stage.sh puts them there).
# The GPU tests are those of carry/bin/gpu_tests.txt, the list the build writes (every
# gsearch_gpu_test of tests/CMakeLists.txt; build.sh and stage.sh copy it beside the binaries):
# a listed test whose binary is missing fails the run.
#   gpu_checks.sh tests       GPU tests, then the > 2^31 ones (label large)
#   gpu_checks.sh sanitize    compute-sanitizer memcheck and racecheck over the GPU tests but the
#                             large ones (SANITIZE_TESTS="test_gpu_find" narrows the list;
#                             GTEST_FILTER too)
#   gpu_checks.sh ncu         bank conflicts: Nsight Compute vs the model (bench/search/conflicts_table.py)
#   gpu_checks.sh demo        the README's main job with the carried CLI: gen, then search --verify
#   gpu_checks.sh cli         the CLI tests that need a GPU (the carried test_cli and CLI)
#   gpu_checks.sh rows        the row-batched search's launch-configuration sweep (rows_sweep.json)
#   gpu_checks.sh find-sweep  the find scan's launch-configuration sweep (find_sweep.json)
#   gpu_checks.sh merge-sweep the merge-like kernels' tile shapes (merge_sweep.json)
#   gpu_checks.sh unchecked   the merge family on unsorted inputs with the check off (--no-check,
#                             --assume-sorted), through the CLI under compute-sanitizer memcheck
#   gpu_checks.sh python      builds and installs the Python package there (its Python is 3.12,
#                             so the extension is compiled there), then runs its tests
# Logs and results go to $OUT (or ./out).
# Every check here must really run on the GPU: GSEARCH_REQUIRE_GPU=1 turns the tests' "no CUDA
# device" skips (C++ and Python) into failures, and any SKIPPED test in a GPU suite fails the run.
set -uo pipefail
export GSEARCH_REQUIRE_GPU=1
OUT=${OUT:-out}; mkdir -p "$OUT"
B=carry/bin
if [ ! -d "$B" ] && [ -f carry/bin.tar.xz ]; then  # stage.sh's packed binaries
  python3 -c "import tarfile; tarfile.open('carry/bin.tar.xz').extractall('carry')" || exit 1
fi
status=0

# read_gpu_tests: the list into `small` and `large` (label large: > 2^31 elements, run last with
# their own log lines, not under the sanitizers). Read into arrays, so that no test reads the
# list on its stdin.
read_gpu_tests() {
  local t labels
  small=() large=()
  if [ ! -s "$B/gpu_tests.txt" ]; then
    echo "gpu_checks: no $B/gpu_tests.txt, or empty: stage with scripts/device/build.sh or stage.sh (GSEARCH_CUDA=ON)" >&2
    return 1
  fi
  while read -r t labels; do
    [ -n "$t" ] || continue
    case " $labels " in *" large "*) large+=("$t") ;; *) small+=("$t") ;; esac
  done < "$B/gpu_tests.txt"
}

# gpu_log TEST [large]: its log's name in $OUT: gpu_<x>_tests.log for test_gpu_<x>, gpu_<x>.log
# for a large one (gpu_large.log), and the two names older results cite (bench/results/):
# gpu_tests.log for test_gpu_search, gpu_index_tests.log for test_gpu_static_index.
gpu_log() {
  case "$1" in
    test_gpu_search) echo gpu_tests.log ;;
    test_gpu_static_index) echo gpu_index_tests.log ;;
    *) if [ "${2:-}" = large ]; then echo "${1#test_}.log"; else echo "${1#test_}_tests.log"; fi ;;
  esac
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/device.txt"
for what in "$@"; do
  case "$what" in
    tests)
      # gtest prints "[  SKIPPED ] N tests" and one line per skipped test: none may appear.
      read_gpu_tests || { status=1; continue; }
      logs=()
      for t in "${small[@]}" "${large[@]}"; do
        kind=; pattern='^\[  (PASSED|FAILED|SKIPPED) |FAILED TEST|Failure'
        case " ${large[*]} " in *" $t "*) kind=large; pattern='^\[  (PASSED|FAILED|SKIPPED) |Failure|OK \]' ;; esac
        log="$OUT/$(gpu_log "$t" $kind)"
        if [ ! -x "$B/$t" ]; then echo "gpu_checks: no $B/$t (listed in $B/gpu_tests.txt)"; status=1; continue; fi
        logs+=("$log")
        "$B/$t" 2>&1 | tee "$log" | grep -E "$pattern" || status=1
      done
      if [ ${#logs[@]} -gt 0 ] && grep -l "^\[  SKIPPED \]" "${logs[@]}"; then
        echo "gpu_checks: the logs above hold skipped GPU tests: a GPU run may not skip"; status=1
      fi
      ;;
    sanitize)
      if [ -n "${SANITIZE_TESTS:-}" ]; then
        read -r -a tests <<< "$SANITIZE_TESTS"
      else
        read_gpu_tests || { status=1; continue; }
        tests=("${small[@]}")
      fi
      for t in "${tests[@]}"; do
        if [ ! -x "$B/$t" ]; then echo "gpu_checks: no $B/$t to sanitize"; status=1; continue; fi
        for tool in memcheck racecheck; do
          log="$OUT/$tool-$t.log"
          # racecheck follows every shared-memory access of every launch: the partitioned search's
          # matrix (thousands of tiny pipelines) would take hours, so it gets its small cases.
          filter=${GTEST_FILTER:-*}
          [ "$tool/$t" = racecheck/test_gpu_partitioned ] && filter=${GTEST_FILTER:-*OneSmallPipeline*:*GlobalBuckets*}
          # The distributed cases under racecheck: one rank (the kernels are the single-process
          # ones; two ranks ran past a minute there, unfinished).
          [ "$tool/$t" = racecheck/test_gpu_dist ] && filter=${GTEST_FILTER:-Ranks/GpuDistThreads.AllCases/0}
          GTEST_FILTER=$filter GSEARCH_TEST_SUBSET=1 compute-sanitizer --tool $tool --error-exitcode 9 "$B/$t" > "$log" 2>&1; rc=$?
          echo "compute-sanitizer $tool $t: exit $rc; $(grep -E '^========= (ERROR SUMMARY|RACECHECK SUMMARY)' "$log" | tr '\n' ' ') $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$log" | tr '\n' ' ')"
          [ $rc -eq 0 ] || status=1
          if grep -q "^\[  SKIPPED \]" "$log"; then echo "  $log: skipped tests"; status=1; fi
        done
      done
      ;;
    ncu)
      "$B/conflicts_probe" ${PROBE_ARGS:-} > "$OUT/model.jsonl" || status=1
      ncu --csv --kernel-name regex:search_shared_kernel \
        --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_ld.sum \
        "$B/conflicts_probe" ${PROBE_ARGS:-} > "$OUT/ncu.csv" 2> "$OUT/ncu.err" || status=1
      python3 bench/search/conflicts_table.py "$OUT/model.jsonl" "$OUT/ncu.csv" > "$OUT/conflicts.md" || status=1
      tail -n 80 "$OUT/conflicts.md"
      ;;
    demo)
      d=$(mktemp -d)
      "$B/gsearch" gen --keys 4096 --queries 16777216 --dtype int32 --keys-out "$d/keys.npy" --queries-out "$d/queries.npy" &&
      "$B/gsearch" search --keys "$d/keys.npy" --queries "$d/queries.npy" --side right --device auto --verify --repeat 10 --out "$d/out.npy" || status=1
      rm -rf "$d"
      ;;
    cli)
      # test_cli runs the CLI at the path it was built with (stage.sh wrote it down).
      cli=$(cat "$B/cli_path.txt"); mkdir -p "$(dirname "$cli")"; cp "$B/gsearch" "$cli"
      "$B/test_cli" 2>&1 | tee "$OUT/cli_tests.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|OK \] Cli.Cuda" || status=1
      if grep -q "^\[  SKIPPED \]" "$OUT/cli_tests.log"; then echo "gpu_checks: skipped CLI tests"; status=1; fi
      ;;
    unchecked)
      # Issue 19 item 1: 2^18 random (unsorted) int32 on each side; every command must exit 0
      # with 0 memcheck errors (results unspecified but in bounds).
      d=$(mktemp -d)
      "$B/gsearch" gen --keys 1 --queries 262144 --seed 3 --keys-out "$d/k1.npy" --queries-out "$d/a.npy" &&
      "$B/gsearch" gen --keys 1 --queries 262144 --seed 8 --keys-out "$d/k2.npy" --queries-out "$d/b.npy" || status=1
      for cmd in "merge --a $d/a.npy --b $d/b.npy --out $d/m.npy --no-check" \
                 "set --op union --a $d/a.npy --b $d/b.npy --out $d/s.npy --no-check" \
                 "set --op intersection --a $d/a.npy --b $d/b.npy --out $d/s.npy --no-check" \
                 "join --how inner --left $d/a.npy --right $d/b.npy --out-left $d/l.npy --out-right $d/r.npy --no-check" \
                 "join --how left --left $d/a.npy --right $d/b.npy --out-left $d/l.npy --out-right $d/r.npy --no-check" \
                 "search --keys $d/a.npy --queries $d/b.npy --out $d/i.npy --sorted-queries --assume-sorted"; do
        log="$OUT/unchecked-${cmd%% *}.log"
        compute-sanitizer --tool memcheck --error-exitcode 9 "$B/gsearch" $cmd --device cuda >> "$log" 2>&1; rc=$?
        echo "memcheck gsearch ${cmd%% --*} (unsorted, unchecked): exit $rc; $(grep -E '^========= ERROR SUMMARY' "$log" | tail -1)"
        [ $rc -eq 0 ] || status=1
      done
      rm -rf "$d"
      ;;
    rows)
      "$B/rows_sweep" > "$OUT/rows_sweep.json" 2> "$OUT/rows_sweep.err" || status=1
      ;;
    find-sweep)
      "$B/find_sweep" > "$OUT/find_sweep.json" 2> "$OUT/find_sweep.err" || status=1
      ;;
    merge-sweep)
      "$B/merge_sweep" > "$OUT/merge_sweep.json" 2> "$OUT/merge_sweep.err" || status=1
      ;;
    python)
      # This copy of the tree has no .git: the package is stamped with the commit stage.sh saw.
      [ -f "$B/source_commit.txt" ] && export GSEARCH_SOURCE_COMMIT="$(cat "$B/source_commit.txt")"
      python3 -m pip install --no-build-isolation --no-deps -q . > "$OUT/pip_install.log" 2>&1 || { status=1; tail -30 "$OUT/pip_install.log"; }
      (cd /tmp && python3 -c "import gsearch; print('gsearch', gsearch.__version__, 'cuda', gsearch.cuda_available())")
      (cd /tmp && python3 -m pytest -q -rs -p no:cacheprovider "$OLDPWD/python/tests" 2>&1 | tee "$OUT/python_tests.log" | tail -15) || status=1
      # With GSEARCH_REQUIRE_GPU=1 the GPU tests fail where they would skip; what may still skip
      # (-rs lists each) is a CPU-only case or an optional peer such as cupy, read in the log.
      ;;
  esac
done
exit $status
