#pragma once
// Synthetic traces whose diagnosis is known, built the way the collector records a program:
// ranges on thread 0, each GPU operation with its launch record and its runtime API call.
// Shared by the tests and bench/diagnose (which counts how many come out right).

#include <nvscope/trace.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace scenario {

using nvscope::timestamp_ns;

constexpr std::uint64_t us = 1000;

// A host timeline on thread 0: `now` moves forward as the program does things.
struct builder {
  nvscope::trace t;
  timestamp_ns now = 1'000'000;
  std::uint32_t correlation = 1;
  std::vector<std::uint32_t> open;

  builder() { t.threads.push_back(nvscope::thread_info{4242, 0}); }

  void push(const std::string& name) {
    nvscope::range_record r;
    r.start = now;
    r.name = t.strings.intern(name);
    open.push_back(static_cast<std::uint32_t>(t.ranges.size()));
    t.ranges.push_back(r);
    now += 100; // the push itself
  }
  void pop() {
    now += 100;
    t.ranges[open.back()].end = now;
    open.pop_back();
  }
  void host_work(std::uint64_t ns) { now += ns; }

  // A launch call of `call_ns` on the host; returns its correlation id and its end.
  std::uint32_t call(const char* api, std::uint64_t call_ns, timestamp_ns& call_end) {
    const auto c = correlation++;
    t.launches.push_back(nvscope::launch_record{now, c, 0});
    t.api_calls.push_back(nvscope::api_record{now, now + call_ns, t.strings.intern(api), c, 0, false});
    now += call_ns;
    call_end = now;
    return c;
  }

  // The GPU stream's free time: an operation starts at max(call end + latency, stream free).
  timestamp_ns stream_free = 0;

  timestamp_ns gpu_start(timestamp_ns call_end, std::uint64_t latency) {
    const auto s = std::max(call_end + latency, stream_free);
    return s;
  }

  void kernel(const std::string& name, std::uint64_t dur, std::uint64_t call_ns = 5 * us, std::uint64_t latency = 1 * us) {
    timestamp_ns end = 0;
    const auto c = call("cudaLaunchKernel", call_ns, end);
    nvscope::kernel_record k;
    k.start = gpu_start(end, latency);
    k.end = k.start + dur;
    k.name = t.strings.intern(name);
    k.correlation = c;
    k.stream = 7;
    stream_free = k.end;
    t.kernels.push_back(k);
  }

  // A host-to-device copy; pageable copies block the host until they finish (as the driver
  // stages them), pinned async ones return at once.
  void copy(std::uint64_t bytes, std::uint64_t dur, nvscope::memory_kind src, const char* api = "cudaMemcpyAsync") {
    timestamp_ns end = 0;
    const auto c = call(api, 3 * us, end);
    nvscope::copy_record r;
    r.start = gpu_start(end, 1 * us);
    r.end = r.start + dur;
    r.bytes = bytes;
    r.correlation = c;
    r.stream = 7;
    r.kind = nvscope::copy_kind::host_to_device;
    r.src = src;
    r.dst = nvscope::memory_kind::device;
    stream_free = r.end;
    t.copies.push_back(r);
    if (src == nvscope::memory_kind::pageable) now = std::max(now, r.end + 2 * us);
  }

  // cudaStreamSynchronize: returns `wake` after the stream has drained.
  void sync(std::uint64_t wake) {
    nvscope::sync_record s;
    s.start = now;
    s.end = std::max(now, stream_free) + wake;
    s.correlation = correlation++;
    s.stream = 7;
    s.thread = 0;
    s.kind = nvscope::sync_kind::stream;
    t.syncs.push_back(s);
    t.api_calls.push_back(nvscope::api_record{s.start, s.end, t.strings.intern("cudaStreamSynchronize"), s.correlation, 0, false});
    now = s.end;
  }

  nvscope::trace finish() {
    t.begin = 0;
    t.finish = std::max(now, stream_free) + 1000;
    return std::move(t);
  }
};

// Many 2 us kernels launched back to back: the host's launch calls (5 us) set the pace.
inline nvscope::trace launch_bound(int steps = 10) {
  builder b;
  for (int s = 0; s < steps; ++s) {
    b.push("step_" + std::to_string(s));
    b.push("forward");
    for (int i = 0; i < 60; ++i) b.kernel("elementwise_" + std::to_string(i % 6), 2 * us);
    b.pop();
    b.pop();
  }
  return b.finish();
}

// Long kernels queued ahead, then the host waits in a stream sync on the busy GPU.
inline nvscope::trace gpu_bound(int steps = 10) {
  builder b;
  for (int s = 0; s < steps; ++s) {
    b.push("step_" + std::to_string(s));
    b.push("model");
    for (int i = 0; i < 8; ++i) b.kernel(i % 2 ? "gemm_kernel" : "attention_kernel", i % 2 ? 900 * us : 400 * us);
    b.pop();
    b.push("wait_results");
    b.sync(10 * us);
    b.pop();
    b.pop();
  }
  return b.finish();
}

// One kernel, then a sync that wakes up late: the GPU idles while the host sits in the sync.
inline nvscope::trace sync_bound(int steps = 20) {
  builder b;
  for (int s = 0; s < steps; ++s) {
    b.push("step_" + std::to_string(s));
    for (int i = 0; i < 4; ++i) {
      b.kernel("reduce_kernel", 20 * us);
      b.push("check_loss");
      b.sync(60 * us);
      b.pop();
    }
    b.pop();
  }
  return b.finish();
}

// Large async copies from pageable memory dominate; a short kernel after each.
inline nvscope::trace copy_bound(int steps = 10) {
  builder b;
  for (int s = 0; s < steps; ++s) {
    b.push("step_" + std::to_string(s));
    b.push("load_batch");
    b.copy(64u << 20, 2000 * us, nvscope::memory_kind::pageable);
    b.pop();
    b.kernel("train_kernel", 150 * us);
    b.pop();
  }
  return b.finish();
}

// Host work (200 us) between launches of 30 us kernels.
inline nvscope::trace host_bound(int steps = 10) {
  builder b;
  for (int s = 0; s < steps; ++s) {
    b.push("step_" + std::to_string(s));
    for (int i = 0; i < 5; ++i) {
      b.push("preprocess");
      b.host_work(200 * us);
      b.pop();
      b.kernel("small_kernel", 30 * us);
    }
    b.pop();
  }
  return b.finish();
}

// GPU-bound steps, one of which (`slow`) runs its gemm five times longer.
inline nvscope::trace outlier_step(int steps = 20, int slow = 13) {
  builder b;
  for (int s = 0; s < steps; ++s) {
    b.push("step_" + std::to_string(s));
    for (int i = 0; i < 6; ++i) b.kernel(i == 3 ? "gemm" : "layer_kernel", (i == 3 && s == slow ? 2500 : 500) * us);
    b.sync(5 * us);
    b.pop();
  }
  return b.finish();
}

// GPU-bound steps, `slow` of them (every third from step 2 on) with a gemm longer by a
// different amount each: more outlier steps than the diagnosis lists (10), so a figure over
// every outlier and one over the listed ones differ.
inline nvscope::trace many_outlier_steps(int steps = 60, int slow = 14) {
  builder b;
  for (int s = 0; s < steps; ++s) {
    const int k = (s - 2) / 3;
    const bool is_slow = s >= 2 && (s - 2) % 3 == 0 && k < slow;
    b.push("step_" + std::to_string(s));
    for (int i = 0; i < 6; ++i) b.kernel(i == 3 ? "gemm" : "layer_kernel", (i == 3 && is_slow ? 1500 + 100 * k : 500) * us);
    b.sync(5 * us);
    b.pop();
  }
  return b.finish();
}

struct named_scenario {
  const char* name;
  std::function<nvscope::trace()> make;
  int expected; // nvscope::bottleneck, as int
};

} // namespace scenario
