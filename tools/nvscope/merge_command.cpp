// `nvscope merge`: see merge_command.hpp and docs/merge.md.

#include "merge_command.hpp"

#include <nvscope/analyze/merge.hpp>
#include <nvscope/analyze/step_names.hpp>
#include <nvscope/trace/totals.hpp>
#include <nvscope/detail/quote.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <map>
#include <new>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <dirent.h>
#include <sys/stat.h>

namespace nvscope {
inline namespace v1 {
namespace tool {
namespace {

using json = nlohmann::json;

constexpr const char* usage_text =
    "usage: nvscope merge [options] DIR|FILES...\n"
    "  DIR, FILES          per-rank Chrome traces nvscope run wrote (STEM.trace.json; a folder: every\n"
    "                      *.trace.json in it)\n"
    "  -o, --output OUT    also write the report as JSON to OUT, and the merged Chrome trace (one\n"
    "                      process per rank, on the aligned clock) to OUT.trace.json (OUT less .json)\n"
    "  --no-trace          with -o: the JSON report only\n"
    "One screen on stdout: each host's clock offset (from the collectives' ends), per rank its steps,\n"
    "GPU busy, communication and compute time, overlap, the stragglers, and the ranks' running totals\n"
    "(from the STEM.json beside each trace) merged. A step lost on any rank (STEM.steps.jsonl) is left\n"
    "out on every rank. Partial input is said in one line each on stderr and the rest merged.\n"
    "docs/merge.md has every definition.\n"
    "exit status: 0 merged, 2 misuse or nothing to merge\n";

std::string in_quotes(const std::string& s) { return "'" + detail::escape_input(s, 200) + "'"; }

// A step that lost records on one rank, as STEM.steps.jsonl says (the bounded collection's
// per-step summaries: collect/detail/long_run.hpp).
struct lossy_step {
  std::string name;
  timestamp_ns begin = 0, end = 0; // the trace clock
  std::uint64_t records_lost = 0;   // dropped records + buffer errors + launches lost
  std::size_t step = 0;             // its index among the rank's steps (the merge's numbering)
};

// One rank's input, as read.
struct rank_input {
  std::string file;
  std::string job;      // "SLURM_JOB_ID=77 ..." or ""
  long long world_size = -1;
  timestamp_ns origin = 0; // otherData.time_origin_ns: what its "ts": 0 stands for
  rank_profile profile;
  std::string summary;     // the summary beside it (STEM.json), "" when there is none
  std::uint64_t dropped_records = 0, incomplete_records = 0; // its "losses"
  bool has_totals = false; // the summary carried "totals" (export/totals_json.hpp)
  totals run;              // its running totals, sketches whole
  std::string totals_error; // why its "totals" could not be read, "" when they were or are absent
  std::vector<lossy_step> lossy; // its steps that lost records (STEM.steps.jsonl)
};

struct merge_args {
  std::vector<std::string> inputs;
  std::string output;
  bool trace = true; // with -o: the merged Chrome trace too
  bool help = false;
};

std::string parse_args(int argc, const char* const* argv, merge_args& a) {
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i] ? argv[i] : "";
    if (arg == "-h" || arg == "--help") return a.help = true, "";
    if (arg == "-o" || arg == "--output") {
      if (i + 1 >= argc || argv[i + 1][0] == '-') return arg + " wants a file name";
      a.output = argv[++i];
    } else if (arg == "--no-trace") {
      a.trace = false;
    } else if (arg.rfind("--output=", 0) == 0) {
      a.output = arg.substr(9);
    } else if (arg.size() > 1 && arg[0] == '-') {
      return "unknown option " + in_quotes(arg) + " (see nvscope merge --help)";
    } else {
      a.inputs.push_back(arg);
    }
  }
  if (a.inputs.empty()) return "want a folder or the per-rank traces to merge";
  return "";
}

bool is_folder(const std::string& path) {
  struct ::stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The *.trace.json of a folder, sorted.
std::vector<std::string> traces_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n.size() > 11 && n.compare(n.size() - 11, 11, ".trace.json") == 0) out.push_back(dir + "/" + n);
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

long long number_or(const json& j, const char* key, long long fallback) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<long long>() : fallback;
}

// Thrown by trace_scanner where the text is not JSON.
struct not_json {};

// A one-pass reader of a Chrome trace's text: the merge keeps a few fields of each event, so
// the events are scanned in place (every other value skipped by its brackets and quotes)
// rather than built into a JSON document; only "otherData", a few hundred bytes, is parsed
// whole. Linear in the file; reads any JSON object layout, not only nvscope's key order.
class trace_scanner {
 public:
  explicit trace_scanner(std::string_view text) : s_(text) {}

  char peek() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\n' || s_[at_] == '\r' || s_[at_] == '\t')) ++at_;
    if (at_ >= s_.size()) throw not_json{};
    return s_[at_];
  }
  void expect(char c) {
    if (peek() != c) throw not_json{};
    ++at_;
  }
  bool take(char c) { return peek() == c ? (++at_, true) : false; }

  // A string's text without its quotes; escapes decoded (rare in names) into `scratch`.
  std::string_view string(std::string& scratch) {
    expect('"');
    const std::size_t from = at_;
    bool escaped = false;
    for (;;) {
      const void* q = std::memchr(s_.data() + at_, '"', s_.size() - at_);
      if (q == nullptr) throw not_json{};
      const std::size_t quote = static_cast<std::size_t>(static_cast<const char*>(q) - s_.data());
      std::size_t slashes = 0; // a quote after an odd run of backslashes is escaped
      while (quote - slashes > from && s_[quote - slashes - 1] == '\\') ++slashes;
      escaped = escaped || std::memchr(s_.data() + at_, '\\', quote - at_) != nullptr;
      at_ = quote + 1;
      if (slashes % 2 == 0) break;
    }
    const std::string_view raw = s_.substr(from, at_ - 1 - from);
    if (!escaped) return raw;
    const auto decoded = nlohmann::json::parse(s_.substr(from - 1, at_ - from + 1), nullptr, false);
    if (!decoded.is_string()) throw not_json{};
    return scratch = decoded.get<std::string>();
  }
  // A number; plain decimals ("1234.567", what the writer makes) without strtod.
  double number() {
    peek();
    std::size_t n = at_;
    const bool negative = s_[n] == '-';
    n += negative;
    std::uint64_t whole = 0, fraction = 0, scale = 1;
    const std::size_t digits_from = n;
    for (; n < s_.size() && is_digit(s_[n]) && n - digits_from < 18; ++n) whole = whole * 10 + static_cast<unsigned>(s_[n] - '0');
    if (n < s_.size() && s_[n] == '.')
      for (++n; n < s_.size() && is_digit(s_[n]) && scale < 1000000000000ull; ++n)
        fraction = fraction * 10 + static_cast<unsigned>(s_[n] - '0'), scale *= 10;
    if (n == digits_from || (n < s_.size() && (is_digit(s_[n]) || s_[n] == 'e' || s_[n] == 'E' || s_[n] == '.'))) return slow_number();
    at_ = n;
    const double v = static_cast<double>(whole) + static_cast<double>(fraction) / static_cast<double>(scale);
    return negative ? -v : v;
  }
  // Skips one value of any kind; returns the text it spanned.
  std::string_view skip() {
    const char first = peek();
    const std::size_t from = at_;
    std::string unused;
    if (first == '"') {
      string(unused);
    } else if (first == '{' || first == '[') {
      skip_nested();
    } else {
      while (at_ < s_.size() && !ends_scalar(s_[at_])) ++at_;
    }
    return s_.substr(from, at_ - from);
  }

 private:
  static bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
  static bool ends_scalar(char c) noexcept {
    return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
  }
  double slow_number() {
    std::size_t n = 0;
    while (at_ + n < s_.size() && !ends_scalar(s_[at_ + n]) && n < 63) ++n;
    char buf[64];
    std::memcpy(buf, s_.data() + at_, n);
    buf[n] = 0;
    char* stop = nullptr;
    const double v = std::strtod(buf, &stop);
    if (n == 0 || stop != buf + n) throw not_json{};
    at_ += n;
    return v;
  }

  // An object or array: brackets counted, strings stepped over whole.
  void skip_nested() {
    std::size_t depth = 0;
    do {
      if (at_ >= s_.size()) throw not_json{};
      const char c = s_[at_];
      if (c == '"') {
        std::string unused;
        string(unused);
        continue;
      }
      if (c != '{' && c != '[' && c != '}' && c != ']') {
        ++at_;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') --depth;
      ++at_;
    } while (depth > 0);
  }

  std::string_view s_;
  std::size_t at_ = 0;
};

// Kernel names numbered alike on every rank; the map's keys point into `spelled`.
struct name_table {
  std::deque<std::string> spelled;
  std::unordered_map<std::string_view, std::uint32_t> id;

  std::uint32_t of(std::string_view name) {
    if (const auto it = id.find(name); it != id.end()) return it->second;
    spelled.emplace_back(name);
    return id.emplace(spelled.back(), static_cast<std::uint32_t>(spelled.size() - 1)).first->second;
  }
};

// What the merge keeps of one event.
struct scanned_event {
  std::string_view ph, cat, name, range; // range: a kernel's args.range, the range that owns it
  double ts = -1, dur = 0, tid = 0; // a kernel's tid is its stream (export/chrome_trace.hpp)
  double bind_id = -1;              // the launch's correlation id: the arrow from a launch to its GPU work
  bool flow_out = false;            // the arrow starts here: a launch (its host call, or a 1 ns "launch" slice)
};

// args.range of a kernel's args object; every other arg skipped.
std::string_view scan_args(trace_scanner& in, std::string& scratch) {
  std::string_view range;
  in.expect('{');
  if (in.take('}')) return range;
  do {
    std::string key_scratch;
    const bool is_range = in.string(key_scratch) == "range";
    in.expect(':');
    if (is_range && in.peek() == '"') range = in.string(scratch);
    else in.skip();
  } while (in.take(','));
  in.expect('}');
  return range;
}

scanned_event scan_event(trace_scanner& in, std::string& scratch, std::string& range_scratch) {
  scanned_event e;
  in.expect('{');
  if (in.take('}')) return e;
  do {
    std::string key_scratch;
    const std::string_view key = in.string(key_scratch);
    in.expect(':');
    const char c = in.peek();
    if (key == "ph" && c == '"') e.ph = in.string(key_scratch), e.ph = e.ph == "X" ? "X" : "";
    else if (key == "cat" && c == '"') e.cat = in.string(key_scratch), e.cat = e.cat == "kernel" ? "kernel" : e.cat == "nvtx" ? "nvtx" : "";
    else if (key == "name" && c == '"') e.name = in.string(scratch);
    else if (key == "ts" && c != '"' && c != '{' && c != '[') e.ts = in.number();
    else if (key == "dur" && c != '"' && c != '{' && c != '[') e.dur = in.number();
    else if (key == "tid" && c != '"' && c != '{' && c != '[') e.tid = in.number();
    else if (key == "args" && c == '{') e.range = scan_args(in, range_scratch);
    else if (key == "bind_id" && c != '"' && c != '{' && c != '[') e.bind_id = in.number();
    else if (key == "flow_out") e.flow_out = in.skip() == "true";
    else in.skip();
  } while (in.take(','));
  in.expect('}');
  return e;
}

// A kernel's launch: the start of the slice its arrow comes from (the same bind_id with
// flow_out), found once every event has been read (either may come first). Ids beyond 2^53
// are not exact in a double and are left unmatched.
void attach_launches(rank_profile& p, std::vector<std::pair<double, std::size_t>>& kernel_binds,
                     std::vector<std::pair<double, timestamp_ns>>& sources) {
  std::sort(sources.begin(), sources.end());
  for (const auto& [id, k] : kernel_binds) {
    const auto it = std::lower_bound(sources.begin(), sources.end(), std::make_pair(id, timestamp_ns{0}));
    if (it != sources.end() && it->first == id) p.kernels[k].launch = it->second;
  }
}

// Kernels (cat "kernel") with their launches, and step ranges (cat "nvtx", a step name) of the
// events, on the trace clock: "ts" (microseconds from time_origin_ns, to the nanosecond) + the
// origin, which is added once "otherData" has been read (it may come after the events).
void scan_events(trace_scanner& in, name_table& names, rank_profile& p) {
  const auto ns = [](double us) { return static_cast<timestamp_ns>(std::llround(std::max(0.0, us) * 1000.0)); };
  const auto step = step_matcher(analysis_options{});
  std::string scratch, range_scratch;
  std::vector<std::pair<double, std::size_t>> kernel_binds; // (bind_id, index in p.kernels)
  std::vector<std::pair<double, timestamp_ns>> sources;     // (bind_id, the launch slice's start)
  in.expect('[');
  if (in.take(']')) return;
  do {
    if (in.peek() != '{') {
      in.skip();
      continue;
    }
    const auto e = scan_event(in, scratch, range_scratch);
    if (e.ph != "X" || e.ts < 0 || e.ts > 1e12 || e.dur > 1e12) continue; // beyond 11 days: not a time
    const timestamp_ns start = ns(e.ts), end = start + ns(e.dur);
    const auto stream = e.tid > 0 && e.tid < 4294967296.0 ? static_cast<std::uint32_t>(e.tid) : 0u;
    const bool bound = e.bind_id >= 0 && e.bind_id < 9007199254740992.0;
    if (e.cat == "kernel") {
      if (bound && !e.flow_out) kernel_binds.emplace_back(e.bind_id, p.kernels.size());
      p.kernels.push_back({start, end, names.of(e.name), is_communication_kernel(e.name), stream, e.range.empty() ? no_range : names.of(e.range)});
    } else if (e.cat == "nvtx" && step(e.name)) p.steps.push_back({start, end});
    else if (bound && e.flow_out) sources.emplace_back(e.bind_id, start);
  } while (in.take(','));
  in.expect(']');
  attach_launches(p, kernel_binds, sources);
}

// The whole file's text; false when it cannot be read.
bool read_text(const std::string& file, std::string& text) {
  std::ifstream f(file, std::ios::binary);
  if (!f) return false;
  f.seekg(0, std::ios::end);
  const auto size = f.tellg();
  if (size < 0) return false;
  text.resize(static_cast<std::size_t>(size));
  f.seekg(0);
  return static_cast<bool>(f.read(text.data(), static_cast<std::streamsize>(text.size()))) || text.empty();
}

// The top-level object: "otherData" parsed whole, "traceEvents" scanned, the rest skipped.
json scan_trace(std::string_view text, name_table& names, rank_profile& p) {
  trace_scanner in(text);
  json other;
  std::string scratch;
  in.expect('{');
  if (in.take('}')) return other;
  do {
    const std::string key(in.string(scratch));
    in.expect(':');
    if (key == "otherData") other = json::parse(in.skip(), nullptr, false);
    else if (key == "traceEvents" && in.peek() == '[') scan_events(in, names, p);
    else in.skip();
  } while (in.take(','));
  in.expect('}');
  return other;
}

constexpr const char* merged_trace_format = "nvscope-merged-trace";

// Provenance of otherData into `in`; an error line when it is missing.
std::string read_provenance(const json& od, rank_input& in) {
  if (!od.is_object() || od.value("producer", "") != "nvscope") return "not a Chrome trace nvscope wrote";
  if (od.contains("format") && od["format"].is_object() && od["format"].value("name", "") == merged_trace_format)
    return "a merged trace (nvscope merge wrote it), not one rank's";
  if (!od.contains("provenance") || !od["provenance"].is_object() || !od.contains("time_origin_ns"))
    return "written before nvscope recorded provenance and the time origin";
  const json& p = od["provenance"];
  in.profile.rank = number_or(p, "rank", -1);
  if (in.profile.rank < 0) return "records no rank (run it under a launcher that sets RANK, SLURM_PROCID, ...)";
  in.profile.host = p.value("host", "");
  in.world_size = number_or(p, "world_size", -1);
  if (p.contains("job_ids") && p["job_ids"].is_object())
    for (const auto& id : p["job_ids"].items())
      in.job += (in.job.empty() ? "" : " ") + id.key() + "=" + (id.value().is_string() ? id.value().get<std::string>() : "");
  if (p.contains("clock_start") && p["clock_start"].is_object())
    in.profile.at_start = {static_cast<timestamp_ns>(number_or(p["clock_start"], "trace_ns", 0)),
                           static_cast<std::uint64_t>(number_or(p["clock_start"], "wall_ns", 0))};
  return "";
}

std::uint64_t count_of(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned()) throw std::invalid_argument(std::string("no count \"") + key + "\"");
  return it->get<std::uint64_t>();
}

// A sketch as export/totals_json.hpp writes it; throws std::invalid_argument where it is not one.
duration_sketch sketch_of(const json& j) {
  if (!j.is_object() || !j.contains("buckets") || !j["buckets"].is_array()) throw std::invalid_argument("a sketch without buckets");
  sketch_parts p;
  p.zero_count = count_of(j, "zero_count");
  const auto first = count_of(j, "first_bucket");
  if (first >= duration_sketch::max_buckets) throw std::invalid_argument("a bucket past max_buckets");
  p.first_bucket = static_cast<std::uint32_t>(first);
  for (const auto& b : j["buckets"]) {
    if (!b.is_number_unsigned()) throw std::invalid_argument("a bucket count that is not a count");
    p.buckets.push_back(b.get<std::uint64_t>());
  }
  p.min = count_of(j, "min_ns"), p.max = count_of(j, "max_ns"), p.sum_high = count_of(j, "sum_high"), p.sum_low = count_of(j, "sum_low");
  auto s = duration_sketch::from_parts(p);
  if (s.count() != count_of(j, "count")) throw std::invalid_argument("its buckets do not add up to its count");
  return s;
}

// The summary's "totals" into `in.run`; a sketch that is not one leaves them all out, said why.
void read_totals(const json& j, rank_input& in) {
  const auto t = j.find("totals");
  if (t == j.end()) return;
  try {
    if (!t->is_object()) throw std::invalid_argument("not an object");
    for (const auto& k : t->value("kernels", json::array())) in.run.kernels[k.at("name").get<std::string>()].merge(sketch_of(k.at("sketch")));
    for (const auto& r : t->value("ranges", json::array()))
      in.run.ranges[range_key{r.at("domain").get<std::string>(), r.at("name").get<std::string>(), r.value("style", "PushPop") != "StartEnd"}].merge(
          sketch_of(r.at("sketch")));
    if (t->contains("steps")) in.run.steps = sketch_of(t->at("steps"));
    const json run = t->value("run", json::object());
    auto& r = in.run.run;
    const std::pair<const char*, std::uint64_t*> fields[] = {{"kernels", &r.kernels}, {"kernel_ns", &r.kernel_ns}, {"copies", &r.copies},
                                                             {"copy_ns", &r.copy_ns}, {"memsets", &r.memsets}, {"memset_ns", &r.memset_ns},
                                                             {"syncs", &r.syncs},     {"sync_ns", &r.sync_ns}, {"ranges", &r.ranges},
                                                             {"dropped_records", &r.lost.dropped_records}};
    for (const auto& [key, field] : fields) *field = run.contains(key) ? count_of(run, key) : 0;
    in.has_totals = true;
  } catch (const std::exception& e) {
    in.run = totals{};
    in.totals_error = e.what();
  }
}

// The summary nvscope run wrote beside STEM.trace.json (STEM.json, with --outputs=json,trace):
// its losses, which the Chrome trace does not carry.
void read_losses(const std::string& file, rank_input& in) {
  const std::string summary = file.substr(0, file.size() - 11) + ".json";
  if (file.size() <= 11 || file.compare(file.size() - 11, 11, ".trace.json") != 0) return;
  std::ifstream f(summary, std::ios::binary);
  if (!f) return;
  const json j = json::parse(f, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("losses") || !j["losses"].is_object()) return;
  in.summary = summary;
  in.dropped_records = static_cast<std::uint64_t>(std::max(0LL, number_or(j["losses"], "dropped_records", 0)));
  in.incomplete_records = static_cast<std::uint64_t>(std::max(0LL, number_or(j["losses"], "incomplete_records", 0)));
  read_totals(j, in);
}

// The lossy steps of STEM.steps.jsonl beside STEM.trace.json (nvscope run's bounded
// collection, the default, writes it); a line that is not JSON (a cut last line) is skipped.
void read_lossy_steps(const std::string& file, rank_input& in) {
  std::ifstream f(file.substr(0, file.size() - 11) + ".steps.jsonl", std::ios::binary);
  std::string line;
  while (f && std::getline(f, line)) {
    const json j = json::parse(line, nullptr, false);
    if (!j.is_object() || !j.value("lossy", false)) continue;
    lossy_step s;
    s.name = j.value("name", "");
    s.begin = static_cast<timestamp_ns>(std::max(0LL, number_or(j, "begin_ns", 0)));
    s.end = static_cast<timestamp_ns>(std::max(0LL, number_or(j, "end_ns", 0)));
    for (const char* key : {"dropped_records", "buffer_errors", "launches_lost"})
      s.records_lost += static_cast<std::uint64_t>(std::max(0LL, number_or(j, key, 0)));
    in.lossy.push_back(s);
  }
}

// One file into `in`; an error line (what is wrong) when it cannot be merged.
// `text`: the caller's buffer, kept from file to file.
std::string read_rank(const std::string& file, name_table& names, rank_input& in, std::string& text) {
  if (!read_text(file, text)) return "cannot read it";
  json od;
  try {
    od = scan_trace(text, names, in.profile);
  } catch (const not_json&) {
    return "not JSON";
  }
  in.file = file;
  if (const auto why = read_provenance(od, in); !why.empty()) return why;
  const auto origin = in.origin = static_cast<timestamp_ns>(number_or(od, "time_origin_ns", 0));
  for (auto& k : in.profile.kernels) k.start += origin, k.end += origin, k.launch += k.launch ? origin : 0; // 0: no launch recorded
  for (auto& s : in.profile.steps) s.begin += origin, s.end += origin;
  std::sort(in.profile.steps.begin(), in.profile.steps.end(),
            [](const time_window& a, const time_window& b) { return a.begin < b.begin; });
  read_losses(file, in);
  read_lossy_steps(file, in);
  return "";
}

// Keeps one job (the one most inputs belong to), one input per rank; says what it left out.
std::vector<rank_input> choose_inputs(std::vector<rank_input> all, std::vector<std::string>& notes) {
  std::map<std::string, std::vector<std::string>> jobs;
  for (const auto& r : all) jobs[r.job].push_back(r.file);
  std::string kept;
  std::size_t most = 0;
  for (const auto& [job, files] : jobs)
    if (files.size() > most) most = files.size(), kept = job;
  for (const auto& [job, files] : jobs)
    if (job != kept)
      notes.push_back(std::to_string(files.size()) + " trace(s) of another job (" + (job.empty() ? "no job id" : job) +
                      ", not " + (kept.empty() ? "no job id" : kept) + ") left out, first " + in_quotes(files[0]));
  std::vector<rank_input> out;
  std::map<long long, std::string> seen;
  std::stable_sort(all.begin(), all.end(), [](const rank_input& a, const rank_input& b) { return a.profile.rank < b.profile.rank; });
  for (auto& r : all) {
    if (r.job != kept) continue;
    if (const auto s = seen.find(r.profile.rank); s != seen.end()) {
      notes.push_back("rank " + std::to_string(r.profile.rank) + " appears twice (" + in_quotes(s->second) + ", " +
                      in_quotes(r.file) + "): the second left out");
      continue;
    }
    seen[r.profile.rank] = r.file;
    out.push_back(std::move(r));
  }
  return out;
}

void note_losses(const std::vector<rank_input>& in, std::vector<std::string>& notes) {
  for (const auto& r : in)
    if (r.dropped_records || r.incomplete_records)
      notes.push_back("rank " + std::to_string(r.profile.rank) + " lost records (" + std::to_string(r.dropped_records) +
                      " dropped, " + std::to_string(r.incomplete_records) + " incomplete, by " + in_quotes(r.summary) +
                      "): its figures miss them; merged");
}

// The steps lost on any rank (indexes into each rank's steps), each said in one line.
std::vector<std::size_t> lossy_steps(std::vector<rank_input>& in, std::vector<std::string>& notes) {
  std::set<std::size_t> all;
  for (auto& r : in)
    for (auto& s : r.lossy) {
      s.step = step_at(r.profile, s.begin);
      if (s.step < r.profile.steps.size()) all.insert(s.step);
      notes.push_back("rank " + std::to_string(r.profile.rank) + ": step " + in_quotes(s.name) + " lost " + std::to_string(s.records_lost) +
                      " records" + (s.step < r.profile.steps.size() ? ": step " + std::to_string(s.step) + " left out on every rank"
                                                                    : ": not a step of its trace, nothing left out"));
    }
  return {all.begin(), all.end()};
}

// Every rank's running totals merged; one line for the ranks without (or with unreadable) totals.
merged_totals merge_totals(const std::vector<rank_input>& in, std::vector<std::string>& notes) {
  std::vector<rank_totals> with;
  std::string without;
  std::size_t missing = 0;
  for (const auto& r : in) {
    if (!r.totals_error.empty())
      notes.push_back("rank " + std::to_string(r.profile.rank) + ": the running totals in " + in_quotes(r.summary) + " cannot be read (" +
                      detail::escape_input(r.totals_error, 120) + "): left out of the merged totals");
    if (r.has_totals) with.push_back({r.profile.rank, r.run});
    else if (r.totals_error.empty() && ++missing <= 8) without += (without.empty() ? "" : ", ") + std::to_string(r.profile.rank);
  }
  if (missing && !with.empty())
    notes.push_back(std::to_string(missing) + " rank(s) without running totals (no STEM.json with \"totals\" beside the trace): " + without +
                    (missing > 8 ? ", ..." : "") + "; the merged totals are of the other " + std::to_string(with.size()));
  return merge_rank_totals(with);
}

void note_missing(const std::vector<rank_input>& in, std::vector<std::string>& notes) {
  long long world = -1;
  for (const auto& r : in) world = std::max(world, r.world_size);
  std::set<long long> have;
  for (const auto& r : in) have.insert(r.profile.rank);
  std::string missing;
  std::size_t count = 0;
  for (long long r = 0; r < world; ++r)
    if (!have.count(r) && ++count <= 16) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
  if (count) notes.push_back(std::to_string(count) + " of " + std::to_string(world) + " ranks missing: " + missing +
                             (count > 16 ? ", ..." : "") + " (merged without them)");
}

// One step of one rank.
template <class Field>
double median_step(const std::vector<rank_step>& v, Field field) {
  std::vector<double> x;
  for (const auto& s : v) x.push_back(static_cast<double>(field(s)));
  return detail::median_of(x);
}

std::string us(double ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", ns / 1000.0);
  return b;
}

struct merged {
  std::vector<rank_input> ranks;
  std::vector<host_offset> hosts;
  std::vector<rank_lateness> lateness;
  std::vector<std::vector<rank_step>> steps;
  std::vector<overlap_figures> overlap;
  std::vector<std::string> notes;
  const name_table* names = nullptr;
  std::pair<std::size_t, std::size_t> fastest_slowest{0, 0}; // indexes into ranks
  std::vector<name_difference> kernel_differences, range_differences;
  merged_totals run; // the ranks' running totals merged (those whose summary carried them)
  std::vector<std::size_t> left_out; // steps lost on some rank, left out on every rank
  std::vector<collective_match> matching; // per rank, its collectives against the reference rank's
};

double host_offset_of(const merged& m, const std::string& host) {
  for (const auto& h : m.hosts)
    if (h.host == host) return h.offset_ns;
  return 0.0;
}

constexpr std::size_t differences_kept = 10, differences_shown = 5, totals_shown = 5;

json differences_json(const merged& m, const std::vector<name_difference>& v) {
  json a = json::array();
  for (const auto& d : v)
    a.push_back({{"name", m.names->spelled[d.name]}, {"fastest_ns", d.fastest_ns}, {"slowest_ns", d.slowest_ns},
                 {"fastest_count", d.fastest_count}, {"slowest_count", d.slowest_count}, {"difference_ns", d.difference_ns}});
  return a;
}

std::string differences_text(const merged& m, const std::vector<name_difference>& v, const char* what) {
  std::string s = std::string("  ") + what + (v.empty() ? ": none\n" : ":\n");
  for (std::size_t i = 0; i < v.size() && i < differences_shown; ++i) {
    char line[96];
    std::snprintf(line, sizeof line, "    %+10.1f us  (%llu vs %llu)  ", static_cast<double>(v[i].difference_ns) / 1000.0,
                  static_cast<unsigned long long>(v[i].slowest_count), static_cast<unsigned long long>(v[i].fastest_count));
    s += line + detail::escape_input(m.names->spelled[v[i].name], 100) + "\n";
  }
  return s;
}

json total_rows_json(const std::vector<merged_total>& rows, bool ranges) {
  json a = json::array();
  for (const auto& t : rows) {
    json row = {{"name", t.name}};
    if (ranges) row["domain"] = t.domain, row["style"] = t.push_pop ? "PushPop" : "StartEnd";
    row.update({{"ranks", t.ranks}, {"count", t.count}, {"sum_ns", t.sum_ns}, {"min_ns", t.min_ns}, {"max_ns", t.max_ns},
                {"p50_ns", t.p50_ns}, {"p90_ns", t.p90_ns}, {"p99_ns", t.p99_ns}, {"slowest_rank", t.slowest_rank},
                {"slowest_p50_ns", t.slowest_p50_ns}});
    a.push_back(row);
  }
  return a;
}

// The merged running totals: every kernel name and range group over the ranks that carried them.
json totals_report_json(const merged_totals& t) {
  const auto& r = t.all.run;
  return {{"ranks", t.ranks}, {"quantile_relative_error", duration_sketch::relative_error},
          {"kernels", total_rows_json(t.kernels, false)}, {"ranges", total_rows_json(t.ranges, true)},
          {"run", {{"kernels", r.kernels}, {"kernel_ns", r.kernel_ns}, {"copies", r.copies}, {"copy_ns", r.copy_ns},
                   {"memsets", r.memsets}, {"memset_ns", r.memset_ns}, {"syncs", r.syncs}, {"sync_ns", r.sync_ns},
                   {"ranges", r.ranges}, {"dropped_records", r.lost.dropped_records}}}};
}

json report_json(const merged& m) {
  json j = {{"format", {{"name", "nvscope-merge"}, {"version", 1}}}, {"notes", m.notes}};
  for (const auto& h : m.hosts)
    j["hosts"].push_back({{"host", h.host}, {"offset_ns", h.offset_ns}, {"uncertainty_ns", h.uncertainty_ns},
                          {"samples", h.samples}, {"same_host_spread_ns", h.same_host_spread_ns},
                          {"from_wall_clock", h.from_wall_clock}});
  for (std::size_t i = 0; i < m.ranks.size(); ++i) {
    const auto& in = m.ranks[i];
    json r = {{"rank", in.profile.rank}, {"host", in.profile.host}, {"file", in.file}};
    for (const auto& s : in.lossy)
      r["lossy_steps"].push_back({{"step", s.step}, {"name", s.name}, {"begin_ns", s.begin}, {"end_ns", s.end}, {"records_lost", s.records_lost},
                                  {"left_out", s.step < in.profile.steps.size()}});
    if (!in.summary.empty())
      r["losses"] = {{"summary", in.summary}, {"dropped_records", in.dropped_records}, {"incomplete_records", in.incomplete_records}};
    std::size_t step = 0; // its index among the rank's steps as read, the steps left out counted
    for (const auto& s : m.steps[i]) {
      while (std::binary_search(m.left_out.begin(), m.left_out.end(), step)) ++step;
      r["steps"].push_back({{"step", step++}, {"start_ns", s.start_ns}, {"duration_ns", s.duration_ns}, {"gpu_busy_ns", s.gpu_busy_ns},
                            {"communication_ns", s.communication_ns}, {"compute_ns", s.compute_ns}});
    }
    if (!r.contains("steps")) r["steps"] = json::array();
    r["overlap"] = {{"communication_ns", m.overlap[i].communication_ns}, {"overlap_ns", m.overlap[i].overlap_ns},
                    {"fraction", m.overlap[i].fraction}};
    const auto& l = m.lateness[i];
    r["collectives"] = {{"matched", l.collectives}, {"arrival_late_ns", l.arrival_late_ns}, {"latest_count", l.latest_count},
                        {"wait_short_ns", l.wait_short_ns}, {"straggler_by_offsets", l.straggler_by_offsets},
                        {"straggler_by_wait", l.straggler_by_wait}, {"hta_late_steps", l.hta_late_steps},
                        {"straggler_by_hta", l.straggler_by_hta}, {"ran", m.matching[i].collectives},
                        {"compared", m.matching[i].matched}, {"counts_agree", m.matching[i].counts_agree}};
    j["ranks"].push_back(r);
  }
  j["differences"] = {{"fastest_rank", m.ranks[m.fastest_slowest.first].profile.rank},
                      {"slowest_rank", m.ranks[m.fastest_slowest.second].profile.rank},
                      {"kernels", differences_json(m, m.kernel_differences)}, {"ranges", differences_json(m, m.range_differences)}};
  j["totals"] = totals_report_json(m.run);
  j["steps_left_out"] = m.left_out;
  return j;
}

// HTA's counts, most steps first, up to 8 ranks.
std::string hta_line(const std::vector<rank_lateness>& lateness) {
  std::vector<const rank_lateness*> named;
  for (const auto& l : lateness)
    if (l.straggler_by_hta) named.push_back(&l);
  std::stable_sort(named.begin(), named.end(), [](const rank_lateness* a, const rank_lateness* b) { return a->hta_late_steps > b->hta_late_steps; });
  std::string s;
  for (std::size_t i = 0; i < named.size() && i < 8; ++i)
    s += (s.empty() ? "" : ", ") + std::to_string(named[i]->rank) + " (" + std::to_string(named[i]->hta_late_steps) + ")";
  if (named.size() > 8) s += ", ... " + std::to_string(named.size() - 8) + " more";
  return s.empty() ? "none" : s;
}

// The merged totals' largest kernel names by time, `totals_shown` of them.
std::string totals_text(const merged_totals& t) {
  if (t.ranks == 0) return "running totals: none (no rank's summary carried them)\n";
  std::string s = "running totals over " + std::to_string(t.ranks) + " ranks (quantiles within 1 %), largest kernels:\n";
  s += "       count     sum us    p50 us    p90 us    p99 us  slowest rank  its p50 us  name\n";
  for (std::size_t i = 0; i < t.kernels.size() && i < totals_shown; ++i) {
    const auto& k = t.kernels[i];
    char line[160];
    std::snprintf(line, sizeof line, "  %10llu %10s %9s %9s %9s  %12lld  %10s  ", static_cast<unsigned long long>(k.count),
                  us(static_cast<double>(k.sum_ns)).c_str(), us(k.p50_ns).c_str(), us(k.p90_ns).c_str(), us(k.p99_ns).c_str(),
                  k.slowest_rank, us(k.slowest_p50_ns).c_str());
    s += line + detail::escape_input(k.name, 35) + "\n"; // 120 columns at most
  }
  if (t.kernels.size() > totals_shown) s += "  ... " + std::to_string(t.kernels.size() - totals_shown) + " more names and every range in the JSON\n";
  return s;
}

std::string report_text(const merged& m) {
  std::string s = "nvscope merge: " + std::to_string(m.ranks.size()) + " ranks on " + std::to_string(m.hosts.size()) + " hosts\n";
  s += "host offsets (from the collectives' ends, against " + m.hosts[0].host + "):\n";
  for (std::size_t i = 0; i < m.hosts.size() && i < 8; ++i) {
    const auto& h = m.hosts[i];
    s += "  " + h.host + "  " + us(h.offset_ns) + " us +- " + us(h.uncertainty_ns) + " us" +
         (h.from_wall_clock ? "  (wall clock: no collective matched)" : "  (" + std::to_string(h.samples) + " ends)") + "\n";
  }
  if (m.hosts.size() > 8) s += "  ... " + std::to_string(m.hosts.size() - 8) + " more hosts in the JSON\n";
  if (!m.left_out.empty()) {
    std::string which;
    for (std::size_t i = 0; i < m.left_out.size() && i < 8; ++i) which += (i ? ", " : "") + std::to_string(m.left_out[i]);
    s += "steps left out on every rank for losses: " + std::to_string(m.left_out.size()) + " (" + which + (m.left_out.size() > 8 ? ", ..." : "") +
         "; each rank's lost records on stderr)\n";
  }
  s += "  rank  steps  step med us  busy us  comm us  compute us  overlap %  late us\n";
  for (std::size_t i = 0; i < m.ranks.size() && i < 16; ++i) {
    char line[160];
    std::snprintf(line, sizeof line, "  %4lld  %5zu  %11s  %7s  %7s  %10s  %9.1f  %7s\n", m.ranks[i].profile.rank,
                  m.steps[i].size(), us(median_step(m.steps[i], [](const rank_step& f) { return f.duration_ns; })).c_str(),
                  us(median_step(m.steps[i], [](const rank_step& f) { return f.gpu_busy_ns; })).c_str(),
                  us(median_step(m.steps[i], [](const rank_step& f) { return f.communication_ns; })).c_str(),
                  us(median_step(m.steps[i], [](const rank_step& f) { return f.compute_ns; })).c_str(),
                  100.0 * m.overlap[i].fraction, us(m.lateness[i].arrival_late_ns).c_str());
    s += line;
  }
  if (m.ranks.size() > 16) s += "  ... " + std::to_string(m.ranks.size() - 16) + " more ranks in the JSON\n";
  std::string by_offsets, by_wait;
  for (const auto& l : m.lateness) {
    if (l.straggler_by_offsets) by_offsets += (by_offsets.empty() ? "" : ", ") + std::to_string(l.rank) + " (" + us(l.arrival_late_ns) + " us late)";
    if (l.straggler_by_wait) by_wait += (by_wait.empty() ? "" : ", ") + std::to_string(l.rank);
  }
  s += "stragglers, arrival on the aligned clock: " + (by_offsets.empty() ? std::string("none") : by_offsets) + "\n";
  s += "stragglers, shortest wait in the collectives: " + (by_wait.empty() ? std::string("none") : by_wait) + "\n";
  s += "stragglers, HTA's rule (among the 2 latest starts, steps): " + hta_line(m.lateness) + "\n";
  s += "GPU time, slowest rank " + std::to_string(m.ranks[m.fastest_slowest.second].profile.rank) + " - fastest rank " +
       std::to_string(m.ranks[m.fastest_slowest.first].profile.rank) + " (by median step), largest differences (kernels: slowest vs fastest):\n";
  s += differences_text(m, m.kernel_differences, "kernels") + differences_text(m, m.range_differences, "ranges");
  return s + totals_text(m.run);
}

// How one rank's events go into the merged trace: one process (`pid`, the rank) for all its
// processes (host and GPUs), its tracks renumbered from 1 in order of first use, its flow ids
// moved past every other rank's, "ts" moved by `shift_ns` (its origin on the aligned clock
// minus the merged trace's origin).
struct rank_rewrite {
  std::uint64_t pid = 0;
  std::int64_t shift_ns = 0;
  std::uint64_t flow_base = 0;
  std::map<std::pair<double, double>, std::uint64_t> tracks; // (pid, tid) as read -> tid
};

std::string exact_us(long long ns) {
  if (ns < 0) ns = 0;
  char b[40];
  std::snprintf(b, sizeof b, "%lld.%03lld", ns / 1000, ns % 1000);
  return b;
}

// A raw value as a number; -1 when it is not one (a string, an object, ...).
double number_in(std::string_view raw) {
  if (raw.empty() || !(raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'))) return -1;
  trace_scanner n(raw);
  return n.number();
}

// One event, its keys and raw values as read, rewritten into `out`; false: left out (its
// process metadata: the merged trace names each rank's process itself).
bool rewrite_event(trace_scanner& in, rank_rewrite& w, std::string& out) {
  std::vector<std::pair<std::string, std::string_view>> fields;
  std::string scratch;
  in.expect('{');
  if (!in.take('}')) {
    do {
      std::string key(in.string(scratch));
      in.expect(':');
      fields.emplace_back(std::move(key), in.skip());
    } while (in.take(','));
    in.expect('}');
  }
  double pid = -1, tid = -1;
  bool metadata = false, process = false;
  for (const auto& [k, v] : fields) {
    if (k == "ph") metadata = v == "\"M\"";
    if (k == "name") process = v.rfind("\"process_", 0) == 0;
    if (k == "pid") pid = number_in(v);
    if (k == "tid") tid = number_in(v);
  }
  if (metadata && process) return false;
  out += '{';
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto& [k, v] = fields[i];
    out += (i ? ",\"" : "\"") + k + "\":";
    if (k == "pid") out += std::to_string(w.pid);
    else if (k == "tid") out += std::to_string(w.tracks.emplace(std::make_pair(pid, tid), w.tracks.size() + 1).first->second);
    else if (const double ts = k == "ts" ? number_in(v) : -1; ts >= 0 && ts < 1e12) out += exact_us(std::llround(ts * 1000.0) + w.shift_ns);
    else if (const double id = k == "id" || k == "bind_id" ? number_in(v) : -1; id >= 0 && id < 1099511627776.0) out += std::to_string(w.flow_base + static_cast<std::uint64_t>(id));
    else out.append(v.data(), v.size());
  }
  out += '}';
  return true;
}

// The events of one rank's file appended to `o`, through `text` (the reused buffer); `first`:
// no event written yet (no comma before it).
bool rewrite_rank(const std::string& file, rank_rewrite& w, std::string& text, std::ofstream& o, bool& first) {
  if (!read_text(file, text)) return false;
  trace_scanner in(text);
  std::string scratch, out;
  in.expect('{');
  while (!in.take('}')) {
    const std::string key(in.string(scratch));
    in.expect(':');
    if (key != "traceEvents" || in.peek() != '[') {
      in.skip();
    } else {
      in.expect('[');
      while (!in.take(']')) {
        if (in.peek() == '{' && rewrite_event(in, w, out)) o << (first ? "\n" : ",\n") << out, first = false;
        else if (in.peek() != '{') in.skip();
        out.clear();
        in.take(',');
      }
    }
    in.take(',');
  }
  return static_cast<bool>(o);
}

// OUT less ".json", + ".trace.json".
std::string trace_path(const std::string& output) {
  const bool json_suffix = output.size() > 5 && output.compare(output.size() - 5, 5, ".json") == 0;
  return (json_suffix ? output.substr(0, output.size() - 5) : output) + ".trace.json";
}

// The merged Chrome trace: every rank's events in its own process, on the reference host's
// clock (each host's offset taken off), "ts": 0 at the earliest rank origin.
std::string write_merged_trace(const merged& m, const std::string& path) {
  std::vector<double> aligned;
  for (const auto& r : m.ranks) aligned.push_back(static_cast<double>(r.origin) - host_offset_of(m, r.profile.host));
  const double origin = *std::min_element(aligned.begin(), aligned.end());
  std::ofstream o(path, std::ios::binary);
  json other = {{"producer", "nvscope"}, {"format", {{"name", merged_trace_format}, {"version", 1}}},
                {"time_origin_ns", std::llround(origin)}, {"clock", "the first rank's host; each host's measured offset taken off"}};
  for (std::size_t i = 0; i < m.ranks.size(); ++i)
    other["ranks"].push_back({{"rank", m.ranks[i].profile.rank}, {"host", m.ranks[i].profile.host}, {"pid", i}, {"file", m.ranks[i].file}});
  o << "{\"displayTimeUnit\":\"ns\",\"otherData\":" << other.dump() << ",\"traceEvents\":[";
  bool first = true;
  for (std::size_t i = 0; i < m.ranks.size(); ++i) {
    const auto& r = m.ranks[i];
    o << (first ? "\n" : ",\n") << json{{"ph", "M"}, {"name", "process_name"}, {"pid", i}, {"args", {{"name", "rank " + std::to_string(r.profile.rank) + " (" + r.profile.host + ")"}}}}.dump();
    o << ",\n" << json{{"ph", "M"}, {"name", "process_sort_index"}, {"pid", i}, {"args", {{"sort_index", i}}}}.dump();
    first = false;
  }
  std::string text;
  for (std::size_t i = 0; i < m.ranks.size(); ++i) {
    rank_rewrite w;
    w.pid = i;
    w.shift_ns = std::llround(aligned[i] - origin);
    w.flow_base = static_cast<std::uint64_t>(i) << 40;
    try {
      if (!rewrite_rank(m.ranks[i].file, w, text, o, first)) return "cannot write " + in_quotes(path);
    } catch (const not_json&) {
      return in_quotes(m.ranks[i].file) + " changed while merging";
    }
  }
  o << "\n]}\n";
  return o ? "" : "cannot write " + in_quotes(path);
}

// One line per rank whose collectives were not all paired with the reference rank's, and one
// per stream whose collectives match no communicator of the reference rank's.
void note_matching(merged& m) {
  for (const auto& c : m.matching)
    if (!c.counts_agree)
      m.notes.push_back("rank " + std::to_string(c.rank) + " ran " + std::to_string(c.collectives) + " collectives, the reference rank " +
                        std::to_string(m.ranks[0].profile.rank) + " " + std::to_string(c.reference_collectives) + ": matched on the first " +
                        std::to_string(c.matched) + ", where their kernel names agree in order");
  for (const auto& c : m.matching)
    for (const auto stream : c.unmatched_streams)
      m.notes.push_back("rank " + std::to_string(c.rank) + ": the collectives on stream " + std::to_string(stream) +
                        " match no communicator of the reference rank " + std::to_string(m.ranks[0].profile.rank) +
                        "'s: left out of its clock offset");
}

int merge_unguarded(int argc, const char* const* argv, std::string& out, std::string& err) {
  merge_args a;
  if (const auto bad = parse_args(argc, argv, a); !bad.empty()) return err += "nvscope: merge: " + bad + "\n", 2;
  if (a.help) return out += usage_text, 0;
  std::vector<std::string> files;
  for (const auto& in : a.inputs) {
    const auto more = is_folder(in) ? traces_in(in) : std::vector<std::string>{in};
    if (more.empty()) err += "nvscope: merge: " + in_quotes(in) + " holds no *.trace.json\n";
    files.insert(files.end(), more.begin(), more.end());
  }
  merged m;
  name_table names;
  std::vector<rank_input> all;
  std::string text;
  for (const auto& f : files) {
    rank_input r;
    if (const auto why = read_rank(f, names, r, text); !why.empty()) m.notes.push_back(in_quotes(f) + ": " + why + ": left out");
    else all.push_back(std::move(r));
  }
  m.ranks = choose_inputs(std::move(all), m.notes);
  note_missing(m.ranks, m.notes);
  note_losses(m.ranks, m.notes);
  if (m.ranks.empty()) {
    for (const auto& n : m.notes) err += "nvscope: merge: " + n + "\n";
    return err += "nvscope: merge: nothing to merge\n", 2;
  }
  std::vector<rank_profile> profiles;
  for (const auto& r : m.ranks) profiles.push_back(r.profile);
  m.left_out = lossy_steps(m.ranks, m.notes);
  leave_out_steps(profiles, m.left_out);
  m.hosts = measure_host_offsets(profiles);
  for (const auto& h : m.hosts)
    if (h.from_wall_clock && h.host != m.hosts[0].host)
      m.notes.push_back("host " + h.host + ": no collective matched the reference rank's; aligned by the wall clocks read at start");
  m.matching = match_collectives(profiles);
  note_matching(m);
  m.lateness = collective_lateness(profiles, m.hosts);
  for (const auto& p : profiles) {
    m.steps.push_back(rank_steps(p, host_offset_of(m, p.host)));
    m.overlap.push_back(communication_overlap(p.kernels));
  }
  m.names = &names;
  m.fastest_slowest = fastest_and_slowest(profiles);
  const auto& fast = profiles[m.fastest_slowest.first];
  const auto& slow = profiles[m.fastest_slowest.second];
  m.kernel_differences = largest_differences(fast, slow, differences_kept, false);
  m.range_differences = largest_differences(fast, slow, differences_kept, true);
  m.run = merge_totals(m.ranks, m.notes);
  for (const auto& n : m.notes) err += "nvscope: merge: " + n + "\n";
  out += report_text(m);
  if (!a.output.empty()) {
    std::ofstream o(a.output, std::ios::binary);
    o << report_json(m).dump(1) << "\n";
    if (!o) return err += "nvscope: merge: cannot write " + in_quotes(a.output) + "\n", 2;
    out += "wrote " + a.output + "\n";
    if (a.trace) {
      if (const auto bad = write_merged_trace(m, trace_path(a.output)); !bad.empty()) return err += "nvscope: merge: " + bad + "\n", 2;
      out += "wrote " + trace_path(a.output) + "\n";
    }
  }
  return 0;
}

} // namespace

int merge_run(int argc, const char* const* argv, std::string& out, std::string& err) {
  try {
    return merge_unguarded(argc, argv, out, err);
  } catch (const std::bad_alloc&) {
    err = "nvscope: merge: out of memory (reading or merging the traces)\n";
  } catch (const std::exception& e) {
    err += "nvscope: merge: " + detail::escape_input(e.what(), 200) + "\n";
  }
  return 2;
}

int merge_main(int argc, char** argv) {
  std::string out, err;
  const int status = merge_run(argc, argv, out, err);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fwrite(err.data(), 1, err.size(), stderr);
  return status;
}

} // namespace tool
} // namespace v1
} // namespace nvscope
