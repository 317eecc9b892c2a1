// Every output of analyze (summary JSON, text, every CSV, diagnosis JSON and text, samples) on
// 47 fixed traces (with their options), to stdout: the byte-for-byte check that a change to
// the analysis changes no figure. Built by hand, not by CMake (a tool for changing analyze, not a benchmark):
//
//   g++ -O2 -std=c++17 -Iinclude -Itests/analyze -Itests/diagnose bench/analyze/outputs_dump.cpp -o dump
//   ./dump > new.txt    # and the same built from the commit to compare against: cmp old.txt new.txt
//
// Traces: the synthetic trace (tests/analyze/synthetic_trace.hpp) at 3 sizes with the default
// options and with base names, the opening-thread start/end rule and a step range; PyTorch's
// shape (synthetic_trace.hpp's per_operator) at 2 sizes with both option sets; the training
// run; 30 random traces (seeded: the same each run) with nested push/pop ranges, start/end
// ranges ended on other threads, marks, graphs, copies, memsets, syncs, API calls, kernels and
// copies with no end, unclosed pushes and a thread index outside the table; the 6 diagnosis
// scenarios (tests/diagnose/scenarios.hpp). About 30 MB of text, 2 s.
#include <nvscope/analysis.hpp>
#include <nvscope/export.hpp>
#include "synthetic_trace.hpp"
#include "scenarios.hpp"

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace nvscope;

namespace {

// One random trace, built event by event on one host thread at a time (see the file comment).
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
    stack_.push_back(t_.ranges.size());
    t_.ranges.push_back(r);
  }
  void pop() {
    if (stack_.empty()) return;
    t_.ranges[stack_.back()].end = now_;
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
      k.name = kernels_[g_() % 9];
      gpu_[s] = std::max(gpu_[s], now_ + g_() % 2000) + g_() % 400;
      k.start = gpu_[s];
      k.end = g_() % 97 == 0 ? 0 : k.start + 100 + g_() % 5000;
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
    c.kind = static_cast<copy_kind>(1 + g_() % 3);
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
    a.name = t_.strings.intern(g_() % 2 ? "cudaLaunchKernel" : "cudaMemcpyAsync");
    a.correlation = static_cast<std::uint32_t>(corr_ - 1 - g_() % 3);
    a.thread = thread_;
    a.is_driver = g_() % 3 == 0;
    t_.api_calls.push_back(a);
  }

  std::mt19937_64 g_;
  trace t_;
  string_id kernels_[9]{}, domain_ = 0;
  std::uint32_t corr_ = 1, thread_ = 0;
  std::uint64_t gpu_[4] = {500, 700, 900, 1100}, now_ = 0;
  int step_ = 0;
  std::vector<std::size_t> stack_, open_;
};

void dump(const char* label, const trace& t, const analysis_options& o) {
  const auto r = analyze(t, o);
  std::printf("==== %s\n", label);
  std::fputs(to_json(r, t).c_str(), stdout);
  std::fputs(to_text(r, t).c_str(), stdout);
  for (auto w : all_reports) std::fputs(to_csv(r, w).c_str(), stdout);
  std::fputs(diagnosis_json(t, r.diagnosis).c_str(), stdout);
  std::fputs(diagnosis_text(t, r.diagnosis).c_str(), stdout);
  std::fputs(samples_json(r.diagnosis.samples).c_str(), stdout);
}

} // namespace

int main() {
  analysis_options plain, other;
  other.kernel_names = name_form::base;
  other.start_end = start_end_rule::opening_thread;
  other.step_range = "layer";
  for (std::uint64_t n : {3000ull, 40000ull, 200000ull}) {
    const auto t = synthetic::make_trace(n);
    dump(("make " + std::to_string(n)).c_str(), t, plain);
    dump(("make other " + std::to_string(n)).c_str(), t, other);
  }
  dump("training", synthetic::training_run(), plain);
  for (std::uint64_t n : {3000ull, 60000ull}) {
    const auto t = synthetic::per_operator(n);
    dump(("per operator " + std::to_string(n)).c_str(), t, plain);
    dump(("per operator other " + std::to_string(n)).c_str(), t, other);
  }
  for (int i = 0; i < 30; ++i) {
    const auto t = random_builder(1000 + static_cast<std::uint64_t>(i)).make(1 + i % 5, 50 + i * 97);
    dump(("random " + std::to_string(i)).c_str(), t, i % 3 ? plain : other);
  }
  for (auto& s : {scenario::launch_bound(), scenario::gpu_bound(), scenario::sync_bound(), scenario::copy_bound(),
                  scenario::host_bound(), scenario::outlier_step()})
    dump("scenario", s, plain);
}
