// nvscope-target: nvscope
#pragma once

/// \file trace.hpp
/// The trace: what the collector recorded, as plain records and a string table.
///
/// Nothing here knows CUPTI or CUDA. The collector decodes each CUPTI buffer into these
/// records; analysis and export read them; tests build them by hand.
///
/// \code
///   nvscope::trace t;
///   auto name = t.strings.intern("gemm_kernel");
///   nvscope::kernel_record k{};
///   k.start = 1000; k.end = 3000; k.name = name; k.correlation = 7;
///   t.kernels.push_back(k);
/// \endcode

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// Nanoseconds on the collector's one calibrated clock (host and GPU alike).
using timestamp_ns = std::uint64_t;

/// "No such record": the one sentinel of every index into the trace's vectors (a range, a
/// launch, a thread), wherever a layer needs one.
inline constexpr std::uint32_t no_index = 0xffffffffu;

/// An index into `string_table`; 0 is always the empty string.
using string_id = std::uint32_t;

/// Interned strings: kernel names, range names, domain names, thread names.
class string_table {
 public:
  string_table() { intern(std::string_view{}); }

  /// Returns the id of `s`, adding it on first sight.
  string_id intern(std::string_view s) {
    auto it = index_.find(std::string(s));
    if (it != index_.end()) return it->second;
    auto id = static_cast<string_id>(strings_.size());
    strings_.emplace_back(s);
    index_.emplace(strings_.back(), id);
    return id;
  }

  /// The string of `id`; an unknown id reads as "<unknown>", never out of bounds.
  std::string_view operator[](string_id id) const noexcept {
    return id < strings_.size() ? std::string_view(strings_[id]) : std::string_view("<unknown>");
  }

  std::size_t size() const noexcept { return strings_.size(); }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, string_id> index_;
};

/// How a kernel was launched and where it ran: grid, block, registers, shared memory, device,
/// context and CUDA graph. Kernels launched alike share one (`config_table`), so the kernel
/// record stays 32 bytes.
struct kernel_config {
  std::uint32_t grid[3] = {0, 0, 0};
  std::uint16_t block[3] = {0, 0, 0};
  std::uint16_t device = 0;
  std::uint16_t registers = 0;    ///< per thread
  std::uint32_t shared_bytes = 0; ///< static + dynamic, per block
  std::uint32_t context = 0;
  std::uint32_t graph = 0;        ///< CUDA graph id, 0 when not launched from a graph

  friend bool operator==(const kernel_config& a, const kernel_config& b) noexcept {
    return a.grid[0] == b.grid[0] && a.grid[1] == b.grid[1] && a.grid[2] == b.grid[2] && a.block[0] == b.block[0] &&
           a.block[1] == b.block[1] && a.block[2] == b.block[2] && a.device == b.device && a.registers == b.registers &&
           a.shared_bytes == b.shared_bytes && a.context == b.context && a.graph == b.graph;
  }
  friend bool operator!=(const kernel_config& a, const kernel_config& b) noexcept { return !(a == b); }
};

/// The distinct kernel configurations of a trace; 0 is always the all-zero one (what a kernel
/// record built by hand points at).
/// \code
///   nvscope::kernel_config c;
///   c.grid[0] = 128; c.block[0] = 256;
///   k.config = t.kernel_configs.intern(c);
///   auto threads = t.kernel_configs[k.config].block[0];
/// \endcode
class config_table {
 public:
  config_table() : configs_(1), slots_(1024, empty) { slots_[slot_of(configs_[0])] = 0; }

  /// Returns the id of `c`, adding it on first sight.
  std::uint32_t intern(const kernel_config& c) {
    if (configs_[last_] == c) return last_; // kernels come in runs of one configuration
    auto slot = slot_of(c);
    if (slots_[slot] == empty) {
      if (2 * (configs_.size() + 1) > slots_.size()) {
        grow();
        slot = slot_of(c);
      }
      slots_[slot] = static_cast<std::uint32_t>(configs_.size());
      configs_.push_back(c);
    }
    return last_ = slots_[slot];
  }

  /// The configuration of `id`; an unknown id reads as the all-zero one, never out of bounds.
  const kernel_config& operator[](std::uint32_t id) const noexcept { return configs_[id < configs_.size() ? id : 0]; }

  std::size_t size() const noexcept { return configs_.size(); }
  /// Bytes the table holds (configurations and lookup slots, reserved included).
  std::size_t memory_bytes() const noexcept { return configs_.capacity() * sizeof(kernel_config) + slots_.capacity() * sizeof(std::uint32_t); }

 private:
  // An open-addressing table of ids (linear probing, at most half full): 8-16 bytes a
  // configuration beside its own 36, and one or two memory reads a lookup where a graph
  // instantiated anew each step gives every kernel a configuration of its own.
  static constexpr std::uint32_t empty = 0xffffffffu;
  static std::uint64_t hash(const kernel_config& c) noexcept {
    const std::uint64_t words[] = {
        (std::uint64_t{c.grid[0]} << 32) | c.grid[1],
        (std::uint64_t{c.grid[2]} << 32) | (std::uint64_t{c.block[0]} << 16) | c.block[1],
        (std::uint64_t{c.block[2]} << 48) | (std::uint64_t{c.device} << 32) | (std::uint64_t{c.registers} << 16),
        (std::uint64_t{c.shared_bytes} << 32) | c.context,
        c.graph};
    std::uint64_t h = 0x9e3779b97f4a7c15ull;
    for (const auto w : words) h = (h ^ w) * 0xff51afd7ed558ccdull, h ^= h >> 32;
    return h;
  }
  // The slot holding `c`, or the empty slot where it would go.
  std::size_t slot_of(const kernel_config& c) const noexcept {
    const std::size_t mask = slots_.size() - 1;
    for (auto i = static_cast<std::size_t>(hash(c)) & mask;; i = (i + 1) & mask)
      if (slots_[i] == empty || configs_[slots_[i]] == c) return i;
  }
  void grow() {
    slots_.assign(2 * slots_.size(), empty);
    for (std::uint32_t id = 0; id < configs_.size(); ++id) slots_[slot_of(configs_[id])] = id;
  }

  std::vector<kernel_config> configs_;
  std::vector<std::uint32_t> slots_; // ids into configs_; `empty` where none
  std::uint32_t last_ = 0;
};

/// One kernel execution. Kept to 32 bytes: a trace can hold millions, and analysis reads them
/// again and again. How it was launched is in `trace::kernel_configs[config]`.
struct kernel_record {
  timestamp_ns start = 0;
  timestamp_ns end = 0;
  string_id name = 0;            ///< demangled unless the collector was told otherwise
  std::uint32_t correlation = 0; ///< ties the kernel to its launch (`launch_record`)
  std::uint32_t stream = 0;
  std::uint32_t config = 0;      ///< index into `trace::kernel_configs`
};
static_assert(sizeof(kernel_record) == 32, "kernel_record must stay 32 bytes");

/// Where a copy or memset's memory lives.
enum class memory_kind : std::uint8_t { unknown, pageable, pinned, device, array, managed, device_static, managed_static };

/// Direction of a copy, in nsys's words (`[CUDA memcpy Host-to-Device]`, ...).
enum class copy_kind : std::uint8_t { unknown, host_to_device, device_to_host, host_to_array, array_to_host, array_to_array, array_to_device, device_to_array, device_to_device, host_to_host, peer_to_peer };

/// One memory copy (CUPTI's MEMCPY activity; a row of nsys's cuda_gpu_mem_*_sum).
struct copy_record {
  timestamp_ns start = 0;        ///< when the copy began on the GPU
  timestamp_ns end = 0;          ///< 0 when the record was cut short: analysis leaves it out and counts it
  std::uint64_t bytes = 0;       ///< copied
  std::uint32_t correlation = 0; ///< ties the copy to the API call that issued it
  std::uint32_t stream = 0;      ///< stream id as CUPTI numbers streams
  std::uint32_t context = 0;     ///< CUDA context id
  std::uint16_t device = 0;      ///< device ordinal
  copy_kind kind = copy_kind::unknown;
  memory_kind src = memory_kind::unknown; ///< where the source lives
  memory_kind dst = memory_kind::unknown; ///< where the destination lives
  std::uint32_t graph = 0;                ///< CUDA graph id, 0 when not launched from a graph
};

/// One memset (CUPTI's MEMSET activity; nsys names it `[CUDA memset]`).
struct memset_record {
  timestamp_ns start = 0;        ///< when the memset began on the GPU
  timestamp_ns end = 0;          ///< 0 when the record was cut short, as for copies
  std::uint64_t bytes = 0;       ///< set
  std::uint32_t value = 0;       ///< the value written, as passed to cudaMemset
  std::uint32_t correlation = 0; ///< ties the memset to its API call
  std::uint32_t stream = 0;
  std::uint32_t context = 0;
  std::uint16_t device = 0;
  memory_kind memory = memory_kind::unknown; ///< where the memory set lives
  std::uint32_t graph = 0;                   ///< CUDA graph id, 0 outside graphs
};

/// What a host thread waited on.
enum class sync_kind : std::uint8_t { unknown, event, stream_wait_event, stream, context };

/// One synchronisation: the host (or a stream) waiting on the GPU.
struct sync_record {
  timestamp_ns start = 0;
  timestamp_ns end = 0;
  std::uint32_t correlation = 0;
  std::uint32_t stream = 0;
  std::uint32_t context = 0;
  std::uint32_t thread = 0; ///< index into `trace::threads`
  sync_kind kind = sync_kind::unknown;
};

/// The payload a range or mark carried.
enum class payload_kind : std::uint8_t { none, int32, int64, uint32, uint64, float32, float64 };

/// A payload as recorded (the annotation API's `nvscope::payload` is what callers pass).
struct recorded_payload {
  payload_kind kind = payload_kind::none;
  union {
    std::int64_t i;
    std::uint64_t u;
    double d;
  } value{};
};

/// One NVTX range (push/pop or start/end) or mark (start == end, `is_mark`). Nesting is
/// not recorded here: analysis computes it (`link_ranges`), with one rule for every reader.
struct range_record {
  timestamp_ns start = 0;
  timestamp_ns end = 0;     ///< 0 while the range was never closed
  string_id domain = 0;     ///< 0: the default domain
  string_id name = 0;
  std::uint32_t color = 0;  ///< ARGB, 0 when none was given
  std::uint32_t category = 0;
  std::uint32_t thread = 0; ///< index into `trace::threads` of the thread that opened it
  /// Index into `trace::threads` of the thread that closed it: `thread` for push/pop ranges
  /// and marks; a start/end range may end on another thread (nsys then leaves it out of
  /// nvtx_kern_sum and nvtx_gpu_proj_sum). `same_thread` when unknown or unclosed.
  std::uint32_t end_thread = same_thread;
  bool is_mark = false;
  bool is_push_pop = true;  ///< false for start/end ranges, which may cross threads
  recorded_payload payload;

  /// `end_thread` when the range ended where it started, or nothing says otherwise.
  static constexpr std::uint32_t same_thread = no_index;
  /// The thread that closed the range (its own when unknown).
  std::uint32_t closing_thread() const noexcept { return end_thread == same_thread ? thread : end_thread; }
};

/// The host side of a launch (kernel, copy, memset, graph): which thread, when. Its
/// correlation id matches the GPU records it caused; every kernel of one graph launch
/// shares it.
struct launch_record {
  timestamp_ns time = 0;
  std::uint32_t correlation = 0;
  std::uint32_t thread = 0; ///< index into `trace::threads`
};

/// One CUDA runtime or driver API call, when API recording is on.
struct api_record {
  timestamp_ns start = 0;
  timestamp_ns end = 0;
  string_id name = 0;       ///< "cudaLaunchKernel", "cuLaunchKernel", ...
  std::uint32_t correlation = 0;
  std::uint32_t thread = 0;
  bool is_driver = false;
};

/// A host thread seen in the trace.
struct thread_info {
  std::uint64_t os_id = 0;
  string_id name = 0; ///< from nvtxNameOsThread, or 0
};

/// Device description for exports.
struct device_info {
  std::uint16_t id = 0;
  string_id name = 0;
  string_id uuid = 0; ///< "GPU-8f3e...", as nvidia-smi -L prints it; 0 unknown
};

/// How a kernel name is spelled, as `nsys stats` offers it: demangled by NVIDIA's demangler
/// (the default), `base` (the function's name alone), or `mangled` (as the compiler wrote it).
enum class name_form : std::uint8_t { demangled, base, mangled };

/// Which demangler spelled `kernel_record::name`: NVIDIA's (`__cu_demangle`, as nsys spells
/// names), nvscope's without libcufilt (`itanium`: nsys's spelling by the rules of
/// collect/detail/nsys_spelling.hpp, a name outside them by `abi::__cxa_demangle`), or none
/// (names kept mangled).
enum class name_spelling : std::uint8_t { nvidia, itanium, mangled };

/// Which ranges a GPU operation belongs to when the thread that launched it had none open.
/// In a PyTorch training step the backward kernels are launched by autograd's own thread,
/// which opens no range, while the main thread sits in its `backward` range.
enum class attribution_rule : std::uint8_t {
  thread, ///< nsys's: the ranges open on the launching thread; none when it has none open
  /// As `thread`; a launch from a thread with no push/pop range open goes to the innermost
  /// push/pop range open at the launch's time on the process's other threads, when exactly one
  /// other thread has a push/pop range open then (none when several or none do). Start/end
  /// ranges keep nsys's rule.
  process,
};

/// The other spellings of one kernel name; `kernel_record::name` is the demangled one.
struct kernel_name_forms {
  string_id base = 0;    ///< 0: same as the demangled name
  string_id mangled = 0; ///< 0: same as the demangled name
};

/// A stretch of time, [begin, end).
struct time_window {
  timestamp_ns begin = 0;
  timestamp_ns end = 0;
};

/// `windows` in time order, overlapping or touching windows merged into one: the form that
/// `in_windows` searches. They cover the same instants as before (an empty window, end <=
/// begin, still covers none).
/// \code
///   auto w = nvscope::merge_windows({{300, 400}, {100, 200}, {150, 250}}); // {100, 250}, {300, 400}
/// \endcode
inline std::vector<time_window> merge_windows(std::vector<time_window> windows) {
  std::sort(windows.begin(), windows.end(), [](const time_window& a, const time_window& b) { return a.begin < b.begin; });
  std::vector<time_window> merged;
  for (const auto& w : windows) {
    if (!merged.empty() && w.begin <= merged.back().end) merged.back().end = std::max(merged.back().end, w.end);
    else merged.push_back(w);
  }
  return merged;
}

/// True when `t` falls inside one of `merged` (as `merge_windows` returns them): a binary search.
/// \code
///   bool kept = nvscope::in_windows(t.capture_windows, k.start);
/// \endcode
inline bool in_windows(const std::vector<time_window>& merged, timestamp_ns t) noexcept {
  auto it = std::upper_bound(merged.begin(), merged.end(), t, [](timestamp_ns x, const time_window& w) { return x < w.begin; });
  if (it == merged.begin()) return false;
  --it;
  return t >= it->begin && t < it->end;
}

/// Removes from `records` those whose time, `when(record)`, is outside `merged` (as
/// `merge_windows` returns them), keeping the others in order; returns how many went.
/// \code
///   auto gone = nvscope::erase_outside(t.ranges, windows, [](const nvscope::range_record& r) { return r.start; });
/// \endcode
template <class Record, class When>
std::size_t erase_outside(std::vector<Record>& records, const std::vector<time_window>& merged, When when) {
  const auto kept_end = std::remove_if(records.begin(), records.end(), [&](const Record& r) { return !in_windows(merged, when(r)); });
  const auto gone = static_cast<std::size_t>(records.end() - kept_end);
  records.erase(kept_end, records.end());
  return gone;
}

/// What the collector could not keep, reported by every summary.
struct loss_counts {
  std::uint64_t dropped_records = 0;    ///< CUPTI's count: buffers were full
  std::uint64_t incomplete_records = 0; ///< records with no end timestamp, not reported as real
  std::uint64_t unclosed_ranges = 0;    ///< ranges still open when collection stopped
  std::uint64_t buffer_errors = 0;      ///< CUPTI buffers not read to their end (a bad record, or no memory to keep one)
  std::uint64_t late_buffers = 0;       ///< buffers CUPTI delivered while no collector was recording: discarded
  std::uint64_t foreign_releases = 0;   ///< buffers handed back that the pool never lent (or twice): ignored
  std::uint64_t nvtx_too_early = 0;     ///< 1 when NVTX started before the collector could route it: no NVTX ranges
  std::uint64_t launches_lost = 0;      ///< launch records not kept (no memory): their GPU work has no launching thread
};

/// The trace clock and the wall clock (ns since the Unix epoch, UTC) read together: what a
/// merge of several processes' traces starts from.
struct clock_reference {
  timestamp_ns trace_ns = 0; ///< 0: not read
  std::uint64_t wall_ns = 0;
};

/// What only CUDA and CUPTI know about where a trace was recorded; the collector fills it.
/// A trace made by hand (or on a machine without a GPU) leaves it as it is: every figure 0,
/// every text empty, which the outputs write as unknown (null), never as a guess.
struct recording_context {
  std::string driver;             ///< NVIDIA's driver version ("570.124.06"); empty unknown
  int cuda_driver_api = 0;        ///< cudaDriverGetVersion: 12080 is CUDA 12.8; 0 unknown
  int cuda_runtime = 0;           ///< cudaRuntimeGetVersion of the collector's runtime; 0 unknown
  std::uint32_t cupti_api = 0;    ///< cuptiGetVersion; 0 unknown
  std::int8_t clocks_locked = -1; ///< 1 locked, 0 not, -1 not known
  bool overhead_measured = false; ///< CUPTI's OVERHEAD records were on
  std::uint64_t overhead_ns = 0;  ///< their summed time, when measured
  clock_reference at_start;       ///< read when recording began
  clock_reference at_end;         ///< read when recording stopped
};

/// A whole recording.
struct trace {
  string_table strings;
  std::vector<kernel_record> kernels;
  config_table kernel_configs; ///< `kernel_record::config` indexes it
  std::vector<copy_record> copies;
  std::vector<memset_record> memsets;
  std::vector<sync_record> syncs;
  std::vector<range_record> ranges;
  std::vector<launch_record> launches;
  std::vector<api_record> api_calls;
  std::vector<thread_info> threads;
  std::vector<device_info> devices;
  /// Per demangled kernel name (`kernel_record::name`): its base and mangled spellings.
  /// A name that is not here has one spelling for all three forms.
  std::unordered_map<string_id, kernel_name_forms> kernel_names;
  /// Which demangler spelled the kernel names (a summary warns when it is not NVIDIA's).
  name_spelling kernel_name_spelling = name_spelling::nvidia;
  /// When the program's profiler was on (`cudaProfilerStart`/`Stop` by anyone, nvscope's
  /// capture guards), in time order; empty when no capture was seen. An unclosed window
  /// ends at `finish`.
  std::vector<time_window> capture_windows;
  /// Steps during which the collector counted a loss (dropped records, buffer errors, launches
  /// lost; a bounded collection), in time order: the step analysis leaves out the step ranges
  /// that start in one, and says how many.
  std::vector<time_window> lossy_steps;
  loss_counts lost;
  std::uint64_t process_id = 0;
  timestamp_ns begin = 0; ///< when collection started
  timestamp_ns finish = 0; ///< when collection stopped
  recording_context context; ///< device, driver, versions, clock reference (the collector's)
};

/// The device a kernel, copy or memset ran on (a kernel's is in its configuration).
/// \code
///   for (const auto& k : t.kernels) per_device[nvscope::device_of(t, k)] += k.end - k.start;
/// \endcode
inline std::uint16_t device_of(const trace& t, const kernel_record& k) noexcept { return t.kernel_configs[k.config].device; }
inline std::uint16_t device_of(const trace&, const copy_record& c) noexcept { return c.device; }
inline std::uint16_t device_of(const trace&, const memset_record& s) noexcept { return s.device; }

/// The spelling of kernel name `demangled` in form `form`.
/// \code
///   auto base = nvscope::kernel_name(t, k.name, nvscope::name_form::base);
/// \endcode
inline std::string_view kernel_name(const trace& t, string_id demangled, name_form form) noexcept {
  if (form == name_form::demangled) return t.strings[demangled];
  const auto it = t.kernel_names.find(demangled);
  if (it == t.kernel_names.end()) return t.strings[demangled];
  const auto id = form == name_form::base ? it->second.base : it->second.mangled;
  return t.strings[id ? id : demangled];
}

} // namespace v1
} // namespace nvscope
