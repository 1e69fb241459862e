#!/usr/bin/env bash
# Provides a pinned llama.cpp (CPU only) as the test oracle and the peer for
# lowbit's GGUF work: llama-quantize, llama-bench, llama-perplexity,
# test-backend-ops, libllama and libggml (shared, so GGML_BACKEND_PATH can
# load an out-of-tree backend), and our own programs built against them
# (tools/llama-driver: the greedy driver, the ggml quantizer and the MUL_MAT
# benchmark).
#
# The source is the one node-llama-cpp ships in its npm tarball
# (llama/gitRelease.bundle, a git bundle of llama.cpp): the npm registry is
# reachable where GitHub is not. `npm pack` fetches the tarball only (no
# install, no install script). It is built once per machine and CPU into a
# cache and linked as build/llama.cpp/{bin,lib,include,src}; the driver
# programs are rebuilt into build/llama.cpp/tools when their source or a
# header beside it changes.
# Nothing is installed system-wide.
#
# On any failure it says so on one line and exits 0: the lit tests that need
# llama.cpp (REQUIRES: llama-cpp) then report UNSUPPORTED.
#
#   bash scripts/llama-cpp.sh          # called by scripts/test.sh
#   LLAMA_CPP_JOBS=2 bash scripts/llama-cpp.sh
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

npm_package=node-llama-cpp@3.21.1
# The commit the bundle holds (node-llama-cpp calls this llama.cpp release
# "v0.4.0"; ggml reports 0.23.0). A bundle with another commit is refused.
commit=80fb11ac73e66d89eae2c6a91d8a77428fa733ed
link=build/llama.cpp

fail() {
  echo "llama.cpp: $1; the interop tests will be UNSUPPORTED"
  rm -rf "$link"
  exit 0
}

# The x86 instruction sets to compile for: AVX2 always (the lowbit kernels'
# baseline), AVX-512 and its VNNI/VBMI/BF16 extensions when this CPU has
# them. Not GGML_NATIVE, so the build does not depend on the compiler's
# guess of the host. AMX is off: llama.cpp's AMX path crashes on Q4_0/Q8_0
# tensors on AMX hosts. The set names the cache, so another CPU gets its own
# build.
flags=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
has() { grep -qw "$1" <<<"$flags"; }
has avx2 && has fma && has f16c || fail "this CPU lacks AVX2/FMA/F16C"
isa=(-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
  -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
variant=avx2
if has avx512f && has avx512bw && has avx512dq && has avx512vl; then
  isa+=(-DGGML_AVX512=ON)
  variant=avx512
  for ext in vnni vbmi bf16; do
    if has "avx512_$ext" || has "avx512$ext"; then
      isa+=("-DGGML_AVX512_${ext^^}=ON")
      variant+="-$ext"
    fi
  done
fi
has avx_vnni && isa+=(-DGGML_AVX_VNNI=ON) && variant+="-avxvnni"

cache="${XDG_CACHE_HOME:-$HOME/.cache}/lowbit/llama.cpp-${commit:0:7}-$variant"
targets=(llama ggml llama-quantize llama-bench llama-perplexity test-backend-ops)

built() {
  [ -f "$cache/done" ] && for t in llama-quantize llama-bench llama-perplexity test-backend-ops; do
    [ -x "$cache/build/bin/$t" ] || return 1
  done
}

if ! built; then
  command -v npm >/dev/null || fail "npm is missing (apt-get install npm), needed to fetch the source"
  echo "llama.cpp: building ${commit:0:7} ($variant) from $npm_package (once per machine, minutes; log in $cache/build.log)"
  rm -rf "$cache" && mkdir -p "$cache/dl" || fail "cannot create $cache"
  (cd "$cache/dl" && npm pack --silent "$npm_package" >/dev/null 2>"$cache/npm.log") ||
    fail "npm pack $npm_package failed (see $cache/npm.log)"
  tar xzf "$cache"/dl/node-llama-cpp-*.tgz -C "$cache/dl" package/llama/gitRelease.bundle ||
    fail "the npm tarball has no llama/gitRelease.bundle"
  git clone -q "$cache/dl/package/llama/gitRelease.bundle" "$cache/src" 2>/dev/null ||
    fail "git clone of the bundle failed"
  got=$(git -C "$cache/src" rev-parse HEAD)
  [ "$got" = "$commit" ] || fail "the bundle holds commit $got, not the pinned $commit"
  rm -rf "$cache/dl"
  # Only what the tests and the measurements use: no server (llama-cli now
  # needs it), no examples, no HTTPS; the tests' CMake is configured for
  # test-backend-ops, the only test target built.
  cmake -G Ninja -S "$cache/src" -B "$cache/build" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=ON -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_TESTS=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_APP=OFF \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    "${isa[@]}" >"$cache/cmake.log" 2>&1 || fail "cmake failed (see $cache/cmake.log)"
  ninja -C "$cache/build" -j "${LLAMA_CPP_JOBS:-$(nproc)}" "${targets[@]}" >"$cache/build.log" 2>&1 ||
    fail "build failed (see $cache/build.log)"
  touch "$cache/done"
fi

# build/llama.cpp: links into the cache, and our programs built here.
mkdir -p "$link/tools" || fail "cannot create $link"
ln -sfn "$cache/build/bin" "$link/bin"
ln -sfn "$cache/build/bin" "$link/lib"
ln -sfn "$cache/src" "$link/src"
mkdir -p "$link/include"
ln -sfn "$cache/src/include/llama.h" "$link/include/llama.h"
for h in "$cache"/src/ggml/include/*.h; do ln -sfn "$h" "$link/include/"; done

cxx=$(command -v clang++-22 || command -v c++)
fresh() { # $1 is newer than its source, the shared headers and the build
  for dep in "$2" tools/llama-driver/*.h "$cache/done"; do [ "$1" -nt "$dep" ] || return 1; done
}
for prog in llama-driver ggml-quantize ggml-matmul-bench; do
  src=tools/llama-driver/$prog.cpp
  out=$link/tools/$prog
  [ -x "$out" ] && fresh "$out" "$src" && continue
  "$cxx" -std=c++17 -O2 -Wall -Wextra -Werror "$src" -I"$link/include" -L"$cache/build/bin" \
    -Wl,-rpath,"$cache/build/bin" -lllama -lggml -lggml-base -lggml-cpu -o "$out" 2>"$link/tools/$prog.log" ||
    fail "$prog did not compile (see $root/$link/tools/$prog.log)"
  rm -f "$link/tools/$prog.log"
done
