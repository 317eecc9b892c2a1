// nvscope-target: nvscope
#pragma once

/// \file analyze/merge.hpp
/// Many ranks' profiles on one clock (issue 49), the analysis `nvscope merge` is made of:
/// each host's clock offset measured from the ends of the collectives every rank runs, and
/// each rank's communication/compute overlap by nsys's `nccl_gpu_overlap_trace` definition.
/// Plain C++ over plain per-rank records; `analyze/reference/merge.hpp` states the same
/// definitions in their plainest form and `tests/analyze/merge_test.cpp` holds them equal.
///
/// **Offsets.** An all-reduce (any NCCL collective) ends on every rank at nearly the same
/// instant: the last rank to arrive releases all. The k-th communication kernel of one name on
/// each rank is taken as the same collective (one communicator per kernel name: two
/// communicators running kernels of one name in different orders are not told apart). For
/// every rank and every k the difference of its end from the reference rank's (the first
/// profile) is one sample; a host's offset is the median of its ranks' samples, its uncertainty
/// 1.4826 x the median absolute deviation / sqrt(samples). Ranks of one host share a clock:
/// `same_host_spread_ns` is how far their own medians lie from the host's, the check. A host
/// with no matched collective falls back to the wall-clock reference (each profile's trace and
/// wall clocks read together at start), `from_wall_clock` says so.
///
/// **Overlap** (nsys's recipe `nccl_gpu_overlap_trace`): communication kernels are those whose
/// name holds "nccl" (any case); overlap = time of the union of compute kernels inside the
/// union of communication kernels / time of that union of communication kernels.
///
/// **Stragglers.** For the k-th collective (matched as above) every rank's start is put on the
/// reference clock (its host's offset taken off) and compared with the median rank's: a rank
/// whose median lateness is above `late_ns` and that starts last in at least half of the
/// collectives is a straggler by nvscope's rule (`straggler_by_offsets`). The clock-free rule
/// (`straggler_by_wait`) needs no offset: every rank leaves a collective together, so the rank
/// that came last waits least inside it; a rank whose communication kernels are shorter than the
/// median rank's by more than `late_ns` (median over collectives) is named by it.
///
/// \code
///   std::vector<nvscope::rank_profile> ranks = ...;      // one per rank, lowest rank first
///   auto hosts = nvscope::measure_host_offsets(ranks);    // hosts[i].offset_ns, .uncertainty_ns
///   auto o = nvscope::communication_overlap(ranks[0].kernels);  // o.fraction
/// \endcode

#include <nvscope/analyze/merge_types.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// nsys's rule for a communication kernel: "nccl" in its name, any case.
inline bool is_communication_kernel(std::string_view name) noexcept {
  for (std::size_t i = 0; i + 4 <= name.size(); ++i) {
    const auto lower = [&](std::size_t k) { return static_cast<char>(name[i + k] | 0x20); };
    if (lower(0) == 'n' && lower(1) == 'c' && lower(2) == 'c' && lower(3) == 'l') return true;
  }
  return false;
}

namespace detail {

using span_list = std::vector<std::pair<timestamp_ns, timestamp_ns>>;

// Sorted and merged [start, end) stretches of the kernels `take` keeps.
template <class Take>
span_list merged_spans(const std::vector<rank_kernel>& kernels, Take take) {
  span_list v;
  for (const auto& k : kernels)
    if (take(k) && k.end > k.start) v.emplace_back(k.start, k.end);
  std::sort(v.begin(), v.end());
  span_list out;
  for (const auto& s : v) {
    if (!out.empty() && s.first <= out.back().second) out.back().second = std::max(out.back().second, s.second);
    else out.push_back(s);
  }
  return out;
}

inline std::uint64_t span_total(const span_list& v) {
  std::uint64_t n = 0;
  for (const auto& s : v) n += s.second - s.first;
  return n;
}

// Time covered by both merged lists: one walk.
inline std::uint64_t span_intersection(const span_list& a, const span_list& b) {
  std::uint64_t n = 0;
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    const auto lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) n += hi - lo;
    (a[i].second < b[j].second ? i : j) += 1;
  }
  return n;
}

inline double median_of(std::vector<double>& v) {
  if (v.empty()) return 0.0;
  const std::size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h), v.end());
  const double hi = v[h];
  if (v.size() % 2) return hi;
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(h)) + hi) / 2.0;
}

// Ends of each communication kernel name, in time order.
inline std::map<std::uint32_t, std::vector<timestamp_ns>> collective_ends(const rank_profile& p) {
  std::map<std::uint32_t, std::vector<timestamp_ns>> ends;
  for (const auto& k : p.kernels)
    if (k.communication) ends[k.name].push_back(k.end);
  for (auto& e : ends) std::sort(e.second.begin(), e.second.end());
  return ends;
}

// Every matched end's difference from the reference's: the k-th of each name.
inline std::vector<double> end_differences(const std::map<std::uint32_t, std::vector<timestamp_ns>>& mine,
                                           const std::map<std::uint32_t, std::vector<timestamp_ns>>& ref) {
  std::vector<double> d;
  for (const auto& [name, ends] : mine) {
    const auto r = ref.find(name);
    if (r == ref.end()) continue;
    const std::size_t n = std::min(ends.size(), r->second.size());
    for (std::size_t k = 0; k < n; ++k) d.push_back(static_cast<double>(ends[k]) - static_cast<double>(r->second[k]));
  }
  return d;
}

// A host's offset from its ranks' samples (`per_rank`, each rank's list), or the wall clock.
inline host_offset estimate_host(std::string host, std::vector<std::vector<double>>& per_rank, double wall_offset) {
  host_offset h;
  h.host = std::move(host);
  std::vector<double> all;
  for (const auto& r : per_rank) all.insert(all.end(), r.begin(), r.end());
  h.samples = all.size();
  if (all.empty()) {
    h.offset_ns = wall_offset;
    h.from_wall_clock = true;
    return h;
  }
  h.offset_ns = median_of(all);
  for (auto& v : all) v = std::fabs(v - h.offset_ns);
  h.uncertainty_ns = 1.4826 * median_of(all) / std::sqrt(static_cast<double>(h.samples));
  for (auto& r : per_rank)
    if (!r.empty()) h.same_host_spread_ns = std::max(h.same_host_spread_ns, std::fabs(median_of(r) - h.offset_ns));
  return h;
}

} // namespace detail

/// Each host's clock offset from the first profile's host, hosts in order of first appearance.
/// \code
///   for (const auto& h : nvscope::measure_host_offsets(ranks)) std::printf("%s %+.0f ns\n", h.host.c_str(), h.offset_ns);
/// \endcode
inline std::vector<host_offset> measure_host_offsets(const std::vector<rank_profile>& ranks) {
  std::vector<host_offset> out;
  if (ranks.empty()) return out;
  const auto ref = detail::collective_ends(ranks[0]);
  const auto wall_of = [](const rank_profile& p) {
    return static_cast<double>(p.at_start.trace_ns) - static_cast<double>(p.at_start.wall_ns);
  };
  std::vector<std::string> hosts;
  std::map<std::string, std::vector<std::vector<double>>> samples;
  std::map<std::string, double> wall;
  for (const auto& p : ranks) {
    if (!samples.count(p.host)) hosts.push_back(p.host), wall[p.host] = wall_of(p) - wall_of(ranks[0]);
    samples[p.host].push_back(detail::end_differences(detail::collective_ends(p), ref));
  }
  for (const auto& h : hosts) out.push_back(detail::estimate_host(h, samples[h], wall[h]));
  return out;
}

/// Communication time and the compute time inside it, by nsys's `nccl_gpu_overlap_trace`.
/// \code
///   auto o = nvscope::communication_overlap(rank.kernels);  // o.fraction: 0.4 = 40 % hidden
/// \endcode
inline overlap_figures communication_overlap(const std::vector<rank_kernel>& kernels) {
  const auto comm = detail::merged_spans(kernels, [](const rank_kernel& k) { return k.communication; });
  const auto comp = detail::merged_spans(kernels, [](const rank_kernel& k) { return !k.communication; });
  overlap_figures o;
  o.communication_ns = detail::span_total(comm);
  o.overlap_ns = detail::span_intersection(comm, comp);
  o.fraction = o.communication_ns ? static_cast<double>(o.overlap_ns) / static_cast<double>(o.communication_ns) : 0.0;
  return o;
}

namespace detail {

using collectives_by_name = std::map<std::uint32_t, std::vector<rank_kernel>>;

// Each rank's communication kernels by name, each name's in order of their ends (the k-th is
// the k-th collective).
inline collectives_by_name matched_collectives(const rank_profile& p) {
  collectives_by_name by_name;
  for (const auto& k : p.kernels)
    if (k.communication) by_name[k.name].push_back(k);
  for (auto& [name, v] : by_name)
    std::sort(v.begin(), v.end(), [](const rank_kernel& a, const rank_kernel& b) { return a.end < b.end; });
  return by_name;
}

} // namespace detail

/// Each rank's lateness at the collectives and whether either rule names it a straggler
/// (see the file comment); `hosts` from measure_host_offsets(ranks).
/// \code
///   for (const auto& l : nvscope::collective_lateness(ranks, hosts)) if (l.straggler_by_offsets) name(l.rank);
/// \endcode
inline std::vector<rank_lateness> collective_lateness(const std::vector<rank_profile>& ranks,
                                                      const std::vector<host_offset>& hosts, double late_ns = 20000.0) {
  std::vector<rank_lateness> out(ranks.size());
  std::vector<detail::collectives_by_name> coll(ranks.size());
  std::vector<double> offset(ranks.size(), 0.0);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    coll[r] = detail::matched_collectives(ranks[r]);
    for (const auto& h : hosts)
      if (h.host == ranks[r].host) offset[r] = h.offset_ns;
  }
  std::vector<std::vector<double>> late(ranks.size()), shorter(ranks.size());
  for (const auto& [name, first] : coll.empty() ? detail::collectives_by_name{} : coll[0]) {
    for (std::size_t k = 0; k < first.size(); ++k) {
      std::vector<double> starts, lengths;
      std::vector<std::size_t> who;
      for (std::size_t r = 0; r < ranks.size(); ++r)
        if (const auto it = coll[r].find(name); it != coll[r].end() && k < it->second.size()) {
          const auto& x = it->second[k];
          starts.push_back(static_cast<double>(x.start) - offset[r]);
          lengths.push_back(static_cast<double>(x.end - x.start));
          who.push_back(r);
        }
      if (who.size() < 2) continue;
      auto s = starts, l = lengths;
      const double ms = detail::median_of(s), ml = detail::median_of(l);
      const auto last = static_cast<std::size_t>(std::max_element(starts.begin(), starts.end()) - starts.begin());
      ++out[who[last]].latest_count;
      for (std::size_t i = 0; i < who.size(); ++i) {
        late[who[i]].push_back(starts[i] - ms);
        shorter[who[i]].push_back(ml - lengths[i]);
      }
    }
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    auto& o = out[r];
    o.rank = ranks[r].rank;
    o.collectives = late[r].size();
    o.arrival_late_ns = detail::median_of(late[r]);
    o.wait_short_ns = detail::median_of(shorter[r]);
    o.straggler_by_offsets = o.collectives > 0 && o.arrival_late_ns > late_ns && 2 * o.latest_count >= o.collectives;
    o.straggler_by_wait = o.collectives > 0 && o.wait_short_ns > late_ns;
  }
  return out;
}

} // namespace v1
} // namespace nvscope
