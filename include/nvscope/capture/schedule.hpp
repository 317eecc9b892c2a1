// nvscope-target: nvscope
#pragma once

/// \file capture/schedule.hpp
/// A step schedule in the spirit of PyTorch's `schedule(skip_first, wait, warmup, active,
/// repeat)`: the program marks each iteration as a step, and the schedule starts and stops
/// capture (through the process-wide backends, see capture_guard.hpp) so that exactly the
/// `active` steps of each cycle are recorded. It also opens an NVTX range `step_N` around
/// every step and a `warmup` range around each run of warm-up steps (push/pop ranges in
/// NVTX's default domain, where NVSCOPE_RANGE puts the program's own ranges; turned off by
/// `step_ranges(false)` or by annotation's run-time switch, `nvscope::set_enabled(false)` or
/// `NVSCOPE_DISABLE=1` in the environment).
///
/// Steps are numbered from 0. The first `skip_first` steps are skipped; then cycles of
/// `wait` + `warmup` + `active` steps follow, `repeat` times (0: forever). Capture is on
/// from the start of a cycle's first active step to the end of its last one, so each cycle
/// is one capture range (`nsys --capture-range-end=repeat:N` counts them). Unlike PyTorch,
/// `repeat` defaults to 1: "record 10 steps" records them once.
///
/// \code
///   nvscope::capture_schedule schedule(
///       nvscope::schedule_options{}.skip_first(5).warmup(1).active(10).repeat(2));
///   for (int i = 0; i < 100; ++i) {
///     auto step = schedule.step_scope();     // step_i; capture on if i is active
///     if (step.recording()) { /* this step is being recorded */ }
///     train_one_step();
///   }                                        // capture closed at the end of step 26
/// \endcode

#include <nvscope/capture/backend.hpp>
#include <nvscope/capture/guard.hpp>
#include <nvscope/capture/detail/step_ranges.hpp>
#include <nvscope/capture/detail/state.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <thread>

namespace nvscope {
inline namespace v1 {

/// The largest value a schedule count may take (keeps every sum far from overflow).
constexpr std::uint64_t max_schedule_count = 1000000000ull;

/// Reads a schedule count as every reader of one does (NVSCOPE_CAPTURE, `nvscope run`'s
/// --skip/--wait/--warmup/--active/--repeat): digits only, at most 12 of them, 0 to
/// `max_schedule_count`; false otherwise, `out` untouched. A count past the limit is refused
/// where it is read, never accepted and then left to select no step.
/// \code
///   std::uint64_t n = 0;
///   bool ok = nvscope::parse_schedule_count("2000000000", n);  // false: past max_schedule_count
/// \endcode
inline bool parse_schedule_count(std::string_view s, std::uint64_t& out) noexcept {
  if (s.empty() || s.size() > 12) return false;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (v > max_schedule_count) return false;
  out = v;
  return true;
}

/// What a schedule does in one step.
enum class capture_phase {
  skipped,     ///< one of the first `skip_first` steps
  waiting,     ///< a `wait` step of a cycle
  warming_up,  ///< a `warmup` step: not recorded, inside the `warmup` NVTX range
  recording,   ///< an `active` step: capture is on
  finished,    ///< after the last cycle, after finish(), or capture turned off
};

/// The name of a phase, for messages: "skipped", "waiting", "warming_up", "recording", "finished".
///
/// \code
///   std::printf("%s\n", nvscope::to_string(schedule.phase()));
/// \endcode
inline const char* to_string(capture_phase p) noexcept {
  switch (p) {
    case capture_phase::skipped: return "skipped";
    case capture_phase::waiting: return "waiting";
    case capture_phase::warming_up: return "warming_up";
    case capture_phase::recording: return "recording";
    case capture_phase::finished: return "finished";
  }
  return "unknown";
}

/// The shape of a schedule. Chain the setters; defaults: record step 0 once.
///
/// \code
///   auto o = nvscope::schedule_options{}.skip_first(10).wait(1).warmup(2).active(3).repeat(0);
/// \endcode
class schedule_options {
 public:
  schedule_options& skip_first(std::uint64_t n) noexcept { skip_first_ = n; return *this; }
  schedule_options& wait(std::uint64_t n) noexcept { wait_ = n; return *this; }
  schedule_options& warmup(std::uint64_t n) noexcept { warmup_ = n; return *this; }
  schedule_options& active(std::uint64_t n) noexcept { active_ = n; return *this; }
  /// Number of cycles; 0 repeats forever.
  schedule_options& repeat(std::uint64_t n) noexcept { repeat_ = n; return *this; }
  /// Open `step_N` and `warmup` NVTX ranges (default on).
  schedule_options& step_ranges(bool on) noexcept { step_ranges_ = on; return *this; }
  /// Turns the schedule off: it never captures (what a malformed NVSCOPE_CAPTURE gives).
  schedule_options& enabled(bool on) noexcept { enabled_ = on; return *this; }

  std::uint64_t skip_first() const noexcept { return skip_first_; }
  std::uint64_t wait() const noexcept { return wait_; }
  std::uint64_t warmup() const noexcept { return warmup_; }
  std::uint64_t active() const noexcept { return active_; }
  std::uint64_t repeat() const noexcept { return repeat_; }
  bool step_ranges() const noexcept { return step_ranges_; }
  bool enabled() const noexcept { return enabled_; }

  /// Empty when the options make sense; otherwise why not, in a few words.
  std::string problem() const {
    if (active_ == 0) return "active must be at least 1";
    const char* names[] = {"skip_first", "wait", "warmup", "active", "repeat"};
    const std::uint64_t values[] = {skip_first_, wait_, warmup_, active_, repeat_};
    for (int i = 0; i < 5; ++i)
      if (values[i] > max_schedule_count)
        return std::string(names[i]) + " is larger than " + std::to_string(max_schedule_count);
    return {};
  }

  /// The number of steps recorded over the whole run (0 when repeat is 0: unbounded).
  std::uint64_t recorded_step_count() const noexcept {
    return enabled_ && problem().empty() ? active_ * repeat_ : 0;
  }

  /// What step `step` (from 0) does under these options.
  capture_phase phase_of(std::uint64_t step) const noexcept {
    if (!enabled_ || active_ == 0 || active_ > max_schedule_count || wait_ > max_schedule_count ||
        warmup_ > max_schedule_count || skip_first_ > max_schedule_count ||
        repeat_ > max_schedule_count)
      return capture_phase::finished;
    if (step < skip_first_) return capture_phase::skipped;
    const std::uint64_t j = step - skip_first_;
    const std::uint64_t cycle = wait_ + warmup_ + active_;
    if (repeat_ != 0 && j / cycle >= repeat_) return capture_phase::finished;
    const std::uint64_t k = j % cycle;
    if (k < wait_) return capture_phase::waiting;
    if (k < wait_ + warmup_) return capture_phase::warming_up;
    return capture_phase::recording;
  }

  /// True when `step` is the first step of a cycle (cycles are separate capture ranges).
  bool starts_cycle(std::uint64_t step) const noexcept {
    if (step < skip_first_ || phase_of(step) == capture_phase::finished) return false;
    return (step - skip_first_) % (wait_ + warmup_ + active_) == 0;
  }

  friend bool operator==(const schedule_options& a, const schedule_options& b) noexcept {
    return a.skip_first_ == b.skip_first_ && a.wait_ == b.wait_ && a.warmup_ == b.warmup_ &&
           a.active_ == b.active_ && a.repeat_ == b.repeat_ && a.step_ranges_ == b.step_ranges_ &&
           a.enabled_ == b.enabled_;
  }
  friend bool operator!=(const schedule_options& a, const schedule_options& b) noexcept {
    return !(a == b);
  }

 private:
  std::uint64_t skip_first_ = 0, wait_ = 0, warmup_ = 0, active_ = 1, repeat_ = 1;
  bool step_ranges_ = true;
  bool enabled_ = true;
};

/// Drives capture step by step. Use it from one thread (the training loop's). Either wrap
/// each iteration in `step_scope()`, or call `step()` at the top of each iteration (it ends
/// the previous step and begins the next). `finish()`, or the destructor, ends the last
/// step and closes a capture still open. Never throws; options that make no sense are
/// reported in one line and the schedule stays off.
///
/// \code
///   nvscope::capture_schedule s(nvscope::schedule_options{}.skip_first(2).active(3));
///   for (int i = 0; i < 10; ++i) {
///     s.step();                 // begins step i
///     work();
///   }
///   s.finish();
/// \endcode
class capture_schedule {
 public:
  /// A step: begins on construction, ends on destruction (also during unwinding).
  class scope {
   public:
    ~scope() { owner_.end_step(); }
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;
    scope(scope&&) = delete;
    scope& operator=(scope&&) = delete;
    /// True when this step is being recorded.
    bool recording() const noexcept { return phase_ == capture_phase::recording; }
    capture_phase phase() const noexcept { return phase_; }
    std::uint64_t index() const noexcept { return index_; }

   private:
    friend class capture_schedule;
    explicit scope(capture_schedule& s) noexcept
        : owner_(s), phase_(s.step()), index_(s.step_index()) {}
    capture_schedule& owner_;
    capture_phase phase_;
    std::uint64_t index_;
  };

  explicit capture_schedule(schedule_options options = {}) noexcept : options_(options) {
    std::string why;
    try {
      why = options_.problem();
    } catch (...) {
      why = "could not be checked";
    }
    if (!why.empty()) {
      options_.enabled(false);
      detail::report_capture_error(
          {capture_errc::bad_schedule, 0, "nvscope: capture schedule: " + why + "; capture is off"});
    }
  }
  ~capture_schedule() { finish(); }
  capture_schedule(const capture_schedule&) = delete;
  capture_schedule& operator=(const capture_schedule&) = delete;
  capture_schedule(capture_schedule&&) = delete;
  capture_schedule& operator=(capture_schedule&&) = delete;

  /// Ends the current step (if one is open) and begins the next. Returns the new step's phase.
  capture_phase step() noexcept {
    end_step();
    if (finished_) {
      ++next_;
      current_phase_ = capture_phase::finished;
      return current_phase_;
    }
    begin_step(next_++);
    return current_phase_;
  }

  /// Begins the next step and returns its scope, which ends it.
  /// \code
  ///   for (...) { auto st = schedule.step_scope(); work(); }
  /// \endcode
  scope step_scope() noexcept { return scope(*this); }

  /// Ends the current step without beginning another; a no-op when none is open.
  void end_step() noexcept {
    if (!in_step_) return;
    in_step_ = false;
    const std::uint64_t i = current_;
    if (step_range_open_) {
      step_range_open_ = false;
      pop_on_owner_thread();
    }
    const capture_phase next = options_.phase_of(i + 1);
    const bool new_cycle = options_.starts_cycle(i + 1);
    if (warmup_range_open_ && (next != capture_phase::warming_up || new_cycle)) {
      warmup_range_open_ = false;
      pop_on_owner_thread();
    }
    if (holding_ && (next != capture_phase::recording || new_cycle)) close_capture();
  }

  /// Ends the current step and closes an open capture; every later step is `finished`.
  void finish() noexcept {
    end_step();
    if (warmup_range_open_) {
      warmup_range_open_ = false;
      pop_on_owner_thread();
    }
    if (holding_) close_capture();
    finished_ = true;
  }

  /// True while the current step is being recorded.
  bool recording() const noexcept { return in_step_ && current_phase_ == capture_phase::recording; }
  /// The current step's phase (that of the last step begun).
  capture_phase phase() const noexcept { return current_phase_; }
  /// The index of the last step begun (0 before any).
  std::uint64_t step_index() const noexcept { return current_; }
  /// True while a step is open.
  bool in_step() const noexcept { return in_step_; }
  /// Steps recorded so far, and capture ranges opened so far.
  std::uint64_t recorded_steps() const noexcept { return recorded_; }
  std::uint64_t capture_ranges() const noexcept { return ranges_; }
  /// True when no later step will be recorded.
  bool done() const noexcept {
    if (finished_ || !options_.enabled()) return true;
    if (options_.repeat() == 0) return false;
    const std::uint64_t last_step = options_.skip_first() +
        options_.repeat() * (options_.wait() + options_.warmup() + options_.active());
    return next_ >= last_step;
  }
  const schedule_options& options() const noexcept { return options_; }

 private:
  void begin_step(std::uint64_t i) noexcept {
    current_ = i;
    current_phase_ = options_.phase_of(i);
    in_step_ = true;
    if (current_phase_ == capture_phase::recording) {
      if (!holding_) {
        detail::capture_acquire();
        holding_ = true;
        ++ranges_;
      }
      ++recorded_;
    }
    if (!options_.step_ranges()) return;
    if (range_depth_ == 0) owner_ = std::this_thread::get_id();
    if (current_phase_ == capture_phase::warming_up && !warmup_range_open_ &&
        detail::push_step_range("warmup")) {
      ++range_depth_;
      warmup_range_open_ = true;
    }
    if (detail::push_numbered_step_range(i)) {
      ++range_depth_;
      step_range_open_ = true;
    }
  }

  void close_capture() noexcept {
    holding_ = false;
    detail::capture_release();
  }

  // NVTX push/pop ranges belong to a thread: a pop on another thread would close that
  // thread's range instead. Report and leave the range open rather than corrupt the stack.
  void pop_on_owner_thread() noexcept {
    if (range_depth_ == 0) return;
    --range_depth_;
    if (std::this_thread::get_id() == owner_) {
      detail::pop_step_range();
    } else if (!warned_thread_) {
      warned_thread_ = true;
      detail::report_capture_error(
          {capture_errc::wrong_thread, 0,
           "nvscope: capture_schedule step ended on another thread than it began; its NVTX "
           "range is left open (use a schedule from one thread)"});
    }
  }

  schedule_options options_;
  std::uint64_t next_ = 0;
  std::uint64_t current_ = 0;
  capture_phase current_phase_ = capture_phase::skipped;
  std::uint64_t recorded_ = 0;
  std::uint64_t ranges_ = 0;
  unsigned range_depth_ = 0;
  std::thread::id owner_;
  bool in_step_ = false;
  bool holding_ = false;
  bool step_range_open_ = false;
  bool warmup_range_open_ = false;
  bool finished_ = false;
  bool warned_thread_ = false;
};

} // namespace v1
} // namespace nvscope
