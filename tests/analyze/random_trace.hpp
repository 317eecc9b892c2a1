// Random traces of every kind the analysis meets, seeded: built event by event on one host
// thread at a time (nested push/pop ranges, start/end ranges ended on other threads, marks,
// graph launches whose kernels share a correlation id, copies, memsets, syncs, API calls,
// kernels and copies with no end or an end before their start, unclosed pushes, a thread index
// outside the thread table, kernel and range names past the string table, copy kinds past the
// enum). `random_trace(seed, threads, events)`: the same trace for the same arguments.
// `nested_names_trace`: ranges of few names nested under themselves, for nvtx_kern_sum's
// weights. Read by tests/analyze/reference_test.cpp, analyze_test.cpp and
// bench/analyze/outputs_dump.cpp.
#pragma once
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace synthetic {

using namespace nvscope;

class random_builder {
 public:
  explicit random_builder(std::uint64_t seed) : g_(seed) {
    t_.process_id = 77;
    const char* kernel_names[] = {"gemm<1>", "softmax", "ln", "gelu", "add", "reduce<float>", "copyk", "x", "y"};
    for (int i = 0; i < 9; ++i) kernels_[i] = t_.strings.intern(kernel_names[i]);
    t_.kernel_names[kernels_[0]] = {t_.strings.intern("gemm"), t_.strings.intern("_Z4gemmILi1EEvv")};
    t_.kernel_names[kernels_[5]] = {t_.strings.intern("reduce"), 0};
    domain_ = t_.strings.intern("dom");
  }

  trace make(int threads, int events) {
    for (int th = 0; th < threads; ++th) t_.threads.push_back({5000u + static_cast<std::uint64_t>(th), 0});
    for (int th = 0; th < threads + 1; ++th) { // the last one: an index outside the thread table
      thread_ = th < threads ? static_cast<std::uint32_t>(th) : (g_() % 2 ? 0xfffffff0u : 4000000000u);
      now_ = 100 + g_() % 50;
      stack_.clear();
      open_.clear();
      for (int e = 0; e < events; ++e) event(threads);
      if (g_() % 2)
        for (; !stack_.empty(); stack_.pop_back()) t_.ranges[stack_.back()].end = now_ += 5;
    }
    t_.begin = 0;
    t_.finish = std::max({gpu_[0], gpu_[1], gpu_[2], gpu_[3]}) + 1000;
    return std::move(t_);
  }

 private:
  void event(int threads) {
    const auto what = static_cast<int>(g_() % 100);
    now_ += 1 + g_() % 300;
    if (what < 14) push();
    else if (what < 26) pop();
    else if (what < 30) start();
    else if (what < 34) end(threads);
    else if (what < 36) mark();
    else if (what < 80) launch();
    else if (what < 86) copy();
    else if (what < 90) memset();
    else if (what < 95) sync();
    else api_call();
  }
  range_record range(string_id name) {
    range_record r;
    r.name = name;
    r.start = now_;
    r.thread = thread_;
    return r;
  }
  void push() {
    const char* names[] = {"step_", "layer", "attn", "ffn", "load", "epoch", "io", "opt"};
    const auto k = g_() % 8;
    auto r = range(t_.strings.intern(k == 0 ? "step_" + std::to_string(step_++) : std::string(names[k])));
    if (g_() % 9 == 0) r.domain = domain_;
    if (g_() % 40 == 0) r.name = unknown_name; // past the string table: prints <unknown>
    stack_.push_back(t_.ranges.size());
    t_.ranges.push_back(r);
  }
  void pop() {
    if (stack_.empty()) return;
    auto& r = t_.ranges[stack_.back()];
    r.end = g_() % 60 == 0 && r.start > 1 ? r.start - 1 : now_; // now and then a bad end: before its start
    stack_.pop_back();
  }
  void start() {
    const char* names[] = {"step_", "layer", "attn", "ffn", "load", "epoch", "io", "opt"};
    auto r = range(t_.strings.intern(names[g_() % 8]));
    r.is_push_pop = false;
    open_.push_back(t_.ranges.size());
    t_.ranges.push_back(r);
  }
  void end(int threads) { // a start/end range ended, sometimes on another thread
    if (open_.empty()) return;
    const auto i = g_() % open_.size();
    t_.ranges[open_[i]].end = now_;
    if (g_() % 4 == 0) t_.ranges[open_[i]].end_thread = static_cast<std::uint32_t>(g_() % static_cast<std::uint64_t>(threads + 1));
    open_.erase(open_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  void mark() {
    auto r = range(t_.strings.intern("mark"));
    r.end = now_;
    r.is_mark = true;
    t_.ranges.push_back(r);
  }
  void launch() { // one kernel, or a graph of several sharing the correlation; a few with no end
    t_.launches.push_back({now_, corr_, thread_});
    const auto n = g_() % 12 == 0 ? 2 + g_() % 6 : 1;
    const auto s = g_() % 4;
    for (std::uint64_t i = 0; i < n; ++i) {
      kernel_record k;
      k.name = g_() % 53 == 0 ? unknown_name + 1 : kernels_[g_() % 9];
      gpu_[s] = std::max(gpu_[s], now_ + g_() % 2000) + g_() % 400;
      k.start = gpu_[s];
      k.end = g_() % 97 == 0 ? 0 : g_() % 89 == 0 ? k.start - 1 : k.start + 100 + g_() % 5000;
      gpu_[s] = k.end ? k.end : gpu_[s] + 10;
      k.correlation = corr_;
      k.stream = 7 + static_cast<std::uint32_t>(s);
      if (n > 1) {
        kernel_config c;
        c.graph = 1;
        k.config = t_.kernel_configs.intern(c);
      }
      t_.kernels.push_back(k);
    }
    ++corr_;
  }
  void copy() {
    t_.launches.push_back({now_, corr_, thread_});
    copy_record c;
    c.kind = static_cast<copy_kind>(g_() % 40 == 0 ? 200 : 1 + g_() % 3); // 200: no such kind
    c.bytes = 1 + g_() % 100000;
    gpu_[3] = std::max(gpu_[3], now_) + g_() % 300;
    c.start = gpu_[3];
    c.end = g_() % 50 == 0 ? 0 : c.start + 50 + g_() % 3000;
    gpu_[3] = c.end ? c.end : gpu_[3];
    c.correlation = corr_++;
    c.stream = 10;
    t_.copies.push_back(c);
  }
  void memset() {
    t_.launches.push_back({now_, corr_, thread_});
    memset_record m;
    m.bytes = 1 + g_() % 9999;
    gpu_[2] = std::max(gpu_[2], now_) + g_() % 300;
    m.start = gpu_[2];
    m.end = m.start + 10 + g_() % 500;
    gpu_[2] = m.end;
    m.correlation = corr_++;
    m.stream = 9;
    t_.memsets.push_back(m);
  }
  void sync() {
    sync_record s;
    s.start = now_;
    s.end = now_ + g_() % 4000;
    s.thread = thread_;
    s.kind = static_cast<sync_kind>(g_() % 4);
    s.stream = 7 + static_cast<std::uint32_t>(g_() % 4);
    t_.syncs.push_back(s);
    now_ = s.end;
  }
  void api_call() {
    api_record a;
    a.start = now_;
    a.end = now_ + g_() % 100;
    const auto pick = g_() % 4; // cudaGetLastError: a function nsys's API reports leave out
    a.name = t_.strings.intern(pick < 2 ? "cudaLaunchKernel" : pick == 2 ? "cudaMemcpyAsync" : "cudaGetLastError_v3020");
    a.correlation = static_cast<std::uint32_t>(corr_ - 1 - g_() % 3);
    a.thread = thread_;
    a.is_driver = g_() % 3 == 0;
    t_.api_calls.push_back(a);
  }

  static constexpr string_id unknown_name = 2000000; // an id past any test's string table
  std::mt19937_64 g_;
  trace t_;
  string_id kernels_[9]{}, domain_ = 0;
  std::uint32_t corr_ = 1, thread_ = 0;
  std::uint64_t gpu_[4] = {500, 700, 900, 1100}, now_ = 0;
  int step_ = 0;
  std::vector<std::size_t> stack_, open_;
};

// A random trace for nvtx_kern_sum: push/pop ranges nested up to 6 deep on three threads (one
// outside the thread table), names drawn from 4 so that a name nests under itself (weights)
// and a range gets kernels again after a child closed (a pair met again); start/end ranges
// over several launches; graph launches of several kernels; some kernels with no end. `wide`:
// 48 kernel names and ranges that seldom close, so that a range holds more kernel names than
// nvtx_kern_sum's per-range list keeps (its pairs then go to a table).
inline nvscope::trace nested_names_trace(std::mt19937_64& g, bool wide) {
  nvscope::trace t;
  t.threads = {{11, 0}, {12, 0}};
  const char* range_names[] = {"fwd", "op", "op", "bwd"};
  const char* kernel_names[] = {"gemm", "relu", "norm"};
  std::vector<std::string> many;
  for (int i = 0; i < 48; ++i) many.push_back("k" + std::to_string(i));
  std::uint32_t corr = 1;
  std::uint64_t gpu = 1000;
  for (const std::uint32_t thread : {0u, 1u, 77u}) {
    std::uint64_t now = 10 + thread;
    std::vector<std::size_t> stack, open;
    for (int e = 0; e < 400; ++e) {
      now += 1 + g() % 20;
      const auto what = g() % 10;
      if (what < 3 && stack.size() < 6) {
        nvscope::range_record r;
        r.name = t.strings.intern(range_names[g() % 4]);
        r.start = now;
        r.thread = thread;
        stack.push_back(t.ranges.size());
        t.ranges.push_back(r);
      } else if (what < 5 && !stack.empty() && (!wide || g() % 10 == 0)) {
        t.ranges[stack.back()].end = now;
        stack.pop_back();
      } else if (what == 5) {
        if (!open.empty() && g() % 2) {
          t.ranges[open.back()].end = now;
          open.pop_back();
        } else {
          nvscope::range_record r;
          r.name = t.strings.intern(g() % 2 ? "load" : "io");
          r.start = now;
          r.thread = thread;
          r.is_push_pop = false;
          open.push_back(t.ranges.size());
          t.ranges.push_back(r);
        }
      } else {
        t.launches.push_back({now, corr, thread});
        const int n = g() % 8 == 0 ? 3 : 1;
        for (int i = 0; i < n; ++i) {
          nvscope::kernel_record k;
          k.name = wide ? t.strings.intern(many[g() % many.size()]) : t.strings.intern(kernel_names[g() % 3]);
          k.start = gpu;
          k.end = g() % 50 == 0 ? 0 : gpu + 1 + g() % 3000;
          k.correlation = corr;
          gpu += 3100;
          t.kernels.push_back(k);
        }
        ++corr;
      }
    }
    for (; !stack.empty(); stack.pop_back()) t.ranges[stack.back()].end = now += 3;
    for (; !open.empty(); open.pop_back()) t.ranges[open.back()].end = now += 3;
  }
  t.finish = gpu + 10;
  return t;
}

inline trace random_trace(std::uint64_t seed, int threads, int events) { return random_builder(seed).make(threads, events); }

} // namespace synthetic
