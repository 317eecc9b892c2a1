#pragma once
// The analysis window of `nvscope run`: which part of a recorded trace is analysed and
// written. Computed from the trace itself (its capture windows, its NVTX ranges) and the
// options, then applied by keeping the records that belong to it. Plain C++ over the trace:
// tested on the CPU with synthetic traces.

#include "run_options.hpp"

#include <nvscope/capture/schedule.hpp>
#include <nvscope/trace.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace tool {

/// The windows a run's options select in `t`, sorted and disjoint. `whole` is true when the
/// whole trace is selected (no restriction). `note` is a one-line explanation when the
/// selection is empty (the program never opened the range, ran too few steps, ...).
struct window_choice {
  bool whole = true;
  std::vector<time_window> windows;
  std::string note;
};

/// True when `name` matches `pattern` (`*` any run of characters, `?` one character).
bool glob_match(std::string_view pattern, std::string_view name) noexcept;

// `--steps`' glob as the analysis' step_pattern (an ECMAScript expression matched whole, in any
// case): the steps the window takes are the steps the tables, the diagnosis and the folded
// stacks count.
std::string glob_regex(std::string_view pattern);

/// The step schedule `o` states (--skip, --wait, --warmup, --active, --repeat).
schedule_options schedule_of(const run_options& o);

/// The steps a bounded collection numbered as they ended (`step_totals::number`, its bounds)
/// that the step schedule records, and how many steps ended in all. Its retained trace holds
/// only some steps' ranges (the window's, the last and the slowest few), so the schedule cannot
/// be applied to it by counting its ranges again: counted from 0, the kept steps would be
/// numbered anew.
struct numbered_steps {
  struct step {
    std::uint64_t number = 0;
    timestamp_ns begin = 0, end = 0;
  };
  std::vector<step> recorded;
  std::uint64_t seen = 0;
};

/// The windows `o` selects in `t`. With `steps` (a bounded collection's step log) the step
/// schedule's windows come from it, not from `t`'s ranges; the other sources are read from `t`.
window_choice choose_windows(const trace& t, const run_options& o, const numbered_steps* steps = nullptr);

/// The records of `t` inside `w` (as `choose_windows` gives them: sorted, disjoint): GPU work
/// by its launch time (its start when the launch is unknown), launches by their time, ranges,
/// marks, syncs and API calls by their start. `begin` and `finish` become the windows' bounds;
/// the rest of `t` (strings, threads, devices, name spellings, capture windows, losses) is kept.
trace restrict_to(const trace& t, const std::vector<time_window>& w);

} // namespace tool
} // namespace v1
} // namespace nvscope
