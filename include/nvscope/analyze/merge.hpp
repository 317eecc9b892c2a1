// nvscope-target: nvscope
#pragma once

/// \file analyze/merge.hpp
/// Many ranks' profiles on one clock (issue 49), the analysis `nvscope merge` is made of:
/// each host's clock offset measured from the ends of the collectives every rank runs, and
/// each rank's communication/compute overlap by nsys's `nccl_gpu_overlap_trace` definition.
/// Plain C++ over plain per-rank records; `analyze/reference/merge.hpp` states the same
/// definitions in their plainest form and `tests/analyze/merge_test.cpp` holds them equal.
///
/// **Matching** (per communicator). Within a rank a communicator is the stream its collectives
/// run on (ProcessGroupNCCL, like NCCL users generally, gives each communicator a stream of its
/// own per device; NCCL's communicator id sits in its extended NVTX payload, which CUPTI's NVTX
/// domain does not deliver). A rank's groups are matched with the reference rank's (the first
/// profile) by their sequences of kernel names in order of their ends: two groups are one
/// communicator when one sequence is a prefix of the other's or they are equal, each group
/// (in order of its first collective) taking the first such reference group not yet taken. A
/// group matching none is left out of that rank's offset (`match_collectives` says which
/// streams). The k-th collective of two matched groups is the same collective, to the shorter
/// group's length. Limit: two communicators sharing one stream are one group.
///
/// **Offsets.** An all-reduce (any NCCL collective) ends on every rank at nearly the same
/// instant: the last rank to arrive releases all. For every rank and every paired collective
/// the difference of its end from the reference rank's is one sample; a host's offset is the
/// median of its ranks' samples, its uncertainty 1.4826 x the median absolute deviation /
/// sqrt(samples). Ranks of one host share a clock: `same_host_spread_ns` is how far their own
/// medians lie from the host's, the check. A host
/// with no matched collective falls back to the wall-clock reference (each profile's trace and
/// wall clocks read together at start), `from_wall_clock` says so.
///
/// **Overlap**: communication kernels are those whose name holds "nccl" (any case); overlap = time of the union of compute kernels inside the
/// union of communication kernels / time of that union of communication kernels.
///
/// **Stragglers.** For the k-th collective of each communicator (paired as above) every rank's
/// start is put on the reference clock (its host's offset taken off) and compared with the
/// median rank's: a rank
/// whose median lateness is above `late_ns` and that starts last in at least half of the
/// collectives is a straggler by nvscope's rule (`straggler_by_offsets`). The clock-free rule
/// (`straggler_by_wait`) needs no offset: every rank leaves a collective together, so the rank
/// that came last waits least inside it; a rank whose communication kernels are shorter than the
/// median rank's by more than `late_ns` (median over collectives) is named by it. HTA's rule
/// (`straggler_by_hta`, hta_late_steps below) counts the steps in which a rank starts its last
/// long collective among the two latest ranks, on the aligned clock.
///
/// **Lossy steps** (`leave_out_steps`): a step lost on one rank is taken out of every rank, with
/// the kernels that start in it, before any of the above. **Totals** (`merge_rank_totals`): the
/// ranks' running totals merged as the sketch defines it, per kernel name and range group.
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
#include <functional>
#include <map>
#include <tuple>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// `nvscope merge`'s rule for a communication kernel: "nccl" in its name, any case (nsys's
/// recipes take a base name starting "nccl": recipe_rows.hpp's is_nccl_short_name).
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

// A rank's communication kernels in order of their ends (ties by start, then name).
inline std::vector<rank_kernel> collectives_by_end(const rank_profile& p) {
  std::vector<rank_kernel> v;
  for (const auto& k : p.kernels)
    if (k.communication) v.push_back(k);
  std::sort(v.begin(), v.end(), [](const rank_kernel& a, const rank_kernel& b) { return std::tie(a.end, a.start, a.name) < std::tie(b.end, b.start, b.name); });
  return v;
}

// One rank's communicators: its collectives grouped by stream (ProcessGroupNCCL runs each
// communicator on a stream of its own per device), each group in order of the ends, groups in
// order of their first collective (its end, start, name; then the stream). n log n.
using communicator_groups = std::vector<std::vector<rank_kernel>>;
inline communicator_groups communicators_of(const rank_profile& p) {
  auto v = collectives_by_end(p);
  std::stable_sort(v.begin(), v.end(), [](const rank_kernel& a, const rank_kernel& b) { return a.stream < b.stream; });
  communicator_groups g;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i == 0 || v[i].stream != v[i - 1].stream) g.emplace_back();
    g.back().push_back(v[i]);
  }
  std::sort(g.begin(), g.end(), [](const std::vector<rank_kernel>& a, const std::vector<rank_kernel>& b) {
    return std::tie(a[0].end, a[0].start, a[0].name, a[0].stream) < std::tie(b[0].end, b[0].start, b[0].name, b[0].stream);
  });
  return g;
}

// Whether one group's name sequence is a prefix of the other's (or they are equal).
inline bool same_communicator(const std::vector<rank_kernel>& a, const std::vector<rank_kernel>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  return std::equal(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(n), b.begin(),
                    [](const rank_kernel& x, const rank_kernel& y) { return x.name == y.name; });
}

inline constexpr std::size_t unmatched = static_cast<std::size_t>(-1);

// For each of `mine`'s groups, the reference group it is (`unmatched`: none): taken in order of
// their first collective, each takes the first unmatched reference group (in the same order)
// that is the same communicator. Groups x reference groups x the shorter's length at most.
inline std::vector<std::size_t> match_communicators(const communicator_groups& mine, const communicator_groups& ref) {
  std::vector<std::size_t> to(mine.size(), unmatched);
  std::vector<char> taken(ref.size(), 0);
  for (std::size_t g = 0; g < mine.size(); ++g)
    for (std::size_t h = 0; h < ref.size() && to[g] == unmatched; ++h)
      if (!taken[h] && same_communicator(mine[g], ref[h])) to[g] = h, taken[h] = 1;
  return to;
}

// `mine`'s collectives on the reference's communicators: per reference group, the first
// min(both lengths) collectives of the group matched to it (none where no group matched): the
// k-th of each is the same collective as the reference group's k-th.
inline communicator_groups aligned_to(const communicator_groups& mine, const communicator_groups& ref) {
  communicator_groups out(ref.size());
  const auto to = match_communicators(mine, ref);
  for (std::size_t g = 0; g < mine.size(); ++g)
    if (to[g] != unmatched) {
      auto& a = out[to[g]];
      a.assign(mine[g].begin(), mine[g].begin() + static_cast<std::ptrdiff_t>(std::min(mine[g].size(), ref[to[g]].size())));
    }
  return out;
}

// Every paired end's difference from the reference's.
inline std::vector<double> end_differences(const communicator_groups& aligned, const communicator_groups& ref) {
  std::vector<double> d;
  for (std::size_t h = 0; h < ref.size(); ++h)
    for (std::size_t k = 0; k < aligned[h].size(); ++k) d.push_back(static_cast<double>(aligned[h][k].end) - static_cast<double>(ref[h][k].end));
  return d;
}

// A host's offset from its ranks' samples (`per_rank`, each rank's list), or the wall clock.
// `reference`: the reference rank's host, whose clock is the reference: offset 0, its ranks'
// samples measuring only their spread and the uncertainty.
inline host_offset estimate_host(std::string host, std::vector<std::vector<double>>& per_rank, double wall_offset, bool reference) {
  host_offset h;
  h.host = std::move(host);
  std::vector<double> all;
  for (const auto& r : per_rank) all.insert(all.end(), r.begin(), r.end());
  h.samples = all.size();
  if (all.empty()) {
    h.offset_ns = reference ? 0.0 : wall_offset;
    h.from_wall_clock = true;
    return h;
  }
  h.offset_ns = reference ? 0.0 : median_of(all);
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
  const auto ref = detail::communicators_of(ranks[0]);
  const auto wall_of = [](const rank_profile& p) {
    return static_cast<double>(p.at_start.trace_ns) - static_cast<double>(p.at_start.wall_ns);
  };
  std::vector<std::string> hosts;
  std::map<std::string, std::vector<std::vector<double>>> samples;
  std::map<std::string, double> wall;
  for (const auto& p : ranks) {
    if (!samples.count(p.host)) hosts.push_back(p.host), wall[p.host] = wall_of(p) - wall_of(ranks[0]);
    samples[p.host].push_back(detail::end_differences(detail::aligned_to(detail::communicators_of(p), ref), ref));
  }
  for (const auto& h : hosts) out.push_back(detail::estimate_host(h, samples[h], wall[h], h == ranks[0].host));
  return out;
}

/// Per rank, how its collectives compare with the reference rank's (the first profile): how
/// many it ran, how many the reference ran, how many are paired (the k-th of each communicator
/// matched on the reference rank, to the shorter one's length), its communicators (streams) and
/// those that match none of the reference rank's (left out of its offset).
/// \code
///   for (const auto& c : nvscope::match_collectives(ranks)) if (!c.counts_agree) say(c.rank, c.matched);
/// \endcode
inline std::vector<collective_match> match_collectives(const std::vector<rank_profile>& ranks) {
  std::vector<collective_match> out;
  if (ranks.empty()) return out;
  const auto ref = detail::communicators_of(ranks[0]);
  std::uint64_t ref_count = 0;
  for (const auto& h : ref) ref_count += h.size();
  for (const auto& p : ranks) {
    const auto mine = detail::communicators_of(p);
    const auto to = detail::match_communicators(mine, ref);
    collective_match c{p.rank, 0, ref_count, 0, true, mine.size(), {}};
    std::size_t paired_groups = 0;
    for (std::size_t g = 0; g < mine.size(); ++g) {
      c.collectives += mine[g].size();
      if (to[g] == detail::unmatched) {
        c.unmatched_streams.push_back(mine[g][0].stream);
        continue;
      }
      ++paired_groups;
      c.matched += std::min(mine[g].size(), ref[to[g]].size());
      c.counts_agree = c.counts_agree && mine[g].size() == ref[to[g]].size();
    }
    c.counts_agree = c.counts_agree && paired_groups == mine.size() && paired_groups == ref.size();
    out.push_back(std::move(c));
  }
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

/// The index of the step of `p` that `at` falls in ([a step's start, the next one's start), the
/// last open-ended); `p.steps.size()` before the first step.
/// \code
///   std::size_t k = nvscope::step_at(rank, lossy.begin);
/// \endcode
inline std::size_t step_at(const rank_profile& p, timestamp_ns at) {
  const auto after = std::upper_bound(p.steps.begin(), p.steps.end(), at, [](timestamp_ns v, const time_window& s) { return v < s.begin; });
  return after == p.steps.begin() ? p.steps.size() : static_cast<std::size_t>(after - p.steps.begin()) - 1;
}

/// The step a kernel belongs to, by HTA's rule (reference::step_of): the step whose range holds
/// its launch; with no launch recorded, the step its start falls in (step_at). `p.steps.size()`
/// when it belongs to none.
/// \code
///   std::size_t s = nvscope::step_of_kernel(rank, rank.kernels[0]);
/// \endcode
inline std::size_t step_of_kernel(const rank_profile& p, const rank_kernel& k) {
  const timestamp_ns t = k.launch ? k.launch : k.start;
  const std::size_t s = step_at(p, t);
  return s < p.steps.size() && k.launch && p.steps[s].end <= t ? p.steps.size() : s;
}

/// Each step of `p` with the GPU time of the kernels that belong to it (step_of_kernel): busy,
/// communication and compute as unions of those kernels, so a step's figures follow its work
/// however late the GPU runs it; `offset_ns` (the host's measured offset) is taken off its start.
/// \code
///   for (const auto& s : nvscope::rank_steps(rank, host.offset_ns)) total += s.gpu_busy_ns;
/// \endcode
inline std::vector<rank_step> rank_steps(const rank_profile& p, double offset_ns) {
  std::vector<std::vector<rank_kernel>> of(p.steps.size());
  for (const auto& k : p.kernels)
    if (const std::size_t s = step_of_kernel(p, k); s < p.steps.size()) of[s].push_back(k);
  std::vector<rank_step> out(p.steps.size());
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    auto& f = out[s];
    f.start_ns = static_cast<timestamp_ns>(std::llround(static_cast<double>(p.steps[s].begin) - offset_ns));
    f.duration_ns = p.steps[s].end > p.steps[s].begin ? p.steps[s].end - p.steps[s].begin : 0;
    f.gpu_busy_ns = detail::span_total(detail::merged_spans(of[s], [](const rank_kernel&) { return true; }));
    f.communication_ns = detail::span_total(detail::merged_spans(of[s], [](const rank_kernel& x) { return x.communication; }));
    f.compute_ns = detail::span_total(detail::merged_spans(of[s], [](const rank_kernel& x) { return !x.communication; }));
  }
  return out;
}

namespace detail {

// A kernel inside a step, on the aligned clock, for HTA's rule.
struct step_kernel {
  std::size_t rank = 0;
  std::uint32_t stream = 0;
  long long step = 0;
  std::uint32_t name = 0;
  double ts = 0, dur = 0;
  bool communication = false;
};

// Every kernel that belongs to a step (step_of_kernel), with its step; `step_count`: the steps
// holding a kernel.
inline std::vector<step_kernel> kernels_in_steps(const std::vector<rank_profile>& ranks, const std::vector<double>& offset,
                                                 std::size_t& step_count) {
  std::vector<step_kernel> rows;
  std::vector<char> seen;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const auto& p = ranks[r];
    for (const auto& k : p.kernels) {
      const std::size_t at = step_of_kernel(p, k);
      if (at == p.steps.size()) continue;
      if (seen.size() <= at) seen.resize(at + 1, 0);
      seen[at] = 1;
      rows.push_back({r, k.stream, static_cast<long long>(at), k.name, static_cast<double>(k.start) - offset[r],
                      static_cast<double>(k.end - k.start), k.communication});
    }
  }
  step_count = static_cast<std::size_t>(std::count(seen.begin(), seen.end(), 1));
  return rows;
}

// HTA's candidates: of each (stream, name, step, rank) the last communication kernel on a
// stream > 0, in a step > 0, at least `min_dur` long; sorted by that key.
inline std::vector<step_kernel> last_long_collectives(std::vector<step_kernel> rows, double min_dur) {
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [&](const step_kernel& x) { return !(x.communication && x.stream > 0 && x.step > 0 && x.dur >= min_dur); }),
             rows.end());
  const auto key = [](const step_kernel& x) { return std::make_tuple(x.stream, x.name, x.step, x.rank); };
  std::stable_sort(rows.begin(), rows.end(), [&](const step_kernel& a, const step_kernel& b) {
    return key(a) != key(b) ? key(a) < key(b) : a.ts < b.ts;
  });
  std::vector<step_kernel> last;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (i + 1 == rows.size() || key(rows[i]) != key(rows[i + 1])) last.push_back(rows[i]);
  return last;
}

inline double sample_deviation(const std::vector<double>& v) {
  double mean = 0, sum = 0;
  for (double x : v) mean += x / static_cast<double>(v.size());
  for (double x : v) sum += (x - mean) * (x - mean);
  return std::sqrt(sum / static_cast<double>(v.size() - 1));
}

// The (stream, name) whose normalized durations vary most across ranks, averaged over steps;
// `last` sorted by (stream, name, step, rank). False when no step has two ranks.
inline bool most_varying_collective(const std::vector<step_kernel>& last, double mean_step, std::pair<std::uint32_t, std::uint32_t>& pick) {
  double best = -1;
  for (std::size_t i = 0; i < last.size();) {
    double sum = 0;
    std::size_t steps = 0, j = i;
    for (; j < last.size() && last[j].stream == last[i].stream && last[j].name == last[i].name;) {
      std::vector<double> d;
      const long long step = last[j].step;
      for (; j < last.size() && last[j].stream == last[i].stream && last[j].name == last[i].name && last[j].step == step; ++j)
        d.push_back(last[j].dur / mean_step);
      if (d.size() > 1) sum += sample_deviation(d), ++steps;
    }
    if (steps && sum / static_cast<double>(steps) > best) best = sum / static_cast<double>(steps), pick = {last[i].stream, last[i].name};
    i = j;
  }
  return best >= 0;
}

} // namespace detail

/// HTA's straggler rule (`find_stragglers_with_late_start_comm_kernels`, transcribed in
/// reference::hta_late_steps): per rank, the steps in which its last long collective of the
/// most varying (stream, name) starts among the `n_stragglers` latest; `offset_ns[r]` is taken
/// off rank r's times (HTA assumes one clock). Sorts: n log n in the kernels.
/// \code
///   auto late = nvscope::hta_late_steps(ranks, offsets);  // late[r] > 0: HTA names rank r
/// \endcode
inline std::vector<std::uint64_t> hta_late_steps(const std::vector<rank_profile>& ranks, const std::vector<double>& offset_ns,
                                                 std::size_t n_stragglers = 2, double min_normalized_duration = 0.01) {
  std::vector<std::uint64_t> count(ranks.size(), 0);
  std::size_t steps = 0;
  const auto rows = detail::kernels_in_steps(ranks, offset_ns, steps);
  if (rows.empty()) return count;
  double t_min = rows[0].ts, t_max = rows[0].ts + rows[0].dur;
  for (const auto& x : rows) t_min = std::min(t_min, x.ts), t_max = std::max(t_max, x.ts + x.dur);
  const double mean_step = (t_max - t_min) / static_cast<double>(steps);
  const auto last = detail::last_long_collectives(rows, mean_step * min_normalized_duration);
  std::pair<std::uint32_t, std::uint32_t> pick;
  if (!detail::most_varying_collective(last, mean_step, pick)) return count;
  for (std::size_t i = 0; i < last.size();) {
    std::size_t j = i;
    std::vector<double> metric;
    for (; j < last.size() && last[j].stream == last[i].stream && last[j].name == last[i].name && last[j].step == last[i].step; ++j)
      metric.push_back((last[j].ts - t_min) / mean_step);
    if (last[i].stream == pick.first && last[i].name == pick.second) {
      auto sorted = metric;
      const std::size_t n = std::min(std::max<std::size_t>(n_stragglers, 1), sorted.size()) - 1;
      std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(n), sorted.end(), std::greater<double>());
      const double bar = sorted[n];
      for (std::size_t m = 0; m < metric.size(); ++m) count[last[i + m].rank] += metric[m] >= bar;
    }
    i = j;
  }
  return count;
}

/// Each rank's lateness at the collectives and whether either rule names it a straggler
/// (see the file comment); `hosts` from measure_host_offsets(ranks).
/// \code
///   for (const auto& l : nvscope::collective_lateness(ranks, hosts)) if (l.straggler_by_offsets) name(l.rank);
/// \endcode
inline std::vector<rank_lateness> collective_lateness(const std::vector<rank_profile>& ranks,
                                                      const std::vector<host_offset>& hosts, double late_ns = 20000.0) {
  std::vector<rank_lateness> out(ranks.size());
  std::vector<detail::communicator_groups> coll(ranks.size());
  std::vector<double> offset(ranks.size(), 0.0);
  const auto ref = ranks.empty() ? detail::communicator_groups{} : detail::communicators_of(ranks[0]);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    coll[r] = detail::aligned_to(detail::communicators_of(ranks[r]), ref);
    for (const auto& h : hosts)
      if (h.host == ranks[r].host) offset[r] = h.offset_ns;
  }
  std::vector<std::vector<double>> late(ranks.size()), shorter(ranks.size());
  for (std::size_t g = 0; g < ref.size(); ++g) {
    for (std::size_t k = 0; k < ref[g].size(); ++k) {
      std::vector<double> starts, lengths;
      std::vector<std::size_t> who;
      for (std::size_t r = 0; r < ranks.size(); ++r)
        if (k < coll[r][g].size()) {
          const auto& x = coll[r][g][k];
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
  const auto hta = hta_late_steps(ranks, offset);
  for (std::size_t r = 0; r < ranks.size(); ++r) out[r].hta_late_steps = hta[r], out[r].straggler_by_hta = hta[r] > 0;
  return out;
}

/// The fastest and the slowest rank (indexes into `ranks`): by the median of their step
/// durations, ranks without steps by the time from their first kernel's start to their last
/// kernel's end; ties to the lower index. {0, 0} with fewer than two ranks.
/// \code
///   const auto [fast, slow] = nvscope::fastest_and_slowest(ranks);
/// \endcode
inline std::pair<std::size_t, std::size_t> fastest_and_slowest(const std::vector<rank_profile>& ranks) {
  std::vector<double> length(ranks.size(), 0.0);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const auto& p = ranks[r];
    std::vector<double> d;
    for (const auto& s : p.steps) d.push_back(s.end > s.begin ? static_cast<double>(s.end - s.begin) : 0.0);
    if (!d.empty()) {
      length[r] = detail::median_of(d);
    } else if (!p.kernels.empty()) {
      timestamp_ns lo = p.kernels[0].start, hi = p.kernels[0].end;
      for (const auto& k : p.kernels) lo = std::min(lo, k.start), hi = std::max(hi, k.end);
      length[r] = static_cast<double>(hi - lo);
    }
  }
  std::pair<std::size_t, std::size_t> out{0, 0};
  for (std::size_t r = 1; r < ranks.size(); ++r) {
    if (length[r] < length[out.first]) out.first = r;
    if (length[r] > length[out.second]) out.second = r;
  }
  return out;
}

namespace detail {

// Per name id: GPU time and count of the kernels `key` gives that id (no_range: skipped).
template <class Key>
void add_times(const std::vector<rank_kernel>& kernels, Key key, std::vector<std::uint64_t>& ns, std::vector<std::uint64_t>& count) {
  for (const auto& k : kernels) {
    const std::uint32_t id = key(k);
    if (id == no_range) continue;
    if (ns.size() <= id) ns.resize(std::size_t{id} + 1, 0), count.resize(std::size_t{id} + 1, 0);
    ns[id] += k.end > k.start ? k.end - k.start : 0;
    ++count[id];
  }
}

} // namespace detail

/// The `top` names whose GPU time differs most between two ranks (largest |slowest - fastest|
/// first, then by name id), by kernel name (`by_range` false) or by the range that owns each
/// kernel. Linear in the kernels and the name ids, plus a partial sort.
/// \code
///   auto d = nvscope::largest_differences(ranks[fast], ranks[slow], 10, false);
/// \endcode
inline std::vector<name_difference> largest_differences(const rank_profile& fastest, const rank_profile& slowest, std::size_t top,
                                                        bool by_range) {
  std::vector<std::uint64_t> fast_ns, fast_n, slow_ns, slow_n;
  const auto key = [by_range](const rank_kernel& k) { return by_range ? k.range : k.name; };
  detail::add_times(fastest.kernels, key, fast_ns, fast_n);
  detail::add_times(slowest.kernels, key, slow_ns, slow_n);
  const std::size_t names = std::max(fast_ns.size(), slow_ns.size());
  fast_ns.resize(names, 0), fast_n.resize(names, 0), slow_ns.resize(names, 0), slow_n.resize(names, 0);
  std::vector<name_difference> out;
  for (std::size_t i = 0; i < names; ++i)
    if (fast_n[i] || slow_n[i])
      out.push_back({static_cast<std::uint32_t>(i), fast_ns[i], slow_ns[i], fast_n[i], slow_n[i],
                     static_cast<std::int64_t>(slow_ns[i]) - static_cast<std::int64_t>(fast_ns[i])});
  const auto larger = [](const name_difference& a, const name_difference& b) {
    const auto x = a.difference_ns < 0 ? -a.difference_ns : a.difference_ns, y = b.difference_ns < 0 ? -b.difference_ns : b.difference_ns;
    return x != y ? x > y : a.name < b.name;
  };
  const std::size_t keep = std::min(top, out.size());
  std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end(), larger);
  out.resize(keep);
  return out;
}

/// Leaves the steps `left_out` (indexes into every rank's steps, in time order) out of every
/// rank: the steps and the kernels that belong to them (step_of_kernel), so that
/// the k-th collective and the k-th step of every rank still match. A lossy step on one rank
/// is left out on all: the other ranks' figures of it have nothing to be compared with.
/// \code
///   nvscope::leave_out_steps(ranks, {4, 13});
/// \endcode
inline void leave_out_steps(std::vector<rank_profile>& ranks, const std::vector<std::size_t>& left_out) {
  if (left_out.empty()) return;
  for (auto& p : ranks) {
    std::vector<char> out(p.steps.size() + 1, 0);
    for (const auto k : left_out)
      if (k < p.steps.size()) out[k] = 1;
    p.kernels.erase(std::remove_if(p.kernels.begin(), p.kernels.end(), [&](const rank_kernel& k) { return out[step_of_kernel(p, k)] != 0; }),
                    p.kernels.end());
    std::vector<time_window> kept;
    for (std::size_t i = 0; i < p.steps.size(); ++i)
      if (!out[i]) kept.push_back(p.steps[i]);
    p.steps = std::move(kept);
  }
}

namespace detail {

inline void name_row(merged_total& row, const std::string& name) { row.name = name; }
inline void name_row(merged_total& row, const range_key& key) {
  row.name = key.name, row.domain = key.domain, row.push_pop = key.push_pop;
}

// Per key of `get(rank.run)` (the kernels' or the ranges' map): every rank's sketch merged,
// and the rank with the largest median of its own. Rows by sum descending, then name.
template <class Key, class Get>
std::vector<merged_total> merged_rows(const std::vector<rank_totals>& ranks, Get get) {
  std::map<Key, std::pair<duration_sketch, merged_total>> by_key;
  for (const auto& r : ranks)
    for (const auto& [key, s] : get(r.run)) {
      if (s.count() == 0) continue;
      auto& [all, row] = by_key[key];
      all.merge(s);
      ++row.ranks;
      const double p50 = s.quantile(0.5);
      if (row.slowest_rank < 0 || p50 > row.slowest_p50_ns || (p50 == row.slowest_p50_ns && r.rank < row.slowest_rank))
        row.slowest_rank = r.rank, row.slowest_p50_ns = p50;
    }
  std::vector<merged_total> rows;
  for (auto& [key, v] : by_key) {
    auto& [all, row] = v;
    name_row(row, key);
    row.count = all.count(), row.sum_ns = all.sum(), row.min_ns = all.min(), row.max_ns = all.max();
    row.p50_ns = all.quantile(0.5), row.p90_ns = all.quantile(0.9), row.p99_ns = all.quantile(0.99);
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const merged_total& a, const merged_total& b) { return a.sum_ns > b.sum_ns; });
  return rows;
}

} // namespace detail

/// The running totals of every rank merged as the sketch defines it (bucket counts added, count,
/// sum and extremes exact): per kernel name and per range group over all ranks, count, sum, min,
/// max, p50, p90 and p99 of the merged sketch and the rank whose own p50 is the largest; `all`
/// is trace/totals.hpp's `merge` of every rank's. Merging the ranks in any order or grouping
/// gives the totals of their union, bucket for bucket. Linear in the ranks' sketches' buckets.
/// \code
///   auto m = nvscope::merge_rank_totals(ranks);    // ranks: {rank, totals} from each summary
///   m.kernels[0].p99_ns;                           // within 1 % of the p99 over every rank
/// \endcode
inline merged_totals merge_rank_totals(const std::vector<rank_totals>& ranks) {
  merged_totals m;
  m.kernels = detail::merged_rows<std::string>(ranks, [](const totals& t) -> const auto& { return t.kernels; });
  m.ranges = detail::merged_rows<range_key>(ranks, [](const totals& t) -> const auto& { return t.ranges; });
  for (const auto& r : ranks) merge(m.all, r.run);
  m.ranks = ranks.size();
  return m;
}

} // namespace v1
} // namespace nvscope
