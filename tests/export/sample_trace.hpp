// A small trace with every kind of record, shared by the export tests.
#pragma once
#include <nvscope/trace.hpp>

inline nvscope::trace sample_trace() {
  nvscope::trace t;
  t.process_id = 77;
  t.threads.push_back({1001, t.strings.intern("main")});
  t.threads.push_back({1002, 0});
  auto range = [&](const char* name, std::uint64_t s, std::uint64_t e, std::uint32_t thread = 0, bool pp = true) {
    nvscope::range_record r;
    r.name = t.strings.intern(name);
    r.start = s;
    r.end = e;
    r.thread = thread;
    r.is_push_pop = pp;
    t.ranges.push_back(r);
  };
  range("step_3", 1000, 9000);
  range("layer_12", 1100, 4000);
  range("layer_13", 4000, 8000);
  range("load \"data\"\n", 500, 6000, 1, false);
  nvscope::range_record mark;
  mark.name = t.strings.intern("checkpoint");
  mark.start = mark.end = 2000;
  mark.is_mark = true;
  t.ranges.push_back(mark);
  std::uint32_t corr = 1;
  auto kernel = [&](const char* name, std::uint64_t launch, std::uint64_t s, std::uint64_t e, std::uint32_t stream) {
    t.launches.push_back({launch, corr, 0});
    nvscope::kernel_record k;
    k.name = t.strings.intern(name);
    k.start = s;
    k.end = e;
    k.correlation = corr++;
    k.stream = stream;
    t.kernels.push_back(k);
  };
  kernel("gemm", 1200, 10000, 10500, 7);
  kernel("gemm", 4100, 10600, 11000, 7);
  kernel("softmax", 4200, 11000, 11100, 13);
  kernel("outside", 9500, 12000, 12010, 7);
  // a graph launch: two kernels, one correlation
  t.launches.push_back({2500, corr, 0});
  for (int i = 0; i < 2; ++i) {
    nvscope::kernel_record k;
    k.name = t.strings.intern("graph_node");
    k.start = 13000 + 100 * static_cast<std::uint64_t>(i);
    k.end = k.start + 50;
    k.correlation = corr;
    k.stream = 7;
    t.kernels.push_back(k);
  }
  ++corr;
  t.launches.push_back({3000, corr, 0});
  nvscope::copy_record c;
  c.kind = nvscope::copy_kind::host_to_device;
  c.bytes = 4096;
  c.start = 9000;
  c.end = 9900;
  c.correlation = corr++;
  c.stream = 14;
  t.copies.push_back(c);
  nvscope::sync_record s;
  s.start = 8500;
  s.end = 9950;
  s.thread = 0;
  s.kind = nvscope::sync_kind::stream;
  t.syncs.push_back(s);
  t.lost.dropped_records = 3;
  return t;
}
