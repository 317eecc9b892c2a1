// nvscope-target: nvscope
#pragma once

/// \file analyze/reports.hpp
/// The `nsys stats` reports beyond the six tables of `analyze()`, computed from a trace on
/// demand (they are not in the default path): `cuda_api_sum`, `cuda_api_trace`,
/// `cuda_gpu_trace`, `cuda_gpu_sum`, `cuda_api_gpu_sum`, `cuda_gpu_kern_gb_sum`, `cuda_kern_exec_trace`,
/// `cuda_kern_exec_sum`, `nvtx_pushpop_sum`, `nvtx_pushpop_trace`, `nvtx_startend_sum`, `nvtx_gpu_proj_trace`,
/// and the `:nvtx-name` variant of the seven with kernel names (`cuda_gpu_kern_sum_nvtx`,
/// `cuda_gpu_trace_nvtx`, ...: each the same pass over `kernel_names_with_ranges`' names). Each is a sort and a walk
/// over runs of equal keys, n log n in the records, and is tested equal to its plain
/// definition in analyze/reference/reports.hpp. export/reports.hpp prints them.
///
/// \code
///   auto api = nvscope::cuda_api_sum(t);                                   // needs API calls recorded
///   auto gpu = nvscope::cuda_gpu_trace(t, nvscope::name_form::base);      // `cuda_gpu_trace:base`
///   auto ranged = nvscope::cuda_gpu_sum_nvtx(t);                          // `cuda_gpu_sum:nvtx-name`
/// \endcode

#include <nvscope/analyze/attribution.hpp>
#include <nvscope/analyze/detail/ends.hpp>
#include <nvscope/analyze/grouping.hpp>
#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/names.hpp>
#include <nvscope/analyze/projection.hpp>
#include <nvscope/analyze/report.hpp>
#include <nvscope/analyze/report_rows.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// nsys's spelling of an API function: a version suffix `_vNNNN` (the last six characters
// starting "_v") cut, as the scripts' `CASE substr(name, -6, 2) WHEN '_v' ...` does.
inline std::string api_spelling(std::string_view name) {
  if (name.size() >= 6 && name[name.size() - 6] == '_' && name[name.size() - 5] == 'v') name.remove_suffix(6);
  return std::string(name);
}

// Per distinct key_of(i) over the items with keep(i), ascending by key: the key and the
// statistics of value_of(i). One sort of (key, value) pairs.
template <class Key, class Keep, class KeyOf, class ValueOf>
std::vector<std::pair<Key, duration_stats>> stats_by_key(std::size_t items, Keep keep, KeyOf key_of, ValueOf value_of) {
  std::vector<std::pair<Key, std::uint64_t>> kv;
  for (std::size_t i = 0; i < items; ++i)
    if (keep(i)) kv.emplace_back(key_of(i), value_of(i));
  std::sort(kv.begin(), kv.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::pair<Key, duration_stats>> out;
  std::vector<std::uint64_t> run;
  for (std::size_t i = 0; i < kv.size(); ++i) {
    run.push_back(kv[i].second);
    if (i + 1 < kv.size() && !(kv[i].first < kv[i + 1].first)) continue;
    out.emplace_back(kv[i].first, stats_of(run.data(), run.data() + run.size()));
    run.clear();
  }
  return out;
}

// Valid: an end, not before the start (nsys's reports leave the others out).
inline bool has_interval(timestamp_ns start, timestamp_ns end) noexcept { return end != 0 && end >= start; }

// Whether nsys's CUDA API reports list a call of this function: every runtime and driver call
// CUPTI records but cudaGetLastError, which nsys leaves out of CUPTI_ACTIVITY_KIND_RUNTIME
// (nsys 2025.3.1 against nvscope on one program: bench/fidelity, docs/analysis.md).
inline bool nsys_lists_api(std::string_view spelled) noexcept { return spelled != "cudaGetLastError"; }

// The API calls nsys's reports read: a valid interval and a function nsys_lists_api takes.
// Each distinct name is spelled once.
class listed_api_calls {
 public:
  explicit listed_api_calls(const trace& t) : t_(t) {}
  bool operator()(std::size_t i) {
    const auto& a = t_.api_calls[i];
    if (!has_interval(a.start, a.end)) return false;
    auto it = listed_.find(a.name);
    if (it == listed_.end()) it = listed_.emplace(a.name, nsys_lists_api(api_spelling(t_.strings[a.name]))).first;
    return it->second;
  }

 private:
  const trace& t_;
  std::unordered_map<string_id, bool> listed_;
};

} // namespace detail

/// `cuda_api_sum`: CUDA API calls by function, largest total first (docs/analysis.md).
/// \code
///   for (const auto& r : nvscope::cuda_api_sum(t)) std::printf("%s %llu\n", r.name.c_str(), (unsigned long long)r.time.total);
/// \endcode
inline std::vector<api_summary_row> cuda_api_sum(const trace& t) {
  const auto& calls = t.api_calls;
  detail::listed_api_calls listed(t);
  const auto groups = detail::stats_by_key<string_id>(
      calls.size(), [&](std::size_t i) { return listed(i); },
      [&](std::size_t i) { return calls[i].name; }, [&](std::size_t i) { return calls[i].end - calls[i].start; });
  std::vector<api_summary_row> rows;
  std::vector<string_id> ids;
  for (const auto& [id, s] : groups) rows.push_back({0.0, s, detail::api_spelling(t.strings[id])}), ids.push_back(id);
  detail::set_percent(rows, [](const api_summary_row& r) { return r.time.total; }, [](api_summary_row& r) -> double& { return r.time_percent; });
  detail::order_rows_by(rows, [&](std::uint32_t a, std::uint32_t b) {
    const auto key = [&](std::uint32_t i) { return std::make_tuple(detail::descending(rows[i].time.total), rows[i].time.count, std::string_view(rows[i].name), ids[i]); };
    return key(a) < key(b);
  });
  return rows;
}

/// `cuda_api_trace`: every API call in start order, with its thread's OS id and name.
/// \code
///   for (const auto& c : nvscope::cuda_api_trace(t)) if (c.name == "cudaStreamSynchronize") { /* c.duration */ }
/// \endcode
inline std::vector<api_trace_row> cuda_api_trace(const trace& t) {
  std::vector<std::uint32_t> order;
  detail::listed_api_calls listed(t);
  for (std::uint32_t i = 0; i < t.api_calls.size(); ++i)
    if (listed(i)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return t.api_calls[a].start < t.api_calls[b].start; });
  std::vector<api_trace_row> rows;
  rows.reserve(order.size());
  for (const auto i : order) {
    const auto& a = t.api_calls[i];
    const auto named = a.thread < t.threads.size() ? t.threads[a.thread].name : 0;
    rows.push_back({a.start, a.end - a.start, detail::api_spelling(t.strings[a.name]), a.correlation, t.process_id,
                    detail::os_thread_id(t, a.thread), named ? std::string(t.strings[named]) : std::string()});
  }
  return rows;
}

namespace detail {

// Whether range `r` can prefix a kernel's name: push/pop and start/end ranges, not marks, and
// of start/end ranges only those ended on the thread that opened them (nsys's
// `endGlobalTid IS NULL`).
inline bool names_launches(const range_record& r) noexcept { return !r.is_mark && r.closing_thread() == r.thread; }

// Per API call, the innermost range of its thread that holds the whole call (start <= call
// start, end >= call end), or `no_index`: of several, the latest to start (nsys's
// `max(startNS)`), then the first to end, then the later record (the inner of two pushed at one
// instant). One sweep per thread
// in start order: ranges enter a set as the sweep passes their start, and leave it when found
// ended before a call starts (no later call can fit in them). n log n, plus per call the open
// ranges that end inside it, which are skipped.
inline std::vector<std::uint32_t> enclosing_range_of_calls(const trace& t, const std::vector<timestamp_ns>& end) {
  std::vector<std::uint32_t> ranges, calls, owner(t.api_calls.size(), no_index);
  for (std::uint32_t i = 0; i < t.ranges.size(); ++i)
    if (names_launches(t.ranges[i])) ranges.push_back(i);
  for (std::uint32_t i = 0; i < t.api_calls.size(); ++i)
    if (has_interval(t.api_calls[i].start, t.api_calls[i].end)) calls.push_back(i);
  std::sort(ranges.begin(), ranges.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::make_pair(t.ranges[a].thread, t.ranges[a].start) < std::make_pair(t.ranges[b].thread, t.ranges[b].start);
  });
  std::sort(calls.begin(), calls.end(), [&](std::uint32_t a, std::uint32_t b) {
    return std::make_pair(t.api_calls[a].thread, t.api_calls[a].start) < std::make_pair(t.api_calls[b].thread, t.api_calls[b].start);
  });
  using key = std::tuple<std::uint64_t, timestamp_ns, std::uint64_t>; // (latest start, earliest end, latest record): best first
  std::set<std::pair<key, std::uint32_t>> open;
  std::size_t next = 0;
  std::uint32_t thread = no_index;
  for (const auto c : calls) {
    const auto& a = t.api_calls[c];
    if (a.thread != thread) open.clear(), thread = a.thread;
    while (next < ranges.size() && t.ranges[ranges[next]].thread < thread) ++next;
    for (; next < ranges.size() && t.ranges[ranges[next]].thread == thread && t.ranges[ranges[next]].start <= a.start; ++next) {
      const auto r = ranges[next];
      open.emplace(key{descending(t.ranges[r].start), end[r], descending(r)}, r);
    }
    for (auto it = open.begin(); it != open.end();) {
      if (end[it->second] < a.start) it = open.erase(it);
      else if (end[it->second] >= a.end) { owner[c] = it->second; break; }
      else ++it;
    }
  }
  return owner;
}

} // namespace detail

/// Each kernel's name as nsys's `:nvtx-name` variant prints it (reports/kernel_helper.py): the
/// name in `form`, prefixed with `NAME/` where NAME is the innermost NVTX range (by latest
/// start) on the launching API call's thread that holds the whole call; the name alone when no
/// range does, or the kernel has no recorded API call. The range's name only, not its domain.
/// Unclosed ranges end at the trace's end (docs/analysis.md). Indexed as `t.kernels`.
/// \code
///   auto names = nvscope::kernel_names_with_ranges(t, nvscope::name_form::base); // "forward/gemm"
/// \endcode
inline std::vector<std::string> kernel_names_with_ranges(const trace& t, name_form form = name_form::demangled) {
  const auto end = detail::closed_range_ends(t, detail::trace_end_of(t));
  const auto owner = detail::enclosing_range_of_calls(t, end);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> by_correlation; // (correlation, call)
  for (std::uint32_t i = 0; i < t.api_calls.size(); ++i)
    if (owner[i] != no_index) by_correlation.emplace_back(t.api_calls[i].correlation, i);
  std::sort(by_correlation.begin(), by_correlation.end());
  const auto better = [&](std::uint32_t a, std::uint32_t b) { // a before b in the order `owner` picks by
    return std::make_tuple(detail::descending(t.ranges[a].start), end[a], detail::descending(a)) <
           std::make_tuple(detail::descending(t.ranges[b].start), end[b], detail::descending(b));
  };
  std::vector<std::string> names(t.kernels.size());
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    std::uint32_t best = no_index;
    auto it = std::lower_bound(by_correlation.begin(), by_correlation.end(), std::make_pair(t.kernels[i].correlation, std::uint32_t{0}));
    for (; it != by_correlation.end() && it->first == t.kernels[i].correlation; ++it)
      if (best == no_index || better(owner[it->second], best)) best = owner[it->second];
    names[i] = best == no_index ? std::string() : std::string(t.strings[t.ranges[best].name]) + "/";
    names[i] += kernel_name(t, t.kernels[i].name, form);
  }
  return names;
}

/// `cuda_gpu_kern_sum` with nsys's name variants: kernels grouped by `kernel_names_with_ranges`
/// (`cuda_gpu_kern_sum:nvtx-name`, `:nvtx-name:base`, ...), largest total first; the same
/// columns and order as `analysis_report::kernels`.
/// \code
///   for (const auto& r : nvscope::cuda_gpu_kern_sum_nvtx(t)) { /* r.name: "step/gemm_kernel" */ }
/// \endcode
inline std::vector<kernel_summary_row> cuda_gpu_kern_sum_nvtx(const trace& t, name_form form = name_form::demangled) {
  const auto names = kernel_names_with_ranges(t, form);
  const auto groups = detail::stats_by_key<std::string_view>(
      t.kernels.size(), [&](std::size_t i) { return detail::has_interval(t.kernels[i].start, t.kernels[i].end); },
      [&](std::size_t i) { return std::string_view(names[i]); }, [&](std::size_t i) { return t.kernels[i].end - t.kernels[i].start; });
  std::vector<kernel_summary_row> rows;
  for (const auto& [name, s] : groups) rows.push_back({0.0, s, std::string(name)});
  detail::set_percent(rows, [](const kernel_summary_row& r) { return r.time.total; }, [](kernel_summary_row& r) -> double& { return r.time_percent; });
  detail::order_rows(rows, [](const kernel_summary_row& r) { return std::make_tuple(detail::descending(r.time.total), r.time.count, std::string_view(r.name)); });
  return rows;
}

namespace detail {

// Each kernel's name in `form`, indexed as `t.kernels`: views of the trace's strings.
inline std::vector<std::string_view> kernel_spellings(const trace& t, name_form form) {
  std::vector<std::string_view> names;
  names.reserve(t.kernels.size());
  for (const auto& k : t.kernels) names.push_back(kernel_name(t, k.name, form));
  return names;
}

// Views of `names` (kernel_names_with_ranges'), indexed as they are; valid while `names` lives.
inline std::vector<std::string_view> views_of(const std::vector<std::string>& names) { return {names.begin(), names.end()}; }
std::vector<std::string_view> views_of(std::vector<std::string>&&) = delete; // views of a temporary would dangle

// Device names by ordinal, the first description of each (none: empty).
inline std::unordered_map<std::uint16_t, std::string> device_names(const trace& t) {
  std::unordered_map<std::uint16_t, std::string> names;
  for (const auto& d : t.devices) names.emplace(d.id, std::string(t.strings[d.name]));
  return names;
}

inline gpu_trace_row kernel_trace_row(const trace& t, const kernel_record& k, std::string_view name) {
  const auto& c = t.kernel_configs[k.config];
  gpu_trace_row r;
  r.start = k.start, r.duration = k.end - k.start, r.correlation = k.correlation;
  std::copy(c.grid, c.grid + 3, r.grid);
  std::copy(c.block, c.block + 3, r.block);
  r.registers = c.registers, r.shared_bytes = c.shared_bytes, r.device = c.device, r.context = c.context, r.stream = k.stream;
  r.name = std::string(name);
  return r;
}

template <class Record>
gpu_trace_row memop_trace_row(const Record& m, gpu_operation op, memory_kind src, memory_kind dst, const char* name) {
  gpu_trace_row r;
  r.start = m.start, r.duration = m.end - m.start, r.correlation = m.correlation, r.op = op, r.bytes = m.bytes;
  r.src = src, r.dst = dst, r.device = m.device, r.context = m.context, r.stream = m.stream;
  r.has_throughput = r.duration != 0;
  r.throughput = r.duration ? r.bytes * (1000000000ull / r.duration) : 0; // SQLite's integer division
  r.name = name;
  return r;
}

// Every valid kernel (named by `names`, indexed as `t.kernels`), copy and memset, in that
// order (the script's UNION ALL).
inline std::vector<gpu_trace_row> gpu_operation_rows(const trace& t, const std::vector<std::string_view>& names) {
  std::vector<gpu_trace_row> rows;
  rows.reserve(t.kernels.size() + t.copies.size() + t.memsets.size());
  for (std::size_t i = 0; i < t.kernels.size(); ++i)
    if (has_interval(t.kernels[i].start, t.kernels[i].end)) rows.push_back(kernel_trace_row(t, t.kernels[i], names[i]));
  for (const auto& c : t.copies)
    if (has_interval(c.start, c.end)) rows.push_back(memop_trace_row(c, gpu_operation::copy, c.src, c.dst, copy_operation_name(c.kind)));
  for (const auto& s : t.memsets)
    if (has_interval(s.start, s.end)) rows.push_back(memop_trace_row(s, gpu_operation::memset, s.memory, memory_kind::unknown, memset_operation_name));
  const auto names_of_devices = device_names(t);
  for (auto& r : rows)
    if (const auto it = names_of_devices.find(r.device); it != names_of_devices.end()) r.device_name = it->second;
  return rows;
}

// `cuda_gpu_trace`'s rows with kernels named by `names`, in start order.
inline std::vector<gpu_trace_row> gpu_trace_by(const trace& t, const std::vector<std::string_view>& names) {
  auto rows = gpu_operation_rows(t, names);
  std::vector<std::uint32_t> order(rows.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return rows[a].start < rows[b].start; });
  std::vector<gpu_trace_row> sorted;
  sorted.reserve(rows.size());
  for (const auto i : order) sorted.push_back(std::move(rows[i]));
  return sorted;
}

} // namespace detail

/// `cuda_gpu_trace`: every kernel, copy and memset in start order, with its launch
/// configuration or bytes and throughput, device, context, stream and correlation id.
/// \code
///   for (const auto& g : nvscope::cuda_gpu_trace(t)) if (g.op == nvscope::gpu_operation::kernel) { /* g.grid, g.block */ }
/// \endcode
inline std::vector<gpu_trace_row> cuda_gpu_trace(const trace& t, name_form form = name_form::demangled) {
  return detail::gpu_trace_by(t, detail::kernel_spellings(t, form));
}

/// `cuda_gpu_trace:nvtx-name` (`:nvtx-name:base`, ...): `cuda_gpu_trace` with each kernel's
/// Name from `kernel_names_with_ranges`; copies and memsets keep theirs.
/// \code
///   for (const auto& g : nvscope::cuda_gpu_trace_nvtx(t)) { /* g.name: "forward/gemm_kernel" or "[CUDA memset]" */ }
/// \endcode
inline std::vector<gpu_trace_row> cuda_gpu_trace_nvtx(const trace& t, name_form form = name_form::demangled) {
  const auto names = kernel_names_with_ranges(t, form);
  return detail::gpu_trace_by(t, detail::views_of(names));
}

namespace detail {

// One operation of a summary by name: its name, duration and category.
struct named_duration {
  std::string_view name;
  std::uint64_t duration;
  operation_category category;
};

inline operation_category category_of(gpu_operation op) noexcept {
  return op == gpu_operation::kernel ? operation_category::cuda_kernel : operation_category::memory_oper;
}

// `ops` grouped by name, each group with the category of its first operation, largest total first.
inline std::vector<gpu_summary_row> summary_by_name(const std::vector<named_duration>& ops) {
  const auto groups = stats_by_key<std::string_view>(
      ops.size(), [](std::size_t) { return true; }, [&](std::size_t i) { return ops[i].name; }, [&](std::size_t i) { return ops[i].duration; });
  std::unordered_map<std::string_view, operation_category> category;
  for (const auto& o : ops) category.emplace(o.name, o.category);
  std::vector<gpu_summary_row> rows;
  for (const auto& [name, s] : groups) rows.push_back({0.0, s, category[name], std::string(name)});
  set_percent(rows, [](const gpu_summary_row& r) { return r.time.total; }, [](gpu_summary_row& r) -> double& { return r.time_percent; });
  order_rows(rows, [](const gpu_summary_row& r) { return std::make_tuple(descending(r.time.total), r.time.count, std::string_view(r.name)); });
  return rows;
}

inline void add_gpu_operations(std::vector<named_duration>& ops, const std::vector<gpu_trace_row>& rows) {
  for (const auto& r : rows) ops.push_back({r.name, r.duration, category_of(r.op)});
}

// `cuda_gpu_sum` with kernels named by `names`.
inline std::vector<gpu_summary_row> gpu_sum_by(const trace& t, const std::vector<std::string_view>& names) {
  const auto rows = gpu_operation_rows(t, names);
  std::vector<named_duration> ops;
  add_gpu_operations(ops, rows);
  return summary_by_name(ops);
}

// `cuda_api_gpu_sum` with kernels named by `names`.
inline std::vector<gpu_summary_row> api_gpu_sum_by(const trace& t, const std::vector<std::string_view>& names) {
  std::unordered_map<string_id, std::string> spelled; // one spelling per name id, stable while `ops` reads it
  for (const auto& a : t.api_calls) spelled.emplace(a.name, api_spelling(t.strings[a.name]));
  std::vector<named_duration> ops;
  listed_api_calls listed(t);
  for (std::size_t i = 0; i < t.api_calls.size(); ++i)
    if (listed(i)) ops.push_back({spelled[t.api_calls[i].name], t.api_calls[i].end - t.api_calls[i].start, operation_category::cuda_api});
  const auto rows = gpu_operation_rows(t, names);
  add_gpu_operations(ops, rows);
  return summary_by_name(ops);
}

} // namespace detail

/// `cuda_gpu_sum`: kernels, copies and memsets together, grouped by name, largest total first.
/// \code
///   auto top = nvscope::cuda_gpu_sum(t).front();   // what the GPU spent most time on
/// \endcode
inline std::vector<gpu_summary_row> cuda_gpu_sum(const trace& t, name_form form = name_form::demangled) {
  return detail::gpu_sum_by(t, detail::kernel_spellings(t, form));
}

/// `cuda_gpu_sum:nvtx-name`: `cuda_gpu_sum` with kernels grouped by `kernel_names_with_ranges`
/// ("forward/gemm" and "backward/gemm" two rows); copies and memsets keep their names.
/// \code
///   auto rows = nvscope::cuda_gpu_sum_nvtx(t, nvscope::name_form::base);   // `cuda_gpu_sum:nvtx-name:base`
/// \endcode
inline std::vector<gpu_summary_row> cuda_gpu_sum_nvtx(const trace& t, name_form form = name_form::demangled) {
  const auto names = kernel_names_with_ranges(t, form);
  return detail::gpu_sum_by(t, detail::views_of(names));
}

/// `cuda_api_gpu_sum`: CUDA API calls, kernels, copies and memsets together, grouped by name,
/// largest total first (Category CUDA_API, CUDA_KERNEL or MEMORY_OPER).
/// \code
///   for (const auto& r : nvscope::cuda_api_gpu_sum(t)) if (r.category == nvscope::operation_category::cuda_api) { /* host side */ }
/// \endcode
inline std::vector<gpu_summary_row> cuda_api_gpu_sum(const trace& t, name_form form = name_form::demangled) {
  return detail::api_gpu_sum_by(t, detail::kernel_spellings(t, form));
}

/// `cuda_api_gpu_sum:nvtx-name`: `cuda_api_gpu_sum` with kernels grouped by
/// `kernel_names_with_ranges`; API calls, copies and memsets keep their names.
/// \code
///   auto rows = nvscope::cuda_api_gpu_sum_nvtx(t);   // "step/gemm" beside "cudaLaunchKernel"
/// \endcode
inline std::vector<gpu_summary_row> cuda_api_gpu_sum_nvtx(const trace& t, name_form form = name_form::demangled) {
  const auto names = kernel_names_with_ranges(t, form);
  return detail::api_gpu_sum_by(t, detail::views_of(names));
}

namespace detail {

// `cuda_gpu_kern_gb_sum` with kernels named by `names`.
inline std::vector<kernel_grid_summary_row> kern_gb_sum_by(const trace& t, const std::vector<std::string_view>& names) {
  using key = std::tuple<std::string_view, std::uint32_t, std::uint32_t, std::uint32_t, std::uint16_t, std::uint16_t, std::uint16_t>;
  const auto groups = stats_by_key<key>(
      t.kernels.size(), [&](std::size_t i) { return has_interval(t.kernels[i].start, t.kernels[i].end); },
      [&](std::size_t i) {
        const auto& c = t.kernel_configs[t.kernels[i].config];
        return key{names[i], c.grid[0], c.grid[1], c.grid[2], c.block[0], c.block[1], c.block[2]};
      },
      [&](std::size_t i) { return t.kernels[i].end - t.kernels[i].start; });
  std::vector<kernel_grid_summary_row> rows;
  for (const auto& [k, s] : groups) {
    rows.push_back({0.0, s, {std::get<1>(k), std::get<2>(k), std::get<3>(k)}, {std::get<4>(k), std::get<5>(k), std::get<6>(k)}, std::string(std::get<0>(k))});
  }
  set_percent(rows, [](const kernel_grid_summary_row& r) { return r.time.total; }, [](kernel_grid_summary_row& r) -> double& { return r.time_percent; });
  order_rows_by(rows, [&](std::uint32_t a, std::uint32_t b) {
    const auto order_key = [&](std::uint32_t i) {
      const auto& r = rows[i];
      return std::make_tuple(descending(r.time.total), r.time.count, std::string_view(r.name), r.grid[0], r.grid[1], r.grid[2], r.block[0], r.block[1], r.block[2]);
    };
    return order_key(a) < order_key(b);
  });
  return rows;
}

} // namespace detail

/// `cuda_gpu_kern_gb_sum`: kernels grouped by name, grid and block, largest total first.
/// \code
///   for (const auto& r : nvscope::cuda_gpu_kern_gb_sum(t)) { /* r.grid[0] blocks of r.block[0] threads */ }
/// \endcode
inline std::vector<kernel_grid_summary_row> cuda_gpu_kern_gb_sum(const trace& t, name_form form = name_form::demangled) {
  return detail::kern_gb_sum_by(t, detail::kernel_spellings(t, form));
}

/// `cuda_gpu_kern_gb_sum:nvtx-name`: kernels grouped by `kernel_names_with_ranges`' name, grid
/// and block.
/// \code
///   for (const auto& r : nvscope::cuda_gpu_kern_gb_sum_nvtx(t)) { /* r.name: "forward/gemm" */ }
/// \endcode
inline std::vector<kernel_grid_summary_row> cuda_gpu_kern_gb_sum_nvtx(const trace& t, name_form form = name_form::demangled) {
  const auto names = kernel_names_with_ranges(t, form);
  return detail::kern_gb_sum_by(t, detail::views_of(names));
}

namespace detail {

inline kernel_exec_trace_row exec_row(const trace& t, const kernel_record& k, const api_record& a, std::string_view name) {
  const auto& c = t.kernel_configs[k.config];
  kernel_exec_trace_row r;
  r.api_start = a.start, r.api_duration = a.end - a.start;
  r.queued = k.start >= a.end;
  if (r.queued) r.queue_start = a.end, r.queue_duration = k.start - a.end;
  r.kernel_start = k.start, r.kernel_duration = k.end - k.start;
  r.total_duration = (a.end > k.end ? a.end : k.end) - a.start;
  r.pid = t.process_id, r.tid = os_thread_id(t, a.thread), r.device = c.device;
  r.api_name = api_spelling(t.strings[a.name]);
  std::copy(c.grid, c.grid + 3, r.grid);
  std::copy(c.block, c.block + 3, r.block);
  r.kernel = std::string(name);
  return r;
}

// `cuda_kern_exec_trace` with kernels named by `names`.
inline std::vector<kernel_exec_trace_row> kern_exec_trace_by(const trace& t, const std::vector<std::string_view>& names) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> by_correlation; // (correlation, call)
  for (std::uint32_t i = 0; i < t.api_calls.size(); ++i)
    if (has_interval(t.api_calls[i].start, t.api_calls[i].end)) by_correlation.emplace_back(t.api_calls[i].correlation, i);
  std::sort(by_correlation.begin(), by_correlation.end());
  std::vector<kernel_exec_trace_row> rows;
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const auto& k = t.kernels[i];
    if (!has_interval(k.start, k.end)) continue;
    auto it = std::lower_bound(by_correlation.begin(), by_correlation.end(), std::make_pair(k.correlation, std::uint32_t{0}));
    for (; it != by_correlation.end() && it->first == k.correlation; ++it) rows.push_back(exec_row(t, k, t.api_calls[it->second], names[i]));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const kernel_exec_trace_row& a, const kernel_exec_trace_row& b) { return a.api_start < b.api_start; });
  return rows;
}

// `cuda_kern_exec_sum` of `cuda_kern_exec_trace`'s rows.
inline std::vector<kernel_exec_summary_row> kern_exec_sum_of(const std::vector<kernel_exec_trace_row>& joined) {
  const auto key = [&](std::uint32_t i) {
    const auto& r = joined[i];
    return std::make_tuple(r.pid, r.tid, r.device, std::string_view(r.api_name), std::string_view(r.kernel));
  };
  std::vector<std::uint32_t> order(joined.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
  std::vector<kernel_exec_summary_row> rows;
  std::vector<std::uint64_t> total, api, queue, kernel;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto& r = joined[order[i]];
    total.push_back(r.total_duration), api.push_back(r.api_duration), kernel.push_back(r.kernel_duration);
    if (r.queued) queue.push_back(r.queue_duration);
    if (i + 1 < order.size() && key(order[i]) == key(order[i + 1])) continue;
    const auto of = [](const std::vector<std::uint64_t>& v) { return stats_of(v.data(), v.data() + v.size()); };
    rows.push_back({r.pid, r.tid, r.device, of(total), of(api), of(queue), of(kernel), r.api_name, r.kernel});
    total.clear(), api.clear(), queue.clear(), kernel.clear();
  }
  std::stable_sort(rows.begin(), rows.end(), [](const kernel_exec_summary_row& a, const kernel_exec_summary_row& b) { return a.total.average > b.total.average; });
  return rows;
}

} // namespace detail

/// `cuda_kern_exec_trace`: each kernel with the API call of its correlation id: API time,
/// queue time (API end to kernel start, when the kernel started after the call returned) and
/// kernel time, in API start order.
/// \code
///   for (const auto& e : nvscope::cuda_kern_exec_trace(t)) if (e.queued) { /* e.queue_duration */ }
/// \endcode
inline std::vector<kernel_exec_trace_row> cuda_kern_exec_trace(const trace& t, name_form form = name_form::demangled) {
  return detail::kern_exec_trace_by(t, detail::kernel_spellings(t, form));
}

/// `cuda_kern_exec_trace:nvtx-name`: `cuda_kern_exec_trace` with each Kernel Name from
/// `kernel_names_with_ranges` (the API Function keeps its name).
/// \code
///   for (const auto& e : nvscope::cuda_kern_exec_trace_nvtx(t)) { /* e.kernel: "step/gemm" */ }
/// \endcode
inline std::vector<kernel_exec_trace_row> cuda_kern_exec_trace_nvtx(const trace& t, name_form form = name_form::demangled) {
  const auto names = kernel_names_with_ranges(t, form);
  return detail::kern_exec_trace_by(t, detail::views_of(names));
}

/// `cuda_kern_exec_sum`: `cuda_kern_exec_trace`'s rows grouped by (PID, TID, device, API,
/// kernel): total, API, queue (queued rows only) and kernel statistics, largest average total first.
/// \code
///   for (const auto& s : nvscope::cuda_kern_exec_sum(t)) { /* s.queue.count of s.total.count launches queued */ }
/// \endcode
inline std::vector<kernel_exec_summary_row> cuda_kern_exec_sum(const trace& t, name_form form = name_form::demangled) {
  return detail::kern_exec_sum_of(cuda_kern_exec_trace(t, form));
}

/// `cuda_kern_exec_sum:nvtx-name`: `cuda_kern_exec_trace_nvtx`'s rows grouped as
/// `cuda_kern_exec_sum` groups, so one kernel launched in two ranges is two rows.
/// \code
///   for (const auto& s : nvscope::cuda_kern_exec_sum_nvtx(t)) { /* s.kernel_name: "step/gemm" */ }
/// \endcode
inline std::vector<kernel_exec_summary_row> cuda_kern_exec_sum_nvtx(const trace& t, name_form form = name_form::demangled) {
  return detail::kern_exec_sum_of(cuda_kern_exec_trace_nvtx(t, form));
}

namespace detail {

// Ranges of one style (marks left out) grouped by their printed label, largest total first.
inline std::vector<range_style_summary_row> range_style_sum(const trace& t, bool push_pop) {
  const auto a = attribute(t);
  std::vector<std::string> labels(t.ranges.size());
  for (std::size_t r = 0; r < t.ranges.size(); ++r)
    if (!t.ranges[r].is_mark && t.ranges[r].is_push_pop == push_pop) labels[r] = range_label(t, t.ranges[r]);
  const auto groups = stats_by_key<std::string_view>(
      t.ranges.size(), [&](std::size_t r) { return !t.ranges[r].is_mark && t.ranges[r].is_push_pop == push_pop; },
      [&](std::size_t r) { return std::string_view(labels[r]); }, [&](std::size_t r) { return a.range_end[r] - t.ranges[r].start; });
  std::vector<range_style_summary_row> rows;
  for (const auto& [label, s] : groups) rows.push_back({0.0, s, std::string(label)});
  set_percent(rows, [](const range_style_summary_row& r) { return r.time.total; }, [](range_style_summary_row& r) -> double& { return r.time_percent; });
  order_rows(rows, [](const range_style_summary_row& r) { return std::make_tuple(descending(r.time.total), r.time.count, std::string_view(r.range)); });
  return rows;
}

} // namespace detail

/// `nvtx_pushpop_sum`: push/pop ranges by label (`domain:name`), largest total first.
/// \code
///   auto rows = nvscope::nvtx_pushpop_sum(t);
/// \endcode
inline std::vector<range_style_summary_row> nvtx_pushpop_sum(const trace& t) { return detail::range_style_sum(t, true); }

/// `nvtx_startend_sum`: start/end ranges by label, largest total first.
/// \code
///   auto rows = nvscope::nvtx_startend_sum(t);
/// \endcode
inline std::vector<range_style_summary_row> nvtx_startend_sum(const trace& t) { return detail::range_style_sum(t, false); }

namespace detail {

// Per range, its children's count and summed durations (push/pop children: marks left out).
inline void child_sums(const trace& t, const attribution& a, std::vector<std::uint64_t>& duration, std::vector<std::uint64_t>& count) {
  duration.assign(t.ranges.size(), 0);
  count.assign(t.ranges.size(), 0);
  for (std::size_t c = 0; c < t.ranges.size(); ++c) {
    const auto p = a.parent[c];
    if (t.ranges[c].is_mark || p >= t.ranges.size()) continue;
    duration[p] += a.range_end[c] - t.ranges[c].start;
    ++count[p];
  }
}

// Per range (marks left out), its RangeStack (":outer:...:range"), parents' stacks made first
// (by depth); `a`: an attribution or a containment (its parent and depth).
template <class Links>
std::vector<std::string> range_stacks(const trace& t, const Links& a) {
  std::vector<std::uint32_t> order;
  for (std::uint32_t r = 0; r < t.ranges.size(); ++r)
    if (!t.ranges[r].is_mark) order.push_back(r);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) { return a.depth[x] < a.depth[y]; });
  std::vector<std::string> stack(t.ranges.size());
  for (const auto r : order) stack[r] = (a.parent[r] < t.ranges.size() ? stack[a.parent[r]] : std::string()) + ":" + std::to_string(r);
  return stack;
}

} // namespace detail

/// `nvtx_pushpop_trace`: every push/pop range in start order with its level, parent, children,
/// and its self time: DurChild (the children's durations summed) and DurNonChild (the rest).
/// \code
///   for (const auto& r : nvscope::nvtx_pushpop_trace(t)) if (r.self_duration > r.child_duration) { /* r.name works itself */ }
/// \endcode
inline std::vector<range_trace_row> nvtx_pushpop_trace(const trace& t) {
  const auto a = attribute(t);
  std::vector<std::uint64_t> child_duration, children;
  detail::child_sums(t, a, child_duration, children);
  auto stacks = detail::range_stacks(t, a);
  std::vector<range_trace_row> rows;
  for (std::uint32_t r = 0; r < t.ranges.size(); ++r) {
    const auto& range = t.ranges[r];
    if (range.is_mark || !range.is_push_pop) continue;
    range_trace_row row;
    row.start = range.start, row.duration = a.range_end[r] - range.start, row.end = a.range_end[r];
    row.child_duration = child_duration[r], row.children = children[r];
    row.self_duration = row.duration > row.child_duration ? row.duration - row.child_duration : 0;
    row.name = detail::range_label(t, range), row.pid = t.process_id, row.tid = detail::os_thread_id(t, range.thread);
    row.level = a.depth[r], row.range = r, row.parent = a.parent[r], row.stack = std::move(stacks[r]);
    row.name_tree = std::string(2 * row.level, '-') + row.name;
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const range_trace_row& x, const range_trace_row& y) {
    return std::make_tuple(x.start, x.duration) < std::make_tuple(y.start, y.duration);
  });
  return rows;
}

namespace detail {

// nsys's NVTX_PARENT for nvtx_gpu_proj_trace: every range of either style (start/end ones
// counted by `rule`) nested by containment on its thread. A range's parent is the range of
// its thread that holds it (start at or before, end at or after) with the least slack
// (start difference plus end difference); of equal slack the lower index; of two identical
// ranges the earlier holds the later. Walked per thread in (start, end descending, index)
// order, which puts every possible parent before its child: the ranges still open at a
// range's start are the only candidates.
struct containment {
  std::vector<std::uint32_t> parent;
  std::vector<std::uint32_t> depth;
};

inline bool counted_by(const range_record& r, start_end_rule rule) noexcept {
  return !r.is_mark && (r.is_push_pop || rule == start_end_rule::opening_thread || r.closing_thread() == r.thread);
}

inline containment contain_ranges(const trace& t, const std::vector<timestamp_ns>& end, start_end_rule rule) {
  const auto n = static_cast<std::uint32_t>(t.ranges.size());
  containment c{std::vector<std::uint32_t>(n, no_index), std::vector<std::uint32_t>(n, 0)};
  std::vector<std::uint32_t> order;
  for (std::uint32_t r = 0; r < n; ++r)
    if (counted_by(t.ranges[r], rule)) order.push_back(r);
  std::sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    const auto& a = t.ranges[x];
    const auto& b = t.ranges[y];
    return std::make_tuple(a.thread, a.start, descending(end[x]), x) < std::make_tuple(b.thread, b.start, descending(end[y]), y);
  });
  std::vector<std::uint32_t> open; // this thread's ranges so far that end at or after the current start
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto r = order[i];
    const auto& range = t.ranges[r];
    if (i == 0 || t.ranges[order[i - 1]].thread != range.thread) open.clear();
    open.erase(std::remove_if(open.begin(), open.end(), [&](std::uint32_t q) { return end[q] < range.start; }), open.end());
    std::uint64_t least = ~std::uint64_t{0};
    for (const auto q : open) {
      if (end[q] < end[r]) continue;
      const std::uint64_t slack = (range.start - t.ranges[q].start) + (end[q] - end[r]);
      if (slack < least || (slack == least && q < c.parent[r])) least = slack, c.parent[r] = q;
    }
    if (c.parent[r] != no_index) c.depth[r] = c.depth[c.parent[r]] + 1;
    open.push_back(r);
  }
  return c;
}

} // namespace detail

/// `nvtx_gpu_proj_trace`: each range instance that launched GPU work, projected onto the GPU
/// (first start to last end of that work), with its launches, level, parent, children that
/// launched work and stack, ranges of both styles nested by containment on their thread as
/// nsys's script nests them; in projected start order, longer first.
/// \code
///   for (const auto& r : nvscope::nvtx_gpu_proj_trace(t)) { /* r.projected_duration against r.duration */ }
/// \endcode
inline std::vector<range_projection_trace_row> nvtx_gpu_proj_trace(const trace& t, start_end_rule rule = start_end_rule::nsys) {
  const auto x = index_trace(t, rule);
  const auto p = project_ranges(t, x);
  const auto a = detail::contain_ranges(t, x.links.range_end, rule);
  std::vector<std::uint64_t> children(t.ranges.size(), 0);
  for (std::size_t c = 0; c < t.ranges.size(); ++c)
    if (!t.ranges[c].is_mark && a.parent[c] < t.ranges.size() && p.ops[c] > 0) ++children[a.parent[c]];
  auto stacks = detail::range_stacks(t, a);
  std::vector<range_projection_trace_row> rows;
  for (std::uint32_t r = 0; r < t.ranges.size(); ++r) {
    const auto& range = t.ranges[r];
    if (range.is_mark || p.ops[r] == 0) continue;
    range_projection_trace_row row;
    row.name = detail::range_label(t, range), row.projected_start = p.first[r], row.projected_duration = p.last[r] - p.first[r];
    row.start = range.start, row.duration = x.links.range_end[r] - range.start, row.push_pop = range.is_push_pop;
    row.pid = t.process_id, row.tid = detail::os_thread_id(t, range.thread), row.gpu_ops = p.ops[r], row.level = a.depth[r];
    row.children = children[r], row.range = r, row.parent = a.parent[r], row.stack = std::move(stacks[r]);
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const range_projection_trace_row& u, const range_projection_trace_row& v) {
    return std::make_tuple(u.projected_start, detail::descending(u.projected_duration)) < std::make_tuple(v.projected_start, detail::descending(v.projected_duration));
  });
  return rows;
}

} // namespace v1
} // namespace nvscope
