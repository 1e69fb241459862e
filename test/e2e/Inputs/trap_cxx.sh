#!/bin/sh
# A C++ compiler for `lowbit tune`'s crash test: compiles as clang++-22 does,
# except that in a translation unit defining the kernel `lowbit_kernel_1`
# (the second kernel of a batch) that symbol is replaced by one that traps,
# so the candidate crashes when it runs (and only then).
for arg in "$@"; do
  case "$arg" in
  *.cpp)
    if grep -q 'lowbit_kernel_1(' "$arg"; then
      exec clang++-22 -Dlowbit_kernel_1=lowbit_kernel_1_real \
        -include "$(dirname "$0")/trap_kernel.h" "$@"
    fi ;;
  esac
done
exec clang++-22 "$@"
