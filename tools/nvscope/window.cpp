#include "window.hpp"

#include <nvscope/analysis.hpp>
#include <nvscope/analyze/step_names.hpp>
#include <nvscope/capture/schedule.hpp>

#include <algorithm>
#include <cstdint>
#include <unordered_map>

namespace nvscope {
inline namespace v1 {
namespace tool {

namespace {

constexpr timestamp_ns open_end = ~timestamp_ns{0};

timestamp_ns end_of(const trace& t, const range_record& r) { return r.end != 0 ? r.end : (t.finish ? t.finish : open_end); }

// Ranges named by the user, outermost first: a match nested in another match is not a
// separate step.
std::vector<const range_record*> matching_ranges(const trace& t, const run_options& o) {
  analysis_options defaults;
  std::vector<const range_record*> out;
  for (const auto& r : t.ranges) {
    if (r.is_mark) continue;
    const std::string_view name = t.strings[r.name];
    const bool hit = o.steps.empty() ? is_step_name(name, defaults) : glob_match(o.steps, name);
    if (hit) out.push_back(&r);
  }
  std::sort(out.begin(), out.end(), [](const range_record* a, const range_record* b) { return a->start < b->start; });
  std::vector<const range_record*> outer;
  timestamp_ns covered = 0;
  for (const auto* r : out) {
    if (!outer.empty() && r->start < covered) continue;
    outer.push_back(r);
    covered = end_of(t, *r);
  }
  return outer;
}

} // namespace

schedule_options schedule_of(const run_options& o) {
  return schedule_options{}.skip_first(o.skip).wait(o.wait).warmup(o.warmup).active(o.active).repeat(o.repeat);
}

namespace {

// The schedule over numbered steps: a window for each run of recorded steps, consecutive
// recorded steps of one cycle joined into one window (the gap between them included).
window_choice scheduled_windows(std::vector<numbered_steps::step> steps, std::uint64_t seen, const run_options& o) {
  window_choice c;
  c.whole = false;
  const auto schedule = schedule_of(o);
  std::sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.number < b.number; });
  bool joinable = false; // the previous step was recorded and is number - 1
  std::uint64_t previous = 0;
  for (const auto& s : steps) {
    if (schedule.phase_of(s.number) != capture_phase::recording) continue;
    if (joinable && s.number == previous + 1 && !schedule.starts_cycle(s.number)) c.windows.back().end = s.end;
    else c.windows.push_back(time_window{s.begin, s.end});
    joinable = true;
    previous = s.number;
  }
  if (c.windows.empty())
    c.note = std::to_string(seen) + " step ranges" +
             (o.steps.empty() ? std::string(" (step, step_N, step N)") : " named '" + o.steps + "'") +
             " seen; the schedule selects none of them";
  return c;
}

// The steps of a whole trace: its matching ranges, numbered in order.
window_choice step_windows(const trace& t, const run_options& o) {
  const auto ranges = matching_ranges(t, o);
  std::vector<numbered_steps::step> steps;
  steps.reserve(ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) steps.push_back({i, ranges[i]->start, end_of(t, *ranges[i])});
  return scheduled_windows(std::move(steps), ranges.size(), o);
}

// The capture ranges (sorted by start, nested ones dropped) that --capture-range-end keeps:
// the first (stop, stop-shutdown), the first N or all (repeat[:N]), or the first start to the
// end of the run (none: nsys ignores the stops).
std::vector<time_window> ended_ranges(std::vector<time_window> ranges, const run_options& o, timestamp_ns finish) {
  std::sort(ranges.begin(), ranges.end(), [](const time_window& a, const time_window& b) { return a.begin < b.begin; });
  std::vector<time_window> outer;
  for (const auto& w : ranges)
    if (outer.empty() || w.begin >= outer.back().end) outer.push_back(w);
  if (outer.empty()) return outer;
  switch (o.capture_end) {
    case range_end::stop:
    case range_end::stop_shutdown: outer.resize(1); break;
    case range_end::repeat:
      if (o.capture_end_count != 0 && outer.size() > o.capture_end_count) outer.resize(o.capture_end_count);
      break;
    case range_end::none: outer = {time_window{outer.front().begin, finish}}; break;
  }
  return outer;
}

// --nvtx-capture as nsys reads it: RANGE in the default domain, RANGE@DOMAIN, RANGE@* in any.
window_choice nvtx_window(const trace& t, const run_options& o) {
  window_choice c;
  c.whole = false;
  const std::size_t at = o.nvtx_capture.rfind('@');
  const std::string name = o.nvtx_capture.substr(0, at);
  const std::string domain = at != std::string::npos ? o.nvtx_capture.substr(at + 1) : std::string();
  std::vector<time_window> found;
  for (const auto& r : t.ranges) {
    if (r.is_mark || t.strings[r.name] != name) continue;
    if (domain.empty() ? r.domain != 0 : domain != "*" && (r.domain == 0 || t.strings[r.domain] != domain)) continue;
    found.push_back(time_window{r.start, end_of(t, r)});
  }
  c.windows = ended_ranges(std::move(found), o, end_of(t, range_record{}));
  if (c.windows.empty()) c.note = "no NVTX range '" + o.nvtx_capture + "' was opened";
  return c;
}

window_choice profiler_api_windows(const trace& t, const run_options& o) {
  window_choice c;
  c.whole = false;
  std::vector<time_window> found;
  for (const auto& w : t.capture_windows) found.push_back(time_window{w.begin, w.end != 0 && w.end != open_end ? w.end : end_of(t, range_record{})});
  c.windows = ended_ranges(std::move(found), o, end_of(t, range_record{}));
  if (c.windows.empty()) c.note = "the program never called cudaProfilerStart";
  return c;
}

// Seconds as nanoseconds, saturating at the clock's end (a double past 2^64 has no integer
// conversion: undefined behaviour, and with g++ a wrapped value), and `a + b` likewise.
timestamp_ns nanoseconds_of(double seconds) {
  const double ns = seconds * 1e9;
  return ns < 18446744073709549568.0 ? static_cast<timestamp_ns>(ns) : open_end; // the largest double below 2^64
}

timestamp_ns saturating_add(timestamp_ns a, timestamp_ns b) { return b > open_end - a ? open_end : a + b; }

// Intersects every window with [from, to].
void clip(window_choice& c, timestamp_ns from, timestamp_ns to) {
  std::vector<time_window> out;
  for (const auto& w : c.windows) {
    const timestamp_ns b = std::max(w.begin, from), e = std::min(w.end, to);
    if (b < e) out.push_back(time_window{b, e});
  }
  c.windows.swap(out);
}

} // namespace

bool glob_match(std::string_view pattern, std::string_view name) noexcept {
  std::size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  const auto same = [](char a, char b) { return detail::ascii_lower(a) == detail::ascii_lower(b); }; // any case, as the step rule
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') { // before the literal test: a '*' in the name is no '*' of the pattern
      star = p++;
      mark = n;
    } else if (p < pattern.size() && (pattern[p] == '?' || same(pattern[p], name[n]))) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::string glob_regex(std::string_view pattern) {
  std::string out;
  for (const char c : pattern) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                       static_cast<unsigned char>(c) >= 0x80;
    if (c == '*') out += "[\\s\\S]*"; // any bytes, newlines too, as glob_match's '*'
    else if (c == '?') out += "[\\s\\S]";
    else if (plain) out.push_back(c);
    else out.append({'\\', c}); // every other character stands for itself
  }
  return out;
}

window_choice choose_windows(const trace& t, const run_options& o, const numbered_steps* steps) {
  window_choice c;
  switch (o.range) {
    case capture_range::whole: c.windows.push_back(time_window{t.begin, t.finish ? t.finish : open_end}); break;
    case capture_range::cuda_profiler_api: c = profiler_api_windows(t, o); break;
    case capture_range::nvtx: c = nvtx_window(t, o); break;
    case capture_range::steps: c = steps ? scheduled_windows(steps->recorded, steps->seen, o) : step_windows(t, o); break;
  }
  const bool timed = o.delay_s > 0.0 || o.duration_s > 0.0;
  if (timed) {
    c.whole = false;
    const timestamp_ns from = saturating_add(t.begin, nanoseconds_of(o.delay_s));
    const timestamp_ns to = o.duration_s > 0.0 ? saturating_add(from, nanoseconds_of(o.duration_s)) : open_end;
    const bool had = !c.windows.empty();
    clip(c, from, to);
    if (had && c.windows.empty()) c.note = "nothing of the chosen range falls between --delay and --duration";
  }
  c.windows = merge_windows(std::move(c.windows));
  return c;
}

trace restrict_to(const trace& t, const std::vector<time_window>& w) {
  trace out = t;
  std::unordered_map<std::uint32_t, timestamp_ns> launched;
  launched.reserve(t.launches.size());
  for (const auto& l : t.launches) launched.emplace(l.correlation, l.time);
  auto launch_time = [&](const auto& r) {
    const auto it = launched.find(r.correlation);
    return it != launched.end() ? it->second : r.start;
  };
  erase_outside(out.kernels, w, launch_time);
  erase_outside(out.copies, w, launch_time);
  erase_outside(out.memsets, w, launch_time);
  erase_outside(out.syncs, w, [](const sync_record& r) { return r.start; });
  erase_outside(out.launches, w, [](const launch_record& r) { return r.time; });
  erase_outside(out.api_calls, w, [](const api_record& r) { return r.start; });
  // Ranges and marks by their start; nesting is the analysis's to compute.
  erase_outside(out.ranges, w, [](const range_record& r) { return r.start; });
  out.begin = w.empty() ? t.begin : std::max(t.begin, w.front().begin);
  out.finish = w.empty() ? t.begin : std::min(t.finish ? t.finish : open_end, w.back().end);
  return out;
}

} // namespace tool
} // namespace v1
} // namespace nvscope
