// nvscope-target: nvscope
#pragma once

/// \file export/charts_svg.hpp
/// Charts as self-contained SVG files a browser opens: the steps (time per step with the GPU
/// busy part of it, outliers past the diagnosis' fence marked, and GPU utilisation over the
/// run below) and a duration histogram per top kernel. A click on a plot zooms its x axis
/// four times around the point (a double click or "Reset zoom" goes back); hovering a bar
/// shows its figures.
///
/// \code
///   const auto x = nvscope::index_trace(t);
///   const auto r = nvscope::analyze(t, x, {});
///   nvscope::write_file("run.steps.svg", nvscope::to_steps_svg(r, t));
///   nvscope::write_file("run.kernels.svg", nvscope::to_kernel_histograms_svg(t));
/// \endcode

#include <nvscope/analyze/report.hpp>
#include <nvscope/analyze/step_groups.hpp>
#include <nvscope/export/detail/svg.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// How the charts are drawn.
struct chart_options {
  unsigned width = 1200;        ///< pixels
  std::size_t time_bins = 400;  ///< utilisation: points over the run
  std::size_t top_kernels = 6;  ///< histograms: kernels by total GPU time
  std::size_t duration_bins = 30; ///< histograms: bins per kernel, equal on a log scale
  /// steps: at most this many bars; more steps are drawn a bar per group of consecutive
  /// steps (median, whisker from min to max), as the caption says. 0: a bar a step.
  std::size_t max_step_bars = 300;
};

namespace detail {

// [start, end) of every kernel, copy and memset of `t` with a valid interval, merged.
inline std::vector<std::pair<timestamp_ns, timestamp_ns>> gpu_busy_union(const trace& t) {
  std::vector<std::pair<timestamp_ns, timestamp_ns>> v;
  v.reserve(t.kernels.size() + t.copies.size() + t.memsets.size());
  const auto add = [&](timestamp_ns s, timestamp_ns e) { if (e != 0 && e > s) v.emplace_back(s, e); };
  for (const auto& k : t.kernels) add(k.start, k.end);
  for (const auto& c : t.copies) add(c.start, c.end);
  for (const auto& m : t.memsets) add(m.start, m.end);
  std::sort(v.begin(), v.end());
  std::size_t n = 0;
  for (const auto& x : v) {
    if (n > 0 && x.first <= v[n - 1].second) v[n - 1].second = std::max(v[n - 1].second, x.second);
    else v[n++] = x;
  }
  v.resize(n);
  return v;
}

// The share of each of `bins` equal stretches of [begin, end) during which any GPU work ran.
inline std::vector<double> busy_bins(const std::vector<std::pair<timestamp_ns, timestamp_ns>>& busy, timestamp_ns begin,
                                     timestamp_ns end, std::size_t bins) {
  std::vector<double> out(bins, 0.0);
  if (end <= begin || bins == 0) return out;
  const double width = static_cast<double>(end - begin) / static_cast<double>(bins);
  for (const auto& [s0, e0] : busy) {
    const double s = static_cast<double>(std::max(s0, begin) - begin), e = static_cast<double>(std::min(e0, end) - begin);
    if (e <= s) continue;
    for (auto b = static_cast<std::size_t>(s / width); b < bins && b * width < e; ++b)
      out[b] += std::min(e, (b + 1) * width) - std::max(s, b * width);
  }
  for (auto& x : out) x = std::min(1.0, x / width);
  return out;
}

// A plot: its box, a clip, and the group the script scales (the caller draws into it, in
// unzoomed coordinates, then calls close_plot). v0/v1: the x axis' values at its two ends.
inline void open_plot(std::string& out, int id, double x, double y, double w, double h, double v0, double v1, const char* unit) {
  const std::string c = "clip" + std::to_string(id);
  out += "<g class=\"plot\" data-left=\"" + fixed(x) + "\" data-width=\"" + fixed(w) + "\" data-v0=\"" + fixed(v0, 3) +
         "\" data-v1=\"" + fixed(v1, 3) + "\" data-unit=\"" + unit + "\">";
  out += "<clipPath id=\"" + c + "\"><rect x=\"" + fixed(x) + "\" y=\"" + fixed(y) + "\" width=\"" + fixed(w) + "\" height=\"" +
         fixed(h) + "\"/></clipPath>";
  out += "<rect class=\"box\" x=\"" + fixed(x) + "\" y=\"" + fixed(y) + "\" width=\"" + fixed(w) + "\" height=\"" + fixed(h) + "\"/>";
  out += "<g clip-path=\"url(#" + c + ")\"><g class=\"zoom\">\n";
}

inline void close_plot(std::string& out, double x, double y) {
  out += "</g></g><text class=\"caption\" x=\"" + fixed(x) + "\" y=\"" + fixed(y) + "\"></text></g>\n";
}

inline void open_chart(std::string& out, const char* id, unsigned width, unsigned height, const std::string& title) {
  const std::string w = std::to_string(width), h = std::to_string(height);
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" id=\"";
  out += std::string(id) + "\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h + "\">\n";
  out += "<style>text{font:12px Verdana,Helvetica,sans-serif;fill:#222}.heading{font-size:17px}.box{fill:#fff;stroke:#999}"
         ".plot{cursor:zoom-in}.zoom *{vector-effect:non-scaling-stroke}.bar:hover{opacity:0.7}.caption{fill:#1f4e9a}"
         ".button{cursor:pointer;fill:#1f4e9a}.axis{fill:#555;font-size:11px}</style>\n";
  out += "<script type=\"text/ecmascript\"><![CDATA[";
  out += chart_script;
  out += "]]></script>\n<rect width=\"100%\" height=\"100%\" fill=\"rgb(250,250,250)\"/>\n";
  out += "<text class=\"heading\" x=\"" + std::to_string(width / 2) + "\" y=\"26\" text-anchor=\"middle\">" + xml(title) + "</text>\n";
  out += "<text id=\"reset\" class=\"button\" x=\"10\" y=\"26\">Reset zoom</text>\n";
}

inline void axis_label(std::string& out, double x, double y, const std::string& text, const char* anchor = "start") {
  out += "<text class=\"axis\" x=\"" + fixed(x) + "\" y=\"" + fixed(y) + "\" text-anchor=\"" + anchor + "\">" + xml(text) + "</text>\n";
}

// One bar of a plot, with its tooltip.
inline void bar(std::string& out, double x, double y, double w, double h, const char* fill, const std::string& tip) {
  out += "<rect class=\"bar\" x=\"" + fixed(x, 2) + "\" y=\"" + fixed(y, 2) + "\" width=\"" + fixed(std::max(w, 0.05), 3) +
         "\" height=\"" + fixed(std::max(h, 0.0), 2) + "\" fill=\"" + fill + "\"><title>" + xml(tip) + "</title></rect>\n";
}

// A group's tooltip: the step's own figures, or a run's median and extremes.
inline std::string step_group_tip(const analysis_report& r, const step_group& g) {
  const auto& first = r.step_details[g.first];
  if (g.count == 1)
    return first.name + " (step " + std::to_string(g.first + 1) + "): " + readable_ns(g.median_ns) + ", GPU busy " +
           readable_ns(g.busy_median_ns) + " (" + fixed(first.activity.gpu_busy_percent, 1) + "%)" + (g.outliers ? ", outlier" : "");
  return "steps " + std::to_string(g.first + 1) + "-" + std::to_string(g.first + g.count) + " (" + std::to_string(g.count) +
         " steps): median " + readable_ns(g.median_ns) + " (min " + readable_ns(static_cast<double>(g.min_ns)) + ", max " +
         readable_ns(static_cast<double>(g.max_ns)) + "), GPU busy median " + readable_ns(g.busy_median_ns) +
         (g.outliers ? ", " + std::to_string(g.outliers) + " past the fence" : "");
}

// Time per step (the whole bar) and its GPU busy part (the darker one inside), outliers in
// red with a mark above, the median and the fence dashed. More steps than `o.max_step_bars`:
// a bar per group of consecutive steps (analyze/step_groups.hpp), its height the group's
// median, a whisker from its shortest step to its longest, red when it holds an outlier.
inline void write_step_bars(std::string& out, const analysis_report& r, const chart_options& o, double x, double y, double w, double h) {
  const auto groups = group_steps(r.step_details, r.diagnosis.steps.fence_ns, o.max_step_bars);
  std::uint64_t longest = 1;
  for (const auto& g : groups) longest = std::max(longest, g.max_ns);
  const double fence = r.diagnosis.steps.fence_ns, slot = w / static_cast<double>(std::max<std::size_t>(groups.size(), 1));
  const double scale = h / static_cast<double>(longest);
  open_plot(out, 1, x, y, w, h, 0, static_cast<double>(r.step_details.size()), "step");
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto& g = groups[i];
    const bool outlier = g.outliers > 0;
    const double bx = x + i * slot + slot * 0.1, bw = slot * 0.8, top = y + h - static_cast<double>(g.max_ns) * scale;
    const std::string tip = step_group_tip(r, g);
    bar(out, bx, y + h - g.median_ns * scale, bw, g.median_ns * scale, outlier ? "rgb(235,120,110)" : "rgb(160,190,230)", tip);
    bar(out, bx, y + h - g.busy_median_ns * scale, bw, g.busy_median_ns * scale, outlier ? "rgb(190,40,40)" : "rgb(40,90,170)", tip);
    if (g.count > 1 && g.max_ns > g.min_ns)
      out += "<line class=\"whisker\" x1=\"" + fixed(bx + bw / 2, 2) + "\" x2=\"" + fixed(bx + bw / 2, 2) + "\" y1=\"" +
             fixed(y + h - static_cast<double>(g.min_ns) * scale, 2) + "\" y2=\"" + fixed(top, 2) + "\" stroke=\"#333\"/>\n";
    if (outlier)
      out += "<path class=\"outlier\" d=\"M" + fixed(bx + bw / 2, 2) + " " + fixed(top - 2, 2) + " l-4 -7 h8 z\" fill=\"rgb(190,40,40)\"/>\n";
  }
  const auto level = [&](double ns, const char* colour) {
    if (ns <= 0 || ns > static_cast<double>(longest)) return;
    out += "<line x1=\"" + fixed(x) + "\" x2=\"" + fixed(x + w) + "\" y1=\"" + fixed(y + h - ns * scale, 2) + "\" y2=\"" +
           fixed(y + h - ns * scale, 2) + "\" stroke=\"" + colour + "\" stroke-dasharray=\"4 3\"/>\n";
  };
  level(r.diagnosis.steps.median_ns, "#333");
  level(fence, "rgb(190,40,40)");
  close_plot(out, x + 4, y + 14);
  axis_label(out, x - 4, y + 10, readable_ns(static_cast<double>(longest)), "end");
  axis_label(out, x - 4, y + h, "0", "end");
  axis_label(out, x, y + h + 14, "step 1");
  axis_label(out, x + w, y + h + 14, "step " + std::to_string(r.step_details.size()), "end");
}

// GPU busy over the run, one point a time bin, as a filled line from 0 to 100%.
inline void write_utilisation(std::string& out, const trace& t, const chart_options& o, double x, double y, double w, double h) {
  const auto busy = gpu_busy_union(t);
  const timestamp_ns begin = busy.empty() ? 0 : busy.front().first, end = busy.empty() ? 1 : busy.back().second;
  const auto bins = busy_bins(busy, begin, end, o.time_bins);
  open_plot(out, 2, x, y, w, h, 0, static_cast<double>(end - begin), "ns");
  std::string d = "M" + fixed(x) + " " + fixed(y + h);
  for (std::size_t i = 0; i < bins.size(); ++i) {
    const double px = x + (i + 0.5) * w / static_cast<double>(bins.size());
    d += " L" + fixed(px, 2) + " " + fixed(y + h - bins[i] * h, 2);
  }
  d += " L" + fixed(x + w) + " " + fixed(y + h) + " Z";
  out += "<path class=\"utilisation\" d=\"" + d + "\" fill=\"rgba(60,150,90,0.35)\" stroke=\"rgb(30,110,60)\"/>\n";
  close_plot(out, x + 4, y + 14);
  axis_label(out, x, y + h + 14, "0");
  axis_label(out, x + w, y + h + 14, readable_ns(static_cast<double>(end - begin)), "end");
  axis_label(out, x - 4, y + 10, "100%", "end");
  axis_label(out, x - 4, y + h, "0%", "end");
}

} // namespace detail

/// The steps of `r` (its `step_details`, in time order) and GPU utilisation over the run of
/// `t`, as one SVG file: above, a bar per step (its projected window, the GPU busy part
/// darker; red past the diagnosis' outlier fence, with the median and the fence dashed), or,
/// past `o.max_step_bars` steps, a bar per group of consecutive steps (its median, a whisker
/// from its shortest to its longest step; the caption says so); below, the share of each time
/// bin during which any GPU work ran.
/// \code
///   nvscope::write_file("run.steps.svg", nvscope::to_steps_svg(nvscope::analyze(t), t));
/// \endcode
inline std::string to_steps_svg(const analysis_report& r, const trace& t, const chart_options& o = {}) {
  std::string out;
  const double left = 70, w = o.width - 90.0;
  detail::open_chart(out, "nvscope-steps", o.width, 520, "Steps and GPU utilisation");
  const auto& s = r.diagnosis.steps;
  const std::size_t n = r.step_details.size(), per = steps_per_group(n, o.max_step_bars);
  std::string line = std::to_string(n) + " steps";
  if (n != 0)
    line += ": median " + detail::readable_ns(s.median_ns) + ", p90 " + detail::readable_ns(s.p90_ns) + ", slowest " +
            detail::readable_ns(static_cast<double>(s.max_ns)) + ", " + std::to_string(s.outlier_count) + " past the fence";
  else line += " (no step ranges: name them step_N, or give nvscope run --steps)";
  if (per == 1) {
    detail::axis_label(out, left, 52, "Time per step (dark: GPU busy; red: outlier; dashed: median and fence). " + line);
  } else {
    detail::axis_label(out, left, 44, "Time per step, grouped: " + std::to_string((n + per - 1) / per) + " bars of " +
                                          std::to_string(per) + " consecutive steps (bar: median; whisker: min to max; dark: median GPU busy;");
    detail::axis_label(out, left, 57, "red: holds an outlier; dashed: median and fence). " + line);
  }
  detail::write_step_bars(out, r, o, left, 60, w, 230);
  detail::axis_label(out, left, 330, "GPU utilisation over the run (share of each stretch with GPU work running)");
  detail::write_utilisation(out, t, o, left, 340, w, 150);
  out += "</svg>\n";
  return out;
}

namespace detail {

// Kernel names by total GPU time, longest first, at most `top`, each with its durations.
inline std::vector<std::pair<string_id, std::vector<std::uint64_t>>> top_kernel_durations(const trace& t, std::size_t top) {
  std::unordered_map<string_id, std::size_t> at;
  std::vector<std::pair<string_id, std::vector<std::uint64_t>>> by_name;
  std::vector<std::uint64_t> total;
  for (const auto& k : t.kernels) {
    if (k.end == 0 || k.end < k.start) continue;
    const auto [it, added] = at.emplace(k.name, by_name.size());
    if (added) by_name.emplace_back(k.name, std::vector<std::uint64_t>{}), total.push_back(0);
    by_name[it->second].second.push_back(k.end - k.start);
    total[it->second] += k.end - k.start;
  }
  std::vector<std::size_t> order(by_name.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return total[a] != total[b] ? total[a] > total[b] : a < b; });
  std::vector<std::pair<string_id, std::vector<std::uint64_t>>> out;
  for (std::size_t i = 0; i < order.size() && i < top; ++i) out.push_back(std::move(by_name[order[i]]));
  return out;
}

// One kernel's histogram: bins equal on a log scale from its shortest to its longest run.
inline void write_histogram(std::string& out, int id, const std::string& name, std::vector<std::uint64_t>& d, std::size_t bins,
                            double x, double y, double w, double h) {
  std::sort(d.begin(), d.end());
  double lo = static_cast<double>(std::max<std::uint64_t>(d.front(), 1)), hi = static_cast<double>(d.back());
  if (hi < lo * 1.01) hi = lo * 1.5, lo /= 1.5; // all runs alike: one bar in the middle
  const double span = std::log(hi) - std::log(lo);
  std::vector<std::uint64_t> count(bins, 0);
  for (auto v : d) {
    const double f = (std::log(std::max(static_cast<double>(v), lo)) - std::log(lo)) / span;
    ++count[std::min(bins - 1, static_cast<std::size_t>(f * static_cast<double>(bins)))];
  }
  const std::uint64_t most = std::max<std::uint64_t>(*std::max_element(count.begin(), count.end()), 1);
  const std::string cut = name.size() > 80 ? name.substr(0, 78) + ".." : name;
  axis_label(out, x, y - 6, cut + " (" + std::to_string(d.size()) + " runs, median " + readable_ns((d[(d.size() - 1) / 2] + d[d.size() / 2]) / 2.0) + ")");
  open_plot(out, id, x, y, w, h, lo, hi, "log-ns");
  const double slot = w / static_cast<double>(bins);
  const std::string fill = warm_colour(name);
  for (std::size_t b = 0; b < bins; ++b) {
    if (count[b] == 0) continue;
    const double from = lo * std::exp(span * b / bins), to = lo * std::exp(span * (b + 1) / bins);
    bar(out, x + b * slot + 0.5, y + h - h * count[b] / most, slot - 1, h * count[b] / most, fill.c_str(),
        std::to_string(count[b]) + " runs of " + readable_ns(from) + " to " + readable_ns(to));
  }
  close_plot(out, x + 4, y + 14);
  axis_label(out, x, y + h + 13, readable_ns(lo));
  axis_label(out, x + w, y + h + 13, readable_ns(hi), "end");
  axis_label(out, x - 4, y + 10, std::to_string(most), "end");
}

} // namespace detail

/// A duration histogram for each of the `top_kernels` kernels with the most GPU time in `t`
/// (by name as the trace holds it), two a row, bins equal on a log scale from the kernel's
/// shortest run to its longest, as one SVG file.
/// \code
///   nvscope::write_file("run.kernels.svg", nvscope::to_kernel_histograms_svg(t));
/// \endcode
inline std::string to_kernel_histograms_svg(const trace& t, const chart_options& o = {}) {
  auto top = detail::top_kernel_durations(t, o.top_kernels);
  const std::size_t rows = (top.size() + 1) / 2;
  const unsigned height = static_cast<unsigned>(70 + std::max<std::size_t>(rows, 1) * 190);
  std::string out;
  detail::open_chart(out, "nvscope-histograms", o.width, height, "Kernel durations (top kernels by GPU time)");
  if (top.empty()) detail::axis_label(out, 20, 60, "no kernels recorded");
  const double w = (o.width - 130.0) / 2;
  for (std::size_t i = 0; i < top.size(); ++i) {
    const double x = 50 + (i % 2) * (w + 50), y = 70 + (i / 2) * 190.0;
    detail::write_histogram(out, static_cast<int>(i + 1), std::string(t.strings[top[i].first]), top[i].second,
                            std::max<std::size_t>(o.duration_bins, 1), x, y, w, 140);
  }
  out += "</svg>\n";
  return out;
}

} // namespace v1
} // namespace nvscope
