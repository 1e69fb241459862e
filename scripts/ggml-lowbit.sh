#!/usr/bin/env bash
# Builds libggml-lowbit.so (ggml-lowbit/: lowbit's kernels as a ggml backend)
# against the pinned llama.cpp that scripts/llama-cpp.sh links as
# BUILD/llama.cpp, with the kernels compiled by BUILD/bin/lowbit, into
# BUILD/ggml-lowbit. Incremental (ccache and ninja); the test/interop
# backend-*.test tests run when the library is there.
#
# On any failure it says so on one line and exits 0: those tests then
# report UNSUPPORTED.
#
#   bash scripts/ggml-lowbit.sh [BUILD]     # BUILD defaults to build
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=$build/ggml-lowbit

fail() {
  echo "ggml-lowbit: $1; the backend tests will be UNSUPPORTED"
  rm -f "$out/libggml-lowbit.so"
  exit 0
}

[ -x "$build/bin/lowbit" ] || fail "no $build/bin/lowbit (run scripts/setup.sh)"
src=$build/llama.cpp/src
[ -f "$src/ggml/src/ggml-backend-impl.h" ] ||
  fail "no llama.cpp source at $src (scripts/llama-cpp.sh provides it)"
cxx=$(command -v clang++-22 || command -v c++)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

cmake -G Ninja -S ggml-lowbit -B "$out" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" \
  -DLOWBIT_GGML_SOURCE="$(realpath "$src")" \
  -DLOWBIT_COMPILER="$(realpath "$build/bin/lowbit")" >"$out.cmake.log" 2>&1 ||
  fail "cmake failed (see $out.cmake.log)"
ninja -C "$out" -j "${GGML_LOWBIT_JOBS:-$(nproc)}" >"$out.build.log" 2>&1 ||
  fail "build failed (see $out.build.log)"
rm -f "$out.cmake.log" "$out.build.log"
