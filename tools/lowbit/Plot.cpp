//===- Plot.cpp - the roofline chart of `lowbit bench --plot` -------------===//

#include "Plot.h"

#include "lowbit/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace lowbit::cli {

namespace {

// Okabe-Ito: distinguishable with the common colour-vision deficiencies.
const char *const kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                "#56B4E9", "#D55E00", "#F0E442", "#000000"};

std::string escape(const std::string &text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string fixed(double v, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, v);
  return buffer;
}

// Rough width of sans-serif text (average glyph about 0.58 em).
double text_width(const std::string &text, double size) {
  return 0.58 * size * double(text.size());
}

std::string size_text(int64_t bytes) {
  if (bytes >= (int64_t(1) << 30) && bytes % (int64_t(1) << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  return std::to_string(bytes >> 20) + " MiB";
}

} // namespace

RooflineChart roofline_chart(const std::vector<BenchRecord> &records,
                             const BandwidthResult &bandwidth) {
  RooflineChart chart;
  chart.roofline_gbps = bandwidth.gbps;
  std::map<std::string, size_t> category_index, series_index;
  int threads = 0;
  bool any_cold = false, any_warm = false;
  for (const BenchRecord &r : records) {
    if (r.N != 1)
      continue;
    const std::string shape = std::to_string(r.M) + "x" + std::to_string(r.K);
    if (!category_index.count(shape)) {
      category_index[shape] = chart.categories.size();
      chart.categories.push_back(shape);
    }
    const std::string name = r.format + " " + r.strategy + " " + r.target +
                             (r.cold ? "" : " (warm)");
    if (!series_index.count(name)) {
      series_index[name] = chart.series.size();
      chart.series.push_back({name, {}});
    }
    ChartSeries &s = chart.series[series_index[name]];
    s.values.resize(chart.categories.size(), NAN);
    s.values[category_index[shape]] = r.ratio;
    threads = r.threads;
    (r.cold ? any_cold : any_warm) = true;
  }
  for (ChartSeries &s : chart.series)
    s.values.resize(chart.categories.size(), NAN);
  // Paired records were each compared with probes taken right before their
  // own reps (the run's single probe can be far off, see BenchTiming.h):
  // every bar then has its own read limit, and no one GB/s scale fits them.
  bool paired = false;
  for (const BenchRecord &r : records)
    paired = paired || (r.N == 1 && r.paired);
  if (paired)
    chart.roofline_gbps = 0.0;
  chart.title = "lowbit GEMV, N = 1, " + std::to_string(threads) +
                (threads == 1 ? " thread" : " threads") +
                ": effective bandwidth / read limit";
  chart.subtitle =
      "read probe: " + size_text(bandwidth.bytes) + " written first, " +
      bandwidth.loads + " loads, " +
      (!paired
           ? "median of " + std::to_string(bandwidth.rep_gbps.size())
           : "a pass before every rep") +
      (any_cold ? "; cold: >= 256 MiB of copies" : "") +
      (any_warm ? "; warm: one matrix" : "");
  return chart;
}

std::string render_svg(const RooflineChart &chart) {
  const size_t nseries = std::max<size_t>(1, chart.series.size());
  const size_t ncat = std::max<size_t>(1, chart.categories.size());

  // Horizontal layout.
  const double bar = nseries <= 3 ? 24 : nseries <= 6 ? 16 : 10;
  const double gap = 28;
  double label_width = 0;
  for (const std::string &c : chart.categories)
    label_width = std::max(label_width, text_width(c, 12));
  const double group = std::max(double(nseries) * bar + gap, 56.0);
  const bool rotate_labels = label_width > group - 6;
  const double left = 86, right = 78;
  const double plot_w = std::max(520.0, double(ncat) * group);
  const double width = left + plot_w + right;

  // Legend rows above the plot: the series, then the limit line (index
  // chart.series.size()).
  const std::string limit =
      chart.roofline_gbps > 0
          ? "read limit = 1.0 (" + fixed(chart.roofline_gbps, 1) + " GB/s)"
          : "read limit = 1.0 (each bar's, measured before its reps)";
  auto legend_name = [&](size_t i) -> const std::string & {
    return i < chart.series.size() ? chart.series[i].name : limit;
  };
  auto legend_width = [&](size_t i) {
    return (i < chart.series.size() ? 22 : 34) +
           text_width(legend_name(i), 12) + 18;
  };
  std::vector<std::vector<size_t>> legend_rows(1);
  double row_w = 0;
  for (size_t i = 0; i <= chart.series.size(); ++i) {
    const double w = legend_width(i);
    if (row_w + w > width - 2 * 20 && !legend_rows.back().empty()) {
      legend_rows.emplace_back();
      row_w = 0;
    }
    legend_rows.back().push_back(i);
    row_w += w;
  }
  const double top = 64 + 20 * double(legend_rows.size()) + 12;
  const double plot_h = 360;
  const double bottom = rotate_labels ? 40 + label_width * 0.55 + 30 : 64;
  const double height = top + plot_h + bottom;

  // Vertical scale: at least 1.2 so that the limit line is well inside.
  double vmax = 0;
  for (const ChartSeries &s : chart.series)
    for (double v : s.values)
      if (std::isfinite(v))
        vmax = std::max(vmax, v);
  double ymax = std::max(1.2, std::ceil((vmax * 1.08) * 10) / 10);
  const double step = ymax <= 1.6 ? 0.2 : ymax <= 4 ? 0.5 : ymax <= 10 ? 1 : 5;
  ymax = std::ceil(ymax / step - 1e-9) * step;
  auto y_of = [&](double v) { return top + plot_h * (1 - v / ymax); };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << fixed(width, 0)
      << "\" height=\"" << fixed(height, 0) << "\" viewBox=\"0 0 "
      << fixed(width, 0) << " " << fixed(height, 0)
      << "\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << fixed(width / 2, 1)
      << "\" y=\"26\" font-size=\"16\" font-weight=\"bold\" "
         "text-anchor=\"middle\">"
      << escape(chart.title) << "</text>\n";
  svg << "<text x=\"" << fixed(width / 2, 1)
      << "\" y=\"46\" font-size=\"12\" fill=\"#444\" text-anchor=\"middle\">"
      << escape(chart.subtitle) << "</text>\n";

  // Legend, centred row by row.
  for (size_t r = 0; r < legend_rows.size(); ++r) {
    double w = 0;
    for (size_t i : legend_rows[r])
      w += legend_width(i);
    double x = (width - w) / 2;
    const double y = 64 + 20 * double(r);
    for (size_t i : legend_rows[r]) {
      if (i < chart.series.size())
        svg << "<rect x=\"" << fixed(x, 1) << "\" y=\"" << fixed(y - 10, 1)
            << "\" width=\"14\" height=\"12\" fill=\"" << kPalette[i % 8]
            << "\"/>\n";
      else
        svg << "<line x1=\"" << fixed(x, 1) << "\" y1=\"" << fixed(y - 4, 1)
            << "\" x2=\"" << fixed(x + 26, 1) << "\" y2=\"" << fixed(y - 4, 1)
            << "\" stroke=\"#C00000\" stroke-width=\"2\" "
               "stroke-dasharray=\"8 4\"/>\n";
      const double text_x = x + (i < chart.series.size() ? 20 : 32);
      svg << "<text x=\"" << fixed(text_x, 1) << "\" y=\"" << fixed(y, 1)
          << "\" font-size=\"12\""
          << (i < chart.series.size() ? "" : " fill=\"#C00000\"") << ">"
          << escape(legend_name(i)) << "</text>\n";
      x += legend_width(i);
    }
  }

  // Grid, left axis (ratio) and right axis (GB/s).
  for (double v = 0; v <= ymax + 1e-9; v += step) {
    const double y = y_of(v);
    svg << "<line x1=\"" << fixed(left, 1) << "\" y1=\"" << fixed(y, 1)
        << "\" x2=\"" << fixed(left + plot_w, 1) << "\" y2=\"" << fixed(y, 1)
        << "\" stroke=\"#e3e3e3\"/>\n";
    svg << "<text x=\"" << fixed(left - 8, 1) << "\" y=\"" << fixed(y + 4, 1)
        << "\" font-size=\"12\" text-anchor=\"end\">" << fixed(v, 1)
        << "</text>\n";
    if (chart.roofline_gbps > 0)
      svg << "<text x=\"" << fixed(left + plot_w + 8, 1) << "\" y=\""
          << fixed(y + 4, 1) << "\" font-size=\"12\" fill=\"#555\">"
          << fixed(v * chart.roofline_gbps, 0) << "</text>\n";
  }
  svg << "<line x1=\"" << fixed(left, 1) << "\" y1=\"" << fixed(top, 1)
      << "\" x2=\"" << fixed(left, 1) << "\" y2=\"" << fixed(top + plot_h, 1)
      << "\" stroke=\"#333\"/>\n";
  svg << "<line x1=\"" << fixed(left, 1) << "\" y1=\"" << fixed(top + plot_h, 1)
      << "\" x2=\"" << fixed(left + plot_w, 1) << "\" y2=\""
      << fixed(top + plot_h, 1) << "\" stroke=\"#333\"/>\n";
  const double mid = top + plot_h / 2;
  svg << "<text transform=\"translate(22 " << fixed(mid, 1)
      << ") rotate(-90)\" font-size=\"13\" text-anchor=\"middle\">"
      << escape(chart.y_label) << "</text>\n";
  if (chart.roofline_gbps > 0)
    svg << "<text transform=\"translate(" << fixed(width - 20, 1) << " "
        << fixed(mid, 1)
        << ") rotate(90)\" font-size=\"13\" fill=\"#555\" "
           "text-anchor=\"middle\">effective GB/s</text>\n";

  // Bars; their values are drawn after the limit line, over it.
  std::ostringstream values;
  for (size_t c = 0; c < chart.categories.size(); ++c) {
    const double x0 = left + double(c) * (plot_w / double(ncat)) +
                      (plot_w / double(ncat) - double(nseries) * bar) / 2;
    for (size_t s = 0; s < chart.series.size(); ++s) {
      const double v =
          c < chart.series[s].values.size() ? chart.series[s].values[c] : NAN;
      if (!std::isfinite(v))
        continue;
      const double x = x0 + double(s) * bar, y = y_of(std::max(0.0, v));
      svg << "<rect x=\"" << fixed(x + 1, 1) << "\" y=\"" << fixed(y, 1)
          << "\" width=\"" << fixed(bar - 2, 1) << "\" height=\""
          << fixed(top + plot_h - y, 1) << "\" fill=\"" << kPalette[s % 8]
          << "\"><title>" << escape(chart.series[s].name) << " "
          << escape(chart.categories[c]) << ": " << fixed(v, 3)
          << "</title></rect>\n";
      values << "<text x=\"" << fixed(x + bar / 2, 1) << "\" y=\""
             << fixed(y - 4, 1) << "\" font-size=\"" << (bar >= 20 ? 10 : 8)
             << "\" text-anchor=\"middle\" stroke=\"white\" "
                "stroke-width=\"3\" paint-order=\"stroke\">"
             << fixed(v, 2) << "</text>\n";
    }
    const double cx = left + (double(c) + 0.5) * (plot_w / double(ncat));
    const double ly = top + plot_h + 18;
    if (rotate_labels)
      svg << "<text transform=\"translate(" << fixed(cx, 1) << " "
          << fixed(ly, 1)
          << ") rotate(-35)\" font-size=\"12\" text-anchor=\"end\">"
          << escape(chart.categories[c]) << "</text>\n";
    else
      svg << "<text x=\"" << fixed(cx, 1) << "\" y=\"" << fixed(ly, 1)
          << "\" font-size=\"12\" text-anchor=\"middle\">"
          << escape(chart.categories[c]) << "</text>\n";
  }
  svg << "<text x=\"" << fixed(left + plot_w / 2, 1) << "\" y=\""
      << fixed(height - 14, 1) << "\" font-size=\"13\" text-anchor=\"middle\">"
      << escape(chart.x_label) << "</text>\n";

  // The measured limit over the bars, then the values over both.
  const double y1 = y_of(1.0);
  svg << "<line x1=\"" << fixed(left, 1) << "\" y1=\"" << fixed(y1, 1)
      << "\" x2=\"" << fixed(left + plot_w, 1) << "\" y2=\"" << fixed(y1, 1)
      << "\" stroke=\"#C00000\" stroke-width=\"2\" "
         "stroke-dasharray=\"8 4\"/>\n";
  svg << values.str();
  svg << "</svg>\n";
  return svg.str();
}

void write_svg(const std::string &path, const RooflineChart &chart) {
  std::ofstream out(path);
  out << render_svg(chart);
  if (!out.flush())
    throw Error("cannot write " + path);
}

} // namespace lowbit::cli
