#!/usr/bin/env bash
# Issue 39's GPU checks (one H200), for the session that has the device time: the socket front
# end's round trip old (3dafb65: a thread per connection) and new in one call, the GPU server's
# tests (server::shutdown's callers now take turns, on both backends), and the Python server and
# client tests on CUDA (Server.search's query conversion changed).
# Here, before the call:
#   bash scripts/device/pack_deps.sh
#   rm -rf carry/old && mkdir -p carry/old && git archive 3dafb65 -- . ':!bench/results' | tar -x -C carry/old
# Command: run(carry [".deps", "carry/old"], "bash bench/results/h200/issue39/checks.sh"); all
# goes to $OUT/checks.tar.gz (the tool's file count).
set -uo pipefail
export OUT=${OUT:-out} GSEARCH_REQUIRE_GPU=1
L=$OUT/logs; mkdir -p "$L"
trap 'tar -czf "$OUT/checks.tar.gz" -C "$OUT" logs; rm -rf "$L"' EXIT
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$L/device.txt"
cp -r .deps carry/old/.deps && echo "3dafb65b75ee6f90747b52ee71d211af58b91a86" > carry/old/.deps/source_commit.txt
(cd carry/old && bash scripts/device/build.sh server_bench > "$L/build_old.log" 2>&1 && cp carry/bin/server_bench /tmp/server_bench_old) || tail -20 "$L/build_old.log"
bash scripts/device/build.sh server_bench test_gpu_server > "$L/build_new.log" 2>&1 || { tail -30 "$L/build_new.log"; exit 1; }
cp carry/bin/server_bench /tmp/server_bench_new
args="--parts latency,socket --key-types float32 --log-keys 20"
for round in 1 2; do  # interleaved: old, new, old, new
  for v in old new; do
    [ -x /tmp/server_bench_$v ] || continue
    /tmp/server_bench_$v $args --json "$L/socket_${v}_$round.json" > "$L/socket_${v}_$round.txt" 2>&1
    echo "== $v $round"; grep "^socket" "$L/socket_${v}_$round.txt"
  done
done
for v in old new; do  # the same on the CPU backend: the socket's own cost, without the GPU's
  [ -x /tmp/server_bench_$v ] || continue
  /tmp/server_bench_$v --device cpu --memory host $args --json "$L/socket_cpu_$v.json" > "$L/socket_cpu_$v.txt" 2>&1
  echo "== cpu backend $v"; grep -E "^(socket|latency)" "$L/socket_cpu_$v.txt" | head -8
done
carry/bin/test_gpu_server > "$L/test_gpu_server.log" 2>&1
echo "test_gpu_server: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$L/test_gpu_server.log" | tr '\n' ' ')"
export GSEARCH_SOURCE_COMMIT="$(cat .deps/source_commit.txt)"
python3 -m pip install --no-build-isolation --no-deps -q -C build-dir=build/pip-dev . > "$L/pip_install.log" 2>&1 || tail -20 "$L/pip_install.log"
(cd python/tests && timeout 300 python3 -m pytest -q -rs test_server.py test_server_listen.py test_client.py > "$L/python_server_client.log" 2>&1; echo "pytest: exit $?"; tail -3 "$L/python_server_client.log")
