// nvscope-target: nvscope
#pragma once

/// \file analyze/reference/merge.hpp
/// The plain definitions `analyze/merge.hpp` is held equal to (tests/analyze/merge_test.cpp),
/// each in the shape of what it transcribes:
/// - overlap: nsys's recipe `nccl_gpu_overlap_trace`, communication kernels by name ("nccl",
///   any case), overlap = compute time during communication / communication time, taken here
///   stretch by stretch between every two kernel boundaries (quadratic: small inputs only);
/// - collectives matched per communicator (`communicators`, `paired_communicators`): a rank's
///   communication kernels by stream, the streams paired with the first profile's where one's
///   name sequence (in order of their ends) is a prefix of the other's, the k-th of each pair
///   the same collective (issue 49: "match the k-th collective of each communicator");
/// - lossy steps left out (`without_steps`): the steps and the kernels that start in them;
/// - host offsets: per host, every paired collective end's difference from the first profile's,
///   the whole list sorted, its median, the median absolute deviation x 1.4826 / sqrt(n) as its
///   uncertainty, the wall clocks' difference where nothing matched;
/// - stragglers by HTA's rule: `find_stragglers_with_late_start_comm_kernels`
///   (hta/analyzers/straggler.py), see hta_late_steps below;
/// - the names that differ most between the fastest and the slowest rank: a GROUP BY name;
/// - the running totals merged over the ranks: every rank's raw values of a name concatenated,
///   std::sort, the quantile by nearest rank (what the merged sketch answers within its error).
///
/// \code
///   auto o = nvscope::reference::overlap(rank.kernels);
/// \endcode

#include <nvscope/analyze/merge_types.hpp>
#include <nvscope/analyze/reference/common.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <string>
#include <utility>
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

/// One rank's communicators in their plainest form: its communication kernels by stream (a
/// std::map), each stream's in order of their ends (ties by start, then name); the streams'
/// lists ordered by their first kernel (end, start, name, then stream).
inline std::vector<std::vector<rank_kernel>> communicators(const rank_profile& p) {
  std::map<std::uint32_t, std::vector<rank_kernel>> by_stream;
  for (const auto& k : p.kernels)
    if (k.communication) by_stream[k.stream].push_back(k);
  std::vector<std::vector<rank_kernel>> out;
  for (auto& [stream, v] : by_stream) {
    std::sort(v.begin(), v.end(), [](const rank_kernel& a, const rank_kernel& b) { return std::tie(a.end, a.start, a.name) < std::tie(b.end, b.start, b.name); });
    out.push_back(v);
  }
  std::sort(out.begin(), out.end(), [](const std::vector<rank_kernel>& a, const std::vector<rank_kernel>& b) {
    return std::tie(a[0].end, a[0].start, a[0].name, a[0].stream) < std::tie(b[0].end, b[0].start, b[0].name, b[0].stream);
  });
  return out;
}

/// Two groups are one communicator when one's sequence of kernel names is a prefix of the
/// other's, or they are equal: the names compared one by one to the shorter's length.
inline bool one_communicator(const std::vector<rank_kernel>& a, const std::vector<rank_kernel>& b) {
  for (std::size_t k = 0; k < a.size() && k < b.size(); ++k)
    if (a[k].name != b[k].name) return false;
  return true;
}

/// The communicators of `p` paired with `ref`'s, as (p's group, ref's group) indexes: p's
/// groups in order of their first kernel, each paired with the first of ref's, in the same
/// order, that is one communicator with it and not paired yet; a group pairing none is left out.
inline std::vector<std::pair<std::size_t, std::size_t>> paired_communicators(const std::vector<std::vector<rank_kernel>>& mine,
                                                                             const std::vector<std::vector<rank_kernel>>& theirs) {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  std::set<std::size_t> taken;
  for (std::size_t g = 0; g < mine.size(); ++g)
    for (std::size_t h = 0; h < theirs.size(); ++h)
      if (!taken.count(h) && one_communicator(mine[g], theirs[h])) {
        pairs.emplace_back(g, h);
        taken.insert(h);
        break;
      }
  return pairs;
}

/// One rank's samples: for every pair of matched communicators and every k below both their
/// lengths, its k-th collective's end minus the first profile's k-th.
inline std::vector<double> samples(const rank_profile& p, const rank_profile& ref) {
  const auto mine = communicators(p), theirs = communicators(ref);
  std::vector<double> d;
  for (const auto& [g, h] : paired_communicators(mine, theirs))
    for (std::size_t k = 0; k < mine[g].size() && k < theirs[h].size(); ++k)
      d.push_back(static_cast<double>(mine[g][k].end) - static_cast<double>(theirs[h][k].end));
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
    // The reference rank's host is the reference clock: 0 by definition (ranks of one host share
    // a clock; how far its other ranks' ends lie from the reference rank's is their spread).
    h.offset_ns = first.host == ranks[0].host ? 0.0 : all.empty() ? clock_of(first) - clock_of(ranks[0]) : median(all);
    std::vector<double> dev;
    for (double v : all) dev.push_back(std::fabs(v - h.offset_ns));
    h.uncertainty_ns = all.empty() ? 0.0 : 1.4826 * median(dev) / std::sqrt(static_cast<double>(all.size()));
    for (const auto& e : each)
      if (!e.empty()) h.same_host_spread_ns = std::max(h.same_host_spread_ns, std::fabs(median(e) - h.offset_ns));
    out.push_back(h);
  }
  return out;
}

/// The step a kernel belongs to, by HTA's rule (`add_iteration`, hta/common/trace.py): an
/// event on a GPU stream takes the iteration of the host event it is correlated with, and a host
/// event the step whose [ts, ts + dur) holds its ts. So: the step whose range holds the kernel's
/// launch, -1 when none does. A kernel whose launch is not recorded: the last step begun at its
/// start (its GPU time stands in for the launch's), -1 before the first.
inline long long step_of(const rank_profile& p, const rank_kernel& k) {
  long long at = -1;
  const timestamp_ns t = k.launch ? k.launch : k.start;
  for (std::size_t s = 0; s < p.steps.size(); ++s)
    if (p.steps[s].begin <= t) at = static_cast<long long>(s);
  if (at >= 0 && k.launch && p.steps[static_cast<std::size_t>(at)].end <= t) return -1;
  return at;
}

/// The length of the union of the kernels `take` keeps: between every two boundaries, a
/// stretch some kept kernel covers counts.
template <class Take>
std::uint64_t union_ns(const std::vector<rank_kernel>& kernels, Take take) {
  std::set<timestamp_ns> cuts;
  for (const auto& k : kernels) cuts.insert(k.start), cuts.insert(k.end);
  const std::vector<timestamp_ns> at(cuts.begin(), cuts.end());
  std::uint64_t n = 0;
  for (std::size_t i = 0; i + 1 < at.size(); ++i)
    for (const auto& k : kernels)
      if (take(k) && k.start <= at[i] && at[i + 1] <= k.end && k.end > k.start) {
        n += at[i + 1] - at[i];
        break;
      }
  return n;
}

/// Per step of `p` (docs/merge.md, "Per step per rank"): its kernels those of step_of; busy,
/// communication and compute the unions of all of them, of the communication ones and of the
/// others; its start on the reference clock (`offset_ns` taken off, rounded to the nanosecond).
inline std::vector<rank_step> rank_steps(const rank_profile& p, double offset_ns) {
  std::vector<rank_step> out;
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    std::vector<rank_kernel> mine;
    for (const auto& k : p.kernels)
      if (step_of(p, k) == static_cast<long long>(s)) mine.push_back(k);
    rank_step f;
    f.start_ns = static_cast<timestamp_ns>(std::llround(static_cast<double>(p.steps[s].begin) - offset_ns));
    f.duration_ns = p.steps[s].end > p.steps[s].begin ? p.steps[s].end - p.steps[s].begin : 0;
    f.gpu_busy_ns = union_ns(mine, [](const rank_kernel&) { return true; });
    f.communication_ns = union_ns(mine, [](const rank_kernel& k) { return k.communication; });
    f.compute_ns = union_ns(mine, [](const rank_kernel& k) { return !k.communication; });
    out.push_back(f);
  }
  return out;
}

/// The sample standard deviation (pandas' `std`, one degree of freedom).
inline double sample_std(const std::vector<double>& v) {
  double mean = 0, sum = 0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  for (double x : v) sum += (x - mean) * (x - mean);
  return std::sqrt(sum / static_cast<double>(v.size() - 1));
}

/// HTA's straggler rule, `find_stragglers_with_late_start_comm_kernels` with its two helpers
/// `_compute_normalized_start_time_of_significant_comm_kernels` and
/// `_get_top_k_stragglers_with_metric` (hta/analyzers/straggler.py), per rank the number of
/// steps in which it is among the `n_stragglers` latest starters; a rank is HTA's straggler
/// when its count is above 0. HTA reads every rank's times as one clock; here rank r's times
/// are taken on the aligned clock (`offset_ns[r]` taken off). Its steps (HTA's iterations) are
/// the step ranges, numbered from 0 on each rank, a kernel in the step of its launch (step_of);
/// communication kernels are nvscope's (HTA's prefix "ncclKernel" misses NCCL's newer
/// "ncclDevKernel_" names).
/// 1. t_min: the earliest start of a kernel in a step; mean step time: (the latest end - t_min)
///    / the number of steps; kept: communication kernels on a stream > 0, in a step > 0, at
///    least `min_normalized_duration` x the mean step time long;
/// 2. of each (rank, stream, step, name) the last kept kernel; its metric (start - t_min) /
///    mean step time, its duration / mean step time;
/// 3. the (stream, name) whose durations vary most across ranks: the sample standard
///    deviation over ranks per (stream, step, name), averaged over steps, the largest;
/// 4. per step, the `n_stragglers`-th largest metric of that (stream, name) is the threshold,
///    every rank at or above it counts that step (HTA's one-step case is the same threshold).
inline std::vector<std::uint64_t> hta_late_steps(const std::vector<rank_profile>& ranks, const std::vector<double>& offset_ns,
                                                 std::size_t n_stragglers = 2, double min_normalized_duration = 0.01) {
  struct row { std::size_t rank; std::uint32_t stream; long long step; std::uint32_t name; double ts, dur; };
  std::vector<row> rows;
  std::set<long long> steps;
  for (std::size_t r = 0; r < ranks.size(); ++r)
    for (const auto& k : ranks[r].kernels)
      if (const long long s = step_of(ranks[r], k); s >= 0) {
        rows.push_back({r, k.stream, s, k.name, static_cast<double>(k.start) - offset_ns[r], static_cast<double>(k.end - k.start)});
        if (!k.communication) rows.back().name = std::numeric_limits<std::uint32_t>::max(); // not a candidate
        steps.insert(s);
      }
  std::vector<std::uint64_t> count(ranks.size(), 0);
  if (rows.empty()) return count;
  double t_min = rows[0].ts, t_max = rows[0].ts + rows[0].dur;
  for (const auto& x : rows) t_min = std::min(t_min, x.ts), t_max = std::max(t_max, x.ts + x.dur);
  const double mean_step = (t_max - t_min) / static_cast<double>(steps.size());
  using key = std::tuple<std::size_t, std::uint32_t, long long, std::uint32_t>; // rank, stream, step, name
  std::map<key, row> last;
  for (const auto& x : rows)
    if (x.name != std::numeric_limits<std::uint32_t>::max() && x.stream > 0 && x.step > 0 && x.dur >= mean_step * min_normalized_duration) {
      const key k{x.rank, x.stream, x.step, x.name};
      if (!last.count(k) || last[k].ts <= x.ts) last[k] = x;
    }
  std::map<std::tuple<std::uint32_t, long long, std::uint32_t>, std::vector<double>> durations; // stream, step, name
  for (const auto& [k, x] : last) durations[{x.stream, x.step, x.name}].push_back(x.dur / mean_step);
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<double>> spread; // stream, name
  for (const auto& [k, d] : durations)
    if (d.size() > 1) spread[{std::get<0>(k), std::get<2>(k)}].push_back(sample_std(d));
  if (spread.empty()) return count;
  std::pair<std::uint32_t, std::uint32_t> pick = spread.begin()->first;
  double best = -1;
  for (const auto& [k, v] : spread) {
    double m = 0;
    for (double x : v) m += x / static_cast<double>(v.size());
    if (m > best) best = m, pick = k;
  }
  std::map<long long, std::vector<std::pair<double, std::size_t>>> by_step; // metric, rank
  for (const auto& [k, x] : last)
    if (x.stream == pick.first && x.name == pick.second) by_step[x.step].push_back({(x.ts - t_min) / mean_step, x.rank});
  for (const auto& [step, group] : by_step) {
    std::vector<double> m;
    for (const auto& e : group) m.push_back(e.first);
    std::sort(m.rbegin(), m.rend());
    const double threshold = m[std::min(n_stragglers, m.size()) - 1];
    for (const auto& e : group) count[e.second] += e.first >= threshold;
  }
  return count;
}

/// The names whose GPU time differs most between two ranks: per name (the kernel's, or its
/// owning range's) the sum of kernel durations and the count on each rank, as a GROUP BY name
/// over each rank's kernels; sorted by |slowest - fastest| descending, then name; the first `top`.
inline std::vector<name_difference> largest_differences(const rank_profile& fastest, const rank_profile& slowest, std::size_t top,
                                                        bool by_range) {
  std::map<std::uint32_t, name_difference> by_name;
  const auto add = [&](const rank_profile& p, bool slow) {
    for (const auto& k : p.kernels) {
      const auto id = by_range ? k.range : k.name;
      if (id == no_range) continue;
      auto& d = by_name[id];
      d.name = id;
      (slow ? d.slowest_ns : d.fastest_ns) += k.end > k.start ? k.end - k.start : 0;
      ++(slow ? d.slowest_count : d.fastest_count);
    }
  };
  add(fastest, false);
  add(slowest, true);
  std::vector<name_difference> out;
  for (auto [id, d] : by_name) {
    d.difference_ns = static_cast<std::int64_t>(d.slowest_ns) - static_cast<std::int64_t>(d.fastest_ns);
    out.push_back(d);
  }
  std::sort(out.begin(), out.end(), [](const name_difference& a, const name_difference& b) {
    const auto x = std::llabs(a.difference_ns), y = std::llabs(b.difference_ns);
    return x != y ? x > y : a.name < b.name;
  });
  if (out.size() > top) out.resize(top);
  return out;
}

/// Every rank without the steps `left_out` (indexes into each rank's steps in time order): a
/// kernel is dropped when its step (step_of) is one of them, and the steps themselves.
inline std::vector<rank_profile> without_steps(std::vector<rank_profile> ranks, const std::vector<std::size_t>& left_out) {
  const std::set<std::size_t> out(left_out.begin(), left_out.end());
  for (auto& p : ranks) {
    std::vector<rank_kernel> kept;
    for (const auto& k : p.kernels) {
      const long long s = reference::step_of(p, k);
      if (s < 0 || !out.count(static_cast<std::size_t>(s))) kept.push_back(k);
    }
    std::vector<time_window> steps;
    for (std::size_t i = 0; i < p.steps.size(); ++i)
      if (!out.count(i)) steps.push_back(p.steps[i]);
    p.kernels = kept;
    p.steps = steps;
  }
  return ranks;
}

/// A row's name from its key: a kernel name, or a range group's domain, name and style.
inline void key_row(merged_total& row, const std::string& name) { row.name = name; }
inline void key_row(merged_total& row, const range_key& key) { row.name = key.name, row.domain = key.domain, row.push_pop = key.push_pop; }

/// One rank's raw durations per key (a kernel name, or a range group's range_key).
template <class Key>
struct rank_values {
  long long rank = -1;
  std::map<Key, std::vector<std::uint64_t>> values;
};

/// The exact form of `merge_rank_totals`' rows: per key, the values of every rank concatenated
/// and sorted; count, sum, min, max, p50, p90 and p99 by nearest rank; the rank whose own
/// nearest-rank p50 is the largest (ties to the lower rank). Rows by sum descending, then key.
template <class Key>
std::vector<merged_total> merged_exact(const std::vector<rank_values<Key>>& ranks) {
  std::map<Key, std::vector<std::uint64_t>> all;
  std::map<Key, merged_total> rows;
  for (const auto& r : ranks)
    for (const auto& [key, v] : r.values) {
      if (v.empty()) continue;
      all[key].insert(all[key].end(), v.begin(), v.end());
      auto& row = rows[key];
      ++row.ranks;
      const double p50 = reference::nearest_rank(v, 0.5);
      if (row.slowest_rank < 0 || p50 > row.slowest_p50_ns || (p50 == row.slowest_p50_ns && r.rank < row.slowest_rank))
        row.slowest_rank = r.rank, row.slowest_p50_ns = p50;
    }
  std::vector<std::pair<Key, merged_total>> out;
  for (auto& [key, v] : all) {
    std::sort(v.begin(), v.end());
    auto row = rows[key];
    reference::key_row(row, key);
    row.count = v.size(), row.min_ns = v.front(), row.max_ns = v.back();
    for (const auto x : v) row.sum_ns += x;
    row.p50_ns = reference::nearest_rank(v, 0.5), row.p90_ns = reference::nearest_rank(v, 0.9), row.p99_ns = reference::nearest_rank(v, 0.99);
    out.emplace_back(key, row);
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second.sum_ns > b.second.sum_ns; });
  std::vector<merged_total> result;
  for (const auto& [key, row] : out) result.push_back(row);
  return result;
}

} // namespace reference
} // namespace v1
} // namespace nvscope
