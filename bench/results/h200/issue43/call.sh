#!/usr/bin/env bash
# Issue 43 (and issue 41's last sanitizer runs) on one H200, one call from the tree as it is
# (carried: .deps with the commit stamp; or run from scripts/device/snapshot.sh's .snap):
#   build       test_gpu_server, test_gpu_selection, test_gpu_topk, server_bench, the Python
#               extension (scripts/device/build.sh)
#   tests       test_gpu_server, its soak for SOAK seconds (default 30), none skipped
#   latency     server_bench --parts latency,peers: one-query round trips from 1, 4, 16 threads,
#               K = 2^20, 2^27, float32 and int32, pinned and pageable, beside launch + sync, copy +
#               launch, a CUDA graph, thrust and the mapped ping-pong floor
#   latency1    server_bench --parts latency for float32 K = 2^27, 1 thread, pinned only, with the
#               library's idle_release and with 0
#   release_lazy  test_gpu_server's GpuServerRelease.* under CUDA_MODULE_LOADING=LAZY
#   socket      server_bench --parts socket (the Unix socket, 1 and 16 connections)
#   python      bench/server/server_python.py --device cuda (torch.searchsorted + .item() beside
#               gsearch.Server of one numpy query)
#   pytest      python/tests/test_server*.py on the GPU (none may skip the CUDA cases)
#   san_server  compute-sanitizer memcheck and racecheck of test_gpu_server (issue 38's filters)
#   san_select  memcheck of test_gpu_selection and test_gpu_topk (int32, float), racecheck of the
#               radix select's and the radix top-k's tests: the last selection change
#   probe       issue 41's radix_probe (built when asked), plain and under memcheck (the first
#               session's run ended in cudaErrorIllegalInstruction: where)
#   interference  server_bench --parts interference (a search and a copy beside an idle and a busy
#               server of 1/8 and 1/2 of the SMs), and again with --sm-partition where the tree's
#               server_bench knows it and the green step saw no hang
#   lazy        bench/server/lazy_beside.py: a torch kernel's first launch under lazy loading beside
#               a server whose kernel leaves the idle GPU (idle_release 2 ms) and one whose never does
#               (0: expected to hang, killed after 20 s); needs _core in BUILD
#   green       bench/server/green_probe (built when asked): a kernel that never ends (8 and 16
#               blocks) in the primary context or in a green context of as many SMs, beside a full
#               read and a first lazily loaded launch, under CUDA_MODULE_LOADING=LAZY and EAGER:
#               the share of the device left, and whether that launch hangs (issue 43)
# BUILD="targets" replaces the build step's list (the probes asked for are added); DEADLINE=s skips
# the steps that would begin after s seconds (the call's limit). The tests step leaves out the
# *SmPartition* tests when the green step ran first and saw a green context hang or fail.
# Writes $OUT/issue43.tar.gz (logs, JSON); prints a line a step.
set -uo pipefail
export OUT=${OUT:-out} GSEARCH_REQUIRE_GPU=1 PYTHONUNBUFFERED=1 CUDA_MODULE_LOADING=EAGER
L=$OUT/issue43; rm -rf "$L"; mkdir -p "$L"; B=carry/bin
trap 'tar -czf "$OUT/issue43.tar.gz" -C "$OUT" issue43; rm -rf "$L"' EXIT
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; cat .deps/source_commit.txt
  lscpu | grep -E "^Model name"; } | tee "$L/device.txt"
gtest_line() { grep -E '^\[  (PASSED|FAILED|SKIPPED) |SUMMARY|soak |release  \]' "$1" | tr '\n' ' '; }
sanitize() {  # tool binary filter limit
  GSEARCH_TEST_SUBSET=1 GTEST_FILTER="$3" timeout "$4" compute-sanitizer --tool "$1" --error-exitcode 9 "$B/$2" \
    > "$L/$1-$2.log" 2>&1
  echo "$1 $2: exit $? $(gtest_line "$L/$1-$2.log")(${SECONDS} s)"
}
green_ok=1
for step in ${STEPS:-build tests latency socket python san_server san_select}; do
  if [ -n "${DEADLINE:-}" ] && [ "$SECONDS" -gt "$DEADLINE" ]; then echo "$step: skipped (past DEADLINE=$DEADLINE s)"; continue; fi
  case $step in
    build)
      t0=$SECONDS
      extra=(); case " ${STEPS:-} " in *" probe "*) extra=(radix_probe) ;; esac
      case " ${STEPS:-} " in *" green "*) extra+=(green_probe) ;; esac
      bash scripts/device/build.sh ${BUILD:-test_gpu_server test_gpu_selection test_gpu_topk server_bench _core} "${extra[@]}" > "$L/build.log" 2>&1 ||
        { echo "build FAILED"; grep -E "error" -A3 "$L/build.log" | head -40; tail -20 "$L/build.log"; exit 1; }
      echo "build: $((SECONDS - t0)) s" ;;
    tests)
      filter='*'; [ $green_ok = 1 ] || filter='-*SmPartition*'
      GSEARCH_SOAK_SECONDS=${SOAK:-30} GTEST_FILTER="$filter" timeout 300 "$B/test_gpu_server" > "$L/test_gpu_server.log" 2>&1
      echo "test_gpu_server: exit $? $(gtest_line "$L/test_gpu_server.log")(${SECONDS} s)"
      grep -E '^\[  FAILED|Failure|wrong:' -A4 "$L/test_gpu_server.log" | head -30 ;;
    latency)
      timeout 240 "$B/server_bench" --parts latency,peers --key-types float32,int32 --log-keys 20,27 \
        --json "$L/server_latency.json" > "$L/server_latency.txt" 2>&1
      echo "server_bench latency: exit $? (${SECONDS} s)"; grep -vE "^$" "$L/server_latency.txt" | head -80 ;;
    latency1)  # the latency part's one case of the targets: float32 K = 2^27, 1 thread, pinned; the
               # library's idle_release, then 0 (never leaves: the release's own cost on a round trip)
      for release in default 0; do
        opt=(); [ $release = default ] || opt=(--idle-release-us "$release")
        timeout 120 "$B/server_bench" --parts latency --key-types float32 --log-keys 27 --threads 1 --memory pinned \
          "${opt[@]}" --json "$L/server_latency1-$release.json" > "$L/server_latency1-$release.txt" 2>&1
        echo "server_bench latency1 (idle_release $release): exit $? (${SECONDS} s)"
        grep -E "^latency|ERROR" "$L/server_latency1-$release.txt" | head -5
      done ;;
    release_lazy)  # the release test under lazy loading: its first launch beside the idle server
      CUDA_MODULE_LOADING=LAZY GTEST_FILTER='GpuServerRelease.*' timeout 120 "$B/test_gpu_server" \
        > "$L/release_lazy.log" 2>&1
      echo "test_gpu_server GpuServerRelease.* under LAZY: exit $? $(gtest_line "$L/release_lazy.log")(${SECONDS} s)"
      grep -E "Failure|did not return|release  \]" -A3 "$L/release_lazy.log" | head -20 ;;
    socket)
      timeout 240 "$B/server_bench" --parts socket --log-keys 27 --json "$L/server_socket.json" > "$L/server_socket.txt" 2>&1
      echo "server_bench socket: exit $? (${SECONDS} s)"; grep -vE "^$" "$L/server_socket.txt" | tail -20 ;;
    python)
      PYTHONPATH=$PWD/python timeout 200 python3 -m bench.server.server_python --device cuda --json "$L/server_python.json" \
        > "$L/server_python.txt" 2>&1
      echo "server_python: exit $? (${SECONDS} s)"; tail -25 "$L/server_python.txt" ;;
    pytest)
      (cd python/tests && PYTHONPATH=$OLDPWD/python timeout 200 python3 -m pytest -q -x -p no:cacheprovider -rs \
        test_server.py test_server_listen.py) > "$L/pytest_server.log" 2>&1
      echo "pytest server: exit $? (${SECONDS} s)"; tail -8 "$L/pytest_server.log" ;;
    san_server)
      sanitize memcheck test_gpu_server 'GpuServerFork.*:GpuServer/0.EveryPath*:GpuServer/0.SmallRequests*:GpuServer/5.SmallRequests*:GpuServerRelease.*' 150
      sanitize racecheck test_gpu_server 'GpuServerFork.*:GpuServer/0.SmallRequests*:GpuServer/4.EveryPath*' 150 ;;
    san_select)
      sanitize memcheck test_gpu_selection 'GpuSelection/0.*:GpuSelection/4.*' 150
      sanitize memcheck test_gpu_topk 'GpuTopk/0.*:GpuTopk/4.*' 150
      sanitize racecheck test_gpu_selection 'GpuSelection/0.SelectEqualsSortAndCpu:GpuSelection/4.SelectEqualsSortAndCpu:GpuSelection/0.RadixSelect*:GpuSelection/4.RadixSelect*' 200
      sanitize racecheck test_gpu_topk 'GpuTopk/0.OneLongRow:GpuTopk/4.OneLongRow' 150 ;;
    green)
      for loading in LAZY EAGER; do
        for where in none primary green; do
          for blocks in 8 16; do
            CUDA_MODULE_LOADING=$loading timeout 60 "$B/green_probe" --where $where --blocks $blocks --timeout-s 10 \
              >> "$L/green_probe.jsonl" 2>> "$L/green_probe.err"
            rc=$?; echo "green_probe $loading $where $blocks: exit $rc $(tail -1 "$L/green_probe.jsonl")"
            [ $where != green ] || [ $rc = 0 ] || green_ok=0
          done
        done
      done ;;
    interference)
      for part in "" --sm-partition; do
        if [ -n "$part" ]; then
          [ $green_ok = 1 ] || { echo "interference --sm-partition: skipped (a green context hung or failed)"; continue; }
          "$B/server_bench" --help 2>/dev/null | grep -q -- --sm-partition || continue
        fi
        name=server_interference${part:+-sm-partition}
        timeout 150 "$B/server_bench" --parts interference --key-types float32 --shares 1/8,1/2 $part \
          --json "$L/$name.json" > "$L/$name.txt" 2>&1
        echo "server_bench interference $part: exit $? (${SECONDS} s)"; grep -E "^interference|ERROR" "$L/$name.txt" | head -12
      done ;;
    lazy)
      PYTHONPATH=$PWD/python timeout 120 python3 -m bench.server.lazy_beside --json "$L/lazy_beside.json" \
        > "$L/lazy_beside.txt" 2>&1
      echo "lazy_beside: exit $? (${SECONDS} s)"; cat "$L/lazy_beside.txt" ;;
    probe)
      timeout 60 "$B/radix_probe" --json "$L/radix_probe.json" > "$L/radix_probe.txt" 2>&1
      echo "radix_probe: exit $? (${SECONDS} s)"; cat "$L/radix_probe.txt"
      timeout 90 compute-sanitizer --tool memcheck --show-backtrace device "$B/radix_probe" --n 16777216 > "$L/radix_probe_memcheck.txt" 2>&1
      echo "radix_probe memcheck: exit $? (${SECONDS} s)"; grep -vE "^\s*$" "$L/radix_probe_memcheck.txt" | head -30 ;;
  esac
done
