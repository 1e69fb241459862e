#!/usr/bin/env bash
# Runs every lowbit test: lit (dialect, passes, emitted C++, CLI, generated
# kernels against the reference, GGUF models against an independent fp64
# forward), the GoogleTest suites of the runtime, the engine, lib/Jit
# (compile-and-load, kernel cache) and the CLI's benchmark library, the JIT
# example (examples/jit), the runtime suite again under ASan+UBSan and
# under TSan, and the .npy and GGUF fuzzers for a fixed time
# (LOWBIT_FUZZ_SECONDS in all, default 60: half each). Calls
# scripts/setup.sh --no-run first, so a fresh checkout works. Ends with one
# "tests: N passed, N failed" line.
set -uo pipefail
cd "$(dirname "$0")/.."
# The compiler cache keys paths relative to the checkout, so a fresh clone
# elsewhere (CI) hits what another checkout compiled; debug info then
# names paths relative to it.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
fuzz_seconds="${LOWBIT_FUZZ_SECONDS:-60}"
log=build/test-logs
lit=/usr/lib/llvm-22/bin/lit
runtime_cmake=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
  -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

bash scripts/setup.sh --no-run || exit 1
mkdir -p "$log"

passed=0 failed=0
# count NAME PASSED FAILED: adds a step's test counts to the totals.
count() {
  echo "=== $1: $2 passed, $3 failed"
  passed=$((passed + $2))
  failed=$((failed + $3))
}

# The pinned llama.cpp that test/interop compares with (built once per
# machine; where it cannot be had, one line and those tests are UNSUPPORTED).
bash scripts/llama-cpp.sh || true
# libggml-lowbit.so against it (test/interop/backend-*.test).
bash scripts/ggml-lowbit.sh || true

# The x86-amx kernels' tests run on the tiles where this host has AMX, else
# through amx_tiles.h's emulation of them (LOWBIT_AMX=emulate): say which.
amx=$(build/bin/lowbit targets 2>/dev/null | sed -n 's/^  x86-amx  *//p')
case "$amx" in
"runs on this host") echo "=== x86-amx kernels: native (AMX tiles)" ;;
*) echo "=== x86-amx kernels: emulated (${amx:-lowbit targets failed})" ;;
esac

# lit: dialect round trips and diagnostics, passes, emitted C++, CLI
# behaviour, and every generated kernel against the reference (test/e2e).
# -v without -s: one "PASS: ... (i of N)" line per test as it finishes (a
# run takes minutes), and the output of every failure.
"$lit" -v --time-tests build/test 2>&1 | tee "$log/lit.txt"
count lit "$(grep -oP '^\s*Passed\s*:\s*\K\d+' "$log/lit.txt" || echo 0)" \
  "$(grep -oP '^\s*(Failed|Unresolved|Timed Out)\s*:\s*\K\d+' "$log/lit.txt" |
    awk '{s += $1} END {print s + 0}')"
grep -q "Passed" "$log/lit.txt" || count "lit (did not run)" 0 1

# ctest DIR NAME: runs a GoogleTest build's ctest and counts its results.
ctest_step() {
  ctest --test-dir "$1" --output-on-failure 2>&1 | tee "$log/$2.txt"
  local line total bad
  line=$(grep -E 'tests passed, [0-9]+ tests failed out of' "$log/$2.txt")
  if [ -z "$line" ]; then
    count "$2 (did not run)" 0 1
    return
  fi
  bad=$(sed -E 's/.* ([0-9]+) tests failed.*/\1/' <<<"$line")
  total=$(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")
  count "$2" $((total - bad)) "$bad"
}
ctest_step build/runtime runtime
ctest_step build/engine engine
ctest_step build/tools/lowbit tools
ctest_step build/lib/Jit jit
ctest_step build/examples/jit jit-example

if cmake -S runtime -B build/asan "${runtime_cmake[@]}" -DLOWBIT_SANITIZE=ON >/dev/null &&
  ninja -C build/asan >/dev/null; then
  ctest_step build/asan runtime-asan-ubsan
else
  count "runtime-asan-ubsan (build failed)" 0 1
fi

# The pool's job protocol is lock-free (release/acquire slots, seq_cst
# fences for the sleep paths): TSan checks it on every test that runs jobs.
if cmake -S runtime -B build/tsan "${runtime_cmake[@]}" -DLOWBIT_TSAN=ON >/dev/null &&
  ninja -C build/tsan >/dev/null; then
  ctest_step build/tsan runtime-tsan
else
  count "runtime-tsan (build failed)" 0 1
fi

# The .npy and GGUF readers under libFuzzer, half of the time each.
if cmake -S runtime -B build/fuzz "${runtime_cmake[@]}" -DLOWBIT_FUZZ=ON \
  -DLOWBIT_RUNTIME_TESTS=OFF >/dev/null &&
  ninja -C build/fuzz lowbit-npy-fuzz lowbit-gguf-fuzz >/dev/null; then
  mkdir -p build/fuzz/corpus
  cp runtime/fuzz/corpus/* build/fuzz/corpus/
  each=$(((fuzz_seconds + 1) / 2))
  for fuzzer in npy gguf; do
    if build/fuzz/lowbit-$fuzzer-fuzz -max_total_time="$each" \
      -print_final_stats=1 build/fuzz/corpus >"$log/fuzz-$fuzzer.txt" 2>&1; then
      tail -n 5 "$log/fuzz-$fuzzer.txt"
      count "$fuzzer fuzzer (${each}s)" 1 0
    else
      tail -n 40 "$log/fuzz-$fuzzer.txt"
      count "$fuzzer fuzzer (${each}s)" 0 1
    fi
  done
else
  count "fuzzers (build failed)" 0 1
fi

echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
