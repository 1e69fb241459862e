//===- Plot.h - the roofline chart of `lowbit bench --plot` -----*- C++ -*-===//
//
// A self-contained SVG bar chart: for every weight shape, one bar per series
// (format / strategy / target) showing effective bandwidth divided by the
// read limit (the read probe of the same run, or, for paired records, the
// probe passes right before the bar's own reps), a line at 1.0 (the read
// limit), the value on top of every bar, and a right-hand axis in GB/s when
// all bars share one limit.
//
//===----------------------------------------------------------------------===//
#ifndef LOWBIT_TOOLS_LOWBIT_PLOT_H
#define LOWBIT_TOOLS_LOWBIT_PLOT_H

#include "Bench.h"

#include <string>
#include <vector>

namespace lowbit::cli {

struct ChartSeries {
  std::string name;
  std::vector<double> values; // one per category; NaN where missing
};

struct RooflineChart {
  std::string title;
  std::string subtitle;
  std::string x_label = "weight shape (M x K)";
  std::string y_label = "effective bandwidth / read limit";
  std::vector<std::string> categories;
  std::vector<ChartSeries> series;
  /// The read limit of every bar (the 1.0 line, the GB/s axis); 0 when each
  /// bar has its own (paired records).
  double roofline_gbps = 0.0;
};

/// The chart of the cold N = 1 records: categories are the shapes in order
/// of first appearance, one series per "format strategy target" (plus
/// "(warm)" for warm records, which are drawn as their own series).
RooflineChart roofline_chart(const std::vector<BenchRecord> &records,
                             const BandwidthResult &bandwidth);

/// The SVG text (UTF-8, no external references).
std::string render_svg(const RooflineChart &chart);

/// Writes render_svg(chart) to `path`; throws Error when it cannot.
void write_svg(const std::string &path, const RooflineChart &chart);

} // namespace lowbit::cli

#endif // LOWBIT_TOOLS_LOWBIT_PLOT_H
