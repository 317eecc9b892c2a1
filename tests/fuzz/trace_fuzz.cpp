// libFuzzer target: analyze() and the text and JSON summaries on traces whose timestamps are
// any 64-bit values (a corrupt record, a clock that jumps). Whatever the bytes, nothing
// throws, nothing overflows (ASan, UBSan), and both summaries are written.
//
// Input layout (little-endian): the trace's begin and finish (8 bytes each), then records of
// 17 bytes: a kind byte (low two bits: 0 kernel, 1 copy, 2 NVTX push/pop range, 3 memset;
// the next two bits pick one of four names or streams) and the record's start and end. Short
// inputs read as zeros; at most 4,096 records.
#define NVSCOPE_IMPLEMENTATION // the fuzz program's one file with the analysis definitions (docs/analysis.md, "Building")
#include <nvscope/analysis.hpp>
#include <nvscope/export/summary_json.hpp>
#include <nvscope/export/table.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace {

std::uint64_t read_u64(const std::uint8_t* data, std::size_t size, std::size_t at) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8; ++i) v |= std::uint64_t{at + i < size ? data[at + i] : 0u} << (8 * i);
  return v;
}

void add_record(nvscope::trace& t, std::uint8_t kind, std::uint64_t start, std::uint64_t end, std::uint32_t n) {
  const std::uint32_t pick = (kind >> 2) & 3u;
  static const char* names[] = {"gemm", "softmax", "step", "layer"};
  switch (kind & 3u) {
    case 0: {
      nvscope::kernel_record k;
      k.start = start;
      k.end = end;
      k.name = t.strings.intern(names[pick]);
      k.correlation = n + 1;
      k.stream = pick;
      t.kernels.push_back(k);
      t.launches.push_back({start, n + 1, 0});
      break;
    }
    case 1: {
      nvscope::copy_record c;
      c.start = start;
      c.end = end;
      c.bytes = end - start;
      c.correlation = n + 1;
      c.stream = pick;
      c.kind = nvscope::copy_kind::host_to_device;
      t.copies.push_back(c);
      break;
    }
    case 2: {
      nvscope::range_record r;
      r.name = t.strings.intern(names[pick]);
      r.start = start;
      r.end = end;
      r.is_push_pop = true;
      t.ranges.push_back(r);
      break;
    }
    default: {
      nvscope::memset_record m;
      m.start = start;
      m.end = end;
      m.correlation = n + 1;
      m.stream = pick;
      t.memsets.push_back(m);
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nvscope::trace t;
  t.threads.push_back({100, 0});
  t.begin = read_u64(data, size, 0);
  t.finish = read_u64(data, size, 8);
  for (std::size_t at = 16, n = 0; at < size && n < 4096; at += 17, ++n)
    add_record(t, data[at], read_u64(data, size, at + 1), read_u64(data, size, at + 9), static_cast<std::uint32_t>(n));
  try {
    const auto r = nvscope::analyze(t);
    if (nvscope::to_text(r, t).empty() || nvscope::to_json(r, t).empty()) {
      std::fprintf(stderr, "trace property broken: an empty summary\n");
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trace property broken: analyze or a summary threw: %s\n", e.what());
    std::abort();
  }
  return 0;
}
