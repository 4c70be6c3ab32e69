#!/usr/bin/env bash
# The H100 benchmark of the batched search (issue 3), on the GPU machine from the repository root
# with carry/bin from scripts/device/stage.sh. Writes JSON and logs to $OUT.
#   bench_search.sh main     int32 and int64 keys, random and worst-case queries, Q = 2^27, all K
#   bench_search.sh q500m    the paper's Table I setting: Q = 500M, K = 4096 (int64 and int32)
#   bench_search.sh python   torch.searchsorted and cupy.searchsorted on the same inputs, merged
#                            into $OUT/search.json and $OUT/search_500m.json (run after main/q500m,
#                            with the JSON files copied back into $OUT first)
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
B=carry/bin
status=0
for what in "$@"; do
  case "$what" in
    main)
      "$B/gsearch" bench search --key-type int32,int64 --query-kind random,worst --repeat 15 \
        --json "$OUT/search.json" > "$OUT/search.txt" 2>&1 || status=1 ;;
    q500m)
      "$B/gsearch" bench search --queries 500000000 --keys 4096 --key-type int64,int32 \
        --query-kind random,worst --repeat 5 --warmup 2 --json "$OUT/search_500m.json" > "$OUT/search_500m.txt" 2>&1 || status=1 ;;
    python)
      for f in "$OUT"/search.json "$OUT"/search_500m.json; do
        [ -f "$f" ] && { PYTHONUNBUFFERED=1 python3 bench/search/search_peers.py --json "$f" || status=1; }
      done ;;
  esac
done
exit $status
