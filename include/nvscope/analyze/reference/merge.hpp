// nvscope-target: nvscope
#pragma once

/// \file analyze/reference/merge.hpp
/// The plain definitions `analyze/merge.hpp` is held equal to (tests/analyze/merge_test.cpp),
/// each in the shape of what it transcribes:
/// - overlap: nsys's recipe `nccl_gpu_overlap_trace`, communication kernels by name ("nccl",
///   any case), overlap = compute time during communication / communication time, taken here
///   stretch by stretch between every two kernel boundaries (quadratic: small inputs only);
/// - host offsets: per host, every matched collective end's difference (the k-th kernel of one
///   communication name on the rank and on the first profile), the whole list sorted, its
///   median, the median absolute deviation x 1.4826 / sqrt(n) as its uncertainty, the wall
///   clocks' difference where nothing matched.
///
/// \code
///   auto o = nvscope::reference::overlap(rank.kernels);
/// \endcode

#include <nvscope/analyze/merge_types.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace reference {

/// nsys's overlap, between every two boundaries: a stretch inside some communication kernel
/// counts as communication, and as overlap when some compute kernel covers it too.
inline overlap_figures overlap(const std::vector<rank_kernel>& kernels) {
  std::set<timestamp_ns> cuts;
  for (const auto& k : kernels) cuts.insert(k.start), cuts.insert(k.end);
  const std::vector<timestamp_ns> at(cuts.begin(), cuts.end());
  overlap_figures o;
  for (std::size_t i = 0; i + 1 < at.size(); ++i) {
    bool comm = false, comp = false;
    for (const auto& k : kernels)
      if (k.start <= at[i] && at[i + 1] <= k.end && k.end > k.start) (k.communication ? comm : comp) = true;
    if (comm) o.communication_ns += at[i + 1] - at[i];
    if (comm && comp) o.overlap_ns += at[i + 1] - at[i];
  }
  o.fraction = o.communication_ns ? static_cast<double>(o.overlap_ns) / static_cast<double>(o.communication_ns) : 0.0;
  return o;
}

/// The median of a sorted copy.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/// The ends of the communication kernels named `name` on `p`, in time order.
inline std::vector<timestamp_ns> ends_of(const rank_profile& p, std::uint32_t name) {
  std::vector<timestamp_ns> e;
  for (const auto& k : p.kernels)
    if (k.communication && k.name == name) e.push_back(k.end);
  std::sort(e.begin(), e.end());
  return e;
}

/// One rank's samples: for every communication name and every k, its k-th end minus the
/// first profile's k-th end.
inline std::vector<double> samples(const rank_profile& p, const rank_profile& ref) {
  std::set<std::uint32_t> names;
  for (const auto& k : p.kernels)
    if (k.communication) names.insert(k.name);
  std::vector<double> d;
  for (auto name : names) {
    const auto mine = ends_of(p, name), theirs = ends_of(ref, name);
    for (std::size_t k = 0; k < mine.size() && k < theirs.size(); ++k)
      d.push_back(static_cast<double>(mine[k]) - static_cast<double>(theirs[k]));
  }
  return d;
}

/// Each host's offset, hosts in order of first appearance.
inline std::vector<host_offset> host_offsets(const std::vector<rank_profile>& ranks) {
  std::vector<host_offset> out;
  const auto clock_of = [](const rank_profile& p) {
    return static_cast<double>(p.at_start.trace_ns) - static_cast<double>(p.at_start.wall_ns);
  };
  for (const auto& first : ranks) {
    if (std::any_of(out.begin(), out.end(), [&](const host_offset& h) { return h.host == first.host; })) continue;
    host_offset h;
    h.host = first.host;
    std::vector<double> all;
    std::vector<std::vector<double>> each;
    for (const auto& p : ranks)
      if (p.host == first.host) each.push_back(samples(p, ranks[0])), all.insert(all.end(), each.back().begin(), each.back().end());
    h.samples = all.size();
    h.from_wall_clock = all.empty();
    h.offset_ns = all.empty() ? clock_of(first) - clock_of(ranks[0]) : median(all);
    std::vector<double> dev;
    for (double v : all) dev.push_back(std::fabs(v - h.offset_ns));
    h.uncertainty_ns = all.empty() ? 0.0 : 1.4826 * median(dev) / std::sqrt(static_cast<double>(all.size()));
    for (const auto& e : each)
      if (!e.empty()) h.same_host_spread_ns = std::max(h.same_host_spread_ns, std::fabs(median(e) - h.offset_ns));
    out.push_back(h);
  }
  return out;
}

} // namespace reference
} // namespace v1
} // namespace nvscope
