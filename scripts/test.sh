#!/usr/bin/env bash
# Runs every lowbit test: the build, lit (dialect + CLI), the runtime's
# GoogleTest suite, the same suite under ASan+UBSan, and the .npy fuzzer for a
# fixed time. Expects scripts/setup.sh to have run (it calls it with --no-run
# so a fresh checkout works too). Prints one closing "N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds="${LOWBIT_FUZZ_SECONDS:-60}"

bash scripts/setup.sh --no-run || exit 1

passed=0 failed=0
step() {
  local name="$1"
  shift
  echo "=== $name"
  if "$@"; then
    passed=$((passed + 1))
    echo "=== $name: ok"
  else
    failed=$((failed + 1))
    echo "=== $name: FAILED"
  fi
}

cc=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

step "lit (dialect, CLI)" /usr/lib/llvm-22/bin/lit -sv build/test
step "runtime unit tests" ctest --test-dir build/runtime --output-on-failure
step "runtime unit tests (ASan+UBSan)" bash -c "
  cmake -S runtime -B build/asan ${cc[*]} -DLOWBIT_SANITIZE=ON >/dev/null &&
  ninja -C build/asan >/dev/null &&
  ctest --test-dir build/asan --output-on-failure"
step "npy fuzzer (${fuzz_seconds}s)" bash -c "set -o pipefail;
  cmake -S runtime -B build/fuzz ${cc[*]} -DLOWBIT_FUZZ=ON -DLOWBIT_RUNTIME_TESTS=OFF >/dev/null &&
  ninja -C build/fuzz lowbit-npy-fuzz >/dev/null &&
  mkdir -p build/fuzz/corpus && cp runtime/fuzz/corpus/* build/fuzz/corpus/ &&
  build/fuzz/lowbit-npy-fuzz -max_total_time=${fuzz_seconds} -print_final_stats=1 build/fuzz/corpus 2>&1 | tail -n 5"

echo "test steps: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
