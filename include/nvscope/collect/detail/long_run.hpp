// nvscope-target: nvscope
#pragma once

// A long run in bounded memory (issue 47), in plain C++ (tested on the CPU): what the collector
// does with the records of each decoded buffer when it is told to keep memory flat. Each
// record goes, by its launch time (its start where the launch is not known):
//   - into the step it falls in, held there until the step is summarised (the step's end is
//     known and the next step has ended too, so that GPU work lagging the host has arrived);
//     then the step's summary goes to the sink, and its records into the flight recorder (the
//     last `keep_steps` steps, the `keep_slowest` slowest by wall time) or into the totals;
//   - and, when it falls in a capture window, kept raw for the exact tables;
//   - else folded into the running totals at once and released.
// GPU records go by their launch, syncs, API calls and NVTX ranges by their start; a range is
// placed once it has closed (or is a mark), so a range that straddles a window's or a step's
// edge goes whole to the side it began on.
// Memory: what is held is bounded by `memory_limit`; when it is reached the oldest kept step
// is given up (slowest first kept longest), or the window stops keeping raw records, each said
// in one line (`note`), never an abort.

#include <nvscope/trace.hpp>
#include <nvscope/trace/totals.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

struct long_run_limits {
  std::size_t keep_steps = 3;                     // the last N steps' raw records
  std::size_t keep_slowest = 3;                   // the K slowest steps' raw records
  std::size_t memory_limit = std::size_t{512} << 20; // bytes of raw records held, all together
  std::size_t top_kernels = 5;                    // kernel names in each step's summary
  std::function<bool(std::uint64_t)> keep_raw;    // steps (by number) whose records join the windows' (a step schedule's active steps)
};

// What the folder did, for the collector's stats and the summary.
struct long_run_counts {
  std::uint64_t records_folded = 0;    // released into the totals (outside every kept window or step)
  std::uint64_t records_kept = 0;      // held raw now: steps held, kept, and window records
  std::uint64_t steps_summarised = 0;
  std::uint64_t steps_lossy = 0;
  std::uint64_t steps_given_up = 0;    // kept steps released for the memory limit
  std::uint64_t window_records_folded = 0; // window records folded, not kept, for the memory limit
  std::uint64_t late_records = 0;      // records of a step that arrived after it was summarised
  std::size_t bytes_held = 0, bytes_high_water = 0;
};

// What a step's summary needs of its records that a window keeps instead (raw there, so never
// folded with the step): their spans and kernel times, held only until the step is summarised.
struct window_share {
  std::vector<std::pair<timestamp_ns, timestamp_ns>> spans;   // its kernels, copies and memsets
  std::vector<std::pair<string_id, std::uint64_t>> kernels; // name, ns
  std::uint64_t kernel_ns = 0, copy_ns = 0, memset_ns = 0, sync_ns = 0, launches = 0;
  std::size_t bytes() const noexcept { return spans.size() * sizeof(spans[0]) + kernels.size() * sizeof(kernels[0]); }
};

// A step's raw records (GPU records, syncs, closed NVTX ranges and marks, API calls), with its summary.
struct step_records {
  step_totals summary;
  window_share shared;
  std::vector<kernel_record> kernels;
  std::vector<copy_record> copies;
  std::vector<memset_record> memsets;
  std::vector<sync_record> syncs;
  std::vector<range_record> ranges;
  std::vector<api_record> api_calls;
  std::size_t bytes() const noexcept {
    return kernels.size() * sizeof(kernel_record) + copies.size() * sizeof(copy_record) +
           memsets.size() * sizeof(memset_record) + syncs.size() * sizeof(sync_record) +
           ranges.size() * sizeof(range_record) + api_calls.size() * sizeof(api_record);
  }
  std::size_t count() const noexcept {
    return kernels.size() + copies.size() + memsets.size() + syncs.size() + ranges.size() + api_calls.size();
  }
};

// The union of [start, end) of a step's GPU records, in ns.
inline std::uint64_t busy_ns(const step_records& s) {
  std::vector<std::pair<timestamp_ns, timestamp_ns>> spans = s.shared.spans;
  spans.reserve(spans.size() + s.kernels.size() + s.copies.size() + s.memsets.size());
  for (const auto& r : s.kernels) spans.emplace_back(r.start, r.end);
  for (const auto& r : s.copies) spans.emplace_back(r.start, r.end);
  for (const auto& r : s.memsets) spans.emplace_back(r.start, r.end);
  std::sort(spans.begin(), spans.end());
  std::uint64_t busy = 0;
  timestamp_ns reach = 0;
  for (const auto& [b, e] : spans) {
    const timestamp_ns from = std::max(b, reach);
    if (e > from) busy += e - from;
    reach = std::max(reach, e);
  }
  return busy;
}

template <class Record>
std::uint64_t summed_ns(const std::vector<Record>& records) noexcept {
  std::uint64_t ns = 0;
  for (const auto& r : records) ns += r.end - r.start;
  return ns;
}

// The step's figures from its records; `names` reads a kernel name id.
template <class Names>
void summarise(step_records& s, std::size_t top, const Names& names) {
  step_totals& t = s.summary;
  t.wall_ns = t.end > t.begin ? t.end - t.begin : 0;
  t.kernel_ns = summed_ns(s.kernels) + s.shared.kernel_ns;
  t.copy_ns = summed_ns(s.copies) + s.shared.copy_ns;
  t.memset_ns = summed_ns(s.memsets) + s.shared.memset_ns;
  t.sync_ns = summed_ns(s.syncs) + s.shared.sync_ns;
  t.launches = s.kernels.size() + s.copies.size() + s.memsets.size() + s.shared.launches;
  t.gpu_busy_ns = busy_ns(s);
  std::unordered_map<string_id, step_kernel> by_name;
  auto add = [&](string_id name, std::uint64_t ns) {
    auto& e = by_name[name];
    ++e.count;
    e.ns += ns;
  };
  for (const auto& k : s.kernels) add(k.name, k.end - k.start);
  for (const auto& [name, ns] : s.shared.kernels) add(name, ns);
  std::vector<std::pair<string_id, step_kernel>> ranked(by_name.begin(), by_name.end());
  const auto n = std::min(top, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(n), ranked.end(), [](const auto& a, const auto& b) {
    return a.second.ns != b.second.ns ? a.second.ns > b.second.ns : a.first < b.first;
  });
  t.top_kernels.clear();
  for (std::size_t i = 0; i < n; ++i) {
    ranked[i].second.name = names(ranked[i].first);
    t.top_kernels.push_back(std::move(ranked[i].second));
  }
  t.lossy = any_loss(t.lost);
}

class long_run_folder {
 public:
  using step_sink = std::function<void(const step_totals&)>;
  using note_fn = std::function<void(std::string)>;

  explicit long_run_folder(long_run_limits limits = {}, step_sink sink = {}, note_fn note = {})
      : limits_(limits), sink_(std::move(sink)), note_(std::move(note)) {}

  // ---- what selects: steps and windows, announced in the order they happen ----

  // Returns the step's number, which `step_ended` takes.
  std::uint64_t step_begun(timestamp_ns t, std::string name) {
    step_records s; // room for as many records as the last step summarised had
    s.kernels.reserve(last_sizes_[0]), s.copies.reserve(last_sizes_[1]), s.memsets.reserve(last_sizes_[2]);
    s.syncs.reserve(last_sizes_[3]), s.ranges.reserve(last_sizes_[4]), s.api_calls.reserve(last_sizes_[5]);
    s.summary.number = next_step_++;
    s.summary.name = std::move(name);
    s.summary.begin = t;
    held_.push_back(std::move(s));
    return next_step_ - 1;
  }
  // Ends step `number` (ranges on several threads end in any order). It is summarised by the
  // next `take` after the step that follows it has ended too (its GPU work lags the host), or
  // by `finish`.
  void step_ended(timestamp_ns t, std::uint64_t number) {
    for (auto it = held_.rbegin(); it != held_.rend(); ++it)
      if (it->summary.number == number) {
        if (it->summary.end == 0) it->summary.end = t == 0 ? 1 : t; // 0 reads as still open
        break;
      }
  }
  void window_begun(timestamp_ns t) { windows_.push_back(time_window{t, ~timestamp_ns{0}}); }
  void window_ended(timestamp_ns t) {
    if (!windows_.empty() && windows_.back().end == ~timestamp_ns{0}) windows_.back().end = t;
  }
  // Losses noticed now: the step running (the latest begun) counts them, and the run.
  void losses_seen(const loss_counts& delta) {
    add_losses(folded_.run.lost, delta);
    if (!held_.empty()) add_losses(held_.back().summary.lost, delta);
  }

  // ---- records ----

  // Takes the GPU records, syncs and API calls out of `live` (what the decoder added since the
  // last call: its vectors are emptied, their capacity kept). `launched_at(correlation, start)`
  // gives a GPU record's launch time; syncs and API calls go by their start.
  template <class LaunchTime>
  void take(trace& live, const LaunchTime& launched_at) {
    names_ = &live.strings;
    for (const auto& k : live.kernels) place(k, launched_at(k.correlation, k.start), &step_records::kernels, window_.kernels);
    for (const auto& c : live.copies) place(c, launched_at(c.correlation, c.start), &step_records::copies, window_.copies);
    for (const auto& m : live.memsets) place(m, launched_at(m.correlation, m.start), &step_records::memsets, window_.memsets);
    for (const auto& s : live.syncs) place(s, s.start, &step_records::syncs, window_.syncs);
    for (const auto& a : live.api_calls) place(a, a.start, &step_records::api_calls, window_.api_calls);
    live.kernels.clear();
    live.copies.clear();
    live.memsets.clear();
    live.syncs.clear();
    live.api_calls.clear();
    while (held_.size() > 1 && held_[0].summary.end != 0 && held_[1].summary.end != 0) summarise_front();
    enforce_limit();
  }

  // Closed NVTX ranges and marks (as detail/bounded.hpp's live_ranges releases them), each by
  // its start: into the step it began in, into a window it began in (kept whole, whenever it
  // ends), else folded into its group's sketch; `closed` is emptied. Call before `take`, so
  // that a step's ranges are placed before the step is summarised.
  // A step range comes named `step_marker` with its name in `step_names` (detail/bounded.hpp's
  // live_ranges): it is named in `strings` only where it is kept, and folded into `steps` (its
  // wall time), not into a group of its own.
  void take_ranges(std::vector<range_record>& closed, std::vector<std::string>& step_names, string_table& strings, string_id step_marker) {
    names_ = &strings, strings_ = &strings, step_marker_ = step_marker;
    for (std::size_t i = 0; i < closed.size(); ++i) {
      range_record& r = closed[i];
      if (i < step_names.size() && !step_names[i].empty() && keep_window_ && in_window(r.start)) r.name = strings.intern(step_names[i]);
      place(r, r.start, &step_records::ranges, window_.ranges);
    }
    closed.clear();
    step_names.clear();
  }
  // The id step ranges held in a step carry until they are named (long_run_folder::take_ranges).
  string_id step_marker() const noexcept { return step_marker_; }

  // Folds the GPU records and syncs of `live` past the first `kernels`, `copies`, ... of each
  // kind into the totals and erases them (a collection past its memory limit: detail/budget.hpp).
  void fold_past(trace& live, std::size_t kernels, std::size_t copies, std::size_t memsets, std::size_t syncs) {
    names_ = &live.strings;
    fold_tail(live.kernels, kernels);
    fold_tail(live.copies, copies);
    fold_tail(live.memsets, memsets);
    fold_tail(live.syncs, syncs);
  }

  // Ends every step still open at `t` and summarises every step held (at stop).
  void finish(timestamp_ns t) {
    for (auto& s : held_)
      if (s.summary.end == 0) s.summary.end = t;
    while (!held_.empty()) summarise_front();
    enforce_limit();
  }

  // ---- results ----

  // What was folded: every record not held or kept raw now.
  const totals& folded() const noexcept { return folded_; }
  // `folded()` with the raw records held and kept folded in too: the whole run's totals.
  totals whole() {
    totals all = folded_;
    auto fold_in = [&](const step_records& s) { fold_step(s, all); };
    for (const auto& s : held_) fold_in(s);
    for (const auto& s : recent_) fold_in(s);
    for (const auto& s : slowest_) fold_in(s);
    fold_in(window_);
    return all;
  }
  // The flight recorder: the last steps, then the slowest ones that are not among them.
  const std::deque<step_records>& recent() const noexcept { return recent_; }
  const std::vector<step_records>& slowest() const noexcept { return slowest_; }
  // Raw records inside capture windows (GPU records, syncs, ranges begun inside, API calls).
  const step_records& window_records() const noexcept { return window_; }
  const std::vector<time_window>& windows() const noexcept { return windows_; }
  // The steps summarised with a loss, as they ended (16 bytes a lossy step).
  const std::vector<time_window>& lossy_steps() const noexcept { return lossy_; }
  const long_run_counts& counts() const noexcept { return counts_; }
  // Each set of raw records held or kept: the steps held, the last, the slowest, the windows'.
  template <class Visit>
  void each_kept(Visit visit) const {
    for (const auto& s : held_) visit(s);
    for (const auto& s : recent_) visit(s);
    for (const auto& s : slowest_) visit(s);
    visit(window_);
  }
  const long_run_limits& limits() const noexcept { return limits_; }

 private:
  bool in_window(timestamp_ns at) const noexcept {
    for (auto it = windows_.rbegin(); it != windows_.rend(); ++it)
      if (at >= it->begin && at < it->end) return true;
    return false;
  }

  // The held step `at` falls in (the latest begun that holds it), or nullptr.
  step_records* step_at(timestamp_ns at) noexcept {
    for (auto it = held_.rbegin(); it != held_.rend(); ++it)
      if (at >= it->summary.begin && (it->summary.end == 0 || at < it->summary.end)) return &*it;
    return nullptr;
  }

  // A record into a window (kept raw; its step, if any, takes only what its summary needs), else
  // into its step, else folded now.
  template <class Record>
  void place(const Record& r, timestamp_ns at, std::vector<Record> step_records::*member, std::vector<Record>& window) {
    const bool windowed = keep_window_ && in_window(at);
    if (windowed) {
      window.push_back(r);
      counts_.bytes_held += sizeof(Record);
    } else if (keep_window_ == false && in_window(at)) {
      ++counts_.window_records_folded;
    }
    if (step_records* s = step_at(at)) {
      if (windowed) return share(r, s->shared);
      (s->*member).push_back(r);
      counts_.bytes_held += sizeof(Record);
      return;
    }
    if (at >= last_summarised_.begin && at < last_summarised_.end) ++counts_.late_records;
    if (!windowed) fold_one(r, folded_);
  }

  void share(const kernel_record& k, window_share& w) {
    w.kernels.emplace_back(k.name, k.end - k.start);
    share_span(k, w.kernel_ns, w);
  }
  void share(const copy_record& c, window_share& w) { share_span(c, w.copy_ns, w); }
  void share(const memset_record& m, window_share& w) { share_span(m, w.memset_ns, w); }
  void share(const sync_record& r, window_share& w) { w.sync_ns += r.end - r.start; }
  void share(const range_record&, window_share&) {}
  void share(const api_record&, window_share&) {}
  template <class Record>
  void share_span(const Record& r, std::uint64_t& ns, window_share& w) {
    const std::size_t before = w.bytes();
    ns += r.end - r.start;
    ++w.launches;
    w.spans.emplace_back(r.start, r.end);
    counts_.bytes_held += w.bytes() - before;
  }

  // ---- folding into totals ----

  duration_sketch& kernel_sketch(string_id name, totals& into) {
    if (&into != &folded_) return into.kernels[std::string((*names_)[name])];
    if (name >= by_name_.size()) by_name_.resize(std::max<std::size_t>(name + 1, 2 * by_name_.size()), nullptr);
    auto& s = by_name_[name];
    if (s == nullptr) s = &folded_.kernels[std::string((*names_)[name])];
    return *s;
  }
  void fold_one(const kernel_record& k, totals& into) {
    kernel_sketch(k.name, into).add(k.end - k.start);
    ++into.run.kernels;
    into.run.kernel_ns += k.end - k.start;
    if (&into == &folded_) ++counts_.records_folded;
  }
  void fold_one(const copy_record& c, totals& into) { count_one(c, into.run.copies, into.run.copy_ns, into); }
  void fold_one(const memset_record& m, totals& into) { count_one(m, into.run.memsets, into.run.memset_ns, into); }
  void fold_one(const sync_record& s, totals& into) { count_one(s, into.run.syncs, into.run.sync_ns, into); }
  void fold_one(const api_record& a, totals& into) { count_one(a, into.run.api_calls, into.run.api_ns, into); }
  // A range's host time into its group's sketch (the groups of analyze/totals.hpp's `fold`); a
  // mark is counted.
  void fold_one(const range_record& r, totals& into) {
    if (&into == &folded_) ++counts_.records_folded;
    if (r.is_mark) {
      ++into.run.marks;
      return;
    }
    ++into.run.ranges;
    if (r.name == step_marker_) return; // a step: its wall time is in `steps`
    range_sketch(r, into).add(r.end > r.start ? r.end - r.start : 0);
  }
  duration_sketch& range_sketch(const range_record& r, totals& into) {
    auto key_of = [&] {
      return range_key{r.domain ? std::string((*names_)[r.domain]) : std::string(), std::string((*names_)[r.name]), r.is_push_pop};
    };
    if (&into != &folded_) return into.ranges[key_of()];
    const std::uint64_t ids = (std::uint64_t{r.domain} << 33) | (std::uint64_t{r.name} << 1) | (r.is_push_pop ? 1u : 0u);
    auto& s = by_range_[ids];
    if (s == nullptr) s = &folded_.ranges[key_of()];
    return *s;
  }
  template <class Record>
  void count_one(const Record& r, std::uint64_t& count, std::uint64_t& ns, const totals& into) {
    ++count;
    ns += r.end - r.start;
    if (&into == &folded_) ++counts_.records_folded;
  }
  void fold_step(const step_records& s, totals& into) {
    for (const auto& r : s.kernels) fold_one(r, into);
    for (const auto& r : s.copies) fold_one(r, into);
    for (const auto& r : s.memsets) fold_one(r, into);
    for (const auto& r : s.syncs) fold_one(r, into);
    for (const auto& r : s.ranges) fold_one(r, into);
    for (const auto& r : s.api_calls) fold_one(r, into);
  }
  template <class Record>
  void fold_tail(std::vector<Record>& records, std::size_t kept) {
    if (records.size() <= kept) return;
    for (auto it = records.begin() + static_cast<std::ptrdiff_t>(kept); it != records.end(); ++it) fold_one(*it, folded_);
    records.resize(kept);
  }
  // Releases a step's records into the totals.
  void release(step_records& s) {
    counts_.bytes_held -= s.bytes();
    fold_step(s, folded_);
    s = step_records{};
  }

  // ---- steps as they end ----

  void summarise_front() {
    step_records s = std::move(held_.front());
    held_.pop_front();
    summarise(s, limits_.top_kernels, [this](string_id id) { return names_ ? std::string((*names_)[id]) : std::string(); });
    counts_.bytes_held -= s.shared.bytes();
    s.shared = window_share{};
    last_sizes_ = {s.kernels.size(), s.copies.size(), s.memsets.size(), s.syncs.size(), s.ranges.size(), s.api_calls.size()};
    last_summarised_ = time_window{s.summary.begin, s.summary.end};
    folded_.steps.add(s.summary.wall_ns);
    ++counts_.steps_summarised;
    counts_.steps_lossy += s.summary.lossy;
    if (s.summary.lossy) lossy_.push_back(time_window{s.summary.begin, s.summary.end});
    const bool windowed = limits_.keep_raw && limits_.keep_raw(s.summary.number);
    s.summary.raw_kept = windowed ? keep_window_ : limits_.keep_steps > 0 || limits_.keep_slowest > 0;
    if (sink_) sink_(s.summary);
    if (windowed) return into_window(s);
    remember(std::move(s));
  }

  // A step the caller selects: its records join the windows' (kept while the limit allows).
  void into_window(step_records& s) {
    if (!keep_window_) return release(s);
    window_.kernels.insert(window_.kernels.end(), s.kernels.begin(), s.kernels.end());
    window_.copies.insert(window_.copies.end(), s.copies.begin(), s.copies.end());
    window_.memsets.insert(window_.memsets.end(), s.memsets.begin(), s.memsets.end());
    window_.syncs.insert(window_.syncs.end(), s.syncs.begin(), s.syncs.end()); // bytes_held already counts them
    for (auto r : s.ranges) {
      if (r.name == step_marker_ && strings_ != nullptr) r.name = strings_->intern(s.summary.name);
      window_.ranges.push_back(r);
    }
    window_.api_calls.insert(window_.api_calls.end(), s.api_calls.begin(), s.api_calls.end());
  }

  // Into the last steps; the one that leaves them competes for the slowest.
  void remember(step_records s) {
    if (limits_.keep_steps == 0) return keep_if_slow(std::move(s));
    recent_.push_back(std::move(s));
    if (recent_.size() <= limits_.keep_steps) return;
    step_records out = std::move(recent_.front());
    recent_.pop_front();
    keep_if_slow(std::move(out));
  }
  void keep_if_slow(step_records s) {
    if (limits_.keep_slowest == 0) return release(s);
    if (slowest_.size() < limits_.keep_slowest) {
      slowest_.push_back(std::move(s));
      return;
    }
    auto fastest = std::min_element(slowest_.begin(), slowest_.end(), [](const step_records& a, const step_records& b) {
      return a.summary.wall_ns < b.summary.wall_ns;
    });
    if (s.summary.wall_ns > fastest->summary.wall_ns) std::swap(s, *fastest);
    release(s);
  }

  // ---- the memory limit ----

  void enforce_limit() {
    counts_.bytes_high_water = std::max(counts_.bytes_high_water, counts_.bytes_held);
    while (counts_.bytes_held > limits_.memory_limit && give_up_a_step()) {
    }
    if (counts_.bytes_held > limits_.memory_limit && keep_window_ && window_.count() > 0) {
      keep_window_ = false;
      say("memory limit of " + std::to_string(limits_.memory_limit >> 20) + " MiB reached: capture windows keep no more raw "
          "records from here (" + std::to_string(window_.count()) + " kept; the rest is counted in the totals)");
    }
    counts_.records_kept = window_.count();
    for (const auto& s : held_) counts_.records_kept += s.count();
    for (const auto& s : recent_) counts_.records_kept += s.count();
    for (const auto& s : slowest_) counts_.records_kept += s.count();
  }
  // The slowest kept steps go last: the fastest of them first, then the oldest recent step.
  bool give_up_a_step() {
    step_records* victim = nullptr;
    if (!slowest_.empty())
      victim = &*std::min_element(slowest_.begin(), slowest_.end(), [](const step_records& a, const step_records& b) {
        return a.summary.wall_ns < b.summary.wall_ns;
      });
    else if (!recent_.empty())
      victim = &recent_.front();
    if (victim == nullptr) return false;
    if (counts_.steps_given_up++ == 0)
      say("memory limit of " + std::to_string(limits_.memory_limit >> 20) + " MiB reached: raw records of step " +
          std::to_string(victim->summary.number) + " given up (its summary is kept; later steps alike are counted)");
    release(*victim);
    if (!slowest_.empty() && victim >= slowest_.data() && victim < slowest_.data() + slowest_.size())
      slowest_.erase(slowest_.begin() + (victim - slowest_.data()));
    else
      recent_.pop_front();
    return true;
  }
  void say(std::string line) {
    if (note_) note_(std::move(line));
  }

  long_run_limits limits_;
  step_sink sink_;
  note_fn note_;
  const string_table* names_ = nullptr;
  string_table* strings_ = nullptr;        // the live trace's, for naming kept step ranges
  string_id step_marker_ = no_index;       // see take_ranges
  std::vector<duration_sketch*> by_name_; // folded_'s sketch of each kernel name id
  std::unordered_map<std::uint64_t, duration_sketch*> by_range_; // folded_'s sketch of each (domain, name, style) of ids
  std::deque<step_records> held_;         // steps begun, not yet summarised, in order
  std::deque<step_records> recent_;
  std::vector<step_records> slowest_;
  step_records window_;
  bool keep_window_ = true;
  std::vector<time_window> windows_;
  std::vector<time_window> lossy_;
  time_window last_summarised_{0, 0};
  std::uint64_t next_step_ = 0;
  std::array<std::size_t, 6> last_sizes_{}; // the last step summarised: its kernels, copies, memsets, syncs, ranges, API calls
  totals folded_;
  long_run_counts counts_;
};

} // namespace detail
} // namespace v1
} // namespace nvscope
