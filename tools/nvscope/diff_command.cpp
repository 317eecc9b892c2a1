// `nvscope diff`: see diff_command.hpp and docs/diagnosis.md.

#include "diff_command.hpp"

#include <nvscope/analyze/diagnose/compare.hpp>
#include <nvscope/detail/quote.hpp>
#include <nvscope/export/diagnosis_json.hpp>
#include <nvscope/export/diagnosis_text.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iterator>
#include <new>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>

namespace nvscope {
inline namespace v1 {
namespace tool {
namespace {

using json = nlohmann::json;

constexpr const char* usage_text =
    "usage: nvscope diff [options] BASE NEW\n"
    "  BASE, NEW           summaries nvscope wrote (JSON with \"samples\" or \"diagnosis\".\"samples\")\n"
    "  --threshold P       fail on a regression whose interval lies wholly above P percent (default 5)\n"
    "  --gate-host         host times of ranges and steps fail the gate too (by default they are\n"
    "                      listed, not gated: they move between runs of an unchanged program)\n"
    "  --alpha A           1 - confidence of the intervals (default 0.05)\n"
    "  --resamples N       bootstrap resamples (default 2000)\n"
    "  --min-samples N     fewer samples on a side: listed, not tested (default 5)\n"
    "  --format F          text (default), csv or json\n"
    "  --allow-different-devices  compare summaries of different GPU models (refused by default)\n"
    "Every difference of device, driver or nvscope version between BASE and NEW is named on stderr,\n"
    "one line each.\n"
    "exit status: 0 no regression, 1 a regression above the threshold, 2 unreadable or mismatched input\n"
    "  (a folder, a file over 64 MiB, nesting past 64 levels, too little memory: one line saying which)\n";

struct diff_args {
  compare_options compare;
  std::string format = "text";
  std::vector<std::string> files;
  bool help = false;
  bool allow_different_devices = false;
};

std::string in_quotes(std::string_view s) { return "'" + detail::escape_input(s, 200) + "'"; }

bool parse_number(const std::string& text, double lo, double hi, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0' || !(v >= lo && v <= hi)) return false;
  out = v;
  return true;
}

// One option with its value; returns an error line or "".
std::string take_option(const std::string& name, const std::string& value, diff_args& a) {
  double v = 0;
  if (name == "--threshold") {
    std::string t = value;
    if (!t.empty() && t.back() == '%') t.pop_back();
    if (!parse_number(t, 0.0, 1e6, v)) return "--threshold wants a percentage such as 5 or 5%, not " + in_quotes(value);
    a.compare.threshold = v / 100.0;
  } else if (name == "--alpha") {
    if (!parse_number(value, 1e-6, 0.5, v)) return "--alpha wants a number in (0, 0.5], not " + in_quotes(value);
    a.compare.alpha = v;
  } else if (name == "--resamples" || name == "--min-samples") {
    if (!parse_number(value, name == "--resamples" ? 100 : 2, 1e6, v) || v != static_cast<std::uint32_t>(v))
      return name + " wants a whole number" + (name == "--resamples" ? " from 100" : " from 2") + ", not " + in_quotes(value);
    (name == "--resamples" ? a.compare.resamples : a.compare.min_samples) = static_cast<std::uint32_t>(v);
  } else if (name == "--format") {
    if (value != "text" && value != "csv" && value != "json") return "--format wants text, csv or json, not " + in_quotes(value);
    a.format = value;
  } else {
    return "unknown option " + in_quotes(name) + " (see nvscope diff --help)";
  }
  return "";
}

std::string parse_args(int argc, const char* const* argv, diff_args& a) {
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i] ? argv[i] : "";
    if (arg == "-h" || arg == "--help") {
      a.help = true;
      return "";
    }
    if (arg == "--gate-host") { // the options without a value
      a.compare.gate_host = true;
      continue;
    }
    if (arg == "--allow-different-devices") {
      a.allow_different_devices = true;
      continue;
    }
    if (arg.size() > 2 && arg.compare(0, 2, "--") == 0) {
      const auto eq = arg.find('=');
      std::string name = arg.substr(0, eq), value;
      if (eq != std::string::npos) value = arg.substr(eq + 1);
      else if (i + 1 < argc) value = argv[++i] ? argv[i] : "";
      else return name + " wants a value";
      const auto error = take_option(name, value, a);
      if (!error.empty()) return error;
      continue;
    }
    a.files.push_back(arg);
  }
  if (a.files.size() != 2) return "want two summaries, BASE and NEW (got " + std::to_string(a.files.size()) + ")";
  return "";
}

// A summary holds at most 4,096 samples a group (diagnosis_options::max_samples): a few MB.
// Larger files are refused before they are read, and nesting past summary_depth is refused
// as it is parsed, so that what a summary may take in memory is bounded.
constexpr std::size_t max_summary_bytes = std::size_t{64} << 20;
constexpr int summary_depth = 64;

bool read_file(const std::string& path, std::string& text, std::string& error) {
  struct ::stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return error = "cannot read " + in_quotes(path) + ": it is a folder", false;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read " + in_quotes(path) + ": " + std::strerror(errno);
    return false;
  }
  // By blocks, so that a pipe (<(...)) is read as well as a file, and never past the limit.
  char block[1 << 16];
  while (in.read(block, sizeof block) || in.gcount() > 0) {
    if (text.size() + static_cast<std::size_t>(in.gcount()) > max_summary_bytes)
      return error = "cannot read " + in_quotes(path) + ": it is larger than 64 MiB, the most a summary may take", false;
    text.append(block, static_cast<std::size_t>(in.gcount()));
  }
  return true;
}

// Thrown by the parser's callback past summary_depth.
struct too_deep {};

// Empties `j` from the leaves up. nlohmann's destructor moves a container's elements into a
// stack it allocates, as large as the container: freeing a large summary would need memory,
// and with none left (an address-space limit) std::terminate. Emptied first, nothing is left
// to move. The recursion is bounded: the parse refuses nesting past summary_depth.
void dismantle(json& j) noexcept {
  if (j.is_array()) {
    for (auto& e : j.get_ref<json::array_t&>()) dismantle(e);
    j.get_ref<json::array_t&>().clear();
  } else if (j.is_object()) {
    for (auto& kv : j.get_ref<json::object_t&>()) dismantle(kv.second);
    j.get_ref<json::object_t&>().clear();
  }
}

// A parsed summary that is freed by dismantle; after memory ran out it is left to the
// process' end instead (the exception is on its way to one line and exit 2).
struct summary_dom {
  json* j = new json();
  summary_dom() = default;
  summary_dom(const summary_dom&) = delete;
  summary_dom& operator=(const summary_dom&) = delete;
  ~summary_dom() {
    if (j == nullptr) return;
    dismantle(*j);
    delete j;
  }
};

// The summary's JSON, keeping only what diff reads ("samples" or "diagnosis"."samples", and
// "provenance"; the
// tables and the rest of a summary are parsed and dropped), at most summary_depth deep; false
// when it is not JSON. nlohmann's DOM builder (its own, as json::parse uses it) on a value we
// own, so that an exception never destroys a half-built DOM (see dismantle).
bool parse_summary(std::string_view text, summary_dom& dom) {
  std::string top; // the top-level member being read
  const json::parser_callback_t keep = [&top](int depth, json::parse_event_t event, json& parsed) {
    if (depth > summary_depth) throw too_deep{};
    if (event != json::parse_event_t::key) return true;
    if (depth == 1) top = parsed.is_string() ? parsed.get<std::string>() : std::string();
    if (depth == 1) return top == "samples" || top == "diagnosis" || top == "provenance";
    return depth != 2 || top != "diagnosis" || parsed == "samples";
  };
  try {
    nlohmann::detail::json_sax_dom_callback_parser<json> builder(*dom.j, keep, false);
    return json::sax_parse(text.begin(), text.end(), &builder) && !builder.is_errored();
  } catch (const std::bad_alloc&) {
    dom.j = nullptr; // left whole: freeing it could itself need memory
    throw;
  }
}

// "samples.version is missing" / "... is not a number" / "... 1.5 is not a whole number" /
// "... 2 is not 1 (...)", or empty for 1 (written 1 or 1.0).
std::string version_problem(const json& samples) {
  const auto v = samples.find("version");
  if (v == samples.end()) return "samples.version is missing";
  if (!v->is_number()) return "samples.version is not a number";
  const double d = v->get<double>();
  if (v->is_number_float() && d != std::floor(d)) return "samples.version " + v->dump() + " is not a whole number";
  if (d == 1.0) return {};
  const std::string shown = v->is_number_float() && std::fabs(d) < 1e15 ? std::to_string(static_cast<long long>(d)) : v->dump();
  return "samples.version " + shown + " is not 1 (written by another nvscope)";
}

bool read_set(const json& j, const std::string& where, sample_set& set, std::string& error) {
  if (!j.is_object()) return error = where + " is not an object", false;
  const auto name = j.find("name");
  if (name == j.end() || !name->is_string()) return error = where + ".name is missing or not a string", false;
  set.name = name->get<std::string>();
  const auto ns = j.find("ns");
  if (ns == j.end() || !ns->is_array()) return error = where + ".ns is missing or not an array", false;
  set.ns.reserve(ns->size());
  for (std::size_t i = 0; i < ns->size(); ++i) {
    const auto& v = (*ns)[i];
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
      return error = where + ".ns[" + std::to_string(i) + "] is not a non-negative integer", false;
    set.ns.push_back(v.get<std::uint64_t>());
  }
  std::sort(set.ns.begin(), set.ns.end());
  const auto count = j.find("count");
  set.count = set.ns.size();
  if (count != j.end()) {
    if (!count->is_number_unsigned()) return error = where + ".count is not a non-negative integer", false;
    set.count = std::max<std::uint64_t>(count->get<std::uint64_t>(), set.ns.size());
  }
  return true;
}

bool read_sets(const json& samples, const char* key, std::vector<sample_set>& out, std::string& error) {
  const auto it = samples.find(key);
  if (it == samples.end()) return true;
  if (!it->is_array()) return error = std::string("samples.") + key + " is not an array", false;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < it->size(); ++i) {
    sample_set set;
    if (!read_set((*it)[i], std::string("samples.") + key + "[" + std::to_string(i) + "]", set, error)) return false;
    if (!seen.insert(set.name).second)
      return error = std::string("samples.") + key + " names " + in_quotes(set.name) + " twice", false;
    out.push_back(std::move(set));
  }
  return true;
}

// Mismatch: nothing in common, so not two runs of one program.
bool shares_a_group(const run_samples& a, const run_samples& b) {
  auto any = [](const std::vector<sample_set>& x, const std::vector<sample_set>& y) {
    std::set<std::string> names;
    for (const auto& s : x) names.insert(s.name);
    for (const auto& s : y)
      if (names.count(s.name)) return true;
    return false;
  };
  return any(a.kernels, b.kernels) || any(a.ranges, b.ranges) || any(a.steps, b.steps) ||
         any(a.ranges_gpu, b.ranges_gpu) || any(a.steps_gpu, b.steps_gpu);
}

int fail(std::string& err, const std::string& line) {
  err += "nvscope: diff: " + line + "\n";
  return 2;
}

// A string member, or "" where absent or not a string (null: not known).
std::string text_of(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

void read_origin(const json& j, summary_origin& origin) {
  const auto p = j.find("provenance");
  if (p == j.end() || !p->is_object()) return;
  origin.recorded = true;
  origin.nvscope_version = text_of(*p, "nvscope_version");
  origin.driver = text_of(*p, "driver_version");
  const auto d = p->find("devices");
  if (d == p->end() || !d->is_array()) return;
  for (const auto& dev : *d) {
    if (!dev.is_object()) continue;
    origin.models.push_back(text_of(dev, "name"));
    origin.uuids.push_back(text_of(dev, "uuid"));
  }
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : " + ") + (x.empty() ? std::string("?") : x);
  return s;
}

// "what differs: 'a' A, 'b' B", or nothing when equal; "not recorded" stands for empty.
void name_difference(std::vector<std::string>& lines, const char* what, const std::string& an, const std::string& a,
                     const std::string& bn, const std::string& b) {
  if (a == b) return;
  const auto shown = [](const std::string& v) { return v.empty() ? std::string("not recorded") : detail::escape_input(v, 200); };
  lines.push_back(std::string(what) + " differs: " + an + " " + shown(a) + ", " + bn + " " + shown(b));
}

} // namespace

std::vector<std::string> origin_differences(const summary_origin& a, const std::string& an, const summary_origin& b,
                                            const std::string& bn, bool& models_differ) {
  std::vector<std::string> lines;
  models_differ = false;
  for (const auto* o : {&a, &b})
    if (!o->recorded)
      lines.push_back((o == &a ? an : bn) + " records no provenance (written before nvscope did): its device, driver "
                                           "and nvscope version are not compared");
  if (!a.recorded || !b.recorded) return lines;
  name_difference(lines, "nvscope version", an, a.nvscope_version, bn, b.nvscope_version);
  const std::string ma = joined(a.models), mb = joined(b.models);
  models_differ = !a.models.empty() && !b.models.empty() && ma != mb;
  name_difference(lines, "device", an, ma, bn, mb);
  if (ma == mb) name_difference(lines, "device UUID (same model, another GPU)", an, joined(a.uuids), bn, joined(b.uuids));
  name_difference(lines, "driver", an, a.driver, bn, b.driver);
  return lines;
}

bool read_samples(std::string_view text, run_samples& out, std::string& error) {
  summary_origin ignored;
  return read_summary(text, out, ignored, error);
}

bool read_summary(std::string_view text, run_samples& out, summary_origin& origin, std::string& error) {
  summary_dom dom;
  try {
    if (!parse_summary(text, dom)) return error = "not JSON", false;
  } catch (const too_deep&) {
    return error = "nested deeper than " + std::to_string(summary_depth) + " levels (a summary has a few)", false;
  }
  const json& j = *dom.j;
  if (!j.is_object()) return error = "not a JSON object", false;
  read_origin(j, origin);
  const json* samples = nullptr;
  if (const auto s = j.find("samples"); s != j.end()) samples = &*s;
  else if (const auto d = j.find("diagnosis"); d != j.end() && d->is_object() && d->contains("samples")) samples = &(*d)["samples"];
  if (samples == nullptr) return error = "no samples (want \"samples\" or \"diagnosis\".\"samples\"; write it with diagnosis_json)", false;
  if (!samples->is_object()) return error = "samples is not an object", false;
  const auto format = samples->find("format");
  if (format == samples->end() || *format != "nvscope-samples") return error = "samples.format is not \"nvscope-samples\"", false;
  if (auto why = version_problem(*samples); !why.empty()) return error = std::move(why), false;
  if (const auto l = samples->find("lossy_steps"); l != samples->end() && l->is_number_unsigned()) out.lossy_steps = l->get<std::uint64_t>();
  return read_sets(*samples, "kernels", out.kernels, error) && read_sets(*samples, "ranges", out.ranges, error) &&
         read_sets(*samples, "steps", out.steps, error) && read_sets(*samples, "ranges_gpu", out.ranges_gpu, error) &&
         read_sets(*samples, "steps_gpu", out.steps_gpu, error);
}

namespace {

// The comparison's JSON with its format and the inputs' differences first:
// {"format": {"name": "nvscope-diff", "version": 1}, "input_differences": [...], ...}.
std::string with_origin(const std::string& comparison, const std::vector<std::string>& differences) {
  std::string head = "{\"format\": {\"name\": \"nvscope-diff\", \"version\": 1}, \"input_differences\": [";
  for (std::size_t i = 0; i < differences.size(); ++i) head += (i ? ", " : "") + json(differences[i]).dump();
  head += "]";
  const std::size_t open = comparison.find('{');
  if (open == std::string::npos) return comparison;
  const std::string rest = comparison.substr(open + 1);
  return head + (rest.find_first_not_of(" \n") != std::string::npos && rest[rest.find_first_not_of(" \n")] != '}' ? ", " : "") + rest;
}

int diff_unguarded(int argc, const char* const* argv, std::string& out, std::string& err) {
  diff_args a;
  const auto bad = parse_args(argc, argv, a);
  if (a.help) return out += usage_text, 0;
  if (!bad.empty()) return fail(err, bad);
  run_samples runs[2];
  summary_origin origins[2];
  for (int k = 0; k < 2; ++k) {
    std::string text, error;
    if (!read_file(a.files[k], text, error)) return fail(err, error);
    if (!read_summary(text, runs[k], origins[k], error)) return fail(err, in_quotes(a.files[k]) + ": " + error);
  }
  if (!shares_a_group(runs[0], runs[1]))
    return fail(err, in_quotes(a.files[0]) + " and " + in_quotes(a.files[1]) +
                         " share no kernel, range or step name: not two runs of one program");
  bool models_differ = false;
  const auto differences = origin_differences(origins[0], in_quotes(a.files[0]), origins[1], in_quotes(a.files[1]), models_differ);
  if (models_differ && !a.allow_different_devices)
    return fail(err, in_quotes(a.files[0]) + " ran on " + detail::escape_input(joined(origins[0].models), 200) + ", " +
                         in_quotes(a.files[1]) + " on " + detail::escape_input(joined(origins[1].models), 200) +
                         ": not compared (--allow-different-devices compares them)");
  for (const auto& line : differences) err += "nvscope: diff: " + line + "\n";
  for (int k = 0; k < 2; ++k) // their figures are not in the samples: say so, they are not compared
    if (runs[k].lossy_steps != 0)
      err += "nvscope: diff: " + in_quotes(a.files[k]) + ": " + std::to_string(runs[k].lossy_steps) +
             " steps that lost records left out of the step figures\n";
  const run_comparison c = compare_runs(runs[0], runs[1], a.compare);
  if (a.format == "csv") out += comparison_csv(c);
  else if (a.format == "json") out += with_origin(comparison_json(c, a.compare), differences) + "\n";
  else out += comparison_text(c, a.compare);
  return c.gate_failed ? 1 : 0;
}

} // namespace

// Whatever fails (memory above all: CI runners limit the address space), one line and exit 2.
int diff_run(int argc, const char* const* argv, std::string& out, std::string& err) {
  try {
    return diff_unguarded(argc, argv, out, err);
  } catch (const std::bad_alloc&) {
    out.clear();
    err.clear();
    err.shrink_to_fit();
    err = "nvscope: diff: out of memory (reading or comparing the summaries)\n";
  } catch (const std::exception& e) {
    out.clear();
    err = "nvscope: diff: " + detail::escape_input(e.what(), 200) + "\n";
  }
  return 2;
}

int diff_main(int argc, char** argv) {
  std::string out, err;
  const int status = diff_run(argc, argv, out, err);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fwrite(err.data(), 1, err.size(), stderr);
  return status;
}

} // namespace tool
} // namespace v1
} // namespace nvscope
