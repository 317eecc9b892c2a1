// nvscope-target: nvscope
#pragma once

/// \file analyze/analyze.hpp
/// Summaries and metrics over a `trace`: the tables `nsys stats` prints (same columns, same
/// definitions), GPU time per NVTX range, GPU busy, copy/compute overlap, sync wait, launch
/// gaps, kernels per step and a one-line verdict. Plain C++: no CUDA, no CUPTI.
///
/// \code
///   nvscope::trace t = session.stop();          // or built by hand
///   nvscope::analysis_report r = nvscope::analyze(t);
///   for (const auto& k : r.kernels) std::printf("%s %llu\n", k.name.c_str(), (unsigned long long)k.time.total);
///   std::puts(r.verdict.c_str());               // "launch-bound: 52 kernels a step, ..."
/// \endcode

#include <nvscope/analyze/stats.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// One row of `cuda_gpu_kern_sum`: kernels grouped by name.
struct kernel_summary_row {
  double time_percent = 0.0; ///< of the total kernel time in the table
  duration_stats time;       ///< count is "Instances"
  std::string name;
};

/// One row of `cuda_gpu_mem_time_sum`: copies by direction, memsets.
struct memop_time_row {
  double time_percent = 0.0;
  duration_stats time; ///< count is "Count"
  std::string operation; ///< "[CUDA memcpy Host-to-Device]", "[CUDA memset]", ...
};

/// One row of `cuda_gpu_mem_size_sum`, in bytes (the tables print MB = 10^6 bytes).
struct memop_size_row {
  duration_stats bytes;
  std::string operation;
};

/// One row of `nvtx_sum`: host time of NVTX ranges, grouped by name and style.
struct range_summary_row {
  double time_percent = 0.0;
  duration_stats time;
  std::string style; ///< "PushPop" or "StartEnd"
  std::string range; ///< ":name" for push/pop ranges, "domain:name" in a named domain
};

/// One row of `nvtx_kern_sum`: kernels launched inside each range (every range of the stack).
struct range_kernel_row {
  std::string range; ///< "domain:name", ":name" in the default domain
  std::string style;
  std::uint64_t pid = 0;
  std::uint64_t tid = 0;
  std::uint64_t range_instances = 0; ///< "NVTX Inst"
  duration_stats time;               ///< count is "Kern Inst"
  std::string kernel;
};

/// One row of `nvtx_gpu_proj_sum`: ranges projected onto the GPU (first op start to last op
/// end of the GPU work launched inside), for ranges that launched any GPU work.
struct gpu_projection_row {
  std::string range;
  std::string style;
  duration_stats projected;           ///< count is "Range Instances"
  std::uint64_t total_range_time = 0; ///< host time of those instances
  std::uint64_t total_gpu_ops = 0;    ///< launches (a graph launch is one op, as in nsys)
  double avg_gpu_ops = 0.0;
  double avg_range_level = 0.0;
  double avg_children = 0.0; ///< children that launched GPU work
};

/// GPU activity over a window. Definitions (see docs/analysis.md):
/// busy = union of kernel, copy and memset intervals within the window / window;
/// overlap = time a copy and a kernel run at once / union of copy time;
/// sync = union of synchronisation intervals within the window / window;
/// gaps = idle time between consecutive stretches of GPU activity.
struct activity_metrics {
  timestamp_ns window_begin = 0;
  timestamp_ns window_end = 0;
  std::uint64_t window_ns = 0;
  std::uint64_t busy_ns = 0;
  std::uint64_t kernel_ns = 0; ///< union of kernel intervals
  std::uint64_t copy_ns = 0;   ///< union of copy intervals
  std::uint64_t overlap_ns = 0;
  std::uint64_t sync_ns = 0;
  double gpu_busy_percent = 0.0;
  double copy_compute_overlap_percent = 0.0;
  double sync_percent = 0.0;
  std::uint64_t gap_count = 0;
  double gap_median_ns = 0.0;
  double gap_p90_ns = 0.0;
  std::uint64_t kernels = 0;
  std::uint64_t copies = 0;
  std::uint64_t memsets = 0;
  double kernel_median_ns = 0.0;
};

/// Metrics of one range name over its instances (windows = projected windows).
struct range_metrics {
  std::string range;
  std::uint64_t instances = 0;
  std::uint64_t kernels = 0;
  double kernels_per_instance = 0.0;
  activity_metrics activity;
};

/// Where each GPU record came from: its launch and the innermost push/pop range open on the
/// launching thread at that moment. Range parents and depths are recomputed from times.
struct attribution {
  static constexpr std::uint32_t none = 0xffffffffu;
  std::vector<std::uint32_t> kernel_launch, copy_launch, memset_launch; ///< into trace::launches
  std::vector<std::uint32_t> kernel_owner, copy_owner, memset_owner;    ///< into trace::ranges
  std::vector<std::uint32_t> parent;     ///< per range: enclosing push/pop range on its thread
  std::vector<std::uint16_t> depth;      ///< per range: 0 for outermost
  std::vector<timestamp_ns> range_end;   ///< per range: its end, or the trace end when unclosed
  timestamp_ns trace_end = 0;
};

/// What the analysis looks at.
struct analysis_options {
  /// Name of the range that marks one step. Empty: any range named `step`, `step_N`,
  /// `step N` or `stepN` (N digits, any case).
  std::string step_range;
};

/// Everything `analyze` computes.
struct analysis_report {
  std::vector<kernel_summary_row> kernels;      ///< cuda_gpu_kern_sum
  std::vector<memop_time_row> memops_by_time;   ///< cuda_gpu_mem_time_sum
  std::vector<memop_size_row> memops_by_size;   ///< cuda_gpu_mem_size_sum
  std::vector<range_summary_row> ranges;        ///< nvtx_sum
  std::vector<range_kernel_row> range_kernels;  ///< nvtx_kern_sum
  std::vector<gpu_projection_row> projections;  ///< nvtx_gpu_proj_sum
  activity_metrics overall;
  std::vector<range_metrics> per_range; ///< outermost ranges and step ranges, by name
  std::uint64_t steps = 0;
  double kernels_per_step = 0.0;
  std::string verdict;
  loss_counts lost;                   ///< as the producer reported them
  std::uint64_t incomplete_found = 0; ///< records skipped here: no end, or end before start
  std::uint64_t unclosed_found = 0;   ///< ranges never closed (closed at the trace end here)
  std::uint64_t unattributed = 0;     ///< GPU records with no matching launch record
  /// One line per kind of loss; empty when nothing was lost. Every export prints these.
  std::vector<std::string> warnings;
};

namespace detail {

inline bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

inline bool is_default_step_name(std::string_view s) noexcept {
  if (s.size() < 4) return false;
  auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; };
  if (lower(s[0]) != 's' || lower(s[1]) != 't' || lower(s[2]) != 'e' || lower(s[3]) != 'p') return false;
  std::size_t i = 4;
  if (i == s.size()) return true;
  if (s[i] == '_' || s[i] == ' ' || s[i] == '-') ++i;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (!is_digit(s[i])) return false;
  return true;
}

inline const char* copy_operation_name(copy_kind k) noexcept {
  switch (k) {
    case copy_kind::host_to_device: return "[CUDA memcpy Host-to-Device]";
    case copy_kind::device_to_host: return "[CUDA memcpy Device-to-Host]";
    case copy_kind::host_to_array: return "[CUDA memcpy Host-to-Array]";
    case copy_kind::array_to_host: return "[CUDA memcpy Array-to-Host]";
    case copy_kind::array_to_array: return "[CUDA memcpy Array-to-Array]";
    case copy_kind::array_to_device: return "[CUDA memcpy Array-to-Device]";
    case copy_kind::device_to_array: return "[CUDA memcpy Device-to-Array]";
    case copy_kind::device_to_device: return "[CUDA memcpy Device-to-Device]";
    case copy_kind::host_to_host: return "[CUDA memcpy Host-to-Host]";
    case copy_kind::peer_to_peer: return "[CUDA memcpy Peer-to-Peer]";
    case copy_kind::unknown: break;
  }
  return "[CUDA memcpy Unknown]";
}

inline const char* style_name(const range_record& r) noexcept { return r.is_push_pop ? "PushPop" : "StartEnd"; }

// nsys's labels: nvtx_kern_sum and nvtx_gpu_proj_sum write "domain:name" (":name" in the
// default domain) for both styles; nvtx_sum does so for push/pop ranges and writes a
// start/end range of the default domain as its bare name.
inline std::string range_label(const trace& t, const range_record& r, bool bare_default_startend) {
  std::string s;
  const auto domain = r.domain ? t.strings[r.domain] : std::string_view{};
  if (bare_default_startend && !r.is_push_pop && domain.empty()) return std::string(t.strings[r.name]);
  s.reserve(domain.size() + 1 + t.strings[r.name].size());
  s.append(domain.data(), domain.size());
  s.push_back(':');
  s.append(t.strings[r.name].data(), t.strings[r.name].size());
  return s;
}

inline bool valid_interval(timestamp_ns start, timestamp_ns end) noexcept { return end != 0 && end >= start; }

// Correlation id -> launch index, dense table when ids are compact, sorted pairs otherwise.
class launch_lookup {
 public:
  explicit launch_lookup(const std::vector<launch_record>& launches) {
    std::uint32_t max_id = 0;
    for (const auto& l : launches) max_id = l.correlation > max_id ? l.correlation : max_id;
    if (static_cast<std::uint64_t>(max_id) <= 4ull * launches.size() + 65536ull) {
      dense_.assign(static_cast<std::size_t>(max_id) + 1, attribution::none);
      for (std::uint32_t i = 0; i < launches.size(); ++i) {
        auto& slot = dense_[launches[i].correlation];
        if (slot == attribution::none) slot = i;
      }
    } else {
      sorted_.reserve(launches.size());
      for (std::uint32_t i = 0; i < launches.size(); ++i) sorted_.emplace_back(launches[i].correlation, i);
      std::stable_sort(sorted_.begin(), sorted_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    }
  }
  std::uint32_t find(std::uint32_t correlation) const noexcept {
    if (!dense_.empty() || sorted_.empty()) {
      return correlation < dense_.size() ? dense_[correlation] : attribution::none;
    }
    auto it = std::lower_bound(sorted_.begin(), sorted_.end(), correlation,
                               [](const auto& p, std::uint32_t c) { return p.first < c; });
    return (it != sorted_.end() && it->first == correlation) ? it->second : attribution::none;
  }

 private:
  std::vector<std::uint32_t> dense_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> sorted_;
};

// Per thread: push/pop ranges sorted by (start, end desc), and start/end ranges by start.
struct thread_ranges {
  std::vector<std::uint32_t> push_pop;
  std::vector<timestamp_ns> push_pop_start;
  std::vector<std::uint32_t> start_end;
  std::vector<timestamp_ns> start_end_start;
  std::vector<timestamp_ns> start_end_max_end; // running max of ends, for the backward scan
};

struct range_index {
  std::vector<thread_ranges> threads;
  const attribution* links = nullptr;

  // Innermost push/pop range on `thread` open at `t`, or none.
  std::uint32_t owner(std::uint32_t thread, timestamp_ns t) const noexcept {
    if (thread >= threads.size()) return attribution::none;
    const auto& tr = threads[thread];
    auto it = std::upper_bound(tr.push_pop_start.begin(), tr.push_pop_start.end(), t);
    if (it == tr.push_pop_start.begin()) return attribution::none;
    std::uint32_t r = tr.push_pop[static_cast<std::size_t>(it - tr.push_pop_start.begin()) - 1];
    while (r != attribution::none && links->range_end[r] < t) r = links->parent[r];
    return r;
  }

  // Calls f(range index) for every start/end range on `thread` open at `t`.
  template <class F>
  void for_start_end(std::uint32_t thread, timestamp_ns t, F&& f) const {
    if (thread >= threads.size()) return;
    const auto& tr = threads[thread];
    if (tr.start_end.empty()) return;
    auto n = static_cast<std::size_t>(std::upper_bound(tr.start_end_start.begin(), tr.start_end_start.end(), t) -
                                      tr.start_end_start.begin());
    while (n > 0 && tr.start_end_max_end[n - 1] >= t) {
      const auto r = tr.start_end[n - 1];
      if (links->range_end[r] >= t) f(r);
      --n;
    }
  }

  // Calls f(range index) for every range containing (thread, t): the push/pop stack from
  // the innermost outwards, then start/end ranges.
  template <class F>
  void for_enclosing(std::uint32_t thread, timestamp_ns t, F&& f) const {
    for (auto r = owner(thread, t); r != attribution::none; r = links->parent[r]) f(r);
    for_start_end(thread, t, f);
  }
};

inline timestamp_ns trace_end_of(const trace& t) noexcept {
  if (t.finish > t.begin && t.finish != 0) return t.finish;
  timestamp_ns m = 0;
  auto upd = [&m](timestamp_ns v) { m = v > m ? v : m; };
  for (const auto& r : t.ranges) { upd(r.start); upd(r.end); }
  for (const auto& k : t.kernels) upd(k.end);
  for (const auto& c : t.copies) upd(c.end);
  for (const auto& s : t.memsets) upd(s.end);
  for (const auto& s : t.syncs) upd(s.end);
  for (const auto& l : t.launches) upd(l.time);
  return m;
}

// Parents and depths from times, per thread; push/pop ranges only (start/end ranges may
// cross and have no parent). Fills links.parent/depth/range_end and builds the index.
inline range_index build_range_index(const trace& t, attribution& links) {
  const auto n = t.ranges.size();
  links.trace_end = trace_end_of(t);
  links.parent.assign(n, attribution::none);
  links.depth.assign(n, 0);
  links.range_end.resize(n);
  std::size_t thread_count = t.threads.size();
  for (std::size_t i = 0; i < n; ++i) {
    const auto& r = t.ranges[i];
    links.range_end[i] = (r.end == 0 || r.end < r.start) ? (r.end == 0 ? links.trace_end : r.start) : r.end;
    if (r.end == 0 && links.range_end[i] < r.start) links.range_end[i] = r.start;
    if (r.thread >= thread_count) thread_count = static_cast<std::size_t>(r.thread) + 1;
  }
  range_index idx;
  idx.links = &links;
  idx.threads.resize(thread_count);
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto& r = t.ranges[i];
    if (r.is_mark) continue;
    (r.is_push_pop ? idx.threads[r.thread].push_pop : idx.threads[r.thread].start_end).push_back(i);
  }
  std::vector<std::uint32_t> stack;
  for (auto& tr : idx.threads) {
    std::sort(tr.push_pop.begin(), tr.push_pop.end(), [&](std::uint32_t a, std::uint32_t b) {
      const auto& ra = t.ranges[a];
      const auto& rb = t.ranges[b];
      if (ra.start != rb.start) return ra.start < rb.start;
      if (links.range_end[a] != links.range_end[b]) return links.range_end[a] > links.range_end[b];
      return a < b;
    });
    stack.clear();
    tr.push_pop_start.reserve(tr.push_pop.size());
    for (auto i : tr.push_pop) {
      const auto s = t.ranges[i].start;
      const auto e = links.range_end[i];
      while (!stack.empty() && links.range_end[stack.back()] < e) stack.pop_back();
      if (!stack.empty()) {
        links.parent[i] = stack.back();
        links.depth[i] = static_cast<std::uint16_t>(std::min<std::size_t>(stack.size(), 0xffff));
      }
      stack.push_back(i);
      tr.push_pop_start.push_back(s);
    }
    std::sort(tr.start_end.begin(), tr.start_end.end(), [&](std::uint32_t a, std::uint32_t b) {
      return t.ranges[a].start != t.ranges[b].start ? t.ranges[a].start < t.ranges[b].start : a < b;
    });
    timestamp_ns running = 0;
    for (auto i : tr.start_end) {
      tr.start_end_start.push_back(t.ranges[i].start);
      running = std::max(running, links.range_end[i]);
      tr.start_end_max_end.push_back(running);
    }
  }
  return idx;
}

struct pair_hash {
  std::size_t operator()(std::uint64_t v) const noexcept {
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdull;
    v ^= v >> 33;
    return static_cast<std::size_t>(v);
  }
};

inline std::string format_us(double ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f us", ns / 1000.0);
  return buf;
}

inline std::string format_percent(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", p);
  return buf;
}

inline activity_metrics activity_of(std::vector<interval>& kernels, std::vector<interval>& copies,
                                    std::vector<interval>& memsets, std::vector<interval>& syncs,
                                    timestamp_ns lo, timestamp_ns hi, std::vector<std::uint64_t>& scratch) {
  activity_metrics m;
  m.kernels = kernels.size();
  m.copies = copies.size();
  m.memsets = memsets.size();
  scratch.clear();
  for (const auto& k : kernels) scratch.push_back(k.second - k.first);
  if (!scratch.empty()) m.kernel_median_ns = stats_of(scratch).median;
  merge_intervals(kernels);
  merge_intervals(copies);
  merge_intervals(memsets);
  merge_intervals(syncs);
  // The union of all GPU work from the three sorted unions: linear merges, no sort.
  std::vector<interval> kc(kernels.size() + copies.size()), all;
  std::merge(kernels.begin(), kernels.end(), copies.begin(), copies.end(), kc.begin());
  all.resize(kc.size() + memsets.size());
  std::merge(kc.begin(), kc.end(), memsets.begin(), memsets.end(), all.begin());
  merge_intervals(all);
  m.window_begin = lo;
  m.window_end = hi > lo ? hi : lo;
  m.window_ns = m.window_end - m.window_begin;
  m.busy_ns = covered(all, lo, hi);
  m.kernel_ns = covered(kernels, lo, hi);
  m.copy_ns = covered(copies, lo, hi);
  m.overlap_ns = intersection(kernels, copies);
  m.sync_ns = covered(syncs, lo, hi);
  if (m.window_ns > 0) {
    m.gpu_busy_percent = 100.0 * static_cast<double>(m.busy_ns) / static_cast<double>(m.window_ns);
    m.sync_percent = 100.0 * static_cast<double>(m.sync_ns) / static_cast<double>(m.window_ns);
  }
  std::uint64_t copy_total = 0;
  for (const auto& c : copies) copy_total += c.second - c.first;
  if (copy_total > 0) m.copy_compute_overlap_percent = 100.0 * static_cast<double>(m.overlap_ns) / static_cast<double>(copy_total);
  scratch.clear();
  for (std::size_t i = 1; i < all.size(); ++i) scratch.push_back(all[i].first - all[i - 1].second);
  m.gap_count = scratch.size();
  if (!scratch.empty()) {
    m.gap_median_ns = stats_of(scratch).median;
    m.gap_p90_ns = nearest_rank_select(scratch, 0.9);
  }
  return m;
}

} // namespace detail

/// Recomputes `parent` and `depth` of every push/pop range from times, per thread (the
/// collector may leave them unset). Start/end ranges and marks get no parent.
/// \code
///   nvscope::link_ranges(t);
///   assert(t.ranges[inner].parent == outer);
/// \endcode
inline void link_ranges(trace& t) {
  attribution links;
  detail::build_range_index(t, links);
  for (std::size_t i = 0; i < t.ranges.size(); ++i) {
    t.ranges[i].parent = links.parent[i];
    t.ranges[i].depth = links.depth[i];
  }
}

/// Ties every kernel, copy and memset to its launch (by correlation id) and to the innermost
/// push/pop range open on the launching thread at the launch. All kernels of one graph launch
/// share a correlation id and so the same launch and range.
/// \code
///   auto a = nvscope::attribute(t);
///   auto r = a.kernel_owner[0];   // index into t.ranges, or attribution::none
/// \endcode
inline attribution attribute(const trace& t) {
  attribution a;
  const auto idx = detail::build_range_index(t, a);
  const detail::launch_lookup lookup(t.launches);
  auto fill = [&](const auto& records, std::vector<std::uint32_t>& launch, std::vector<std::uint32_t>& owner) {
    launch.resize(records.size());
    owner.resize(records.size());
    for (std::size_t i = 0; i < records.size(); ++i) {
      const auto l = lookup.find(records[i].correlation);
      launch[i] = l;
      owner[i] = l == attribution::none ? attribution::none
                                        : idx.owner(t.launches[l].thread, t.launches[l].time);
    }
  };
  fill(t.kernels, a.kernel_launch, a.kernel_owner);
  fill(t.copies, a.copy_launch, a.copy_owner);
  fill(t.memsets, a.memset_launch, a.memset_owner);
  return a;
}

/// True when `name` names a step: equal to `options.step_range`, or, when that is empty,
/// `step`, `step_N`, `step N`, `stepN` in any case.
inline bool is_step_name(std::string_view name, const analysis_options& options = {}) noexcept {
  return options.step_range.empty() ? detail::is_default_step_name(name) : name == options.step_range;
}

/// Computes every summary and metric of `t`. Records with no end (or an end before their
/// start) are skipped and counted; ranges never closed are closed at the end of the trace
/// (as nsys does) and counted; losses are listed in `warnings`.
/// \code
///   auto r = nvscope::analyze(t, {"train_step"});
///   std::printf("%.0f%% busy, %s\n", r.overall.gpu_busy_percent, r.verdict.c_str());
/// \endcode
inline analysis_report analyze(const trace& t, const analysis_options& options = {}) {
  using detail::interval;
  analysis_report rep;
  rep.lost = t.lost;
  attribution links;
  const auto idx = detail::build_range_index(t, links);
  const detail::launch_lookup lookup(t.launches);
  std::vector<std::uint64_t> scratch;

  // Kernels by name (cuda_gpu_kern_sum), by counting sort on the name id.
  std::vector<std::uint32_t> kernel_launch(t.kernels.size(), attribution::none);
  std::vector<char> kernel_ok(t.kernels.size(), 0);
  {
    const std::size_t names = t.strings.size() + 1;
    std::vector<std::uint32_t> offset(names + 1, 0);
    for (std::size_t i = 0; i < t.kernels.size(); ++i) {
      const auto& k = t.kernels[i];
      if (!detail::valid_interval(k.start, k.end)) { ++rep.incomplete_found; continue; }
      kernel_ok[i] = 1;
      ++offset[std::min<std::size_t>(k.name, names - 1) + 1];
    }
    for (std::size_t i = 1; i <= names; ++i) offset[i] += offset[i - 1];
    std::vector<std::uint64_t> durations(offset[names]);
    auto cursor = offset;
    for (std::size_t i = 0; i < t.kernels.size(); ++i) {
      if (!kernel_ok[i]) continue;
      const auto& k = t.kernels[i];
      durations[cursor[std::min<std::size_t>(k.name, names - 1)]++] = k.end - k.start;
    }
    std::uint64_t grand = 0;
    for (std::size_t n = 0; n < names; ++n) {
      if (offset[n + 1] == offset[n]) continue;
      kernel_summary_row row;
      row.time = detail::stats_of(durations.data() + offset[n], durations.data() + offset[n + 1]);
      row.name = std::string(t.strings[static_cast<string_id>(n)]);
      grand += row.time.total;
      rep.kernels.push_back(std::move(row));
    }
    for (auto& row : rep.kernels)
      row.time_percent = grand ? 100.0 * static_cast<double>(row.time.total) / static_cast<double>(grand) : 0.0;
    std::sort(rep.kernels.begin(), rep.kernels.end(), [](const auto& a, const auto& b) {
      if (a.time.total != b.time.total) return a.time.total > b.time.total;
      if (a.time.count != b.time.count) return a.time.count < b.time.count;
      return a.name < b.name;
    });
  }

  // Memory operations by kind (cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum).
  {
    constexpr std::size_t kinds = 12; // 11 copy kinds + memset
    std::vector<std::uint64_t> times[kinds], sizes[kinds];
    for (const auto& c : t.copies) {
      if (!detail::valid_interval(c.start, c.end)) { ++rep.incomplete_found; continue; }
      const auto k = std::min<std::size_t>(static_cast<std::size_t>(c.kind), kinds - 2);
      times[k].push_back(c.end - c.start);
      sizes[k].push_back(c.bytes);
    }
    for (const auto& s : t.memsets) {
      if (!detail::valid_interval(s.start, s.end)) { ++rep.incomplete_found; continue; }
      times[kinds - 1].push_back(s.end - s.start);
      sizes[kinds - 1].push_back(s.bytes);
    }
    std::uint64_t grand = 0;
    for (std::size_t k = 0; k < kinds; ++k) {
      if (times[k].empty()) continue;
      const char* op = k == kinds - 1 ? "[CUDA memset]" : detail::copy_operation_name(static_cast<copy_kind>(k));
      memop_time_row tr;
      tr.time = detail::stats_of(times[k]);
      tr.operation = op;
      grand += tr.time.total;
      rep.memops_by_time.push_back(std::move(tr));
      memop_size_row sr;
      sr.bytes = detail::stats_of(sizes[k]);
      sr.operation = op;
      rep.memops_by_size.push_back(std::move(sr));
    }
    for (auto& row : rep.memops_by_time)
      row.time_percent = grand ? 100.0 * static_cast<double>(row.time.total) / static_cast<double>(grand) : 0.0;
    std::sort(rep.memops_by_time.begin(), rep.memops_by_time.end(), [](const auto& a, const auto& b) {
      if (a.time.total != b.time.total) return a.time.total > b.time.total;
      if (a.time.count != b.time.count) return a.time.count < b.time.count;
      return a.operation < b.operation;
    });
    std::sort(rep.memops_by_size.begin(), rep.memops_by_size.end(), [](const auto& a, const auto& b) {
      if (a.bytes.total != b.bytes.total) return a.bytes.total > b.bytes.total;
      if (a.bytes.count != b.bytes.count) return a.bytes.count < b.bytes.count;
      return a.operation < b.operation;
    });
  }

  // Range groups: one per (domain, name, style).
  const auto nr = t.ranges.size();
  std::vector<std::uint32_t> group_of(nr, attribution::none);
  std::vector<const range_record*> group_first;
  {
    std::unordered_map<std::uint64_t, std::uint32_t, detail::pair_hash> groups[2];
    for (std::uint32_t i = 0; i < nr; ++i) {
      const auto& r = t.ranges[i];
      if (r.is_mark) continue;
      if (r.end == 0) ++rep.unclosed_found;
      else if (r.end < r.start) ++rep.incomplete_found;
      const std::uint64_t key = (static_cast<std::uint64_t>(r.domain) << 32) | r.name;
      auto& g = groups[r.is_push_pop ? 1 : 0];
      auto it = g.find(key);
      if (it == g.end()) {
        it = g.emplace(key, static_cast<std::uint32_t>(group_first.size())).first;
        group_first.push_back(&r);
      }
      group_of[i] = it->second;
    }
  }
  const auto ng = group_first.size();

  // nvtx_sum: host durations per group.
  {
    std::vector<std::uint32_t> offset(ng + 1, 0);
    for (std::size_t i = 0; i < nr; ++i)
      if (group_of[i] != attribution::none) ++offset[group_of[i] + 1];
    for (std::size_t g = 1; g <= ng; ++g) offset[g] += offset[g - 1];
    std::vector<std::uint64_t> durations(offset[ng]);
    auto cursor = offset;
    for (std::size_t i = 0; i < nr; ++i)
      if (group_of[i] != attribution::none)
        durations[cursor[group_of[i]]++] = links.range_end[i] - t.ranges[i].start;
    std::uint64_t grand = 0;
    for (std::size_t g = 0; g < ng; ++g) {
      range_summary_row row;
      row.time = detail::stats_of(durations.data() + offset[g], durations.data() + offset[g + 1]);
      row.style = detail::style_name(*group_first[g]);
      row.range = detail::range_label(t, *group_first[g], true);
      grand += row.time.total;
      rep.ranges.push_back(std::move(row));
    }
    for (auto& row : rep.ranges)
      row.time_percent = grand ? 100.0 * static_cast<double>(row.time.total) / static_cast<double>(grand) : 0.0;
    std::sort(rep.ranges.begin(), rep.ranges.end(), [](const auto& a, const auto& b) {
      if (a.time.total != b.time.total) return a.time.total > b.time.total;
      if (a.time.count != b.time.count) return a.time.count < b.time.count;
      if (a.range != b.range) return a.range < b.range;
      return a.style < b.style;
    });
  }

  // Launch-level projection: per launch, first start and last end of its GPU work.
  const auto nl = t.launches.size();
  std::vector<timestamp_ns> launch_first(nl, std::numeric_limits<timestamp_ns>::max()), launch_last(nl, 0);
  auto note_op = [&](std::uint32_t correlation, timestamp_ns s, timestamp_ns e) -> std::uint32_t {
    const auto l = lookup.find(correlation);
    if (l == attribution::none) { ++rep.unattributed; return l; }
    launch_first[l] = std::min(launch_first[l], s);
    launch_last[l] = std::max(launch_last[l], e);
    return l;
  };
  for (std::size_t i = 0; i < t.kernels.size(); ++i)
    if (kernel_ok[i]) kernel_launch[i] = note_op(t.kernels[i].correlation, t.kernels[i].start, t.kernels[i].end);
  for (const auto& c : t.copies)
    if (detail::valid_interval(c.start, c.end)) note_op(c.correlation, c.start, c.end);
  for (const auto& s : t.memsets)
    if (detail::valid_interval(s.start, s.end)) note_op(s.correlation, s.start, s.end);

  std::vector<timestamp_ns> proj_first(nr, std::numeric_limits<timestamp_ns>::max()), proj_last(nr, 0);
  std::vector<std::uint32_t> proj_ops(nr, 0);
  for (std::size_t l = 0; l < nl; ++l) {
    if (launch_last[l] == 0) continue;
    idx.for_enclosing(t.launches[l].thread, t.launches[l].time, [&](std::uint32_t r) {
      proj_first[r] = std::min(proj_first[r], launch_first[l]);
      proj_last[r] = std::max(proj_last[r], launch_last[l]);
      ++proj_ops[r];
    });
  }

  // nvtx_gpu_proj_sum.
  {
    std::vector<std::uint32_t> children(nr, 0);
    for (std::size_t i = 0; i < nr; ++i)
      if (proj_ops[i] && links.parent[i] != attribution::none) ++children[links.parent[i]];
    std::vector<std::uint32_t> offset(ng + 1, 0);
    for (std::size_t i = 0; i < nr; ++i)
      if (group_of[i] != attribution::none && proj_ops[i]) ++offset[group_of[i] + 1];
    for (std::size_t g = 1; g <= ng; ++g) offset[g] += offset[g - 1];
    std::vector<std::uint64_t> durations(offset[ng]);
    std::vector<std::uint64_t> host(ng, 0), ops(ng, 0), level(ng, 0), kids(ng, 0);
    auto cursor = offset;
    for (std::size_t i = 0; i < nr; ++i) {
      const auto g = group_of[i];
      if (g == attribution::none || !proj_ops[i]) continue;
      durations[cursor[g]++] = proj_last[i] - proj_first[i];
      host[g] += links.range_end[i] - t.ranges[i].start;
      ops[g] += proj_ops[i];
      level[g] += links.depth[i];
      kids[g] += children[i];
    }
    for (std::size_t g = 0; g < ng; ++g) {
      if (offset[g + 1] == offset[g]) continue;
      gpu_projection_row row;
      row.range = detail::range_label(t, *group_first[g], false);
      row.style = detail::style_name(*group_first[g]);
      row.projected = detail::stats_of(durations.data() + offset[g], durations.data() + offset[g + 1]);
      const auto n = static_cast<double>(row.projected.count);
      row.total_range_time = host[g];
      row.total_gpu_ops = ops[g];
      row.avg_gpu_ops = static_cast<double>(ops[g]) / n;
      row.avg_range_level = static_cast<double>(level[g]) / n;
      row.avg_children = static_cast<double>(kids[g]) / n;
      rep.projections.push_back(std::move(row));
    }
    std::sort(rep.projections.begin(), rep.projections.end(), [](const auto& a, const auto& b) {
      if (a.projected.total != b.projected.total) return a.projected.total > b.projected.total;
      if (a.range != b.range) return a.range < b.range;
      return a.style < b.style;
    });
  }

  // Innermost push/pop range of each kernel's launch, found once and reused below.
  std::vector<std::uint32_t> kernel_owner(t.kernels.size(), attribution::none);
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const auto l = kernel_launch[i];
    if (l != attribution::none) kernel_owner[i] = idx.owner(t.launches[l].thread, t.launches[l].time);
  }
  auto for_kernel_ranges = [&](std::size_t i, auto&& f) {
    for (auto r = kernel_owner[i]; r != attribution::none; r = links.parent[r]) f(r);
    const auto l = kernel_launch[i];
    if (l != attribution::none) idx.for_start_end(t.launches[l].thread, t.launches[l].time, f);
  };

  // nvtx_kern_sum: every kernel under every range enclosing its launch. Groups are
  // (range group, thread, kernel name); durations placed by counting sort, no per-row heap.
  {
    struct key_info {
      std::uint32_t range_group;
      std::uint32_t thread;
      string_id kernel;
    };
    std::vector<key_info> keys;
    std::unordered_map<std::uint64_t, std::uint32_t, detail::pair_hash> key_index;
    auto group_for = [&](std::uint32_t rg, std::uint32_t thread, string_id kernel) {
      const std::uint64_t h = (static_cast<std::uint64_t>(rg) << 40) ^ (static_cast<std::uint64_t>(thread) << 24) ^ kernel;
      auto it = key_index.find(h);
      if (it != key_index.end()) {
        const auto& k = keys[it->second];
        if (k.range_group == rg && k.thread == thread && k.kernel == kernel) return it->second;
        for (std::uint32_t i = 0; i < keys.size(); ++i) // hash collision: rare, linear fallback
          if (keys[i].range_group == rg && keys[i].thread == thread && keys[i].kernel == kernel) return i;
      }
      const auto id = static_cast<std::uint32_t>(keys.size());
      keys.push_back({rg, thread, kernel});
      if (it == key_index.end()) key_index.emplace(h, id);
      return id;
    };
    std::vector<std::uint32_t> entry_group;
    std::vector<std::uint64_t> entry_duration;
    entry_group.reserve(t.kernels.size() * 3);
    entry_duration.reserve(t.kernels.size() * 3);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> instance_pairs; // (group, range), deduplicated later
    std::vector<std::uint32_t> last_range_of_group;
    // Cache: the group of (range, kernel name) for the previous kernel, per stack level.
    std::vector<std::uint32_t> cache_range, cache_group;
    std::vector<string_id> cache_kernel;
    for (std::size_t i = 0; i < t.kernels.size(); ++i) {
      const auto l = kernel_launch[i];
      if (l == attribution::none) continue;
      const auto& k = t.kernels[i];
      const auto thread = t.launches[l].thread;
      const auto d = k.end - k.start;
      std::size_t level = 0;
      for_kernel_ranges(i, [&](std::uint32_t r) {
        if (level >= cache_range.size()) {
          cache_range.push_back(attribution::none);
          cache_group.push_back(0);
          cache_kernel.push_back(0);
        }
        std::uint32_t g;
        if (cache_range[level] == r && cache_kernel[level] == k.name) g = cache_group[level];
        else {
          g = group_for(group_of[r], thread, k.name);
          cache_range[level] = r;
          cache_kernel[level] = k.name;
          cache_group[level] = g;
        }
        ++level;
        entry_group.push_back(g);
        entry_duration.push_back(d);
        if (g >= last_range_of_group.size()) last_range_of_group.resize(g + 1, attribution::none);
        if (last_range_of_group[g] != r) {
          last_range_of_group[g] = r;
          instance_pairs.emplace_back(g, r);
        }
      });
    }
    const auto nkeys = keys.size();
    std::vector<std::uint32_t> offset(nkeys + 1, 0);
    for (auto g : entry_group) ++offset[g + 1];
    for (std::size_t g = 1; g <= nkeys; ++g) offset[g] += offset[g - 1];
    std::vector<std::uint64_t> durations(entry_group.size());
    {
      auto cursor = offset;
      for (std::size_t e = 0; e < entry_group.size(); ++e) durations[cursor[entry_group[e]]++] = entry_duration[e];
    }
    std::sort(instance_pairs.begin(), instance_pairs.end());
    instance_pairs.erase(std::unique(instance_pairs.begin(), instance_pairs.end()), instance_pairs.end());
    std::vector<std::uint64_t> instances(nkeys, 0);
    for (const auto& p : instance_pairs) ++instances[p.first];
    for (std::size_t g = 0; g < nkeys; ++g) {
      const auto& key = keys[g];
      range_kernel_row row;
      row.range = detail::range_label(t, *group_first[key.range_group], false);
      row.style = detail::style_name(*group_first[key.range_group]);
      row.pid = t.process_id;
      row.tid = key.thread < t.threads.size() ? t.threads[key.thread].os_id : key.thread;
      row.range_instances = instances[g];
      row.time = detail::stats_of(durations.data() + offset[g], durations.data() + offset[g + 1]);
      row.kernel = std::string(t.strings[key.kernel]);
      rep.range_kernels.push_back(std::move(row));
    }
    std::sort(rep.range_kernels.begin(), rep.range_kernels.end(), [](const auto& a, const auto& b) {
      if (a.range != b.range) return a.range < b.range;
      if (a.pid != b.pid) return a.pid < b.pid;
      if (a.tid != b.tid) return a.tid < b.tid;
      if (a.time.total != b.time.total) return a.time.total > b.time.total;
      if (a.style != b.style) return a.style < b.style;
      return a.kernel < b.kernel;
    });
  }

  // Overall activity.
  std::vector<interval> ki, ci, mi, si;
  ki.reserve(t.kernels.size());
  for (std::size_t i = 0; i < t.kernels.size(); ++i)
    if (kernel_ok[i]) ki.emplace_back(t.kernels[i].start, t.kernels[i].end);
  for (const auto& c : t.copies)
    if (detail::valid_interval(c.start, c.end)) ci.emplace_back(c.start, c.end);
  for (const auto& s : t.memsets)
    if (detail::valid_interval(s.start, s.end)) mi.emplace_back(s.start, s.end);
  for (const auto& s : t.syncs) {
    if (detail::valid_interval(s.start, s.end)) si.emplace_back(s.start, s.end);
    else ++rep.incomplete_found;
  }
  {
    timestamp_ns lo = std::numeric_limits<timestamp_ns>::max(), hi = 0;
    if (t.finish > t.begin) {
      lo = t.begin;
      hi = t.finish;
    } else {
      for (const auto* v : {&ki, &ci, &mi, &si})
        for (const auto& i : *v) { lo = std::min(lo, i.first); hi = std::max(hi, i.second); }
      if (hi == 0) lo = 0;
    }
    rep.overall = detail::activity_of(ki, ci, mi, si, lo, hi, scratch);
  }

  // Per-range metrics: outermost ranges and step ranges, over their projected windows.
  {
    std::vector<char> interesting(nr, 0);
    for (std::size_t i = 0; i < nr; ++i) {
      const auto& r = t.ranges[i];
      if (r.is_mark || !proj_ops[i]) continue;
      if (links.depth[i] == 0 || is_step_name(t.strings[r.name], options)) interesting[i] = 1;
    }
    // Per interesting range instance, the ops it launched; op -> at most its outermost and
    // its step ancestor.
    struct op_entry {
      std::uint32_t range;
      std::uint8_t kind; // 0 kernel, 1 copy, 2 memset
      timestamp_ns start, end;
    };
    std::vector<op_entry> ops;
    auto add = [&](std::uint32_t launch, std::uint8_t kind, timestamp_ns s, timestamp_ns e) {
      if (launch == attribution::none) return;
      idx.for_enclosing(t.launches[launch].thread, t.launches[launch].time, [&](std::uint32_t r) {
        if (interesting[r]) ops.push_back({r, kind, s, e});
      });
    };
    for (std::size_t i = 0; i < t.kernels.size(); ++i)
      if (kernel_ok[i])
        for_kernel_ranges(i, [&](std::uint32_t r) {
          if (interesting[r]) ops.push_back({r, 0, t.kernels[i].start, t.kernels[i].end});
        });
    for (const auto& c : t.copies)
      if (detail::valid_interval(c.start, c.end)) add(lookup.find(c.correlation), 1, c.start, c.end);
    for (const auto& s : t.memsets)
      if (detail::valid_interval(s.start, s.end)) add(lookup.find(s.correlation), 2, s.start, s.end);
    {
      // Counting sort by range: stable, linear.
      std::vector<std::uint32_t> offset(nr + 1, 0);
      for (const auto& o : ops) ++offset[o.range + 1];
      for (std::size_t q = 1; q <= nr; ++q) offset[q] += offset[q - 1];
      std::vector<op_entry> sorted(ops.size());
      for (const auto& o : ops) sorted[offset[o.range]++] = o;
      ops.swap(sorted);
    }
    // Group instances by range group; sum window-level figures over instances.
    std::unordered_map<std::uint32_t, std::size_t> row_of;
    std::vector<std::vector<std::uint64_t>> gaps_of, kdur_of;
    std::vector<interval> k, c, m, s;
    for (std::size_t i = 0; i < ops.size();) {
      std::size_t j = i;
      k.clear(); c.clear(); m.clear(); s.clear();
      for (; j < ops.size() && ops[j].range == ops[i].range; ++j)
        (ops[j].kind == 0 ? k : ops[j].kind == 1 ? c : m).emplace_back(ops[j].start, ops[j].end);
      const auto r = ops[i].range;
      const auto lo = proj_first[r], hi = proj_last[r];
      // si is sorted and merged by now (the overall metrics merged it): binary search.
      for (auto y = std::upper_bound(si.begin(), si.end(), lo, [](timestamp_ns v, const interval& x) { return v < x.second; });
           y != si.end() && y->first < hi; ++y)
        s.push_back(*y);
      std::vector<std::uint64_t> kd;
      for (const auto& x : k) kd.push_back(x.second - x.first);
      auto a = detail::activity_of(k, c, m, s, lo, hi, scratch);
      std::vector<std::uint64_t> gaps;
      {
        std::vector<interval> kc(k.size() + c.size()), all(k.size() + c.size() + m.size());
        std::merge(k.begin(), k.end(), c.begin(), c.end(), kc.begin());
        std::merge(kc.begin(), kc.end(), m.begin(), m.end(), all.begin());
        detail::merge_intervals(all);
        for (std::size_t q = 1; q < all.size(); ++q) gaps.push_back(all[q].first - all[q - 1].second);
      }
      const auto g = group_of[r];
      auto it = row_of.find(g);
      if (it == row_of.end()) {
        it = row_of.emplace(g, rep.per_range.size()).first;
        range_metrics rm;
        rm.range = std::string(t.strings[group_first[g]->name]);
        rm.activity.window_begin = lo;
        rep.per_range.push_back(std::move(rm));
        gaps_of.emplace_back();
        kdur_of.emplace_back();
      }
      auto& rm = rep.per_range[it->second];
      auto& ra = rm.activity;
      ++rm.instances;
      rm.kernels += a.kernels;
      ra.kernels += a.kernels;
      ra.copies += a.copies;
      ra.memsets += a.memsets;
      ra.window_begin = std::min(ra.window_begin, lo);
      ra.window_end = std::max(ra.window_end, hi);
      ra.window_ns += a.window_ns;
      ra.busy_ns += a.busy_ns;
      ra.kernel_ns += a.kernel_ns;
      ra.copy_ns += a.copy_ns;
      ra.overlap_ns += a.overlap_ns;
      ra.sync_ns += a.sync_ns;
      gaps_of[it->second].insert(gaps_of[it->second].end(), gaps.begin(), gaps.end());
      kdur_of[it->second].insert(kdur_of[it->second].end(), kd.begin(), kd.end());
      i = j;
    }
    for (std::size_t q = 0; q < rep.per_range.size(); ++q) {
      auto& rm = rep.per_range[q];
      auto& ra = rm.activity;
      rm.kernels_per_instance = rm.instances ? static_cast<double>(rm.kernels) / static_cast<double>(rm.instances) : 0.0;
      if (ra.window_ns) {
        ra.gpu_busy_percent = 100.0 * static_cast<double>(ra.busy_ns) / static_cast<double>(ra.window_ns);
        ra.sync_percent = 100.0 * static_cast<double>(ra.sync_ns) / static_cast<double>(ra.window_ns);
      }
      if (ra.copy_ns) ra.copy_compute_overlap_percent = 100.0 * static_cast<double>(ra.overlap_ns) / static_cast<double>(ra.copy_ns);
      auto& gaps = gaps_of[q];
      ra.gap_count = gaps.size();
      if (!gaps.empty()) {
        ra.gap_median_ns = detail::stats_of(gaps).median;
        ra.gap_p90_ns = detail::nearest_rank_select(gaps, 0.9);
      }
      if (!kdur_of[q].empty()) ra.kernel_median_ns = detail::stats_of(kdur_of[q]).median;
    }
    std::sort(rep.per_range.begin(), rep.per_range.end(), [](const auto& a, const auto& b) {
      return a.activity.kernel_ns != b.activity.kernel_ns ? a.activity.kernel_ns > b.activity.kernel_ns : a.range < b.range;
    });
  }

  // Steps: kernels launched inside step ranges (any depth), per step instance.
  {
    std::vector<char> is_step(nr, 0);
    for (std::size_t i = 0; i < nr; ++i) {
      const auto& r = t.ranges[i];
      if (!r.is_mark && is_step_name(t.strings[r.name], options)) { is_step[i] = 1; ++rep.steps; }
    }
    if (rep.steps) {
      std::uint64_t in_steps = 0;
      for (std::size_t i = 0; i < t.kernels.size(); ++i) {
        bool inside = false;
        for_kernel_ranges(i, [&](std::uint32_t r) { inside = inside || is_step[r]; });
        in_steps += inside;
      }
      rep.kernels_per_step = static_cast<double>(in_steps) / static_cast<double>(rep.steps);
    }
  }

  // Verdict (rules in docs/analysis.md, first match wins).
  {
    const auto& o = rep.overall;
    const double idle = 100.0 - o.gpu_busy_percent;
    const std::uint64_t ops = o.kernels + o.copies + o.memsets;
    char buf[256];
    if (ops == 0) {
      rep.verdict = "no GPU activity recorded";
    } else if (o.busy_ns > 0 && 2 * o.copy_ns >= o.busy_ns) {
      std::snprintf(buf, sizeof buf, "copy-bound: copies fill %.0f%% of GPU busy time, %.0f%% of copy time overlaps compute, GPU idle %.0f%%",
                    100.0 * static_cast<double>(o.copy_ns) / static_cast<double>(o.busy_ns), o.copy_compute_overlap_percent, idle);
      rep.verdict = buf;
    } else if (o.gpu_busy_percent >= 85.0) {
      std::snprintf(buf, sizeof buf, "compute-bound (GPU busy %.0f%%)", o.gpu_busy_percent);
      rep.verdict = buf;
    } else if (o.sync_percent >= 25.0) {
      std::snprintf(buf, sizeof buf, "sync-bound: host waits on the GPU %.0f%% of the time, GPU idle %.0f%%", o.sync_percent, idle);
      rep.verdict = buf;
    } else if (o.kernels > 0 && o.kernel_median_ns < 20000.0) {
      if (rep.steps)
        std::snprintf(buf, sizeof buf, "launch-bound: %.0f kernels a step, median %.1f us, GPU idle %.0f%%",
                      rep.kernels_per_step, o.kernel_median_ns / 1000.0, idle);
      else
        std::snprintf(buf, sizeof buf, "launch-bound: %llu kernels, median %.1f us, GPU idle %.0f%%",
                      static_cast<unsigned long long>(o.kernels), o.kernel_median_ns / 1000.0, idle);
      rep.verdict = buf;
    } else {
      std::snprintf(buf, sizeof buf, "host-bound: GPU idle %.0f%%, median gap between GPU work %.1f us",
                    idle, o.gap_median_ns / 1000.0);
      rep.verdict = buf;
    }
  }

  // Losses, one line each.
  {
    char buf[200];
    auto say = [&](std::uint64_t n, const char* what) {
      if (!n) return;
      std::snprintf(buf, sizeof buf, "%llu %s", static_cast<unsigned long long>(n), what);
      rep.warnings.emplace_back(buf);
    };
    say(t.lost.dropped_records, "records dropped by CUPTI (buffers full): figures undercount");
    say(t.lost.incomplete_records, "records without an end timestamp left out by the collector");
    say(t.lost.unclosed_ranges, "ranges still open when collection stopped (collector count)");
    say(rep.incomplete_found, "records without a valid end left out of the summaries");
    say(rep.unclosed_found, "ranges never closed: closed at the end of the trace");
    say(rep.unattributed, "GPU records with no launch record: not attributed to any range");
  }
  return rep;
}

} // namespace v1
} // namespace nvscope
