// nvscope-target: nvscope
#pragma once

/// \file analyze/merge_types.hpp
/// The plain records of a merge of many ranks (analyze/merge.hpp): one rank's kernels, steps
/// and clock reference in, each host's clock offset and each rank's overlap out. The reference
/// definitions (analyze/reference/merge.hpp) read the same types.
///
/// \code
///   nvscope::rank_profile p;
///   p.rank = 3; p.host = "node07";
///   p.kernels.push_back({1000, 2000, name_id, true});  // an NCCL kernel
/// \endcode

#include <nvscope/trace.hpp>
#include <nvscope/trace/totals.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// rank_kernel::range of a kernel no range owns.
inline constexpr std::uint32_t no_range = 0xffffffffu;

/// One kernel of one rank, on that rank's clock.
struct rank_kernel {
  timestamp_ns start = 0;
  timestamp_ns end = 0;
  std::uint32_t name = 0;     ///< the same id for the same name on every rank
  bool communication = false; ///< is_communication_kernel(its name)
  std::uint32_t stream = 0;   ///< its CUDA stream on that rank (0: not recorded)
  std::uint32_t range = no_range; ///< the name id of the range that owns it, or no_range
  timestamp_ns launch = 0;        ///< start of the host call that launched it, on that rank's clock (0: not recorded)
};

/// What a merge needs of one rank's profile.
struct rank_profile {
  long long rank = -1;
  std::string host;
  std::vector<rank_kernel> kernels;
  std::vector<time_window> steps; ///< step ranges on the rank's clock, in time order
  clock_reference at_start;       ///< trace and wall clock read together (0: not recorded)
};

/// One step of one rank (analyze/merge.hpp's `rank_steps`): its kernels are those that belong
/// to it by `step_of_kernel` (HTA's rule: the step whose range holds the kernel's launch).
struct rank_step {
  timestamp_ns start_ns = 0;          ///< the step range's start on the reference host's clock (the offset taken off)
  std::uint64_t duration_ns = 0;      ///< the step range's host time
  std::uint64_t gpu_busy_ns = 0;      ///< the union of its kernels
  std::uint64_t communication_ns = 0; ///< the union of its communication kernels
  std::uint64_t compute_ns = 0;       ///< the union of its other kernels
};

/// One host's clock against the reference rank's host: its time minus the reference's.
struct host_offset {
  std::string host;
  double offset_ns = 0.0;
  double uncertainty_ns = 0.0;
  std::uint64_t samples = 0;        ///< matched collective ends over the host's ranks
  double same_host_spread_ns = 0.0; ///< largest |rank's own median - host's offset|
  bool from_wall_clock = false;     ///< no collective matched: the wall-clock reference
};

/// How one rank's collectives compare with the reference rank's (analyze/merge.hpp).
struct collective_match {
  long long rank = -1;
  std::uint64_t collectives = 0;           ///< communication kernels it ran
  std::uint64_t reference_collectives = 0; ///< the reference rank's
  std::uint64_t matched = 0;               ///< its collectives paired with the reference's (the k-th of each communicator)
  bool counts_agree = true;                ///< every communicator matched on both, each as long on both: all paired
  std::uint64_t communicators = 0;         ///< its communicators: the streams its collectives ran on
  std::vector<std::uint32_t> unmatched_streams; ///< streams whose collectives match no communicator of the reference rank's
};

/// Communication time and the compute time inside it.
struct overlap_figures {
  std::uint64_t communication_ns = 0;
  std::uint64_t overlap_ns = 0;
  double fraction = 0.0; ///< overlap_ns / communication_ns; 0 without communication
};

/// How late one rank comes to the collectives, by two rules (analyze/merge.hpp).
struct rank_lateness {
  long long rank = -1;
  std::uint64_t collectives = 0;   ///< its matched collectives
  double arrival_late_ns = 0.0;    ///< median over collectives of (its aligned start - the median rank's)
  std::uint64_t latest_count = 0;  ///< collectives where it started last of all ranks
  double wait_short_ns = 0.0;      ///< median over collectives of (median rank's duration - its duration)
  bool straggler_by_offsets = false; ///< nvscope's rule on the measured offsets
  bool straggler_by_wait = false;    ///< the clock-free rule: it waits least inside the collectives
  std::uint64_t hta_late_steps = 0;  ///< steps where HTA's rule counts it among the latest starters
  bool straggler_by_hta = false;     ///< HTA's rule: hta_late_steps > 0 (analyze/merge.hpp)
};

/// One kernel name's (or one range's) GPU time on the fastest and on the slowest rank.
struct name_difference {
  std::uint32_t name = 0;
  std::uint64_t fastest_ns = 0, slowest_ns = 0; ///< sums of its kernels' durations
  std::uint64_t fastest_count = 0, slowest_count = 0;
  std::int64_t difference_ns = 0; ///< slowest_ns - fastest_ns
};

/// One rank's running totals (trace/totals.hpp), as its summary carried them.
struct rank_totals {
  long long rank = -1;
  totals run;
};

/// One kernel name's (or one range group's) figures over every rank that ran it: count, sum,
/// min and max exact, the quantiles the merged sketch's (within
/// `duration_sketch::relative_error`), and the rank whose own median of it is the largest.
struct merged_total {
  std::string name;
  std::string domain;   ///< ranges: their domain ("" the default); kernels: ""
  bool push_pop = true; ///< ranges: false for a start/end range
  std::uint64_t ranks = 0, count = 0, sum_ns = 0, min_ns = 0, max_ns = 0;
  double p50_ns = 0, p90_ns = 0, p99_ns = 0;
  long long slowest_rank = -1; ///< largest p50 of its own; ties to the lower rank
  double slowest_p50_ns = 0;
};

/// The running totals of every rank merged (analyze/merge.hpp's `merge_rank_totals`).
struct merged_totals {
  std::vector<merged_total> kernels; ///< by sum descending, then name
  std::vector<merged_total> ranges;  ///< the same order
  totals all;                        ///< the plain merge of every rank's (trace/totals.hpp's `merge`)
  std::uint64_t ranks = 0;           ///< ranks whose totals were merged
};

} // namespace v1
} // namespace nvscope
