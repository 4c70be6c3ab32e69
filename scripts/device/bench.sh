#!/usr/bin/env bash
# The benchmarks on the GPU machine, one family per call, from the repository root, with the
# binaries that scripts/device/build.sh (there) or scripts/device/stage.sh (here, carried as
# carry/bin.tar.xz) left in carry/bin. JSON and logs go to $OUT (./out by default).
#
#   scripts/device/bench.sh FAMILY [STEP ...]        (no STEP: main)
#
#   search  quick    search_bench --quick (seconds)                       -> search_quick.{json,txt}
#           main     search_bench: int32 and int64 keys, random and worst queries, Q = 2^27,
#                    every K to the shared-memory maximum; gsearch, the roofline, thrust, CUB
#                                                                          -> search.{json,txt}
#           q500m    the same at Q = 500M, K = 4096 (the paper's Table I)   -> search_500m.{json,txt}
#           peers    search_peers.py: torch and cupy on the inputs of $OUT/search.json and
#                    $OUT/search_500m.json, added to them (after main / q500m) -> search_peers.txt
#           sweep    search_bench --sweep: every compiled kernel configuration, int32 / int64,
#                    random queries, K = 1024, 4096, 16384                -> search_sweep.{json,txt}
#           py1d     search_bench on int32 / float32, K = 1K, 16K, 48K, then search_peers.py
#                    (torch, cupy, gsearch-py; jax) and py_vs_cpp.py       -> py1d.{json,txt}, py_vs_cpp.{json,txt}
#           rows     rows_bench.py: row-batched gsearch vs torch          -> rows.{json,txt}
#   find    quick    find_bench --quick                                    -> find_quick.{json,txt}
#           main     find_bench: strategies, modes, isin, thrust and CUB at 2^28 int32 -> find.{json,txt}
#           python   find_bench.py --device cuda against torch and cupy; the roofline from CPP_JSON
#                    (default $OUT/find.json, else bench/results/h100/find.json) -> find_python.{json,txt}
#   merge   quick    merge_bench --quick                                   -> merge_quick.{json,txt}
#           main     merge_bench: merge, set operations, adversarial inputs, sorted search, merge
#                    sort, joins (with the one beyond 2^31 rows), thrust / CUB / CUB-join peers
#                                                                          -> merge.{json,txt}
#           python   merge_bench.py --device cuda --ops sort,searchsorted,merge against torch
#                                                                          -> merge_python.{json,txt}
#   index   quick    index_bench --quick                                   -> index_quick.{json,txt}
#           main     index_bench: int32 / int64, K = 2^20 ... 2^27, Q = 2^27 -> index.{json,txt}
#           sweep    index_bench --parts sweep,qsweep (int32; the kernel shapes, the auto rule's data)
#                                                                          -> index_sweep.{json,txt}
#           python   index_bench.py: gsearch.Index / searchsorted against torch, int32, K = 2^20,
#                    2^24, 2^27                                           -> index_python.{json,txt}
#   pary    quick    pary_bench --quick                                    -> pary_quick.{json,txt}
#           main     pary_bench: one query's response time, int32, K = 2^10 ... 2^30 -> pary.{json,txt}
#           int64    the same for int64 keys                               -> pary_int64.{json,txt}
#   selection quick  selection_bench --quick                               -> selection_quick.{json,txt}
#           main     selection_bench: select (one rank k=1024 / k=n/2, 100 ranks) of 2^26, 2^28, 2^30
#                    float32 and 2^26 int32 on six inputs; topk k = 1 ... 2^20; 4096 x 16384 row topk;
#                    partition; quantile of 2^30; rooflines, CUB 3.6 DeviceTopK / DeviceBatchedTopK /
#                    sort-then-pick                                     -> selection.{json,txt}
#           python   selection_python.py: gsearch's Python functions against torch (topk, kthvalue,
#                    sort, median, quantile) and cupy (partition, quantile) -> selection_python.{json,txt}
#           cpu      selection_cpu_bench.py: the CPU backend against numpy, 10^3 ... 2^24 (meant for
#                    the CPU machine; on the GPU machine it measures that host) -> selection_cpu.{json,txt}
#           index_intervals  index_intervals_bench: the seed's Table 1 (one improve in one block, 1,024
#                    ... 10,240 cells, 1,000 measurements) and the cracking curve (1,000 range and
#                    rank queries on 2^26 float32; sort-then-search and a scan per query beside
#                    it); about 10 s                                        -> index_intervals.{json,txt}
#           index_intervals_quick  the same, --quick (seconds)        -> index_intervals_quick.{json,txt}
#   server  quick    server_bench --quick (seconds)                       -> server_quick.{json,txt}
#           main     server_bench: one-query round trips from 1, 4, 16 threads at K = 2^20, 2^27
#                    (float32; pinned and pageable), the peers (launch + sync, copy + launch, a
#                    CUDA graph, thrust, the mapped ping-pong floor), throughput of 1 ... 2^20-query
#                    batches (pinned, device) against the one-shot search, the batcher, other work
#                    beside an idle / busy server at 1/8, 1/2, all SMs, the Unix socket; targets
#                                                                          -> server.{json,txt}
#           int32    the same parts but interference, int32 keys          -> server_int32.{json,txt}
#           python   server_python.py --device cuda: torch.searchsorted of one query + stream
#                    sync (device query; pinned copies around it), gsearch.Server(device="cuda")
#                                                                          -> server_python.{json,txt}
#           cpu      server_bench --device cpu and server_python.py --device cpu: the CPU server
#                    against std::upper_bound, gsearch::search and numpy.searchsorted per call (meant
#                    for the CPU machine; here it measures this host) -> server_cpu.{json,txt}, server_python_cpu.{json,txt}
#   functional_arrays (or fa)
#           quick    fa_bench --impls gpu gpu-sync machine, N 16, 256, 8192, 5,000 operations -> fa_quick.{json,txt}
#           tables   fa_bench: the seed's Tables 2 and 3, N = 16 ... 8,192, 50,000-operation paper
#                    mixes, 25 runs after one warm-up, the persistent machine as a pipeline (every
#                    run's answers against the specification: 13 million operations) -> fa_tables.{json,txt}
#           latency  the same N, each operation waited for (gpu-sync) beside the CPU machine, the
#                    specification and the treap, 3 runs                  -> fa_latency.{json,txt}
#           large    N = 8,192, 2^16, 2^20 (65,536 version slots), 10,000 operations, batches of 4M
#                    lookups in device memory; the CPU machine at 2^20 on 2,000 operations
#                                                                          -> fa_large.{json,txt}, fa_large_cpu.{json,txt}
#           python   fa_python.py on streams of gsearch esfa gen (N 256, 8,192; paper, ascending):
#                    pyrsistent.pmap, dict, gsearch CPU and CUDA             -> fa_python_N.{json,txt}
#   any     wheel    build the Python package there (pip wheel into $OUT, its log pip_wheel.log)
#                    and install it. The Python steps install the package themselves when the
#                    installed one cannot run on CUDA; WHEEL=path installs a carried wheel instead.
#
# ARGS adds flags to the program of every step: the C++ benchmark (search_bench for py1d), or the
# Python script of find / merge / index / selection python, selection cpu and search rows (e.g.
# ARGS="--parts merge,set_ops" for merge main, ARGS="--repeat 20" for find python). Each log (NAME.txt) starts with nvidia-smi's
# line and ends with "bench.sh FAMILY STEP: exit N after S s". Exit status: 1 when a step failed (its
# program's own status is in its log: 3 = a check failed), or for an unknown family or step.
# Figures and tables are drawn on this machine afterwards (bench/README.md, per family).
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
B=carry/bin
if [ ! -d "$B" ] && [ -f carry/bin.tar.xz ]; then  # stage.sh's packed binaries
  python3 -c "import tarfile; tarfile.open('carry/bin.tar.xz').extractall('carry')" || exit 1
fi
export PYTHONUNBUFFERED=1
family=${1:-}
shift || true
[ $# -gt 0 ] || set -- main
read -r -a extra <<< "${ARGS:-}"
status=0

# run NAME COMMAND...: the command's output (and nvidia-smi's line) into $OUT/NAME.txt and on
# stdout; a failure (non-zero exit) makes the script's status 1.
run() {
  local name=$1 start=$SECONDS rc
  shift
  {
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory --format=csv,noheader
    "$@"
    rc=$?
    echo "bench.sh $family $step: exit $rc after $((SECONDS - start)) s"
    exit $rc
  } 2>&1 | tee "$OUT/$name.txt"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
}

# program NAME: carry/bin/NAME, or a message saying how to build it (exit status 1 at the end).
program() {
  if [ -x "$B/$1" ]; then echo "$B/$1"; return 0; fi
  echo "bench.sh: no $B/$1: build it there with scripts/device/build.sh $1 (or here with scripts/device/stage.sh)" >&2
  return 1
}

# bench NAME PROGRAM [FLAGS...]: PROGRAM with FLAGS, $ARGS and --json $OUT/NAME.json.
bench() {
  local name=$1 exe
  exe=$(program "$2") || { status=1; return; }
  shift 2
  run "$name" "$exe" "$@" "${extra[@]}" --json "$OUT/$name.json"
}

wheel() {
  python3 -m pip wheel -q --no-build-isolation --no-deps -w "$OUT" . > "$OUT/pip_wheel.log" 2>&1 &&
    python3 -m pip install -q --no-deps --no-index --force-reinstall "$OUT"/gsearch-*.whl ||
    { tail -30 "$OUT/pip_wheel.log"; return 1; }
}

# The gsearch package, with CUDA, for the Python steps: a carried wheel (WHEEL, installed once),
# or the installed one if it runs on CUDA and has `need` (an attribute), else one built here.
carried=
package() {
  local need=${1:-searchsorted}
  if [ -n "${WHEEL:-}" ] && [ -z "$carried" ]; then
    python3 -m pip install -q --no-deps --no-index --force-reinstall "$WHEEL" || return 1
    carried=1
  fi
  if ! (cd /tmp && python3 -c "import gsearch; gsearch.$need; assert gsearch.cuda_available()") 2>/dev/null; then
    wheel || return 1
  fi
  (cd /tmp && python3 -c "import gsearch; print('gsearch', gsearch.__version__, 'cuda', gsearch.cuda_available())")
}

# pybench NAME SCRIPT [FLAGS...]: a Python benchmark of bench/, the package installed first
# (`need`: what it must have).
pybench() {
  local name=$1
  shift
  package "${need:-searchsorted}" || { status=1; return; }
  run "$name" python3 "$@" "${extra[@]}"
}

unknown() { echo "bench.sh: unknown step '$step' of $family ($1)" >&2; status=1; }

for step in "$@"; do
  if [ "$step" = wheel ]; then
    wheel || status=1
    continue
  fi
  case "$family" in
    search)
      case "$step" in
        quick) bench search_quick search_bench --quick ;;
        main) bench search search_bench --key-type int32,int64 --query-kind random,worst --repeat 15 ;;
        q500m)
          bench search_500m search_bench --queries 500000000 --keys 4096 --key-type int64,int32 \
            --query-kind random,worst --repeat 5 --warmup 2 ;;
        peers)
          files=()
          for f in "$OUT/search.json" "$OUT/search_500m.json"; do [ -f "$f" ] && files+=("$f"); done
          if [ ${#files[@]} -eq 0 ]; then
            echo "bench.sh: no $OUT/search.json or search_500m.json (run main or q500m first)" >&2; status=1
          else
            run search_peers bash -c 'rc=0; for f; do python3 bench/search/search_peers.py --json "$f" || rc=1; done; exit $rc' \
              _ "${files[@]}"
          fi ;;
        sweep)
          bench search_sweep search_bench --sweep --key-type int32,int64 --query-kind random --keys 1024,4096,16384 \
            --repeat 7 ;;
        py1d)
          bench py1d search_bench --keys 1024,16384,49152 --key-type int32,float32 --query-kind random
          if package; then
            run py1d_peers bash -c 'p=bench/search; f=$1; python3 $p/search_peers.py --json "$f" --peers torch,cupy,gsearch-py &&
              python3 $p/search_peers.py --json "$f" --peers jax' _ "$OUT/py1d.json"
            run py_vs_cpp python3 bench/search/py_vs_cpp.py "$OUT/py1d.json" --json "$OUT/py_vs_cpp.json"
          else
            status=1
          fi ;;
        rows) pybench rows bench/search/rows_bench.py --json "$OUT/rows.json" ;;
        *) unknown "quick, main, q500m, peers, sweep, py1d, rows, wheel" ;;
      esac ;;
    find)
      case "$step" in
        quick) bench find_quick find_bench --quick ;;
        main) bench find find_bench ;;
        python)
          cpp=${CPP_JSON:-}
          [ -n "$cpp" ] || { [ -f "$OUT/find.json" ] && cpp=$OUT/find.json || cpp=bench/results/h100/find.json; }
          roof=()
          if [ -f "$cpp" ]; then roof=(--cpp-json "$cpp"); else echo "bench.sh: no C++ find JSON at $cpp: no roofline"; fi
          need=find pybench find_python bench/find/find_bench.py --device cuda --json "$OUT/find_python.json" "${roof[@]}" ;;
        *) unknown "quick, main, python, wheel" ;;
      esac ;;
    merge)
      case "$step" in
        quick) bench merge_quick merge_bench --quick ;;
        main) bench merge merge_bench ;;
        python)
          need=merge pybench merge_python bench/merge/merge_bench.py --device cuda --ops sort,searchsorted,merge \
            --json "$OUT/merge_python.json" ;;
        *) unknown "quick, main, python, wheel" ;;
      esac ;;
    index)
      case "$step" in
        quick) bench index_quick index_bench --quick ;;
        main) bench index index_bench --parts search --key-types int32,int64 --log-keys 20,22,24,26,27 ;;
        sweep)
          bench index_sweep index_bench --parts sweep,qsweep --key-types int32 --log-keys 20,24,26,27 --repeat 5 \
            --warmup 1 ;;
        python)
          need=Index pybench index_python bench/index/index_bench.py --log-keys 20,24,27 --dtypes int32 --repeat 7 \
            --json "$OUT/index_python.json" ;;
        *) unknown "quick, main, sweep, python, wheel" ;;
      esac ;;
    pary)
      case "$step" in
        quick) bench pary_quick pary_bench --quick ;;
        main) bench pary pary_bench ;;
        int64) bench pary_int64 pary_bench --key-types int64 ;;
        *) unknown "quick, main, int64, wheel" ;;
      esac ;;
    selection)
      case "$step" in
        quick) bench selection_quick selection_bench --quick ;;
        main) bench selection selection_bench ;;
        python)
          need=topk pybench selection_python bench/selection/selection_python.py --json "$OUT/selection_python.json" ;;
        cpu)
          need=topk pybench selection_cpu bench/selection/selection_cpu_bench.py --json "$OUT/selection_cpu.json" ;;
        index_intervals) bench index_intervals index_intervals_bench ;;
        index_intervals_quick) bench index_intervals_quick index_intervals_bench --quick ;;
        *) unknown "quick, main, python, cpu, index_intervals, index_intervals_quick, wheel" ;;
      esac ;;
    server)
      case "$step" in
        quick) bench server_quick server_bench --quick ;;
        main) bench server server_bench --repeat 5 ;;
        int32) bench server_int32 server_bench --key-types int32 --parts latency,peers,throughput,batcher --repeat 5 ;;
        python)
          need=Server pybench server_python bench/server/server_python.py --device cuda --json "$OUT/server_python.json" ;;
        cpu)
          bench server_cpu server_bench --device cpu --parts latency,peers,throughput,batcher,socket
          need=Server pybench server_python_cpu bench/server/server_python.py --device cpu \
            --json "$OUT/server_python_cpu.json" ;;
        *) unknown "quick, main, int32, python, cpu, wheel" ;;
      esac ;;
    functional_arrays | fa)
      cells=(16 32 64 128 256 512 1024 2048 4096 8192)
      case "$step" in
        quick) bench fa_quick fa_bench --impls gpu gpu-sync machine --cells 16 256 8192 --ops 5000 --repeat 3 --warmup 1 ;;
        tables) bench fa_tables fa_bench --impls gpu --cells "${cells[@]}" --ops 50000 --mixes paper --repeat 25 --warmup 1 ;;
        latency)
          bench fa_latency fa_bench --impls gpu-sync machine spec treap --cells "${cells[@]}" --ops 50000 --mixes paper \
            --repeat 3 --warmup 0 ;;
        large)
          bench fa_large fa_bench --impls gpu gpu-sync machine --cells 8192 65536 --ops 10000 --mixes paper \
            --version-slots 65536 --batch 4000000 --repeat 3 --warmup 1
          bench fa_large_2p20 fa_bench --impls gpu gpu-sync --cells 1048576 --ops 10000 --mixes paper \
            --version-slots 65536 --batch 4000000 --repeat 3 --warmup 1
          bench fa_large_cpu fa_bench --impls gpu machine --cells 1048576 --ops 2000 --mixes paper \
            --version-slots 65536 --repeat 1 --warmup 0 ;;
        python)
          cli=$(program gsearch) || { status=1; continue; }
          for n in 256 8192; do
            for mix in paper ascending; do "$cli" esfa gen --out "$OUT/fa_${mix}_$n.npy" --ops 50000 --cells $n --mix $mix; done
            need=FunctionalArrays pybench fa_python_$n bench/functional_arrays/fa_python.py "$OUT/fa_paper_$n.npy" \
              "$OUT/fa_ascending_$n.npy" --cells $n --repeat 3 --json "$OUT/fa_python_$n.json"
          done ;;
        *) unknown "quick, tables, latency, large, python, wheel" ;;
      esac ;;
    *)
      echo "bench.sh: unknown family '$family' (search, find, merge, index, pary, selection, server, functional_arrays): usage in the script's header" >&2
      exit 1 ;;
  esac
done
exit $status
