#!/usr/bin/env bash
# Issue 9's H100 benchmarks, on the GPU machine from the repository root, with carry/bin from
# scripts/device/stage.sh (unpacked by gpu_checks.sh). JSON and logs go to $OUT.
#   bench_index.sh main     index_bench: the index, binary, auto, thrust, CUB 3.6 (UpperBound;
#                           sort + UpperBoundSortedValues + scatter), the roofline; int32 and
#                           int64, K = 2^20 ... 2^27 -> index.json
#   bench_index.sh sweep    index_bench --parts sweep,qsweep (int32, K = 2^20, 2^24, 2^26, 2^27): the
#                           kernel shapes and the auto rule's data -> index_sweep.json
#   bench_index.sh python   bench/index/index_bench.py: gsearch.Index, searchsorted (auto, index)
#                           against torch.searchsorted (the package installed) -> index_python.json
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
B=carry/bin
if [ ! -d "$B" ] && [ -f carry/bin.tar.xz ]; then
  python3 -c "import tarfile; tarfile.open('carry/bin.tar.xz').extractall('carry')" || exit 1
fi
export PYTHONUNBUFFERED=1
status=0
for what in "$@"; do
  case "$what" in
    main)
      "$B/index_bench" --parts search --key-types int32,int64 --log-keys 20,22,24,26,27 \
        --json "$OUT/index.json" > "$OUT/index.txt" 2>&1 || status=1
      tail -n 3 "$OUT/index.txt" ;;
    sweep)
      "$B/index_bench" --parts sweep,qsweep --key-types int32 --log-keys 20,24,26,27 --repeat 5 --warmup 1 \
        --json "$OUT/index_sweep.json" > "$OUT/index_sweep.txt" 2>&1 || status=1
      tail -n 3 "$OUT/index_sweep.txt" ;;
    python)
      python3 bench/index/index_bench.py --json "$OUT/index_python.json" 2>&1 | tee "$OUT/index_python.txt" || status=1 ;;
  esac
done
exit $status
