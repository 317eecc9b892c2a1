// nvscope-target: nvscope
#pragma once

/// \file export/recipes.hpp
/// The `nsys recipe` recipes nvscope computes (analyze/recipes.hpp), chosen by nsys's name with
/// nsys's recipe options as `NAME[:k=v...]`, each as a table with the columns of the recipe's
/// analysis output (the rule's column names, their `:unit` tags cut as the recipe cuts them),
/// written as CSV. `nvscope run --recipes` writes STEM.NAME.csv per recipe.
///
/// \code
///   auto chosen = nvscope::parse_recipes("gpu_gaps:gap=100,cuda_api_sync");
///   if (!chosen.error.empty()) { std::fprintf(stderr, "%s\n", chosen.error.c_str()); return 2; }
///   for (std::size_t i = 0; i < chosen.recipes.size(); ++i)
///     std::fputs(nvscope::recipe_csv(t, chosen.recipes[i], chosen.params[i]).c_str(), stdout);
/// \endcode

#include <nvscope/analyze/recipes.hpp>
#include <nvscope/export/reports.hpp>
#include <nvscope/export/table.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// The recipes nvscope computes, by nsys's names.
enum class recipe : std::uint8_t { gpu_gaps, gpu_time_util, cuda_api_sync, cuda_memcpy_async, cuda_memcpy_sync, cuda_memset_sync, cuda_gpu_kern_hist, cuda_gpu_kern_pace, nvtx_pace, nvtx_gpu_proj_pace, nccl_gpu_overlap_trace,
                              cuda_gpu_time_util_map, nccl_gpu_time_util_map };

/// One file a recipe writes: `suffix` goes between STEM.NAME and .csv (empty for the one table
/// of a rule recipe, nsys's analysis.parquet).
struct recipe_file {
  std::string suffix;
  std::string csv;
};

/// The recipes of a list and the parameters of each, or a one-line error.
struct recipe_selection {
  std::vector<recipe> recipes;
  std::vector<recipe_params> params; ///< `params[i]` for `recipes[i]`: nsys's defaults and the item's k=v
  std::string error; ///< "nvscope: recipes: ..." for an unknown name or parameter
};

namespace detail {

struct recipe_info {
  recipe which;
  const char* name;
  const char* parameters; ///< nsys's options of the recipe nvscope takes, space-separated
  bool reads_api;         ///< joins CUDA runtime calls, which the collector then records
};
inline constexpr recipe_info recipe_infos[] = {
    {recipe::gpu_gaps, "gpu_gaps", "gap", false},
    {recipe::gpu_time_util, "gpu_time_util", "threshold chunks", false},
    {recipe::cuda_api_sync, "cuda_api_sync", "", true},
    {recipe::cuda_memcpy_async, "cuda_memcpy_async", "", true},
    {recipe::cuda_memcpy_sync, "cuda_memcpy_sync", "", true},
    {recipe::cuda_memset_sync, "cuda_memset_sync", "", true},
    {recipe::cuda_gpu_kern_hist, "cuda_gpu_kern_hist", "", false},
    {recipe::cuda_gpu_kern_pace, "cuda_gpu_kern_pace", "name", false},
    {recipe::nvtx_pace, "nvtx_pace", "name", false},
    {recipe::nvtx_gpu_proj_pace, "nvtx_gpu_proj_pace", "name", false},
    {recipe::nccl_gpu_overlap_trace, "nccl_gpu_overlap_trace", "", false},
    {recipe::cuda_gpu_time_util_map, "cuda_gpu_time_util_map", "bins", false},
    {recipe::nccl_gpu_time_util_map, "nccl_gpu_time_util_map", "bins", false},
};

inline const recipe_info& info_of(recipe r) noexcept { return recipe_infos[static_cast<std::size_t>(r)]; }

// "k=v" of a recipe taking the space-separated `parameters`: sets it in `p`, or says why not.
inline std::string set_recipe_param(std::string_view name, std::string_view parameters, std::string_view kv, recipe_params& p) {
  const auto eq = kv.find('=');
  const auto key = kv.substr(0, eq);
  const auto value = eq == std::string_view::npos ? std::string_view{} : kv.substr(eq + 1);
  const std::string spaced = " " + std::string(parameters) + " ";
  if (key.empty() || spaced.find(" " + std::string(key) + " ") == std::string::npos)
    return std::string(name) + " has no parameter '" + std::string(key) + "'" +
           (parameters[0] ? " (it takes " + std::string(parameters) + ")" : " (it takes none)");
  if (key == "name") {
    if (value.empty()) return "'" + std::string(kv) + "': want a kernel or range name";
    p.name = std::string(value);
    return {};
  }
  std::uint64_t v = 0;
  for (const char c : value) {
    if (c < '0' || c > '9' || v > 1000000000000ull) return "'" + std::string(kv) + "': want a whole number";
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  const bool counted = key == "chunks" || key == "bins";
  if (value.empty() || (counted && (v == 0 || v > 1000000)) || (key == "threshold" && v > 100))
    return "'" + std::string(kv) + "': " + (counted ? "want 1 to 1000000" : key == "threshold" ? "want 0 to 100" : "want a whole number");
  if (key == "gap") p.gap_ms = v;
  else if (key == "threshold") p.threshold = static_cast<std::uint32_t>(v);
  else if (key == "bins") p.bins = static_cast<std::uint32_t>(v);
  else p.chunks = static_cast<std::uint32_t>(v);
  return {};
}

// One item "NAME[:k=v...]": its recipe, or why not.
inline std::string parse_recipe_item(std::string_view item, recipe_selection& s) {
  const auto colon = item.find(':');
  const auto name = item.substr(0, colon);
  const recipe_info* info = nullptr;
  for (const auto& i : recipe_infos)
    if (name == i.name) info = &i;
  if (!info) return "no recipe named '" + std::string(name) + "'";
  recipe_params p;
  for (auto rest = colon == std::string_view::npos ? std::string_view{} : item.substr(colon + 1); !rest.empty();) {
    const auto next = rest.find(':');
    if (auto why = set_recipe_param(name, info->parameters, rest.substr(0, next), p); !why.empty()) return why;
    rest = next == std::string_view::npos ? std::string_view{} : rest.substr(next + 1);
  }
  if (std::string_view(info->parameters) == "name" && p.name.empty()) return std::string(name) + " needs name=NAME (nsys's --name)";
  const auto at = std::find(s.recipes.begin(), s.recipes.end(), info->which);
  if (at != s.recipes.end()) s.params[static_cast<std::size_t>(at - s.recipes.begin())] = p; // named again: the later parameters
  else s.recipes.push_back(info->which), s.params.push_back(p);
  return {};
}

} // namespace detail

/// nsys's name of a recipe (the file name's middle part: STEM.NAME.csv).
inline const char* recipe_name(recipe r) noexcept { return detail::info_of(r).name; }

/// Whether a recipe reads CUDA runtime API calls (the collector records them when one does).
inline bool recipe_reads_api(recipe r) noexcept { return detail::info_of(r).reads_api; }

/// The recipes of a comma-separated list "NAME[:k=v...][,NAME...]" in the list's order, each
/// once; an item's parameters (`gap`, `threshold`, `chunks`, `name`, `bins`: nsys's recipe options)
/// are its recipe's, the others keep nsys's defaults.
/// \code
///   auto s = nvscope::parse_recipes("gpu_time_util:threshold=30:chunks=10"); // s.error empty
/// \endcode
inline recipe_selection parse_recipes(std::string_view list) {
  recipe_selection s;
  while (!list.empty()) {
    const auto comma = list.find(',');
    const auto item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    if (item.empty()) continue;
    if (auto why = detail::parse_recipe_item(item, s); !why.empty()) {
      s.error = "nvscope: recipes: " + why + " (nvscope computes gpu_gaps[:gap=MS], gpu_time_util[:threshold=PCT][:chunks=N], "
                "cuda_api_sync, cuda_memcpy_async, cuda_memcpy_sync, cuda_memset_sync, cuda_gpu_kern_hist, cuda_gpu_kern_pace:name=KERNEL, "
                "nvtx_pace:name=RANGE, nvtx_gpu_proj_pace:name=RANGE, nccl_gpu_overlap_trace, cuda_gpu_time_util_map[:bins=N], "
                "nccl_gpu_time_util_map[:bins=N])";
      s.recipes.clear(), s.params.clear();
      return s;
    }
  }
  return s;
}

namespace detail {

// nsys's Rank column: the input file's number among the recipe's inputs; one process is one input.
inline constexpr const char* recipe_rank = "0";

inline table gpu_gaps_table(const std::vector<gpu_gap_row>& rows) {
  table t;
  t.header = {"Row#", "Duration", "Start", "PID", "Device ID", "Context ID", "Rank"};
  t.numeric.assign(7, true);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    t.rows.push_back({fmt_u(i + 1), fmt_u(r.duration), fmt_u(r.start), fmt_u(r.pid), fmt_u(r.device), fmt_u(r.context), recipe_rank});
  }
  return t;
}

inline table gpu_util_table(const std::vector<gpu_util_row>& rows) {
  table t;
  t.header = {"Row#", "In-Use", "Duration", "Start", "PID", "Device ID", "Context ID", "Rank"};
  t.numeric.assign(8, true);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    t.rows.push_back({fmt_u(i + 1), fmt_f(r.in_use, 1), fmt_u(r.duration), fmt_u(r.start), fmt_u(r.pid), fmt_u(r.device), fmt_u(r.context), recipe_rank});
  }
  return t;
}

inline table api_sync_table(const std::vector<api_sync_row>& rows) {
  table t;
  t.header = {"Duration", "Start", "PID", "TID", "API Name", "Rank"};
  t.numeric = numeric_columns(6, {4});
  for (const auto& r : rows) t.rows.push_back({fmt_u(r.duration), fmt_u(r.start), fmt_u(r.pid), fmt_u(r.tid), r.api_name, recipe_rank});
  return t;
}

// nsys prints Green Context ID empty (NULLIF(greenContextId, 0)); nvscope records none.
inline table memcpy_rule_table(const std::vector<memcpy_rule_row>& rows) {
  table t;
  t.header = {"Duration", "Start", "Src Kind", "Dst Kind", "Bytes", "PID", "Device ID", "Context ID", "Green Context ID", "Stream ID", "API Name", "Rank"};
  t.numeric = numeric_columns(12, {2, 3, 10});
  for (const auto& r : rows)
    t.rows.push_back({fmt_u(r.duration), fmt_u(r.start), memory_kind_label(r.src), memory_kind_label(r.dst), fmt_u(r.bytes), fmt_u(r.pid),
                      fmt_u(r.device), fmt_u(r.context), "", fmt_u(r.stream), r.api_name, recipe_rank});
  return t;
}

inline table memset_rule_table(const std::vector<memset_rule_row>& rows) {
  table t;
  t.header = {"Duration", "Start", "Memory Kind", "Bytes", "PID", "Device ID", "Context ID", "Green Context ID", "Stream ID", "API Name", "Rank"};
  t.numeric = numeric_columns(11, {2, 9});
  for (const auto& r : rows)
    t.rows.push_back({fmt_u(r.duration), fmt_u(r.start), memory_kind_label(r.memory), fmt_u(r.bytes), fmt_u(r.pid), fmt_u(r.device),
                      fmt_u(r.context), "", fmt_u(r.stream), r.api_name, recipe_rank});
  return t;
}

inline table kernel_durations_table(const std::vector<kernel_duration_row>& rows) {
  table t;
  t.header = {"Duration", "Name", "Rank"};
  t.numeric = {true, false, true};
  for (const auto& r : rows) t.rows.push_back({fmt_u(r.duration), r.name, recipe_rank});
  return t;
}

// A pace recipe's rows in one table, the columns nsys writes a file each side by side.
inline table pace_table(const std::vector<pace_row>& rows) {
  table t;
  t.header = {"Iteration", "start", "end", "duration", "duration_accum", "delta", "delta_accum"};
  t.numeric.assign(7, true);
  for (const auto& r : rows)
    t.rows.push_back({fmt_u(r.iteration), fmt_u(r.start), fmt_u(r.end), fmt_u(r.duration), fmt_u(r.duration_accum), std::to_string(r.delta),
                      std::to_string(r.delta_accum)});
  return t;
}

// One pace column as nsys's pace_NAME.parquet holds it: a row an iteration, a column a rank
// named by its number (one process: rank 0).
template <class Value>
table pace_column(const std::vector<pace_row>& rows, Value value) {
  table t;
  t.header = {recipe_rank};
  t.numeric = {true};
  for (const auto& r : rows) t.rows.push_back({value(r)});
  return t;
}

// pace_delta_stats.parquet: each iteration's delta summarised across the ranks (one rank: a
// count of 1, no deviation, the delta for every other figure).
inline table pace_delta_stats_table(const std::vector<pace_row>& rows) {
  table t;
  t.header = {"Count", "Mean", "Std", "Min", "Q1", "Median", "Q3", "Max", "Sum"};
  t.numeric.assign(9, true);
  for (const auto& r : rows) {
    const auto d = std::to_string(r.delta), f = fmt_f(static_cast<double>(r.delta), 1);
    t.rows.push_back({"1", f, "", d, f, f, f, d, d});
  }
  return t;
}

// stats.parquet: the durations' figures under the name (its index column first: Text for the
// NVTX pace recipes, Shortname for cuda_gpu_kern_pace, as nsys's parquet names them).
inline table pace_stats_table(const pace_stats& s, const char* index) {
  table t;
  t.header = {index, "Count", "Mean", "Std (approx)", "Min", "Q1 (approx)", "Median (approx)", "Q3 (approx)", "Max", "Sum"};
  t.numeric = numeric_columns(10, {0});
  if (s.count != 0)
    t.rows.push_back({s.text, fmt_u(s.count), fmt_f(s.mean, 1), s.has_std ? fmt_f(s.std, 1) : "", fmt_u(s.min), fmt_f(s.q1, 1), fmt_f(s.median, 1),
                      fmt_f(s.q3, 1), fmt_u(s.max), fmt_u(s.sum)});
  return t;
}

// nccl_gpu_overlap_trace's rank_trace.parquet (Name its index, first) and grouped_trace.parquet.
inline table overlap_trace_table(const std::vector<overlap_trace_row>& rows) {
  table t;
  t.header = {"Name", "Start", "End", "PID", "DeviceID", "Communication Overlap", "Compute Overlap", "Rank"};
  t.numeric = numeric_columns(8, {0});
  for (const auto& r : rows)
    t.rows.push_back({r.name, fmt_u(r.start), fmt_u(r.end), fmt_u(r.pid), fmt_u(r.device), r.has_overlap ? fmt_f(r.communication_overlap, 1) : "",
                      r.has_overlap ? fmt_f(r.compute_overlap, 1) : "", fmt_u(r.rank)});
  return t;
}

inline table overlap_groups_table(const std::vector<overlap_group_row>& rows) {
  table t;
  t.header = {"Name", "Count", "Communication Overlap", "Compute Overlap"};
  t.numeric = numeric_columns(4, {0});
  for (const auto& g : rows)
    t.rows.push_back({g.name, fmt_u(g.count), g.has_overlap ? fmt_f(g.communication_overlap, 1) : "", g.has_overlap ? fmt_f(g.compute_overlap, 1) : ""});
  return t;
}

// The heatmap recipes' analysis.parquet: a row a bin of a device of a rank; a bin outside the session
// has empty cells where nsys's frame holds NaN (pandas writes NaN as an empty CSV cell).
inline table util_map_table(const std::vector<util_map_row>& rows, bool nccl) {
  table t;
  t.header = nccl ? std::vector<std::string>{"Duration", "All", "NCCL", "Compute", "Overlap", "PID", "Device ID", "Rank"}
                  : std::vector<std::string>{"Duration", "Kernel", "PID", "Device ID", "Rank"};
  t.numeric.assign(t.header.size(), true);
  for (const auto& r : rows) {
    auto pct = [&](double v) { return r.in_session ? fmt_f(v, 1) : std::string(); };
    std::vector<std::string> row{fmt_u(r.duration), pct(r.all)};
    if (nccl) row.insert(row.end(), {pct(r.nccl), pct(r.compute), pct(r.overlap)});
    row.insert(row.end(), {fmt_u(r.pid), fmt_u(r.device), fmt_u(r.rank)});
    t.rows.push_back(std::move(row));
  }
  return t;
}

// Every file of a pace recipe, by nsys's names: pace_start ... pace_delta_stats, stats.
inline std::vector<recipe_file> pace_files(const std::vector<pace_row>& rows, const std::string& name, const char* index = "Text") {
  auto u = [](std::uint64_t v) { return fmt_u(v); };
  auto i = [](std::int64_t v) { return std::to_string(v); };
  return {{".pace_start", csv_of(pace_column(rows, [&](const pace_row& r) { return u(r.start); }))},
          {".pace_end", csv_of(pace_column(rows, [&](const pace_row& r) { return u(r.end); }))},
          {".pace_duration", csv_of(pace_column(rows, [&](const pace_row& r) { return u(r.duration); }))},
          {".pace_duration_accum", csv_of(pace_column(rows, [&](const pace_row& r) { return u(r.duration_accum); }))},
          {".pace_delta", csv_of(pace_column(rows, [&](const pace_row& r) { return i(r.delta); }))},
          {".pace_delta_accum", csv_of(pace_column(rows, [&](const pace_row& r) { return i(r.delta_accum); }))},
          {".pace_delta_stats", csv_of(pace_delta_stats_table(rows))},
          {".stats", csv_of(pace_stats_table(pace_stats_of(rows, name), index))}};
}

} // namespace detail

/// One recipe's rows as a table with the recipe's column names.
inline table recipe_table(const trace& t, recipe which, const recipe_params& p = {}) {
  switch (which) {
    case recipe::gpu_gaps: return detail::gpu_gaps_table(gpu_gaps(t, p));
    case recipe::gpu_time_util: return detail::gpu_util_table(gpu_time_util(t, p));
    case recipe::cuda_api_sync: return detail::api_sync_table(cuda_api_sync(t));
    case recipe::cuda_memcpy_async: return detail::memcpy_rule_table(cuda_memcpy_async(t));
    case recipe::cuda_memcpy_sync: return detail::memcpy_rule_table(cuda_memcpy_sync(t));
    case recipe::cuda_gpu_kern_hist: return detail::kernel_durations_table(cuda_gpu_kern_hist(t));
    case recipe::cuda_gpu_kern_pace: return detail::pace_table(cuda_gpu_kern_pace(t, p));
    case recipe::nvtx_pace: return detail::pace_table(nvtx_pace(t, p));
    case recipe::nvtx_gpu_proj_pace: return detail::pace_table(nvtx_gpu_proj_pace(t, p));
    case recipe::nccl_gpu_overlap_trace: return detail::overlap_trace_table(nccl_gpu_overlap_trace(t));
    case recipe::cuda_gpu_time_util_map: return detail::util_map_table(cuda_gpu_time_util_map(t, p), false);
    case recipe::nccl_gpu_time_util_map: return detail::util_map_table(nccl_gpu_time_util_map(t, p), true);
    case recipe::cuda_memset_sync: break;
  }
  return detail::memset_rule_table(cuda_memset_sync(t));
}

/// One recipe as CSV: a header line of the recipe's column names, then a line a row (a pace
/// recipe's columns side by side; recipe_files writes them as nsys does).
inline std::string recipe_csv(const trace& t, recipe which, const recipe_params& p = {}) { return csv_of(recipe_table(t, which, p)); }

/// Every file of one recipe, as nsys's recipe writes them: a rule recipe's one table (nsys's
/// analysis.parquet; suffix empty), a pace recipe's pace_start, pace_end, pace_duration,
/// pace_duration_accum, pace_delta, pace_delta_accum, pace_delta_stats and stats;
/// nccl_gpu_overlap_trace's rank_trace and grouped_trace.
/// \code
///   for (const auto& f : nvscope::recipe_files(t, nvscope::recipe::nvtx_pace, p)) nvscope::write_file("run.nvtx_pace" + f.suffix + ".csv", f.csv);
/// \endcode
inline std::vector<recipe_file> recipe_files(const trace& t, recipe which, const recipe_params& p = {}) {
  switch (which) {
    case recipe::cuda_gpu_kern_pace: return detail::pace_files(cuda_gpu_kern_pace(t, p), p.name, "Shortname");
    case recipe::nvtx_pace: return detail::pace_files(nvtx_pace(t, p), p.name);
    case recipe::nvtx_gpu_proj_pace: return detail::pace_files(nvtx_gpu_proj_pace(t, p), p.name);
    case recipe::nccl_gpu_overlap_trace: {
      const auto rows = nccl_gpu_overlap_trace(t);
      return {{".rank_trace", csv_of(detail::overlap_trace_table(rows))}, {".grouped_trace", csv_of(detail::overlap_groups_table(nccl_gpu_overlap_groups(rows)))}};
    }
    default: return {{"", recipe_csv(t, which, p)}};
  }
}

/// Whether a recipe combines several ranks into one table, as nsys's reducer does: the two
/// heatmaps (one bin size, the sessions aligned) and nccl_gpu_overlap_trace (grouped_trace over
/// every rank); the others are one table per process.
inline bool recipe_combines_ranks(recipe r) noexcept {
  return r == recipe::nccl_gpu_overlap_trace || r == recipe::cuda_gpu_time_util_map || r == recipe::nccl_gpu_time_util_map;
}

/// Every file of a recipe that combines ranks (`recipe_combines_ranks`) over the traces of
/// several ranks, in nsys's order (its `--input` reports sorted by file name), Rank each one's
/// place among those with rows; empty for another recipe.
/// \code
///   for (const auto& f : nvscope::recipe_files({&rank0, &rank1}, nvscope::recipe::nccl_gpu_overlap_trace, {})) nvscope::write_file("ranks" + f.suffix + ".csv", f.csv);
/// \endcode
inline std::vector<recipe_file> recipe_files(const rank_traces& ranks, recipe which, const recipe_params& p = {}) {
  switch (which) {
    case recipe::nccl_gpu_overlap_trace: {
      const auto rows = nccl_gpu_overlap_trace(ranks);
      return {{".rank_trace", csv_of(detail::overlap_trace_table(rows))}, {".grouped_trace", csv_of(detail::overlap_groups_table(nccl_gpu_overlap_groups(rows)))}};
    }
    case recipe::cuda_gpu_time_util_map: return {{"", csv_of(detail::util_map_table(cuda_gpu_time_util_map(ranks, p), false))}};
    case recipe::nccl_gpu_time_util_map: return {{"", csv_of(detail::util_map_table(nccl_gpu_time_util_map(ranks, p), true))}};
    default: return {};
  }
}

} // namespace v1
} // namespace nvscope
