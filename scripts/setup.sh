#!/usr/bin/env bash
# Installs what building gsearch needs, where it is missing (Debian/Ubuntu): a C++20 compiler,
# CMake >= 3.25, Ninja, GoogleTest, CLI11, OpenMPI (mpirun, and what mpi4py builds against). nvcc
# is optional: without it the CUDA backend is off.
# Called by scripts/demo.sh and scripts/test.sh; safe to run again.
set -euo pipefail
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
command -v g++ >/dev/null || need+=(g++)
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
for p in libgtest-dev libcli11-dev nlohmann-json3-dev openmpi-bin libopenmpi-dev; do have_pkg "$p" || need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
    { $SUDO apt-get update >/dev/null && $SUDO apt-get install -y --no-install-recommends "${need[@]}" >/dev/null; }
fi
# nvcc is often installed but not on the PATH.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: nvcc found in /usr/local/cuda/bin (add it to PATH to skip this note)" >&2
fi
