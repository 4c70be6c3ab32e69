#!/usr/bin/env bash
# Issue 9's P-ary latency benchmark (seeds/003), on the GPU machine from the repository root, with
# carry/bin from scripts/device/stage.sh (pary_bench must be among the binaries it copies).
# JSON and logs go to $OUT.
#   bench_pary.sh [main]    pary_bench: one query's response time (in-kernel clock64 cycles and end
#                           to end, L2 warm and flushed) of one-thread binary search, warp and block
#                           (256, 1024) P-ary search and the static index's walk; int32,
#                           K = 2^10 ... 2^30, 200 queries -> pary.json, pary.txt
#   bench_pary.sh int64     the same for int64 keys -> pary_int64.json, pary_int64.txt
#   bench_pary.sh quick     pary_bench --quick (K = 2^10, 2^20, 20 queries) -> pary_quick.json
# Figures: python3 bench/pary/plot_pary.py pary.json [pary_int64.json] --out DIR
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
B=carry/bin
if [ ! -d "$B" ] && [ -f carry/bin.tar.xz ]; then
  python3 -c "import tarfile; tarfile.open('carry/bin.tar.xz').extractall('carry')" || exit 1
fi
if [ ! -x "$B/pary_bench" ]; then
  echo "bench_pary.sh: no $B/pary_bench (build it and copy it into carry/bin: scripts/device/stage.sh)" >&2
  exit 1
fi
status=0
[ $# -eq 0 ] && set -- main
for what in "$@"; do
  case "$what" in
    main)
      "$B/pary_bench" --json "$OUT/pary.json" > "$OUT/pary.txt" 2>&1 || status=1
      tail -n 3 "$OUT/pary.txt" ;;
    int64)
      "$B/pary_bench" --key-types int64 --json "$OUT/pary_int64.json" > "$OUT/pary_int64.txt" 2>&1 || status=1
      tail -n 3 "$OUT/pary_int64.txt" ;;
    quick)
      "$B/pary_bench" --quick --json "$OUT/pary_quick.json" > "$OUT/pary_quick.txt" 2>&1 || status=1
      tail -n 3 "$OUT/pary_quick.txt" ;;
    *)
      echo "bench_pary.sh: unknown part $what (main, int64, quick)" >&2
      status=1 ;;
  esac
done
exit $status
