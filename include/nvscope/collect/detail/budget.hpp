// nvscope-target: nvscope
#pragma once

// The memory limit of a collection that keeps everything raw (collector_options::bounded off,
// the default): after each decoded buffer, the raw records held are weighed; while they fit in
// `limit` nothing changes (a short run's trace is the one an unlimited collection makes, and so
// are its tables); the buffer that takes them past it is the last one kept, and from then on
// every new GPU record, sync and API record is folded into running totals and released, said
// once in one line. What is kept is the run's first `limit` bytes of raw records, whole.

#include <nvscope/collect/detail/long_run.hpp>
#include <nvscope/trace.hpp>
#include <nvscope/trace/totals.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace nvscope {
inline namespace v1 {
namespace detail {

// Bytes of the raw records a trace holds that grow with the run (GPU records, syncs, API
// records, ranges, launches).
inline std::size_t raw_bytes(const trace& t) noexcept {
  return t.kernels.size() * sizeof(kernel_record) + t.copies.size() * sizeof(copy_record) +
         t.memsets.size() * sizeof(memset_record) + t.syncs.size() * sizeof(sync_record) +
         t.api_calls.size() * sizeof(api_record) + t.ranges.size() * sizeof(range_record) +
         t.launches.size() * sizeof(launch_record);
}

class raw_budget {
 public:
  explicit raw_budget(std::size_t limit) : limit_(limit), folder_(long_run_limits{}) {}

  // After a buffer was decoded into `live`: folds what came past the limit. Returns the one
  // line to say when the limit is first reached, else an empty string.
  std::string after_buffer(trace& live) {
    if (over_) {
      fold_new(live);
      return {};
    }
    bytes_ = raw_bytes(live);
    if (bytes_ <= limit_) return {};
    over_ = true;
    kept_ = kept_counts{live.kernels.size(), live.copies.size(), live.memsets.size(), live.syncs.size(), live.api_calls.size()};
    auto latest = [this](const auto& records) {
      for (const auto& r : records) last_kept_correlation_ = std::max(last_kept_correlation_, r.correlation);
    };
    latest(live.kernels), latest(live.copies), latest(live.memsets), latest(live.syncs);
    return "memory limit of " + mib(limit_) + " reached (" + std::to_string(kept_.total()) +
           " raw records kept): later kernels, copies, memsets, syncs and API calls are counted in the totals, not kept "
           "(raise collector_options::memory_limit or nvscope run's --memory-limit, or window the run)";
  }

  // The records were handed over (collector::drain): what is held starts again from nothing.
  void drained() noexcept {
    over_ = false;
    bytes_ = 0;
    kept_ = kept_counts{};
  }

  bool over() const noexcept { return over_; }
  std::size_t limit() const noexcept { return limit_; }
  // Bytes weighed at the last buffer before the limit was reached.
  std::size_t bytes_kept() const noexcept { return bytes_; }
  // Launches of GPU records kept have a correlation at most this (CUPTI numbers them in order):
  // past the limit, the collector keeps only those launch calls.
  std::uint32_t last_kept_correlation() const noexcept { return last_kept_correlation_; }
  const totals& folded() const noexcept { return folder_.folded(); }
  std::uint64_t records_folded() const noexcept { return folder_.counts().records_folded + api_folded_; }
  // A launch or sync call past the limit, not kept.
  void count_call_dropped() noexcept { ++calls_dropped_; }
  std::uint64_t calls_dropped() const noexcept { return calls_dropped_; }

 private:
  struct kept_counts {
    std::size_t kernels = 0, copies = 0, memsets = 0, syncs = 0, api = 0;
    std::size_t total() const noexcept { return kernels + copies + memsets + syncs + api; }
  };

  static std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

  // Records past the kept ones are new since the last buffer: folded, then erased.
  void fold_new(trace& live) {
    folder_.fold_past(live, kept_.kernels, kept_.copies, kept_.memsets, kept_.syncs);
    if (live.api_calls.size() > kept_.api) {
      api_folded_ += live.api_calls.size() - kept_.api;
      live.api_calls.resize(kept_.api);
    }
  }

  std::size_t limit_;
  bool over_ = false;
  std::size_t bytes_ = 0;
  kept_counts kept_;
  std::uint32_t last_kept_correlation_ = 0;
  std::uint64_t api_folded_ = 0, calls_dropped_ = 0;
  long_run_folder folder_;
};

} // namespace detail
} // namespace v1
} // namespace nvscope
