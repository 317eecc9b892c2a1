// nvscope-target: cupti
#pragma once

// A completed CUPTI buffer, read record by record into the running collection's trace. It
// runs on CUPTI's thread, under the process state's decode lock (process_state.hpp), and
// counts what it could not read.

#include <nvscope/collect/detail/cupti_api.hpp>
#include <nvscope/collect/detail/decode.hpp>
#include <nvscope/trace.hpp>

#include <cupti.h>

#include <cstddef>
#include <cstdint>

namespace nvscope {
inline namespace v1 {
namespace detail {

struct buffer_counts {
  std::uint64_t completed = 0;
  std::uint64_t errors = 0;  // buffers not read to their end: a bad record, or no memory
  std::uint64_t dropped = 0; // CUPTI's count of records it had no buffer for
};

class buffer_decoder {
 public:
  explicit buffer_decoder(activity_decoder& records) noexcept : records_(&records) {}

  // Reads every record of `buffer` (`valid` bytes), then CUPTI's dropped count for its stream.
  void decode(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer, std::size_t valid) noexcept {
    if (!read_records(buffer, valid)) ++counts_.errors;
    std::size_t dropped = 0;
    if (cupti().cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) counts_.dropped += dropped;
    ++counts_.completed;
    if (after_ == nullptr) return;
    try {
      after_(after_context_);
    } catch (...) {
      ++counts_.errors; // out of memory while folding: counted as a buffer not read to its end
    }
  }

  // Called after each buffer, on the same thread and lock (a bounded collection folds there).
  void after_each_buffer(void (*after)(void*), void* context) noexcept {
    after_ = after;
    after_context_ = context;
  }

  const buffer_counts& counts() const noexcept { return counts_; }
  const trace& output() const noexcept { return records_->output(); }
  void add_dropped(std::uint64_t n) noexcept { counts_.dropped += n; }

 private:
  bool read_records(std::uint8_t* buffer, std::size_t valid) noexcept {
    CUpti_Activity* rec = nullptr;
    for (;;) {
      const CUptiResult r = cupti().cuptiActivityGetNextRecord(buffer, valid, &rec);
      if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) return true;
      if (r != CUPTI_SUCCESS) return false;
      try {
        records_->decode(rec);
      } catch (...) {
        return false; // out of memory while growing the trace: the rest of this buffer is lost
      }
    }
  }

  activity_decoder* records_;
  buffer_counts counts_;
  void (*after_)(void*) = nullptr;
  void* after_context_ = nullptr;
};

} // namespace detail
} // namespace v1
} // namespace nvscope
