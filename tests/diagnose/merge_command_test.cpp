// `nvscope merge` end to end (issue 49) on a rank folder written by the real writer
// (write_chrome_trace with each rank's provenance): 4 ranks on 2 hosts whose clocks differ by a
// known offset, an all-reduce per step overlapping compute by a known amount, one rank delayed
// before every collective; then partial input: a rank missing, a rank twice, another job's
// trace, a file that is not nvscope's. Each said in one line, the rest merged.
#include "merge_command.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>
#include <nvscope/analyze/merge.hpp>
#include <nvscope/analyze/reference/merge.hpp>
#include <nvscope/analyze/analyze.hpp>
#include <nvscope/export/chrome_trace.hpp>
#include <nvscope/export/summary_json.hpp>
#include <nvscope/analyze/totals.hpp>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace fs = std::filesystem;
using namespace nvscope;

namespace {

constexpr const char* nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
constexpr std::int64_t host1_offset = 345678; // ns: node1's clock ahead of node0's
constexpr int late_rank = 2;

struct result {
  int status = -1;
  std::string out, err;
};

result merge(std::vector<std::string> args) {
  std::vector<const char*> argv{"nvscope", "merge"};
  for (const auto& a : args) argv.push_back(a.c_str());
  result r;
  r.status = tool::merge_run(static_cast<int>(argv.size()), argv.data(), r.out, r.err);
  return r;
}

// Rank `rank`'s trace: 30 steps of 1 ms; compute until 40 us before the all-reduce's end, the
// all-reduce from (100 + rank) us before its end: overlap (60 + rank) / (100 + rank); the late
// rank's starts 30 us before its end, after the compute: overlap 0.
trace rank_trace(int rank, std::int64_t shift, int steps = 30) {
  trace t;
  t.threads.push_back({static_cast<std::uint64_t>(1000 + rank), 0});
  const auto at = [shift](std::int64_t v) { return static_cast<timestamp_ns>(v + shift); };
  std::uint32_t corr = 1;
  const auto kernel = [&](const char* name, std::int64_t s, std::int64_t e) {
    kernel_record k;
    k.name = t.strings.intern(name);
    k.start = at(s);
    k.end = at(e);
    k.correlation = corr++;
    k.stream = 7;
    t.kernels.push_back(k);
    t.launches.push_back({at(s - 5000), k.correlation, 0}); // every rank has the same correlations
  };
  for (int s = 0; s < steps; ++s) {
    const std::int64_t step = 1000000 + 1000000LL * s, end = step + 800000 + (s % 3) * 500; // all-reduce end
    range_record r;
    r.name = t.strings.intern("step_" + std::to_string(s));
    r.start = at(step);
    r.end = at(step + 990000);
    t.ranges.push_back(r);
    kernel("gemm", end - 400000, end - 40000);
    kernel(nccl, end - (rank == late_rank ? 30000 : 100000 + rank * 1000), end);
  }
  t.begin = at(500000);
  t.finish = at(40000000);
  t.context.at_start = {at(500000), 1764648000000000000ull + 500000};
  return t;
}

void write_rank(const fs::path& dir, int rank, const std::string& host, std::int64_t shift, const std::string& job,
                int world = 4, int steps = 30) {
  run_provenance p;
  p.host = host;
  p.pid = static_cast<std::uint64_t>(100 + rank);
  p.rank = rank;
  p.world_size = world;
  p.job_ids = {{"SLURM_JOB_ID", job}};
  chrome_trace_options o;
  o.provenance = &p;
  const auto path = (dir / ("train_r" + std::to_string(rank) + "_" + job + ".trace.json")).string();
  REQUIRE(write_chrome_trace(path, rank_trace(rank, shift, steps), o));
}

fs::path fresh(const char* name) {
  const auto dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

} // namespace

TEST_CASE("merge: offsets within 5 us, the delayed rank named, overlap as nsys defines it") {
  const auto dir = fresh("nvscope_merge_test");
  for (int r = 0; r < 4; ++r) write_rank(dir, r, r < 2 ? "node0" : "node1", 7000000000LL + (r < 2 ? 0 : host1_offset), "77");
  const auto json_path = (dir / "merged.json").string();
  const auto m = merge({dir.string(), "-o", json_path});
  INFO(m.out << m.err);
  REQUIRE(m.status == 0);
  CHECK(m.err.empty());
  CHECK(m.out.find("4 ranks on 2 hosts") != std::string::npos);
  if (const char* samples = std::getenv("NVSCOPE_SCHEMA_SAMPLES"); samples != nullptr && *samples)
    fs::copy_file(json_path, fs::path(samples) / "merge.json", fs::copy_options::overwrite_existing);
  std::ifstream in(json_path);
  const auto j = nlohmann::json::parse(in);
  CHECK(j["format"]["name"] == "nvscope-merge");
  REQUIRE(j["hosts"].size() == 2);
  CHECK(j["hosts"][0]["offset_ns"] == 0.0);
  CHECK(std::fabs(j["hosts"][1]["offset_ns"].get<double>() - host1_offset) < 5000.0);
  CHECK_FALSE(j["hosts"][1]["from_wall_clock"].get<bool>());
  REQUIRE(j["ranks"].size() == 4);
  for (int r = 0; r < 4; ++r) {
    const auto& rank = j["ranks"][static_cast<std::size_t>(r)];
    CHECK(rank["rank"] == r);
    CHECK(rank["steps"].size() == 30);
    CHECK(rank["collectives"]["straggler_by_offsets"] == (r == late_rank));
    CHECK(rank["collectives"]["straggler_by_wait"] == (r == late_rank));
    // nsys's overlap over the kernels as written, from the reference definition
    std::vector<rank_kernel> k;
    const auto t = rank_trace(r, 0);
    for (const auto& x : t.kernels) k.push_back({x.start, x.end, 0, is_communication_kernel(t.strings[x.name])});
    const auto want = reference::overlap(k);
    CHECK(rank["overlap"]["communication_ns"] == want.communication_ns);
    CHECK(rank["overlap"]["overlap_ns"] == want.overlap_ns);
    CHECK(rank["overlap"]["fraction"].get<double>() == doctest::Approx(r == late_rank ? 0.0 : (60.0 + r) / (100.0 + r)));
  }
  CHECK(m.out.find("stragglers, arrival on the aligned clock: 2 (") != std::string::npos);
  // HTA's rule on the aligned clock: the late rank counted in every step after the first, and
  // with it the second latest, rank 0 (its all-reduce starts 100 us before the end, the others'
  // 101 and 103 us): HTA always names its top two.
  CHECK(j["ranks"][late_rank]["collectives"]["hta_late_steps"] == 29);
  CHECK(j["ranks"][1]["collectives"]["hta_late_steps"] == 0);
  CHECK(m.out.find("stragglers, HTA's rule (among the 2 latest starts, steps): 0 (29), 2 (29)\n") != std::string::npos);
  // every step lasts 990 us on every rank: the fastest and the slowest are rank 0 (ties)
  CHECK(j["differences"]["fastest_rank"] == 0);
  CHECK(j["differences"]["slowest_rank"] == 0);
  CHECK(j["differences"]["kernels"].size() == 2);
}

TEST_CASE("merge: the merged Chrome trace puts each rank in its own process, moved by its host's measured offset") {
  const auto dir = fresh("nvscope_merge_trace");
  const auto shift = [](int r) { return 7000000000LL + (r < 2 ? 0 : host1_offset); };
  for (int r = 0; r < 4; ++r) write_rank(dir, r, r < 2 ? "node0" : "node1", shift(r), "77");
  const auto out = fs::temp_directory_path() / "nvscope_merge_trace_out.json";
  const auto m = merge({dir.string(), "-o", out.string()});
  INFO(m.out << m.err);
  REQUIRE(m.status == 0);
  const auto trace_file = fs::temp_directory_path() / "nvscope_merge_trace_out.trace.json";
  CHECK(m.out.find("wrote " + trace_file.string() + "\n") != std::string::npos);
  const auto report = nlohmann::json::parse(std::ifstream(out));
  const auto t = nlohmann::json::parse(std::ifstream(trace_file)); // it parses
  CHECK(t["otherData"]["format"]["name"] == "nvscope-merged-trace");
  const auto origin = t["otherData"]["time_origin_ns"].get<long long>();
  std::vector<std::vector<long long>> starts(4);
  std::size_t process_names = 0;
  for (const auto& e : t["traceEvents"]) {
    REQUIRE(e["pid"].get<long long>() < 4);
    if (e["ph"] == "M" && e["name"] == "process_name") ++process_names;
    if (e.value("cat", "") == "kernel") starts[e["pid"].get<std::size_t>()].push_back(std::llround(e["ts"].get<double>() * 1000.0) + origin);
  }
  CHECK(process_names == 4); // one process a rank, the ranks' own process names left out
  // the ranks' arrows keep apart: each id starts once, and its ends are in the same rank
  std::map<std::uint64_t, long long> source_rank;
  std::size_t ends = 0;
  for (const auto& e : t["traceEvents"])
    if (e.value("flow_out", false)) CHECK(source_rank.emplace(e["bind_id"].get<std::uint64_t>(), e["pid"].get<long long>()).second);
  for (const auto& e : t["traceEvents"])
    if (e.value("flow_in", false)) {
      ++ends;
      CHECK(source_rank.at(e["bind_id"].get<std::uint64_t>()) == e["pid"].get<long long>());
    }
  CHECK(source_rank.size() == 4 * 60);
  CHECK(ends == 4 * 60);
  for (int r = 0; r < 4; ++r) {
    const double offset = report["hosts"][r < 2 ? 0 : 1]["offset_ns"].get<double>();
    const auto written = rank_trace(r, shift(r));
    auto& got = starts[static_cast<std::size_t>(r)];
    std::sort(got.begin(), got.end());
    std::vector<long long> want;
    for (const auto& k : written.kernels) want.push_back(std::llround(static_cast<double>(k.start) - offset));
    std::sort(want.begin(), want.end());
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::llabs(got[i] - want[i]) <= 1);
  }
  // the first gemm starts at one true instant on every rank: on node1 now within 5 us of node0's,
  // not 345 us after it
  CHECK(std::llabs(starts[3][0] - starts[0][0]) < 5000);
  const auto skip = merge({dir.string(), "-o", out.string(), "--no-trace"});
  CHECK(skip.out.find(".trace.json") == std::string::npos);
  // A merged trace in the folder is left out with one line, not merged as a rank.
  fs::copy_file(trace_file, dir / "merged.trace.json");
  const auto again = merge({dir.string()});
  CHECK(again.err.find("merged.trace.json': a merged trace (nvscope merge wrote it), not one rank's: left out\n") != std::string::npos);
  CHECK(again.out.find("4 ranks on 2 hosts") != std::string::npos);
}

// A kernel counts in the step whose range holds its launch (docs/merge.md, "Per step per
// rank"), read from the arrow the writer draws from the launch to the kernel: here a kernel
// launched by a cudaLaunchKernel call in step 3 and one from a bare launch in step 4, both run
// by the GPU in step 6's time.
TEST_CASE("merge: a kernel's step is the one that launched it, read from the real writer's launch arrows") {
  const auto with_late = fresh("nvscope_merge_launch_a"), plain = fresh("nvscope_merge_launch_b");
  const std::int64_t shift = 2000000000LL;
  for (const auto& dir : {with_late, plain})
    for (int r = 0; r < 2; ++r) {
      auto t = rank_trace(r, shift, 10);
      if (r == 0 && dir == with_late) {
        const auto at = [&](std::int64_t v) { return static_cast<timestamp_ns>(v + shift); };
        const std::int64_t step3 = 4000000, step4 = 5000000, step6 = 7000000;
        for (const auto& [corr, launch, run] : {std::tuple<std::uint32_t, std::int64_t, std::int64_t>{900, step3 + 300000, step6 + 100000},
                                                {901, step4 + 300000, step6 + 200000}}) {
          kernel_record k;
          k.name = t.strings.intern("late_gemm");
          k.start = at(run), k.end = at(run + 50000), k.correlation = corr, k.stream = 7;
          t.kernels.push_back(k);
          t.launches.push_back({at(launch), corr, 0});
          if (corr == 900) t.api_calls.push_back({at(launch - 1000), at(launch + 1000), t.strings.intern("cudaLaunchKernel"), corr, 0});
        }
      }
      run_provenance p;
      p.host = "node0", p.pid = static_cast<std::uint64_t>(100 + r), p.rank = r, p.world_size = 2, p.job_ids = {{"SLURM_JOB_ID", "5"}};
      chrome_trace_options o;
      o.provenance = &p;
      REQUIRE(write_chrome_trace((dir / ("train_r" + std::to_string(r) + ".trace.json")).string(), t, o));
    }
  std::vector<nlohmann::json> steps;
  for (const auto& dir : {with_late, plain}) {
    const auto json_path = (dir / "merged.json").string();
    const auto m = merge({dir.string(), "-o", json_path});
    INFO(m.out << m.err);
    REQUIRE(m.status == 0);
    std::ifstream in(json_path);
    steps.push_back(nlohmann::json::parse(in)["ranks"][0]["steps"]);
  }
  REQUIRE(steps[0].size() == 10);
  REQUIRE(steps[1].size() == 10);
  for (std::size_t s = 0; s < 10; ++s) {
    INFO("step " << s);
    const auto extra = steps[0][s]["gpu_busy_ns"].get<std::int64_t>() - steps[1][s]["gpu_busy_ns"].get<std::int64_t>();
    CHECK(extra == (s == 3 || s == 4 ? 50000 : 0));
    CHECK(steps[0][s]["compute_ns"].get<std::int64_t>() - steps[1][s]["compute_ns"].get<std::int64_t>() == extra);
  }
}

TEST_CASE("merge: partial input said in one line each, the rest merged") {
  const auto dir = fresh("nvscope_merge_partial");
  for (int r : {0, 1, 3}) write_rank(dir, r, "node0", 1000000000LL, "77");          // rank 2 missing
  write_rank(dir / "..", 1, "node0", 1000000000LL, "77");                              // written outside
  fs::rename(dir / ".." / "train_r1_77.trace.json", dir / "again_r1_77.trace.json"); // rank 1 twice
  write_rank(dir, 0, "node9", 1000000000LL, "78");                                      // another job
  std::ofstream(dir / "other.trace.json") << "{\"traceEvents\": []}";                   // not nvscope's
  const auto m = merge({dir.string()});
  INFO(m.out << m.err);
  REQUIRE(m.status == 0);
  CHECK(m.err.find("'" + (dir / "other.trace.json").string() + "': not a Chrome trace nvscope wrote: left out\n") != std::string::npos);
  CHECK(m.err.find("1 trace(s) of another job (SLURM_JOB_ID=78, not SLURM_JOB_ID=77) left out") != std::string::npos);
  CHECK(m.err.find("rank 1 appears twice") != std::string::npos);
  CHECK(m.err.find("1 of 4 ranks missing: 2 (merged without them)\n") != std::string::npos);
  std::size_t lines = 0;
  for (char c : m.err) lines += c == '\n';
  CHECK(lines == 4);
  CHECK(m.out.find("3 ranks on 1 hosts") != std::string::npos);
}

TEST_CASE("merge: a rank with losses, an unreadable file, a broken one: one line each, the rest merged") {
  const auto dir = fresh("nvscope_merge_losses");
  for (int r = 0; r < 4; ++r) write_rank(dir, r, "node0", 1000000000LL, "77");
  // rank 1's summary beside its trace, written by the real writer, with lost records
  trace t = rank_trace(1, 1000000000LL);
  t.lost.dropped_records = 12;
  t.lost.incomplete_records = 3;
  run_provenance p;
  p.rank = 1;
  p.world_size = 4;
  std::ofstream(dir / "train_r1_77.json") << to_json(analyze(t, analysis_options{}), t, p);
  fs::create_symlink(dir / "gone.json", dir / "gone.trace.json"); // a name that cannot be read
  std::ofstream(dir / "cut.trace.json") << "{\"otherData\": {\"producer\": \"nvscope\"}, \"traceEvents\": [{\"ph\": \"X\", ";
  const auto json_path = (dir / "out" / "merged.json").string();
  fs::create_directories(dir / "out");
  const auto m = merge({dir.string(), "-o", json_path, "--no-trace"});
  INFO(m.out << m.err);
  REQUIRE(m.status == 0);
  CHECK(m.err.find("rank 1 lost records (12 dropped, 3 incomplete, by '" + (dir / "train_r1_77.json").string() +
                   "'): its figures miss them; merged\n") != std::string::npos);
  CHECK(m.err.find("'" + (dir / "gone.trace.json").string() + "': cannot read it: left out\n") != std::string::npos);
  CHECK(m.err.find("'" + (dir / "cut.trace.json").string() + "': not JSON: left out\n") != std::string::npos);
  std::size_t lines = 0;
  for (char c : m.err) lines += c == '\n';
  CHECK(lines == 3);
  CHECK(m.out.find("4 ranks on 1 hosts") != std::string::npos);
  const auto j = nlohmann::json::parse(std::ifstream(json_path));
  CHECK(j["ranks"][1]["losses"]["dropped_records"] == 12);
  CHECK(j["ranks"][1]["losses"]["incomplete_records"] == 3);
  CHECK_FALSE(j["ranks"][0].contains("losses")); // no summary beside rank 0's trace
}

TEST_CASE("merge: a trace cut at any byte or with bytes changed is left out or merged, never read past its end") {
  const auto dir = fresh("nvscope_merge_cut");
  write_rank(dir, 0, "node0", 1000000000LL, "77");
  std::ifstream in(dir / "train_r0_77.trace.json", std::ios::binary);
  const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(whole.size() > 1000);
  write_rank(dir, 1, "node0", 1000000000LL, "77");
  const auto cut = dir / "train_r1_77.trace.json";
  std::size_t left_out = 0;
  for (std::size_t i = 0; i < 60; ++i) {
    std::string text = whole.substr(0, whole.size() * i / 60);
    if (i % 2) text = whole, text[whole.size() * i / 60] = "\"{}[]:,\\9"[i % 10];
    std::ofstream(cut, std::ios::binary | std::ios::trunc) << text;
    const auto m = merge({dir.string(), "-o", (fs::temp_directory_path() / "nvscope_merge_cut.json").string()});
    INFO(i << ": " << m.err);
    CHECK(m.status == 0); // rank 0 always merges
    left_out += m.err.find("train_r1_77.trace.json': ") != std::string::npos;
  }
  CHECK(left_out >= 30); // every cut file at least
}

TEST_CASE("merge: nothing to merge, misuse: exit 2 with the reason") {
  const auto dir = fresh("nvscope_merge_empty");
  const auto none = merge({dir.string()});
  CHECK(none.status == 2);
  CHECK(none.err.find("holds no *.trace.json") != std::string::npos);
  CHECK(none.err.find("nothing to merge") != std::string::npos);
  CHECK(merge({}).status == 2);
  CHECK(merge({"--frob", dir.string()}).status == 2);
  CHECK(merge({dir.string(), "-o"}).status == 2);
  const auto help = merge({"--help"});
  CHECK(help.status == 0);
  CHECK(help.out.rfind("usage: nvscope merge", 0) == 0);
}

TEST_CASE("merge: the ranks' running totals, read from the summaries the real writer wrote, merged as the exact values are") {
  const auto dir = fresh("nvscope_merge_totals");
  std::vector<reference::rank_values<std::string>> exact;
  for (int r = 0; r < 4; ++r) {
    write_rank(dir, r, "node0", 1000000000LL, "77");
    trace t = rank_trace(r, 1000000000LL);
    for (auto& k : t.kernels) k.end += (k.correlation * 7919u) % 5000u + 20000u * static_cast<timestamp_ns>(r); // spread, rank 3 slowest
    totals run;
    fold(t, run);
    run_provenance p;
    p.rank = r;
    p.world_size = 4;
    std::ofstream(dir / ("train_r" + std::to_string(r) + "_77.json")) << to_json(analyze(t, analysis_options{}), t, p, run);
    exact.push_back({r, {}});
    for (const auto& k : t.kernels) exact.back().values[std::string(t.strings[k.name])].push_back(k.end - k.start);
  }
  const auto json_path = (dir / "out.json").string();
  const auto m = merge({dir.string(), "-o", json_path, "--no-trace"});
  INFO(m.out << m.err);
  REQUIRE(m.status == 0);
  CHECK(m.err.empty());
  CHECK(m.out.find("running totals over 4 ranks (quantiles within 1 %), largest kernels:\n") != std::string::npos);
  if (const char* samples = std::getenv("NVSCOPE_SCHEMA_SAMPLES"); samples != nullptr && *samples)
    fs::copy_file(json_path, fs::path(samples) / "merge_totals.json", fs::copy_options::overwrite_existing),
        fs::copy_file(dir / "train_r0_77.json", fs::path(samples) / "summary_with_totals.json", fs::copy_options::overwrite_existing);
  const auto j = nlohmann::json::parse(std::ifstream(json_path));
  REQUIRE(j["totals"]["ranks"] == 4);
  const auto want = reference::merged_exact(exact);
  const auto& got = j["totals"]["kernels"];
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO(want[i].name);
    CHECK(got[i]["name"] == want[i].name);
    CHECK(got[i]["ranks"] == 4);
    CHECK(got[i]["count"] == want[i].count);
    CHECK(got[i]["sum_ns"] == want[i].sum_ns);
    CHECK(got[i]["min_ns"] == want[i].min_ns);
    CHECK(got[i]["max_ns"] == want[i].max_ns);
    for (const char* q : {"p50_ns", "p90_ns", "p99_ns"})
      CHECK(std::fabs(got[i][q].get<double>() - (q[1] == '5' ? want[i].p50_ns : q[1] == '9' && q[2] == '0' ? want[i].p90_ns : want[i].p99_ns)) <=
            duration_sketch::relative_error * want[i].p99_ns);
    CHECK(got[i]["slowest_rank"] == want[i].slowest_rank);
    CHECK(got[i]["slowest_rank"] == 3);
  }
  CHECK(j["totals"]["ranges"].size() == 30); // step_0 ... step_29, one a step on every rank
  CHECK(j["totals"]["run"]["kernels"] == 4 * 60);
  // A rank whose totals are broken: one line, the others' merged.
  auto broken = nlohmann::json::parse(std::ifstream(dir / "train_r2_77.json"));
  broken["totals"]["kernels"][0]["sketch"]["buckets"].push_back(0); // a zero count at the end: not a sketch
  std::ofstream(dir / "train_r2_77.json") << broken.dump();
  const auto b = merge({dir.string(), "-o", json_path, "--no-trace"});
  CHECK(b.status == 0);
  CHECK(b.err.find("rank 2: the running totals in '" + (dir / "train_r2_77.json").string() + "' cannot be read (nvscope: not a duration sketch: a zero count at an end of the buckets): left out of the merged totals\n") != std::string::npos);
  CHECK(b.out.find("running totals over 3 ranks") != std::string::npos);
}

TEST_CASE("merge: a step that lost records on one rank is left out on every rank, said in one line with its count") {
  const auto dir = fresh("nvscope_merge_lossy");
  const std::int64_t shift = 1000000000LL;
  for (int r = 0; r < 2; ++r) write_rank(dir, r, "node0", shift, "77", 2);
  // rank 1's per-step summaries as the bounded collection writes them: step 5 lossy, a cut last line
  std::ofstream steps(dir / "train_r1_77.steps.jsonl");
  for (int k = 0; k < 30; ++k) {
    const std::int64_t begin = shift + 1000000 + 1000000LL * k;
    steps << "{\"step\": " << k << ", \"name\": \"step_" << k << "\", \"begin_ns\": " << begin << ", \"end_ns\": " << begin + 990000
          << ", \"dropped_records\": " << (k == 5 ? 7 : 0) << ", \"buffer_errors\": 0, \"launches_lost\": " << (k == 5 ? 2 : 0)
          << ", \"lossy\": " << (k == 5 ? "true" : "false") << "}\n";
  }
  steps << "{\"step\": 30, \"name\": \"step_30\", \"lossy\": tr";
  steps.close();
  const auto json_path = (dir / "out.json").string();
  const auto m = merge({dir.string(), "-o", json_path, "--no-trace"});
  INFO(m.out << m.err);
  REQUIRE(m.status == 0);
  CHECK(m.err == "nvscope: merge: rank 1: step 'step_5' lost 9 records: step 5 left out on every rank\n");
  CHECK(m.out.find("steps left out on every rank for losses: 1 (5; each rank's lost records on stderr)\n") != std::string::npos);
  const auto j = nlohmann::json::parse(std::ifstream(json_path));
  CHECK(j["steps_left_out"] == nlohmann::json::array({5}));
  for (int r = 0; r < 2; ++r) {
    const auto& rank = j["ranks"][static_cast<std::size_t>(r)];
    CHECK(rank["steps"].size() == 29);
    CHECK(rank["collectives"]["matched"] == 29); // the lost step's all-reduce is not compared
    for (const auto& s : rank["steps"]) CHECK(s["start_ns"] != shift + 6000000);
    CHECK(rank["steps"][4]["step"] == 4);
    CHECK(rank["steps"][5]["step"] == 6); // numbered as read: step 5 is the one left out
  }
  REQUIRE(j["ranks"][1]["lossy_steps"].size() == 1);
  CHECK(j["ranks"][1]["lossy_steps"][0]["records_lost"] == 9);
  CHECK(j["ranks"][1]["lossy_steps"][0]["step"] == 5);
  CHECK_FALSE(j["ranks"][0].contains("lossy_steps"));
  if (const char* samples = std::getenv("NVSCOPE_SCHEMA_SAMPLES"); samples != nullptr && *samples)
    fs::copy_file(json_path, fs::path(samples) / "merge_lossy.json", fs::copy_options::overwrite_existing);
}

TEST_CASE("merge: a rank that ran fewer collectives is matched on the common prefix, said in one line") {
  const auto dir = fresh("nvscope_merge_fewer");
  for (int r = 0; r < 4; ++r) write_rank(dir, r, r < 2 ? "node0" : "node1", 7000000000LL + (r < 2 ? 0 : host1_offset), "77", 4, r == 3 ? 20 : 30);
  const auto json_path = (dir / "out.json").string();
  const auto m = merge({dir.string(), "-o", json_path, "--no-trace"});
  INFO(m.out << m.err);
  REQUIRE(m.status == 0);
  CHECK(m.err == "nvscope: merge: rank 3 ran 20 collectives, the reference rank 0 30: matched on the first 20, where their kernel names agree in order\n");
  const auto j = nlohmann::json::parse(std::ifstream(json_path));
  CHECK(std::fabs(j["hosts"][1]["offset_ns"].get<double>() - host1_offset) < 5000.0);
  CHECK(j["ranks"][3]["collectives"]["ran"] == 20);
  CHECK(j["ranks"][3]["collectives"]["compared"] == 20);
  CHECK_FALSE(j["ranks"][3]["collectives"]["counts_agree"].get<bool>());
  CHECK(j["ranks"][0]["collectives"]["counts_agree"].get<bool>());
  CHECK(j["ranks"][2]["collectives"]["straggler_by_offsets"].get<bool>()); // still found
}

namespace {

// One rank of the scale job: `steps` steps of 1 ms, 4 compute kernels and an all-reduce each
// (5 kernels a step), on a clock `shift` ahead; the all-reduce ends at one instant on every rank.
trace scale_trace(int rank, int steps, std::int64_t shift) {
  trace t;
  t.threads.push_back({static_cast<std::uint64_t>(1000 + rank), 0});
  const auto at = [shift](std::int64_t v) { return static_cast<timestamp_ns>(v + shift); };
  const auto gemm = t.strings.intern("gemm"), allreduce = t.strings.intern(nccl);
  std::uint32_t corr = 1;
  for (int s = 0; s < steps; ++s) {
    const std::int64_t step = 1000000 + 1000000LL * s, end = step + 900000;
    range_record r;
    r.name = t.strings.intern("step_" + std::to_string(s));
    r.start = at(step);
    r.end = at(step + 990000);
    t.ranges.push_back(r);
    for (int g = 0; g < 4; ++g) {
      kernel_record k;
      k.name = gemm, k.start = at(step + 100000 * g), k.end = at(step + 100000 * g + 90000), k.correlation = corr++, k.stream = 7;
      t.kernels.push_back(k);
    }
    kernel_record k;
    k.name = allreduce, k.start = at(end - 200000 - rank * 100), k.end = at(end), k.correlation = corr++, k.stream = 13;
    t.kernels.push_back(k);
  }
  t.begin = at(500000);
  t.finish = at(1000000LL * (steps + 2));
  t.context.at_start = {at(500000), 1764648000000000000ull + 500000};
  return t;
}

} // namespace

// Issue 49: 64 ranks of 100,000 kernels each (8 hosts), written by write_chrome_trace, merged
// in under 10 s of CPU on one core. The folder is kept for /usr/bin/time nvscope merge.
TEST_CASE("merge: 64 ranks of 100,000 kernels" * doctest::test_suite("scale") * doctest::skip()) {
  const auto dir = fs::temp_directory_path() / "nvscope_merge_scale";
  if (!fs::exists(dir / "done")) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (int r = 0; r < 64; ++r) {
      run_provenance p;
      p.host = "node" + std::to_string(r / 8);
      p.pid = static_cast<std::uint64_t>(100 + r);
      p.rank = r;
      p.world_size = 64;
      p.job_ids = {{"SLURM_JOB_ID", "500"}};
      chrome_trace_options o;
      o.provenance = &p;
      const auto t = scale_trace(r, 20000, 7000000000LL + (r / 8) * 123457LL);
      REQUIRE(t.kernels.size() == 100000);
      REQUIRE(write_chrome_trace((dir / ("train_r" + std::to_string(r) + ".trace.json")).string(), t, o));
    }
    std::ofstream(dir / "done") << "64 ranks\n";
  }
  const std::clock_t c0 = std::clock();
  const auto m = merge({dir.string()});
  const double cpu_s = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  INFO(m.out << m.err);
  MESSAGE("nvscope merge of 64 ranks x 100,000 kernels: " << cpu_s << " s of CPU");
  REQUIRE(m.status == 0);
  CHECK(m.err.empty());
  CHECK(m.out.find("64 ranks on 8 hosts") != std::string::npos);
  CHECK(cpu_s < 10.0);
  // With -o: the JSON report and the merged Chrome trace, a second pass over the files.
  const auto out = fs::temp_directory_path() / "nvscope_merge_scale_out.json";
  const std::clock_t c1 = std::clock();
  const auto with_trace = merge({dir.string(), "-o", out.string()});
  MESSAGE("with -o (report JSON and merged trace): " << static_cast<double>(std::clock() - c1) / CLOCKS_PER_SEC << " s of CPU, trace "
                                                     << fs::file_size(fs::temp_directory_path() / "nvscope_merge_scale_out.trace.json") << " bytes");
  CHECK(with_trace.status == 0);
  fs::remove(fs::temp_directory_path() / "nvscope_merge_scale_out.trace.json");
}
