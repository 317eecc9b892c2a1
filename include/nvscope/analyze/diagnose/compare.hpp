// nvscope-target: nvscope
#pragma once

/// \file analyze/diagnose/compare.hpp
/// Two runs compared, group by group (kernel names; ranges and steps, each by the GPU time
/// of the work launched inside and by host time): the change of the median, new / base - 1,
/// with a percentile bootstrap confidence interval (each side resampled with replacement,
/// `resamples` times, the ratio of the two medians each time; the interval is the alpha/2 and
/// 1 - alpha/2 quantiles of those ratios). A change is significant when the interval excludes 0; above the threshold when the
/// whole interval lies above `threshold` (significantly more than the threshold slower, so a
/// noisy group whose median moved by chance does not count). The gate fails on a group above
/// the threshold that is gated: GPU-side groups (kernels, GPU time of ranges and steps)
/// always, host times only with `gate_host`. Host times of an unchanged program move between
/// processes by far more than any useful threshold (runs of examples/04: the spread of each
/// group's median between runs, bench/results/diagnosis.json's gpu_session),
/// and the bootstrap sees only the spread inside one run, so they are listed, not gated, by
/// default. The generator is seeded from the group's name, so a comparison always gives the
/// same figures.
/// Groups with fewer than `min_samples` on a side are listed, not tested.
///
/// \code
///   nvscope::compare_options o;
///   o.threshold = 0.05;                                // 5 %
///   nvscope::run_comparison c = nvscope::compare_runs(base, next, o);
///   return c.gate_failed ? 1 : 0;
/// \endcode

#include <nvscope/analyze/diagnosis.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// How two runs are compared.
struct compare_options {
  double alpha = 0.05;          ///< 1 - confidence of the interval
  double threshold = 0.05;      ///< an interval wholly above this growth of the median fails the gate
  std::uint32_t resamples = 2000;
  std::uint32_t min_samples = 5;
  std::uint32_t max_samples = 2000; ///< per side, evenly spaced order statistics beyond it
  bool gate_host = false;           ///< host-time groups fail the gate too (noisy between processes)
};

/// Which group a comparison row is about: kernels and the GPU time of ranges and steps (GPU
/// side), or the host time of ranges and steps.
enum class sample_group : std::uint8_t { kernel, range_gpu, step_gpu, range_host, step_host };

/// True for the groups timed on the host.
constexpr bool is_host_group(sample_group g) noexcept { return g == sample_group::range_host || g == sample_group::step_host; }

/// One group in both runs (or in one: `base_count` or `new_count` is 0, not tested).
struct comparison_row {
  sample_group group = sample_group::kernel;
  std::string name;
  std::uint64_t base_count = 0, new_count = 0;
  double base_median = 0.0, new_median = 0.0;
  double change = 0.0;  ///< new median / base median - 1
  double ci_low = 0.0, ci_high = 0.0;
  bool tested = false;
  bool significant = false;
  bool above_threshold = false; ///< the whole interval above the threshold
  bool gated = true;            ///< counts for the gate (GPU side, or host with `gate_host`)
  bool regression = false;      ///< above the threshold and gated
};

/// The comparison: rows sorted by effect (|change|, tested first), and the gate.
struct run_comparison {
  std::vector<comparison_row> rows;
  std::uint64_t tested = 0, significant = 0, regressions = 0;
  std::uint64_t ungated_above = 0; ///< host groups above the threshold, not gated
  bool gate_failed = false;
};

namespace detail {
namespace diag {

// splitmix64: small, fast, good enough for resampling indices.
struct resample_rng {
  std::uint64_t state;
  std::uint64_t next() noexcept {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) noexcept { return static_cast<std::size_t>((next() >> 11) % n); }
};

inline std::uint64_t name_seed(std::string_view name, sample_group g) noexcept {
  std::uint64_t h = 1469598103934665603ull ^ static_cast<std::uint64_t>(g);
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

inline std::vector<double> sorted_values(const std::vector<std::uint64_t>& ns, std::uint32_t keep) {
  std::vector<double> v;
  std::vector<std::uint64_t> s = ns;
  std::sort(s.begin(), s.end());
  const std::size_t n = s.size();
  const std::size_t k = keep && n > keep ? keep : n;
  for (std::size_t i = 0; i < k; ++i) v.push_back(static_cast<double>(s[k == n ? i : static_cast<std::size_t>((i + 0.5) * n / k)]));
  return v;
}

inline double median_of_sorted(const std::vector<double>& v) noexcept {
  const auto n = v.size();
  if (n == 0) return 0.0;
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

// Median of a resample of sorted `v`: the values at the resampled indices keep their order,
// so the median of the indices picks it.
inline double resampled_median(const std::vector<double>& v, resample_rng& rng, std::vector<std::size_t>& idx) {
  const auto n = v.size();
  idx.resize(n);
  for (auto& i : idx) i = rng.below(n);
  auto mid = idx.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(idx.begin(), mid, idx.end());
  if (n % 2) return v[*mid];
  const auto below = *std::max_element(idx.begin(), mid);
  return (v[below] + v[*mid]) / 2.0;
}

inline void bootstrap(comparison_row& row, const std::vector<double>& b, const std::vector<double>& n,
                      const compare_options& o) {
  resample_rng rng{name_seed(row.name, row.group)};
  std::vector<double> ratios;
  std::vector<std::size_t> idx;
  ratios.reserve(o.resamples);
  for (std::uint32_t i = 0; i < o.resamples; ++i) {
    const double mb = resampled_median(b, rng, idx);
    const double mn = resampled_median(n, rng, idx);
    if (mb > 0) ratios.push_back(mn / mb - 1.0);
  }
  if (ratios.empty()) return;
  std::sort(ratios.begin(), ratios.end());
  auto at = [&](double p) {
    const auto i = static_cast<std::size_t>(std::floor(p * static_cast<double>(ratios.size() - 1) + 0.5));
    return ratios[std::min(i, ratios.size() - 1)];
  };
  row.ci_low = at(o.alpha / 2);
  row.ci_high = at(1 - o.alpha / 2);
  row.tested = true;
  row.significant = row.ci_low > 0 || row.ci_high < 0;
  row.above_threshold = row.ci_low > o.threshold;
  row.regression = row.above_threshold && row.gated;
}

inline comparison_row compare_group(sample_group g, const sample_set* base, const sample_set* next,
                                    const compare_options& o) {
  comparison_row row;
  row.group = g;
  row.gated = !is_host_group(g) || o.gate_host;
  row.name = base ? base->name : next->name;
  row.base_count = base ? base->count : 0;
  row.new_count = next ? next->count : 0;
  if (!base || !next) return row;
  const auto b = sorted_values(base->ns, o.max_samples);
  const auto n = sorted_values(next->ns, o.max_samples);
  row.base_median = median_of_sorted(b);
  row.new_median = median_of_sorted(n);
  if (row.base_median > 0) row.change = row.new_median / row.base_median - 1.0;
  if (b.size() >= o.min_samples && n.size() >= o.min_samples && row.base_median > 0) bootstrap(row, b, n, o);
  return row;
}

inline void compare_sets(sample_group g, const std::vector<sample_set>& base, const std::vector<sample_set>& next,
                         const compare_options& o, std::vector<comparison_row>& out) {
  std::unordered_map<std::string, const sample_set*> in_next;
  for (const auto& s : next) in_next.emplace(s.name, &s);
  for (const auto& s : base) {
    const auto it = in_next.find(s.name);
    out.push_back(compare_group(g, &s, it == in_next.end() ? nullptr : it->second, o));
    if (it != in_next.end()) in_next.erase(it);
  }
  for (const auto& s : next)
    if (in_next.count(s.name)) out.push_back(compare_group(g, nullptr, &s, o));
}

} // namespace diag
} // namespace detail

/// Compares every group of `base` with the same group of `next` (see the file comment).
inline run_comparison compare_runs(const run_samples& base, const run_samples& next, const compare_options& o = {}) {
  run_comparison c;
  detail::diag::compare_sets(sample_group::kernel, base.kernels, next.kernels, o, c.rows);
  detail::diag::compare_sets(sample_group::range_gpu, base.ranges_gpu, next.ranges_gpu, o, c.rows);
  detail::diag::compare_sets(sample_group::step_gpu, base.steps_gpu, next.steps_gpu, o, c.rows);
  detail::diag::compare_sets(sample_group::range_host, base.ranges, next.ranges, o, c.rows);
  detail::diag::compare_sets(sample_group::step_host, base.steps, next.steps, o, c.rows);
  std::stable_sort(c.rows.begin(), c.rows.end(), [](const comparison_row& x, const comparison_row& y) {
    if (x.tested != y.tested) return x.tested;
    if (x.gated != y.gated) return x.gated;
    return std::fabs(x.change) > std::fabs(y.change);
  });
  for (const auto& r : c.rows) {
    c.tested += r.tested;
    c.significant += r.significant;
    c.regressions += r.regression;
    c.ungated_above += r.above_threshold && !r.gated;
  }
  c.gate_failed = c.regressions > 0;
  return c;
}

} // namespace v1
} // namespace nvscope
