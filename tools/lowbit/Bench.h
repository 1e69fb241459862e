//===- Bench.h - honest roofline measurements -------------------*- C++ -*-===//
//
// The measurement side of `lowbit bench` and `lowbit tune`, by job:
// BenchProbes.h (the read-bandwidth and int8-peak limits), BenchTiming.h
// (cold and warm kernel timing in alternating rounds, the loaded and slowed
// cores) and BenchRecords.h (one JSON record per case).
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_TOOLS_LOWBIT_BENCH_H
#define LOWBIT_TOOLS_LOWBIT_BENCH_H

#include "BenchProbes.h"
#include "BenchRecords.h"
#include "BenchTiming.h"

#endif // LOWBIT_TOOLS_LOWBIT_BENCH_H
