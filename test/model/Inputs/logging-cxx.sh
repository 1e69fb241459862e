#!/bin/sh
# A C++ compiler for LOWBIT_CXX that logs each call (its arguments, one line)
# to $CXX_LOG and runs $REAL_CXX.
echo "$@" >> "$CXX_LOG"
exec "$REAL_CXX" "$@"
