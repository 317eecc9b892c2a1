// nvscope's recipes against nsys's own outputs of the same run (tests/data/nsys_recipes): the
// records nsys's recipes read from its sqlite export (turned into text lines by
// nsys_sqlite_records.py, which ctest runs first) become an nvscope trace, nvscope's recipes
// run on it with the options nsys ran with (log.txt), and every file nvscope writes for a
// recipe is compared with nsys's file of the same name in csv/: the columns, then the rows
// joined on the recipe's keys, integers exactly and decimals to the digits nsys printed.
#include <nvscope/export/recipes.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace nvscope;

namespace {

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (sep == ',' && c == '"') {
      if (quoted && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
      else quoted = !quoted;
    } else if (c == sep && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

std::uint64_t u(const std::string& s) { return std::strtoull(s.c_str(), nullptr, 10); }

// nsys's ENUM_CUDA_MEM_KIND: 0 pageable, 1 pinned, 2 device, 3 array, 4 managed, 5 device
// static, 6 managed static, 7 unknown; nvscope's enum puts unknown first.
memory_kind memory_of(const std::string& s) { return u(s) >= 7 ? memory_kind::unknown : static_cast<memory_kind>(u(s) + 1); }

struct loader {
  trace t;
  std::map<std::uint64_t, std::uint32_t> threads; // TID -> index in t.threads
  std::map<std::uint32_t, std::pair<timestamp_ns, std::uint32_t>> calls; // correlation -> the runtime call's start and thread

  std::uint32_t thread(const std::string& tid) {
    const auto it = threads.find(u(tid));
    if (it != threads.end()) return it->second;
    t.threads.push_back({u(tid), 0});
    return threads[u(tid)] = static_cast<std::uint32_t>(t.threads.size() - 1);
  }

  void kernel(const std::vector<std::string>& f) {
    kernel_config c;
    c.device = static_cast<std::uint16_t>(u(f[3])), c.context = static_cast<std::uint32_t>(u(f[4]));
    kernel_record k;
    k.start = u(f[1]), k.end = u(f[2]), k.stream = static_cast<std::uint32_t>(u(f[5])), k.correlation = static_cast<std::uint32_t>(u(f[6]));
    k.config = t.kernel_configs.intern(c);
    k.name = t.strings.intern(f[8]);
    t.kernel_names[k.name] = {t.strings.intern(f[7]), 0};
    t.kernels.push_back(k);
  }

  void copy(const std::vector<std::string>& f) {
    copy_record c;
    c.start = u(f[1]), c.end = u(f[2]), c.device = static_cast<std::uint16_t>(u(f[3])), c.context = static_cast<std::uint32_t>(u(f[4]));
    c.stream = static_cast<std::uint32_t>(u(f[5])), c.correlation = static_cast<std::uint32_t>(u(f[6])), c.bytes = u(f[7]);
    c.kind = static_cast<copy_kind>(u(f[8]) <= 10 ? u(f[8]) : 0); // nsys's ENUM_CUDA_MEMCPY_OPER 0-10: nvscope's order
    c.src = memory_of(f[9]), c.dst = memory_of(f[10]);
    t.copies.push_back(c);
  }

  void memset(const std::vector<std::string>& f) {
    memset_record m;
    m.start = u(f[1]), m.end = u(f[2]), m.device = static_cast<std::uint16_t>(u(f[3])), m.context = static_cast<std::uint32_t>(u(f[4]));
    m.stream = static_cast<std::uint32_t>(u(f[5])), m.correlation = static_cast<std::uint32_t>(u(f[6])), m.bytes = u(f[7]);
    m.memory = memory_of(f[8]);
    t.memsets.push_back(m);
  }

  void runtime(const std::vector<std::string>& f) {
    api_record a;
    a.start = u(f[1]), a.end = u(f[2]), a.thread = thread(f[3]), a.correlation = static_cast<std::uint32_t>(u(f[4]));
    a.name = t.strings.intern(f[5]);
    a.is_driver = f[5].rfind("cuda", 0) != 0; // the table holds the driver calls nsys traced too (cuLibraryLoadData, ...)
    t.api_calls.push_back(a);
    calls[a.correlation] = {a.start, a.thread};
  }

  void nvtx(const std::vector<std::string>& f) {
    range_record r;
    r.start = u(f[1]), r.end = f[2] == "-" ? r.start : u(f[2]);
    r.is_mark = f[3] == "34", r.is_push_pop = f[3] != "60";
    r.thread = thread(f[4]);
    if (f[5] != f[4]) r.end_thread = thread(f[5]);
    r.domain = f[6] == "0" ? 0 : t.strings.intern("domain " + f[6]);
    r.name = t.strings.intern(f.size() > 7 ? f[7] : "");
    t.ranges.push_back(r);
  }

  // The session as nsys's heatmaps take it (collective_loader.py's ProfileInfo): from the
  // report's time zero (`begin`, from which the pace recipes also count) for ANALYSIS_DETAILS'
  // duration (stopTime - startTime; nsys bins [0, duration), not to stopTime), so `finish` is
  // that duration; the wall clock at time zero is TARGET_INFO_SESSION_START_TIME's, which places
  // several reports against each other.
  void session(const std::vector<std::string>& f) {
    t.begin = 0, t.finish = u(f[3]);
    t.context.at_start = {0, u(f[4])};
    has_session = true;
  }
  bool has_session = false;

  // Each GPU record's launch: the runtime call of its correlation id, at the call's start.
  void launches() {
    std::map<std::uint32_t, bool> seen;
    auto add = [&](std::uint32_t correlation) {
      const auto it = calls.find(correlation);
      if (it == calls.end() || seen[correlation]) return;
      seen[correlation] = true;
      t.launches.push_back({it->second.first, correlation, it->second.second});
    };
    for (const auto& k : t.kernels) add(k.correlation);
    for (const auto& c : t.copies) add(c.correlation);
    for (const auto& m : t.memsets) add(m.correlation);
    std::stable_sort(t.launches.begin(), t.launches.end(), [](const launch_record& a, const launch_record& b) { return a.time < b.time; });
  }
};

// The trace of the records file: times as nsys stored them (from the session start, which is
// the trace's `begin`; its end nsys's session duration), lists in time order as the collector
// leaves them.
trace load_records(const std::string& path) {
  std::ifstream in(path);
  REQUIRE_MESSAGE(in.good(), "cannot read ", path, " (ctest's recipes_vs_nsys.records writes it)");
  loader l;
  for (std::string line; std::getline(in, line);) {
    const auto f = split(line, '\t');
    if (f[0] == "session") l.session(f);
    else if (f[0] == "process") l.t.process_id = u(f[1]);
    else if (f[0] == "kernel") l.kernel(f);
    else if (f[0] == "memcpy") l.copy(f);
    else if (f[0] == "memset") l.memset(f);
    else if (f[0] == "runtime") l.runtime(f);
    else if (f[0] == "nvtx") l.nvtx(f);
  }
  l.launches();
  auto by_start = [](const auto& a, const auto& b) { return a.start < b.start; };
  std::stable_sort(l.t.kernels.begin(), l.t.kernels.end(), by_start);
  std::stable_sort(l.t.copies.begin(), l.t.copies.end(), by_start);
  std::stable_sort(l.t.memsets.begin(), l.t.memsets.end(), by_start);
  std::stable_sort(l.t.api_calls.begin(), l.t.api_calls.end(), by_start);
  std::stable_sort(l.t.ranges.begin(), l.t.ranges.end(), [](const range_record& a, const range_record& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  REQUIRE_MESSAGE(l.has_session, path, " has no session line (nsys_sqlite_records.py writes it from ANALYSIS_DETAILS)");
  return l.t;
}

struct csv_table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

csv_table parse_csv(const std::string& text) {
  csv_table c;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (c.header.empty()) c.header = split(line, ',');
    else c.rows.push_back(split(line, ','));
  }
  return c;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Two printed values alike: text equal, or numbers equal where nsys printed an integer, and
// within half a unit of nsys's last printed decimal where it printed decimals.
bool same_value(const std::string& nsys, const std::string& ours) {
  if (nsys == ours) return true;
  char* end_a = nullptr;
  char* end_b = nullptr;
  const double a = std::strtod(nsys.c_str(), &end_a), b = std::strtod(ours.c_str(), &end_b);
  if (nsys.empty() || ours.empty() || *end_a != '\0' || *end_b != '\0') return false;
  const auto dot = nsys.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(nsys.size() - dot - 1);
  return std::fabs(a - b) <= 0.5 * std::pow(10.0, -decimals) * (1 + 1e-12) + 1e-9 * std::fabs(a) * (decimals > 0);
}

// How one file's rows are joined: by these columns, by row number when none are given, or as a
// multiset of whole rows ("*": a kernel's rows have no key).
std::vector<std::string> keys_of(const std::string& recipe, const std::string& file) {
  if (file == "rank_trace") return {"Name", "Start", "Rank"};
  if (file == "grouped_trace") return {"Name"};
  if (file != "analysis") return {};
  if (recipe == "cuda_gpu_time_util_map" || recipe == "nccl_gpu_time_util_map") return {"Duration", "PID", "Device ID", "Rank"};
  if (recipe == "gpu_gaps" || recipe == "gpu_time_util") return {"PID", "Device ID", "Start"};
  if (recipe == "cuda_api_sync") return {"TID", "Start"};
  if (recipe == "cuda_gpu_kern_hist") return {"*"};
  return {"Stream ID", "Start"};
}

// The differences of nvscope's table from nsys's, one line each (the first few).
std::vector<std::string> differences(const std::string& recipe, const std::string& file, const csv_table& nsys, const csv_table& ours) {
  std::vector<std::string> out;
  std::vector<std::string> wanted = nsys.header; // nsys's columns
  // stats.parquet's index (the name column: Text, or Shortname for kernels) is csv/'s first
  // column where bench/fidelity/recipes_data.py kept it; data written before it dropped it.
  const bool index_dropped = file == "stats" && !nsys.header.empty() && nsys.header[0] == "Count";
  std::vector<std::string> have;
  for (std::size_t i = 0; i < ours.header.size(); ++i)
    if (!(index_dropped && i == 0)) have.push_back(ours.header[i]);
  if (have != wanted) {
    std::string a, b;
    for (const auto& h : wanted) a += h + "|";
    for (const auto& h : have) b += h + "|";
    out.push_back("columns: nsys " + a + " nvscope " + b); // then the columns both have, compared
  }
  std::vector<std::size_t> our_col;
  for (const auto& h : nsys.header) our_col.push_back(static_cast<std::size_t>(std::find(ours.header.begin(), ours.header.end(), h) - ours.header.begin()));
  const auto keys = keys_of(recipe, file);
  auto key_of = [&](const std::vector<std::string>& row, bool mine, std::size_t index) {
    if (keys.empty()) return std::to_string(index);
    std::string k;
    for (std::size_t c = 0; c < nsys.header.size(); ++c) {
      if (keys[0] != "*" && std::find(keys.begin(), keys.end(), nsys.header[c]) == keys.end()) continue;
      const auto i = mine ? our_col[c] : c;
      k += (i < row.size() ? row[i] : std::string("?")) + "|";
    }
    return k;
  };
  std::multimap<std::string, std::size_t> mine;
  for (std::size_t i = 0; i < ours.rows.size(); ++i) mine.emplace(key_of(ours.rows[i], true, i), i);
  for (std::size_t i = 0; i < nsys.rows.size() && out.size() < 8; ++i) {
    const auto k = key_of(nsys.rows[i], false, i);
    const auto it = mine.find(k);
    if (it == mine.end()) {
      out.push_back("row " + std::to_string(i) + " (" + k + ") only in nsys's");
      continue;
    }
    const auto& row = ours.rows[it->second];
    for (std::size_t c = 0; c < nsys.header.size(); ++c) {
      if (our_col[c] >= ours.header.size()) continue; // a missing column, said above
      const auto& theirs = c < nsys.rows[i].size() ? nsys.rows[i][c] : std::string();
      const auto& value = our_col[c] < row.size() ? row[our_col[c]] : std::string();
      if (!same_value(theirs, value)) out.push_back("row " + std::to_string(i) + " (" + k + ") " + nsys.header[c] + ": nsys " + theirs + ", nvscope " + value);
    }
    mine.erase(it);
  }
  for (const auto& [k, i] : mine) {
    if (out.size() >= 8) break;
    out.push_back("row " + std::to_string(i) + " (" + k + ") only in nvscope's");
  }
  return out;
}

std::string data_dir() { return std::string(NVSCOPE_TEST_SOURCE_DIR) + "/tests/data/nsys_recipes"; }

// The recipe items nsys ran (tests/data/nsys_recipes/log.txt) and the files nsys wrote for
// each; "no data" for those nsys found nothing for.
struct recipe_case {
  const char* item;
  std::vector<std::string> files;
};

std::vector<recipe_case> cases() {
  const std::vector<std::string> pace = {"pace_start", "pace_end", "pace_duration", "pace_duration_accum", "pace_delta", "pace_delta_accum",
                                         "pace_delta_stats", "stats"};
  return {{"gpu_gaps:gap=0", {"analysis"}},
          {"gpu_time_util", {"analysis"}},
          {"cuda_api_sync", {"analysis"}},
          {"cuda_memcpy_async", {}},
          {"cuda_memcpy_sync", {"analysis"}},
          {"cuda_memset_sync", {}},
          {"cuda_gpu_kern_hist", {"analysis"}},
          {"cuda_gpu_kern_pace:name=scale_kernel", pace},
          {"nvtx_pace:name=forward", pace},
          {"nvtx_gpu_proj_pace:name=forward", pace},
          {"cuda_gpu_time_util_map", {"analysis"}}};
}

// Whether nvscope's `files` of recipe `name` equal nsys's files `wanted` (each read from
// `path_of(file)`); the differences are printed. No `wanted` file: nsys found no data, and
// nvscope's tables must hold no rows either.
template <class PathOf>
bool files_equal(const std::string& name, const std::vector<recipe_file>& files, const std::vector<std::string>& wanted, PathOf path_of) {
  std::vector<std::string> diffs;
  if (wanted.empty()) {
    for (const auto& f : files)
      if (parse_csv(f.csv).rows.size() > 0) diffs.push_back("nsys found no data; nvscope's" + f.suffix + " has rows");
  }
  for (const auto& file : wanted) {
    const std::string suffix = file == "analysis" ? "" : "." + file;
    const auto mine = std::find_if(files.begin(), files.end(), [&](const recipe_file& f) { return f.suffix == suffix; });
    if (mine == files.end()) {
      diffs.push_back("nvscope writes no " + name + suffix + ".csv");
      continue;
    }
    const auto theirs = parse_csv(file_text(path_of(file)));
    REQUIRE_MESSAGE(!theirs.header.empty(), "no nsys csv for ", name, " ", file, " (", path_of(file), ")");
    for (const auto& d : differences(name, file, theirs, parse_csv(mine->csv))) diffs.push_back(file + ": " + d);
  }
  for (const auto& d : diffs) MESSAGE(name << " " << d);
  return diffs.empty();
}

// Whether one recipe's files equal nsys's in tests/data/nsys_recipes/csv.
bool recipe_equal(const trace& t, const recipe_case& c) {
  const auto chosen = parse_recipes(c.item);
  REQUIRE(chosen.error.empty());
  const std::string name = recipe_name(chosen.recipes[0]);
  return files_equal(name, recipe_files(t, chosen.recipes[0], chosen.params[0]), c.files,
                     [&](const std::string& file) { return data_dir() + "/csv/nsys_recipe_" + name + "__" + file + ".csv"; });
}

std::string nccl_dir() { return std::string(NVSCOPE_TEST_SOURCE_DIR) + "/tests/data/nsys_nccl"; }

} // namespace

TEST_CASE("recipes: equal to nsys's own outputs of the same run (tests/data/nsys_recipes)") {
  const char* records = std::getenv("NVSCOPE_NSYS_RECORDS");
  REQUIRE_MESSAGE(records != nullptr, "NVSCOPE_NSYS_RECORDS: the records file nsys_sqlite_records.py wrote (ctest sets it)");
  const auto t = load_records(records);
  REQUIRE(t.kernels.size() == 138); // what nsys.sqlite holds: the loader read it whole
  REQUIRE(t.copies.size() == 40);
  REQUIRE(t.memsets.size() == 16);
  REQUIRE(t.api_calls.size() == 344);
  int equal = 0, compared = 0;
  for (const auto& c : cases()) {
    const bool same = recipe_equal(t, c);
    CHECK_MESSAGE(same, std::string(c.item), " differs from nsys's output");
    equal += same, ++compared;
  }
  MESSAGE("recipes equal to nsys: " << equal << " of " << compared);
}

// The NCCL recipes over nsys's two reports of one DDP run (tests/data/nsys_nccl): both ranks'
// records as two traces in nsys's order (its --input sorted by file name: r0, r1), nvscope's
// recipes over both against nsys's CSVs, rows joined on nsys's keys. A heatmap's nsys CSV
// (nsys_recipe_NAME/analysis.csv) is compared where it is in the folder.
TEST_CASE("recipes: the NCCL recipes equal to nsys's on two ranks of a DDP run (tests/data/nsys_nccl)") {
  const char* records = std::getenv("NVSCOPE_NSYS_NCCL_RECORDS");
  REQUIRE_MESSAGE(records != nullptr, "NVSCOPE_NSYS_NCCL_RECORDS: the two ranks' records files, comma-separated (ctest sets it)");
  const auto paths = split(records, ',');
  REQUIRE(paths.size() == 2);
  const auto r0 = load_records(paths[0]), r1 = load_records(paths[1]);
  REQUIRE(r0.kernels.size() == 726); // what r0.sqlite and r1.sqlite hold
  REQUIRE(r1.kernels.size() == 726);
  const rank_traces ranks{&r0, &r1};
  const auto overlap = nccl_gpu_overlap_trace(ranks);
  REQUIRE(overlap.size() == 1452);
  CHECK(std::any_of(overlap.begin(), overlap.end(), [](const overlap_trace_row& r) { return !r.communication && r.communication_sum > 0; })); // the run has overlap to compare
  CHECK(files_equal("nccl_gpu_overlap_trace", recipe_files(ranks, recipe::nccl_gpu_overlap_trace), {"rank_trace", "grouped_trace"},
                    [](const std::string& file) { return nccl_dir() + "/nsys_recipe_nccl_gpu_overlap_trace/" + file + ".csv"; }));
  for (const auto which : {recipe::nccl_gpu_time_util_map, recipe::cuda_gpu_time_util_map}) {
    const std::string name = recipe_name(which), path = nccl_dir() + "/nsys_recipe_" + name + "/analysis.csv";
    if (!std::ifstream(path).good()) {
      MESSAGE(name << ": nsys's output not in tests/data/nsys_nccl yet (its README says how to add it)");
      continue;
    }
    CHECK_MESSAGE(files_equal(name, recipe_files(ranks, which), {"analysis"}, [&](const std::string&) { return path; }), name, " differs from nsys's output");
  }
}
