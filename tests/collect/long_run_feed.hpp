#pragma once
// A synthetic long run fed through the collector's real decode-and-fold path: CUPTI activity
// records (kernels, copies, memsets, synchronisations, built as CUPTI fills them, as
// collector_host_test.cpp builds them) decoded by activity_decoder into a live trace a buffer
// at a time, each buffer then handed to long_run_folder, with the steps announced as the host
// would announce them. Shared by tests/collect/long_run_test.cpp and bench/collect/long_run_bench.cpp.
//
// Step s: the host's step range [s * period, s * period + wall), wall 4-6 ms (every 61st step
// 9-12 ms: the slow ones), about `kernels_per_step` kernels of six names launched inside, two
// copies, a memset and a sync; three kernels launched after the range (outside every step,
// folded at once). Each GPU record starts `lag(correlation)` after its launch. Every step's
// content comes from its own seed, so a run cut into pieces is the same records.
// With host records (`generator(seed, n, true)`) a step also has a runtime API record per
// kernel, copy and memset launched inside it (from its launch to 2000 ns after),
// and NVTX events (events_per_step of them, on one thread): its `step_s` range with `forward`,
// `backward` and `allreduce` inside and a `loss` mark, and between steps a `data_load` push/pop
// and a `prefetch` start/end range (outside every step). They go through
// detail/bounded.hpp's live_ranges as the collector sends them, delivered at the step's end.

#include <nvscope/collect/detail/bounded.hpp>
#include <nvscope/collect/detail/decode.hpp>
#include <nvscope/collect/detail/long_run.hpp>

#include <cupti.h>

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace long_run_feed {

namespace nd = nvscope::detail;

inline constexpr std::uint64_t period = 20'000'000; // ns between step starts
inline constexpr std::uint64_t origin = 1'000'000'000;
inline const char* const names[6] = {"_Z4gemmPfS_S_i", "_Z7softmaxPfi", "_Z9layernormPfS_i", "_Z4reluPfi",
                                     "_Z6concatPfS_S_", "_Z9attentionPfS_S_S_"};

// When a GPU record of launch `correlation` starts after its launch, in ns.
inline std::uint64_t lag(std::uint32_t correlation) noexcept { return 2000 + (correlation * 7919u) % 3000u; }
// What the folder reads as a record's launch time (the collector joins the launch log).
struct launch_time {
  nvscope::timestamp_ns operator()(std::uint32_t correlation, nvscope::timestamp_ns start) const noexcept {
    return start - lag(correlation);
  }
};

// One CUPTI record of any of the four kinds, as CUPTI leaves it (unused fields zero).
union activity {
  CUpti_Activity head;
  CUpti_ActivityKernel10 kernel;
  CUpti_ActivityMemcpy6 copy;
  CUpti_ActivityMemset4 memset;
  CUpti_ActivitySynchronization2 sync;
  CUpti_ActivityAPI api;
};

inline constexpr std::size_t events_per_step = 15; // 7 ranges (6 push/pop, 1 start/end) of two events, and a mark

// A step's records as the test checks them: its figures computed here, apart from the folder.
struct expected_step {
  std::uint64_t number = 0, begin = 0, end = 0, kernel_ns = 0, copy_ns = 0, memset_ns = 0, sync_ns = 0, launches = 0;
  std::uint64_t busy_ns = 0;
  std::vector<std::pair<std::string, std::uint64_t>> top; // mangled names' demangled forms are checked apart
  std::uint64_t kernel_ns_by_name[6] = {};
};

struct step_content {
  std::vector<activity> records; // in launch order
  std::vector<nd::nvtx_event> events; // with host records: the step's NVTX calls, in time order
  std::uint64_t begin = 0, end = 0;
  expected_step expected;
};

// The union of [start, end) spans by a sweep over sorted edges (unlike the folder's merge).
inline std::uint64_t union_ns(std::vector<std::pair<std::uint64_t, int>> edges) {
  std::sort(edges.begin(), edges.end());
  std::uint64_t busy = 0, since = 0;
  int open = 0;
  for (const auto& [t, d] : edges) {
    if (open == 0 && d > 0) since = t;
    open += d;
    if (open == 0 && d < 0) busy += t - since;
  }
  return busy;
}

class generator {
 public:
  generator(std::uint64_t seed, std::uint32_t kernels_per_step, bool host_records = false)
      : seed_(seed), per_step_(kernels_per_step), host_(host_records) {}
  bool host_records() const noexcept { return host_; }

  // Step s's records; its correlation ids are s * 256 + 1, + 2, ... (a step has fewer than 256).
  step_content step(std::uint64_t s) const {
    std::uint32_t correlation = static_cast<std::uint32_t>(s * 256 + 1);
    std::mt19937_64 g(seed_ ^ (s * 0x9e3779b97f4a7c15ull));
    step_content c;
    c.begin = origin + s * period;
    const std::uint64_t wall = (s % 61 == 60 ? 9'000'000 + g() % 3'000'000 : 4'000'000 + g() % 2'000'000);
    c.end = c.begin + wall;
    expected_step& e = c.expected;
    e.number = s, e.begin = c.begin, e.end = c.end;
    std::vector<std::pair<std::uint64_t, int>> edges;
    std::vector<std::uint64_t> launches;
    const std::uint32_t kernels = per_step_ - 2 + static_cast<std::uint32_t>(g() % 5);
    for (std::uint32_t i = 0; i < kernels + 4; ++i) launches.push_back(c.begin + g() % (wall - 100'000));
    std::sort(launches.begin(), launches.end());
    for (std::size_t i = 0; i < launches.size(); ++i) {
      const std::uint32_t corr = correlation++;
      const std::uint64_t start = launches[i] + lag(corr), dur = 1000 + g() % 40'000;
      const std::uint32_t kind = i % 50 == 7 ? 1 : i % 50 == 23 ? 2 : i % 50 == 41 ? 3 : 0; // roughly 2 copies, 1 memset, 1 sync
      if (host_ && kind != 3) c.records.push_back(api_call(launches[i], corr));
      c.records.push_back(make(kind, start, dur, corr, static_cast<unsigned>(g() % 6)));
      count(c.records.back(), e, edges);
    }
    e.busy_ns = union_ns(std::move(edges));
    for (int k = 0; k < 3; ++k) { // launched after the step range: outside every step
      const std::uint32_t corr = correlation++;
      c.records.push_back(make(0, c.end + 50'000 + k * 10'000 + lag(corr), 2000, corr, 3));
    }
    if (host_) c.events = events(s, c.begin, c.end);
    return c;
  }

  // Step s's NVTX calls: its range and those inside it, then two ranges between steps.
  static std::vector<nd::nvtx_event> events(std::uint64_t s, std::uint64_t begin, std::uint64_t end) {
    std::vector<nd::nvtx_event> v;
    auto add = [&](nd::nvtx_event_kind kind, std::uint64_t t, const char* name, std::uint64_t key = 0) {
      nd::nvtx_event e;
      e.kind = kind, e.time = t, e.os_thread = 1, e.key = key, e.name = name;
      v.push_back(std::move(e));
    };
    using k = nd::nvtx_event_kind;
    const std::uint64_t half = begin + (end - begin) / 2;
    add(k::push, begin, ("step_" + std::to_string(s)).c_str());
    add(k::push, begin + 1000, "forward");
    add(k::pop, half, "");
    add(k::push, half + 1000, "backward");
    add(k::push, half + 2000, "allreduce");
    add(k::pop, end - 20'000, "");
    add(k::pop, end - 10'000, "");
    add(k::mark, end - 5000, "loss");
    add(k::pop, end, "");
    add(k::start, end + 10'000, "prefetch", s + 1);
    add(k::push, end + 20'000, "data_load");
    add(k::push, end + 30'000, "decode");
    add(k::pop, end + 400'000, "");
    add(k::end, end + 500'000, "", s + 1);
    add(k::pop, end + 1'000'000, "");
    return v;
  }

 private:
  static activity api_call(std::uint64_t launch, std::uint32_t corr) {
    activity a;
    std::memset(&a, 0, sizeof a);
    a.api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.api.cbid = 211, a.api.start = launch, a.api.end = launch + 2000, a.api.correlationId = corr, a.api.threadId = 1;
    return a;
  }

  static activity make(std::uint32_t kind, std::uint64_t start, std::uint64_t dur, std::uint32_t corr, unsigned name) {
    activity a;
    std::memset(&a, 0, sizeof a);
    if (kind == 0) {
      a.kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      a.kernel.start = start, a.kernel.end = start + dur, a.kernel.correlationId = corr, a.kernel.streamId = 7;
      a.kernel.name = names[name];
      a.kernel.gridX = a.kernel.gridY = a.kernel.gridZ = 1, a.kernel.blockX = 256, a.kernel.blockY = a.kernel.blockZ = 1;
    } else if (kind == 1) {
      a.copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
      a.copy.start = start, a.copy.end = start + dur, a.copy.correlationId = corr, a.copy.bytes = 1 << 20;
      a.copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    } else if (kind == 2) {
      a.memset.kind = CUPTI_ACTIVITY_KIND_MEMSET;
      a.memset.start = start, a.memset.end = start + dur, a.memset.correlationId = corr, a.memset.bytes = 4096;
    } else {
      a.sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
      a.sync.start = start - lag(corr), a.sync.end = start - lag(corr) + dur, a.sync.correlationId = corr; // a host wait: its own start
      a.sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    }
    return a;
  }

  static void count(const activity& a, expected_step& e, std::vector<std::pair<std::uint64_t, int>>& edges) {
    switch (a.head.kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        e.kernel_ns += a.kernel.end - a.kernel.start;
        for (int n = 0; n < 6; ++n)
          if (a.kernel.name == names[n]) e.kernel_ns_by_name[n] += a.kernel.end - a.kernel.start;
        ++e.launches;
        edges.emplace_back(a.kernel.start, 1), edges.emplace_back(a.kernel.end, -1);
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        e.copy_ns += a.copy.end - a.copy.start, ++e.launches;
        edges.emplace_back(a.copy.start, 1), edges.emplace_back(a.copy.end, -1);
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        e.memset_ns += a.memset.end - a.memset.start, ++e.launches;
        edges.emplace_back(a.memset.start, 1), edges.emplace_back(a.memset.end, -1);
        break;
      default: e.sync_ns += a.sync.end - a.sync.start; break;
    }
  }

  std::uint64_t seed_;
  std::uint32_t per_step_;
  bool host_ = false;
};

// Feeds steps [first, last) through decoder and folder, `buffer_records` records a buffer:
// each buffer decoded, then taken by the folder. `on_buffer(records so far)` after each.
// Step ranges are announced when the host would make them: a step's start before its
// records, its end after them (its records may still sit in a buffer not yet delivered).
struct feed {
  nvscope::trace live;
  nd::activity_decoder decoder{live, true};
  std::uint64_t records = 0, events = 0; // CUPTI records and NVTX events fed
  double fold_cpu_s = 0.0; // this thread's CPU time in decode and take, the feed's own work left out
  std::vector<activity> buffer;
  std::unique_ptr<nd::live_ranges> ranges;   // with host records: NVTX events into ranges
  nd::bounded_state* join = nullptr;          // given: launches logged and joined as the collector joins them
  std::vector<nd::nvtx_event> pending;        // events logged since the last buffer

  template <class OnStep, class OnBuffer>
  void run(const generator& gen, nd::long_run_folder& folder, std::uint64_t first, std::uint64_t last, std::size_t buffer_records,
           OnStep on_step, OnBuffer on_buffer) {
    buffer.reserve(buffer_records);
    if (gen.host_records() && !ranges)
      ranges = std::make_unique<nd::live_ranges>(live, [](std::uint64_t t) { return t; }, [](std::uint64_t) { return 0u; }, nvscope::nvtx_registrations{});
    for (std::uint64_t s = first; s < last; ++s) {
      step_content c = gen.step(s);
      const std::uint64_t number = folder.step_begun(c.begin, "step_" + std::to_string(s));
      on_step(c);
      const std::size_t inside = c.records.size() - 3;
      for (std::size_t i = 0; i < c.records.size(); ++i) {
        if (i == inside) {
          folder.step_ended(c.end, number);
          pending.insert(pending.end(), c.events.begin(), c.events.end());
        }
        buffer.push_back(c.records[i]);
        if (buffer.size() == buffer_records) deliver(folder, on_buffer);
      }
    }
    deliver(folder, on_buffer);
  }

  template <class OnBuffer>
  void deliver(nd::long_run_folder& folder, OnBuffer& on_buffer) {
    const double t0 = cpu_s();
    if (ranges) { // as the collector's fold_buffer: ranges first, then the buffer's records
      ranges->add(pending);
      folder.take_ranges(ranges->closed(), ranges->closed_names(), live.strings, ranges->step_marker());
    }
    events += pending.size();
    pending.clear();
    if (join) {
      log_launches();
      folder.take(live, [this](std::uint32_t c, nvscope::timestamp_ns s) { return join->launched_at(c, s); });
      join->prune(folder);
    } else {
      for (const auto& a : buffer) decoder.decode(&a.head);
      folder.take(live, launch_time{});
    }
    fold_cpu_s += cpu_s() - t0;
    records += buffer.size();
    buffer.clear();
    on_buffer(records);
  }

  // The buffer's launch calls into `join` (as the collector's drain_launches gives them, a sync
  // as its wait), then the buffer decoded.
  void log_launches() {
    for (const auto& a : buffer) {
      const auto k = a.head.kind;
      const std::uint32_t corr = k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ? a.kernel.correlationId
                                 : k == CUPTI_ACTIVITY_KIND_MEMCPY          ? a.copy.correlationId
                                 : k == CUPTI_ACTIVITY_KIND_MEMSET          ? a.memset.correlationId
                                 : k == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ? a.sync.correlationId
                                                                             : 0;
      const std::uint64_t start = k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ? a.kernel.start
                                  : k == CUPTI_ACTIVITY_KIND_MEMCPY          ? a.copy.start
                                  : k == CUPTI_ACTIVITY_KIND_MEMSET          ? a.memset.start
                                                                              : 0;
      if (k == CUPTI_ACTIVITY_KIND_SYNCHRONIZATION) join->add_call(nd::timed_host_call{a.sync.start, corr, 0, true});
      else if (start != 0) join->add_call(nd::timed_host_call{start - lag(corr), corr, 0, false});
    }
    for (const auto& a : buffer) decoder.decode(&a.head);
  }

  static double cpu_s() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
};

} // namespace long_run_feed
