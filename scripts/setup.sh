#!/usr/bin/env bash
# Sets up lowbit on Debian 12 from nothing: installs every Debian package the
# project needs (idempotent: only missing packages are installed), configures
# and builds into build/ (binaries in build/bin/), then runs the main job: the
# roofline benchmark of the bitnet-b1.58-2b shapes. Safe to re-run.
#
#   bash scripts/setup.sh            # install + build + demo
#   bash scripts/setup.sh --no-run   # install + build only
set -euo pipefail
cd "$(dirname "$0")/.."
# The compiler cache keys paths relative to the checkout, so a fresh clone
# elsewhere (CI) hits what another checkout compiled; debug info then
# names paths relative to it.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1

packages=(
  cmake ninja-build ccache git
  clang-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libclang-rt-22-dev nlohmann-json3-dev libgtest-dev
  python3 python3-numpy
  libvulkan-dev mesa-vulkan-drivers spirv-tools vulkan-tools
  qemu-user gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libc6-dev-arm64-cross
  slurm-wlm munge
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit
fi
ninja -C build
# spirv-val for the Xe2 cooperative-matrix kernels (never fails the setup).
bash scripts/spirv-tools.sh

if [ "${1:-}" != "--no-run" ]; then
  echo
  build/bin/lowbit targets
  echo
  echo "Main job: cold GEMV of every bitnet-b1.58-2b linear shape, i2s, generated"
  echo "kernels for the best ISA here, against the read bandwidth measured in the run"
  build/bin/lowbit bench --model bitnet-b1.58-2b --format i2s --n 1 \
    --plot build/bitnet-b1.58-2b-i2s.svg --json build/bitnet-b1.58-2b-i2s.json
  echo "chart: build/bitnet-b1.58-2b-i2s.svg  records: build/bitnet-b1.58-2b-i2s.json"
fi
