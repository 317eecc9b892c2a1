// Synthetic traces of a training run. `make_trace`: every kind of range, at any size, for the
// scaling test (tests/analyze/analyze_scale_test.cpp) and the scale benchmark
// (bench/analyze/scale_bench.cpp). `training_run`: the fixed trace of the analysis and Chrome
// trace benchmarks.
//
// Per thread (8 threads, one of them recorded under an index outside the thread table):
// steps (push/pop `step_N`) of 4 layers (`layer_N`) of `attention` and `ffn` (push/pop, 3
// levels deep), a start/end `load_batch` range per step and one start/end `epoch` range over
// the thread's whole run, 8-kernel graph launches, a copy and a memset per layer, a sync per
// step, and at the end 64 pushes of `leak` never popped with kernels launched inside them.
#pragma once
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <string>

namespace synthetic {

struct generator {
  nvscope::trace t;
  std::uint32_t corr = 1;
  std::uint64_t gpu = 1000;
  nvscope::string_id names[5]{};

  // The configuration of a kernel launched from CUDA graph 1.
  std::uint32_t graph_config() {
    nvscope::kernel_config c;
    c.graph = 1;
    return t.kernel_configs.intern(c);
  }

  nvscope::range_record& range(const std::string& name, std::uint64_t start, std::uint32_t thread, bool push_pop = true) {
    nvscope::range_record r;
    r.name = t.strings.intern(name);
    r.start = start;
    r.thread = thread;
    r.is_push_pop = push_pop;
    t.ranges.push_back(r);
    return t.ranges.back();
  }
  void kernels(std::uint64_t& now, std::uint32_t thread, std::uint32_t count, std::uint32_t stream) {
    t.launches.push_back({now, corr, thread});
    for (std::uint32_t i = 0; i < count; ++i) {
      nvscope::kernel_record k;
      k.name = names[(corr + i) % 5];
      k.start = gpu;
      k.end = gpu + 1500 + (corr % 7) * 250;
      k.correlation = corr;
      k.stream = stream;
      if (count > 1) k.config = graph_config();
      gpu = k.end + 200;
      t.kernels.push_back(k);
    }
    ++corr;
    now += 700;
  }
  void copy_and_memset(std::uint64_t& now, std::uint32_t thread) {
    t.launches.push_back({now, corr, thread});
    nvscope::copy_record c;
    c.kind = nvscope::copy_kind::host_to_device;
    c.bytes = 1 << 16;
    c.start = gpu;
    c.end = gpu + 3000;
    c.correlation = corr++;
    t.copies.push_back(c);
    t.launches.push_back({now + 100, corr, thread});
    nvscope::memset_record m;
    m.bytes = 4096;
    m.start = gpu + 3000;
    m.end = gpu + 3400;
    m.correlation = corr++;
    t.memsets.push_back(m);
    gpu += 3500;
    now += 400;
  }
};

inline void one_step(generator& g, std::uint64_t& now, std::uint32_t thread, std::uint64_t step, std::uint32_t per_part) {
  const auto step_index = g.t.ranges.size();
  g.range("step_" + std::to_string(step), now++, thread);
  g.range("load_batch", now, thread, false).end = now + 600;
  for (int layer = 0; layer < 4; ++layer) {
    const auto layer_index = g.t.ranges.size();
    g.range("layer_" + std::to_string(layer), now++, thread);
    g.copy_and_memset(now, thread);
    for (const char* part : {"attention", "ffn"}) {
      const auto part_index = g.t.ranges.size();
      g.range(part, now++, thread);
      for (std::uint32_t k = 0; k < per_part; ++k) g.kernels(now, thread, 1, 7 + thread);
      g.t.ranges[part_index].end = now++;
    }
    g.t.ranges[layer_index].end = now++;
  }
  g.kernels(now, thread, 8, 100 + thread); // a graph launch
  nvscope::sync_record s;
  s.start = now;
  s.end = now + 2000;
  s.thread = thread;
  s.kind = nvscope::sync_kind::stream;
  g.t.syncs.push_back(s);
  now += 2000;
  g.t.ranges[step_index].end = now++;
}

// About `kernels` kernels in all (within a few per cent).
inline nvscope::trace make_trace(std::uint64_t kernels) {
  generator g;
  const char* names[] = {"gemm_kernel<128, 64>", "softmax_kernel", "layernorm_kernel", "gelu_kernel", "add_bias_kernel"};
  for (int i = 0; i < 5; ++i) g.names[i] = g.t.strings.intern(names[i]);
  constexpr std::uint32_t threads = 8, per_part = 60, leak = 64;
  const std::uint64_t per_step = 4 * 2 * per_part + 8;
  const std::uint64_t steps = kernels / per_step / threads + 1;
  g.t.process_id = 4242;
  for (std::uint32_t th = 0; th + 1 < threads; ++th) g.t.threads.push_back({1000 + th, 0});
  for (std::uint32_t th = 0; th < threads; ++th) {
    const std::uint32_t index = th + 1 < threads ? th : 0xfffffff0u; // the last thread: no thread_info
    std::uint64_t now = 1000 + th;
    const auto epoch = g.t.ranges.size();
    g.range("epoch", now, index, false);
    for (std::uint64_t s = 0; s < steps; ++s) one_step(g, now, index, s, per_part);
    g.t.ranges[epoch].end = now++;
    for (std::uint32_t i = 0; i < leak; ++i) {
      g.range("leak", now++, index);
      g.kernels(now, index, 1, 7 + th);
    }
  }
  g.t.begin = 0;
  g.t.finish = g.gpu + 1000000;
  return std::move(g.t);
}

// The trace of bench/analyze/analyze_bench and bench/export/chrome_trace_bench (the figures of
// bench/results/export.json): one thread, 100 steps x 12 layers x
// (attention, ffn) push/pop ranges of 416 kernels each (~1M kernels), a copy per layer, a
// graph launch of 8 kernels per step.
inline nvscope::trace training_run() {
  nvscope::trace t;
  t.process_id = 1;
  t.threads.push_back({100, 0});
  std::uint64_t now = 1000, gpu = 2000;
  std::uint32_t corr = 1;
  const nvscope::string_id kernels[] = {t.strings.intern("gemm_kernel<128, 64>"), t.strings.intern("softmax_kernel"),
                                        t.strings.intern("layernorm_kernel"), t.strings.intern("gelu_kernel"),
                                        t.strings.intern("add_bias_kernel")};
  auto range = [&](const std::string& name, std::uint64_t start) {
    nvscope::range_record r;
    r.name = t.strings.intern(name);
    r.start = start;
    t.ranges.push_back(r);
    return t.ranges.size() - 1;
  };
  auto kernel = [&](nvscope::string_id name, std::uint32_t stream, std::uint64_t length) {
    nvscope::kernel_record k;
    k.name = name;
    k.start = gpu;
    k.end = gpu + length;
    k.correlation = corr;
    k.stream = stream;
    gpu = k.end + 500;
    t.kernels.push_back(k);
  };
  for (int step = 0; step < 100; ++step) {
    const auto s = range("step_" + std::to_string(step), now++);
    for (int layer = 0; layer < 12; ++layer) {
      const auto l = range("layer_" + std::to_string(layer), now++);
      t.launches.push_back({now, corr, 0});
      nvscope::copy_record c;
      c.kind = nvscope::copy_kind::host_to_device;
      c.bytes = 1 << 20;
      c.start = gpu;
      c.end = gpu + 4000;
      c.correlation = corr++;
      c.stream = 8;
      t.copies.push_back(c);
      now += 1000;
      for (const char* part : {"attention", "ffn"}) {
        const auto p = range(part, now++);
        for (int k = 0; k < 416; ++k) {
          t.launches.push_back({now, corr, 0});
          kernel(kernels[k % 5], 7, 2000 + (corr % 7) * 300);
          ++corr;
          now += 3000;
        }
        t.ranges[p].end = now++;
      }
      t.ranges[l].end = now++;
    }
    t.launches.push_back({now, corr, 0}); // a graph launch of 8 kernels sharing one correlation
    for (int k = 0; k < 8; ++k) kernel(kernels[k % 5], 9, 1000);
    ++corr;
    t.ranges[s].end = now++;
  }
  t.begin = 0;
  t.finish = std::max(now, gpu) + 1;
  return t;
}

// PyTorch's shape: a range per operator (as torch.autograd.profiler.emit_nvtx makes them),
// about `kernels` kernels each under its own operator's ranges. Steps of 50 operators forward
// on one thread, then 50 backward on another (autograd's), each operator an outer range with
// a kernel, an inner one with a kernel, and the outer's second kernel; 40 kernel names,
// durations of 3,000 values; a step range, a copy and a sync per step. The synthetic trace
// above has few ranges, 7 durations and each range's kernels in one run: this one makes a
// (range, name) pair of almost every kernel, the shape that exposed a node-based set and
// strings built per range.
inline nvscope::trace per_operator(std::uint64_t kernels) {
  generator g;
  nvscope::string_id names[40];
  for (int i = 0; i < 40; ++i) names[i] = g.t.strings.intern("kernel_" + std::to_string(i) + "<float, 128>");
  g.t.threads.push_back({2000, 0});
  g.t.threads.push_back({2001, 0});
  std::uint64_t now = 1000, op = 0;
  auto kernel = [&](std::uint32_t thread) {
    g.t.launches.push_back({now, g.corr, thread});
    nvscope::kernel_record k;
    k.name = names[(op * 3 + g.corr) % 40];
    k.start = std::max(g.gpu, now + 5000);
    k.end = k.start + 1000 + (g.corr * 7919u) % 3000;
    k.correlation = g.corr++;
    k.stream = 7;
    g.gpu = k.end + 100;
    g.t.kernels.push_back(k);
    now += 700;
  };
  auto operation = [&](std::uint32_t thread, const char* outer, const char* inner) {
    const auto o = g.t.ranges.size();
    g.range(outer, now++, thread);
    kernel(thread);
    const auto i = g.t.ranges.size();
    g.range(inner, now++, thread);
    kernel(thread);
    g.t.ranges[i].end = now++;
    kernel(thread);
    g.t.ranges[o].end = now++;
    ++op;
  };
  for (std::uint64_t step = 0; g.t.kernels.size() < kernels; ++step) {
    const auto s = g.t.ranges.size();
    g.range("step_" + std::to_string(step), now++, 0);
    g.copy_and_memset(now, 0);
    for (int k = 0; k < 50; ++k) operation(0, "aten::linear", "aten::addmm");
    g.t.ranges[s].end = now++;
    for (int k = 0; k < 50; ++k) operation(1, "autograd::engine::evaluate_function: AddmmBackward0", "aten::mm");
    nvscope::sync_record y;
    y.start = now;
    y.end = std::max(now, g.gpu) + 10;
    y.thread = 0;
    y.kind = nvscope::sync_kind::context;
    g.t.syncs.push_back(y);
    now = y.end + 1;
  }
  g.t.process_id = 4243;
  g.t.begin = 0;
  g.t.finish = std::max(now, g.gpu) + 1;
  return std::move(g.t);
}

inline std::uint64_t records(const nvscope::trace& t) {
  return t.kernels.size() + t.copies.size() + t.memsets.size() + t.syncs.size() + t.ranges.size() + t.launches.size();
}

} // namespace synthetic
