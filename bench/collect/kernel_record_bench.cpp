// The collector's in-memory kernel record: 32 bytes and a table of distinct configurations
// (trace.hpp: grid, block, registers, shared memory, device, context and graph in
// `trace::kernel_configs`) against the 64-byte record it replaced, which carried them all.
// Measured on the CPU, in one run, on the same synthetic CUPTI records:
//   - bytes per kernel held by the trace (records and, for 32 bytes, the table),
//   - decode time per CUPTI kernel record (the collector's decoder, and the old layout's),
//   - an analysis-like pass: sort by start, then total time per name.
// Usage: nvscope_kernel_record_bench [kernels] [distinct configurations] [json file]
#include <nvscope/collector.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

// The 64-byte record nvscope kept before (commit 2a98749 and earlier).
struct wide_kernel {
  std::uint64_t start;
  std::uint64_t end;
  std::uint32_t name;
  std::uint32_t correlation;
  std::uint32_t stream;
  std::uint32_t context;
  std::uint32_t grid[3];
  std::uint16_t block[3];
  std::uint16_t device;
  std::uint16_t registers;
  std::uint16_t reserved;
  std::uint32_t shared_bytes;
  std::uint32_t graph;
};
static_assert(sizeof(wide_kernel) == 64, "the layout measured against is 64 bytes");

// The 64-byte decoder: what the collector did per kernel record.
struct wide_decoder {
  std::vector<wide_kernel> kernels;
  struct cached_name {
    std::string mangled;
    std::uint32_t id;
  };
  std::unordered_map<const char*, cached_name> names; // as the collector's: by pointer, checked by content
  nvscope::string_table strings;

  void decode(const CUpti_ActivityKernel10& k) {
    const auto c = nvscope::detail::decode_kernel_config(k); // the collector's own decoding of these fields
    auto n = names.find(k.name);
    if (n == names.end() || n->second.mangled != k.name)
      n = names.insert_or_assign(k.name, cached_name{k.name, strings.intern(k.name)}).first;
    wide_kernel w{};
    w.start = k.start;
    w.end = k.end;
    w.name = n->second.id;
    w.correlation = k.correlationId;
    w.stream = k.streamId;
    w.context = c.context;
    std::copy(c.grid, c.grid + 3, w.grid);
    std::copy(c.block, c.block + 3, w.block);
    w.device = c.device;
    w.registers = c.registers;
    w.shared_bytes = c.shared_bytes;
    w.graph = c.graph;
    kernels.push_back(w);
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<CUpti_ActivityKernel10> synthetic_records(std::size_t n, std::size_t configs, const std::vector<std::string>& names) {
  std::mt19937_64 rng(42);
  std::vector<CUpti_ActivityKernel10> recs(n);
  std::uint64_t t = 1000;
  for (std::size_t i = 0; i < n; ++i) {
    auto& k = recs[i];
    std::memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    const std::size_t c = rng() % configs;
    k.gridX = static_cast<std::int32_t>(1 + c);
    k.gridY = 1;
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = 1;
    k.blockZ = 1;
    k.registersPerThread = 32;
    k.staticSharedMemory = 1024;
    k.name = names[c % names.size()].c_str();
    t += 500 + rng() % 3000;
    k.start = t + rng() % 400; // a little out of order, as streams overlap
    k.end = k.start + 1000 + rng() % 20000;
    k.correlationId = static_cast<std::uint32_t>(i + 1);
    k.streamId = static_cast<std::uint32_t>(7 + rng() % 4);
  }
  return recs;
}

// Sort by start, then total time per name: the shape of the analysis' kernel summary.
template <class K>
double analysis_pass(std::vector<K>& kernels, std::size_t name_count, std::uint64_t& checksum) {
  const auto t0 = std::chrono::steady_clock::now();
  std::stable_sort(kernels.begin(), kernels.end(), [](const K& a, const K& b) { return a.start < b.start; });
  std::vector<std::uint64_t> total(name_count + 1, 0);
  for (const auto& k : kernels) total[k.name] += k.end - k.start;
  const double s = seconds_since(t0);
  for (auto v : total) checksum += v;
  return s;
}

} // namespace

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 4000000;
  const std::size_t configs = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 200;
  const char* json = argc > 3 ? argv[3] : nullptr;
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) names.push_back("_Z" + std::to_string(7 + (i >= 10)) + "kernel_" + std::to_string(i) + "Pfi");
  const auto recs = synthetic_records(n, configs, names);

  wide_decoder w;
  auto t0 = std::chrono::steady_clock::now();
  for (const auto& r : recs) w.decode(r);
  const double decode64 = seconds_since(t0);

  nvscope::trace compact;
  nvscope::detail::activity_decoder d(compact, false);
  t0 = std::chrono::steady_clock::now();
  for (const auto& r : recs) d.decode(reinterpret_cast<const CUpti_Activity*>(&r));
  const double decode32 = seconds_since(t0);

  const std::size_t configs_held = compact.kernel_configs.size();
  const double bytes64 = static_cast<double>(w.kernels.capacity() * sizeof(wide_kernel)) / static_cast<double>(n);
  const double bytes32 =
      static_cast<double>(compact.kernels.capacity() * sizeof(nvscope::kernel_record) + compact.kernel_configs.memory_bytes()) / static_cast<double>(n);
  std::uint64_t check64 = 0, check32 = 0;
  const double pass64 = analysis_pass(w.kernels, w.strings.size(), check64);
  const double pass32 = analysis_pass(compact.kernels, compact.strings.size(), check32);
  if (check64 != check32) {
    std::fprintf(stderr, "nvscope: kernel_record_bench: the two layouts disagree (%llu vs %llu)\n",
                 static_cast<unsigned long long>(check64), static_cast<unsigned long long>(check32));
    return 1;
  }
  std::printf("kernels %zu, distinct configurations %zu\n", n, configs_held - 1); // less the all-zero one
  std::printf("%-34s %10s %10s\n", "", "64 bytes", "32 bytes");
  std::printf("%-34s %10.1f %10.1f\n", "bytes per kernel (records+table)", bytes64, bytes32);
  std::printf("%-34s %10.1f %10.1f\n", "decode ns per CUPTI record", decode64 * 1e9 / double(n), decode32 * 1e9 / double(n));
  std::printf("%-34s %10.1f %10.1f\n", "sort + per-name pass, ns/kernel", pass64 * 1e9 / double(n), pass32 * 1e9 / double(n));
  if (json != nullptr) {
    if (FILE* f = std::fopen(json, "w")) {
      std::fprintf(f,
                   "{\"kernels\": %zu, \"configs\": %zu, \"bytes_per_kernel_64\": %.2f, \"bytes_per_kernel_32\": %.2f, "
                   "\"decode_ns_64\": %.2f, \"decode_ns_32\": %.2f, \"pass_ns_64\": %.2f, \"pass_ns_32\": %.2f}\n",
                   n, configs_held - 1, bytes64, bytes32, decode64 * 1e9 / double(n), decode32 * 1e9 / double(n),
                   pass64 * 1e9 / double(n), pass32 * 1e9 / double(n));
      std::fclose(f);
    }
  }
  return 0;
}
