// A long run in bounded memory (collect/detail/long_run.hpp, issue 47), through the real
// decode-and-fold path: synthetic CUPTI activity records (long_run_feed.hpp) decoded a buffer at
// a time and folded. On 10 M records with the bound scaled down: resident memory flat, every
// step's summary equal to its figures computed apart from the folder, the flight recorder's
// steps equal to their records, losses marked on their step, the memory limit said in one line
// and never exceeded, and a run cut in two merging into the uncut run's totals. An unbounded
// collection's memory limit (detail/budget.hpp): a run that fits left as it is, one that does
// not kept up to the limit and the rest folded.
#include "long_run_feed.hpp"
#include "test_seed.hpp"

#include <nvscope/collect/detail/bounded.hpp>
#include <nvscope/collect/detail/budget.hpp>
#include <nvscope/collect/detail/demangle.hpp>
#include <nvscope/analysis.hpp>
#include <nvscope/collect/options.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <deque>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

namespace nd = nvscope::detail;
namespace lf = long_run_feed;

namespace {

long long vm_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, 6, "VmRSS:") == 0) return 1024 * std::atoll(line.c_str() + 6);
  return 0;
}

// Under a sanitizer: ASan's quarantine keeps freed memory resident, so RSS says nothing of ours,
// and both run the path several times slower: 3 M records there (the sanitizers' time budget),
// 10 M in the plain build.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool sanitized = true;
#else
constexpr bool sanitized = false;
#endif
#else
constexpr bool sanitized = false;
#endif
constexpr std::uint64_t feed_records = sanitized ? 3'000'000 : 10'000'000;

std::string shown(unsigned n) { return nd::demangle_kernel_name(lf::names[n]); }

// Every figure of a summary against the step's figures computed by the feed.
// `first`: the step the folder numbered 0 (a run cut in pieces numbers each piece from 0).
void check_summary(const nvscope::step_totals& got, const lf::expected_step& want, std::uint64_t first = 0) {
  REQUIRE(got.number + first == want.number);
  CHECK(got.begin == want.begin);
  CHECK(got.end == want.end);
  CHECK(got.wall_ns == want.end - want.begin);
  CHECK(got.kernel_ns == want.kernel_ns);
  CHECK(got.copy_ns == want.copy_ns);
  CHECK(got.memset_ns == want.memset_ns);
  CHECK(got.sync_ns == want.sync_ns);
  CHECK(got.launches == want.launches);
  CHECK(got.gpu_busy_ns == want.busy_ns);
  REQUIRE(!got.top_kernels.empty());
  for (const auto& k : got.top_kernels) {
    unsigned n = 0;
    while (n < 6 && shown(n) != k.name) ++n;
    REQUIRE(n < 6);
    CHECK(k.ns == want.kernel_ns_by_name[n]);
  }
  std::uint64_t most = 0;
  for (auto v : want.kernel_ns_by_name) most = std::max(most, v);
  CHECK(got.top_kernels[0].ns == most);
}

struct run_result {
  nvscope::totals whole;
  nd::long_run_counts counts;
  std::uint64_t checked = 0, lossy = 0, records = 0;
  long long rss_early = 0, rss_end = 0;
  std::vector<std::string> notes;
};

// Steps [first, last) through a folder with `limits`; every summary checked as it ends;
// losses of 7 dropped records noticed during step `lossy_step`.
run_result run(std::uint64_t seed, std::uint64_t first, std::uint64_t last, nd::long_run_limits limits, std::uint64_t lossy_step) {
  run_result out;
  std::deque<lf::expected_step> pending;
  nd::long_run_folder folder(
      limits,
      [&](const nvscope::step_totals& s) {
        REQUIRE(!pending.empty());
        check_summary(s, pending.front(), first);
        CHECK(s.lossy == (s.number + first == lossy_step));
        if (s.lossy) CHECK(s.lost.dropped_records == 7);
        out.lossy += s.lossy;
        pending.pop_front();
        ++out.checked;
      },
      [&](std::string line) { out.notes.push_back(std::move(line)); });
  lf::generator gen(seed, 200);
  lf::feed f;
  f.run(
      gen, folder, first, last, 4096,
      [&](const lf::step_content& c) {
        pending.push_back(c.expected);
        if (c.expected.number == lossy_step) {
          nvscope::loss_counts l;
          l.dropped_records = 7;
          folder.losses_seen(l);
        }
      },
      [&](std::uint64_t records) {
        if (out.rss_early == 0 && records >= 1'000'000) out.rss_early = vm_rss_bytes();
      });
  folder.finish(lf::origin + last * lf::period);
  out.rss_end = vm_rss_bytes();
  CHECK(pending.empty());
  // the flight recorder: each kept step's raw records are its records, its summary its figures
  lf::generator again(seed, 200);
  auto check_kept = [&](const nd::step_records& s) {
    const auto c = again.step(s.summary.number + first);
    REQUIRE(s.count() == c.records.size() - 3);
    check_summary(s.summary, c.expected, first);
    std::size_t k = 0;
    for (std::size_t i = 0; i + 3 < c.records.size(); ++i) { // the kernels, exactly as CUPTI gave them
      const auto& a = c.records[i];
      if (a.head.kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
      REQUIRE(k < s.kernels.size());
      CHECK(s.kernels[k].start == a.kernel.start);
      CHECK(s.kernels[k].end == a.kernel.end);
      CHECK(s.kernels[k].correlation == a.kernel.correlationId);
      ++k;
    }
    CHECK(k == s.kernels.size());
  };
  for (const auto& s : folder.recent()) check_kept(s);
  for (const auto& s : folder.slowest()) {
    check_kept(s);
    if (last - first > 200) CHECK(s.summary.wall_ns >= 9'000'000); // the slow steps, every 61st
  }
  CHECK(folder.recent().size() == std::min<std::uint64_t>(limits.keep_steps, last - first));
  out.records = f.records;
  out.counts = folder.counts();
  out.whole = folder.whole();
  return out;
}

void check_equal(const nvscope::totals& a, const nvscope::totals& b) {
  CHECK(a.kernels.size() == b.kernels.size());
  for (const auto& [name, s] : a.kernels) {
    const auto it = b.kernels.find(name);
    REQUIRE(it != b.kernels.end());
    CHECK(s == it->second);
  }
  CHECK(a.steps == b.steps);
  CHECK(a.run.kernels == b.run.kernels);
  CHECK(a.run.kernel_ns == b.run.kernel_ns);
  CHECK(a.run.copies == b.run.copies);
  CHECK(a.run.copy_ns == b.run.copy_ns);
  CHECK(a.run.memsets == b.run.memsets);
  CHECK(a.run.memset_ns == b.run.memset_ns);
  CHECK(a.run.syncs == b.run.syncs);
  CHECK(a.run.sync_ns == b.run.sync_ns);
  CHECK(a.run.lost.dropped_records == b.run.lost.dropped_records);
}

} // namespace

TEST_CASE("10 M records (3 M under sanitizers) through decode and fold: memory flat, every step's figures exact, the slowest and last steps kept raw") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const std::uint64_t seed = rng();
  nd::long_run_limits limits;
  limits.keep_steps = 3;
  limits.keep_slowest = 3;
  limits.memory_limit = std::size_t{1} << 20; // scaled: a step is about 7 KB of records
  const std::uint64_t steps = feed_records / 205 + 1; // 205 to 209 records a step
  const auto r = run(seed, 0, steps, limits, 1234);
  CHECK(r.checked == steps);
  CHECK(r.lossy == 1);
  CHECK(r.counts.steps_summarised == steps);
  CHECK(r.counts.steps_lossy == 1);
  CHECK(r.counts.bytes_high_water <= limits.memory_limit);
  CHECK(r.counts.records_kept <= 8 * 210); // 3 + 3 kept, up to 2 held
  CHECK(r.counts.late_records == 0);
  CHECK(r.notes.empty()); // 1 MiB holds 8 steps: nothing given up
  CHECK(r.records >= feed_records);
  CHECK(r.whole.run.kernels + r.whole.run.copies + r.whole.run.memsets + r.whole.run.syncs == r.records); // none lost, none twice
  CHECK(r.whole.steps.count() == steps);
  // resident memory after the first million records grows by at most 16 MB to the ten millionth
  // (kept raw today, the 9 M records more would add about 290 MB)
  if (!sanitized) CHECK(r.rss_end - r.rss_early <= 16ll << 20);
  MESSAGE("VmRSS after 1 M records " << (r.rss_early >> 20) << " MiB, at the end " << (r.rss_end >> 20) << " MiB");
}

TEST_CASE("a memory limit too small for the steps asked: one line says what is given up, the summaries stay exact") {
  nd::long_run_limits limits;
  limits.keep_steps = 4;
  limits.keep_slowest = 4;
  limits.memory_limit = 30'000; // about 4 steps' records
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const auto r = run(rng(), 0, 400, limits, 17);
  CHECK(r.checked == 400);
  CHECK(r.counts.steps_given_up > 0);
  REQUIRE(r.notes.size() == 1);
  CHECK(r.notes[0].find("memory limit") != std::string::npos);
  CHECK(r.notes[0].find("given up") != std::string::npos);
  CHECK(r.counts.bytes_held <= limits.memory_limit);
}

TEST_CASE("a run cut in two merges into the uncut run's totals, bucket for bucket") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const std::uint64_t seed = rng();
  nd::long_run_limits limits;
  limits.keep_steps = 2;
  limits.keep_slowest = 2;
  const auto whole = run(seed, 0, 3000, limits, 5);
  auto first = run(seed, 0, 1700, limits, 5);
  const auto second = run(seed, 1700, 3000, limits, 5);
  nvscope::merge(first.whole, second.whole);
  check_equal(first.whole, whole.whole);
  CHECK(first.whole.steps.count() == 3000);
}

TEST_CASE("a bounded collection's pieces: step ranges found in the NVTX log, kernels joined to their launch, losses per step") {
  CHECK(nd::plain_step_name("step_12"));
  CHECK(nd::plain_step_name("Step#3"));
  CHECK(nd::plain_step_name("iteration 7"));
  CHECK(nd::plain_step_name("step"));
  CHECK_FALSE(nd::plain_step_name("forward"));
  CHECK_FALSE(nd::plain_step_name("step_"));
  CHECK_FALSE(nd::plain_step_name("stepper"));

  std::vector<nvscope::step_totals> ended;
  nd::long_run_folder folder({}, [&](const nvscope::step_totals& s) { ended.push_back(s); });
  nd::bounded_state b;
  auto& log = nd::nvtx_log();
  auto event = [&](nd::nvtx_event_kind kind, std::uint64_t time, const char* name, std::uint64_t thread) {
    nd::nvtx_event e;
    e.kind = kind, e.time = time, e.os_thread = thread, e.name = name;
    std::lock_guard<std::mutex> lock(log.mutex);
    log.events.push_back(e);
  };
  auto same_clock = [](std::uint64_t t) { return t; };
  {
    std::lock_guard<std::mutex> lock(log.mutex);
    log.events.clear();
  }
  event(nd::nvtx_event_kind::push, 1000, "step_0", 1);
  event(nd::nvtx_event_kind::push, 1100, "forward", 1);
  event(nd::nvtx_event_kind::push, 1150, "step_99", 2); // another thread's step
  event(nd::nvtx_event_kind::pop, 1200, "", 1);        // forward
  event(nd::nvtx_event_kind::pop, 2000, "", 1);        // step_0
  nd::scan_step_events(b, folder, nullptr, same_clock);
  // launched inside step_0 at 1500, ran after its end (2500): the step's by its launch
  b.add_call(nd::timed_host_call{1500, 42, 0, false});
  nvscope::trace live;
  nvscope::kernel_record k;
  k.start = 2500, k.end = 2600, k.correlation = 42, k.name = live.strings.intern("gemm");
  live.kernels.push_back(k);
  nd::buffer_counts counts;
  counts.dropped = 5; // CUPTI dropped 5 while step_0 ran
  folder.losses_seen(nd::new_losses(b, counts, 0));
  folder.take(live, [&](std::uint32_t c, nvscope::timestamp_ns s) { return b.launched_at(c, s); });
  CHECK(live.kernels.empty());
  CHECK(b.calls_waiting() == 0);
  REQUIRE(b.used.size() == 1); // kept for the join at stop while its record is held
  event(nd::nvtx_event_kind::pop, 3000, "", 2);        // step_99
  nd::scan_step_events(b, folder, nullptr, same_clock);
  CHECK(nd::new_losses(b, counts, 0).dropped_records == 0); // counted once
  folder.finish(4000);
  REQUIRE(ended.size() == 2);
  CHECK(ended[0].name == "step_0");
  CHECK(ended[0].begin == 1000);
  CHECK(ended[0].end == 2000);
  CHECK(ended[1].name == "step_99");
  CHECK(ended[1].end == 3000);
  // step_99 (1150..3000) began after step_0: the later step holds a launch at 1500
  CHECK(ended[1].launches + ended[0].launches == 1);
  CHECK(ended[1].lost.dropped_records == 5); // the latest begun step when the loss was seen
  CHECK(ended[1].lossy);
  CHECK_FALSE(ended[0].lossy);
  REQUIRE(folder.lossy_steps().size() == 1); // into trace::lossy_steps at stop: the step analysis leaves it out
  CHECK(folder.lossy_steps()[0].begin == 1150);
  CHECK(folder.lossy_steps()[0].end == 3000);
  std::vector<nd::timed_host_call> calls;
  b.calls_into(calls);
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].correlation == 42);
  // sync calls wait for no GPU record: never left in `calls`; `used` is pruned to what is kept
  for (std::uint32_t c = 1000; c < 60000; ++c) b.add_call(nd::timed_host_call{5000 + c, c, 0, true});
  CHECK(b.calls_waiting() == 0);
  b.prune(folder);
  CHECK(b.used.size() <= 4 * folder.counts().records_kept + 32768);
  const auto kept_42 = std::count_if(b.used.begin(), b.used.end(), [](const nd::timed_host_call& c) { return c.correlation == 42; });
  CHECK(kept_42 == 1); // its kernel is in the flight recorder
  std::lock_guard<std::mutex> lock(log.mutex);
  log.events.clear();
}

TEST_CASE("steps a schedule selects are kept raw beside the flight recorder; the rest are folded") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  nd::long_run_limits limits;
  limits.keep_steps = 1;
  limits.keep_slowest = 0;
  limits.keep_raw = [](std::uint64_t n) { return n >= 100 && n < 110; }; // --skip=100 --active=10
  const std::uint64_t seed = rng();
  const auto r = run(seed, 0, 300, limits, 1000);
  CHECK(r.checked == 300);
  const lf::generator gen(seed, 200);
  std::uint64_t kept = gen.step(299).records.size() - 3; // the last step, in the flight recorder
  for (std::uint64_t s = 100; s < 110; ++s) kept += gen.step(s).records.size() - 3;
  CHECK(r.counts.records_kept == kept);
}

namespace {

// Steps [0, steps) decoded a buffer of `buffer_records` at a time into `live`, weighed by
// `budget` after each buffer when given. Returns the records decoded.
std::uint64_t decode_weighed(std::uint64_t seed, std::uint64_t steps, nvscope::trace& live, nd::raw_budget* budget,
                             std::vector<std::string>& notes, std::size_t buffer_records = 4096) {
  const lf::generator gen(seed, 20);
  nd::activity_decoder decoder{live, true};
  std::uint64_t records = 0;
  std::size_t in_buffer = 0;
  auto deliver = [&] {
    if (budget != nullptr)
      if (auto line = budget->after_buffer(live); !line.empty()) notes.push_back(std::move(line));
    in_buffer = 0;
  };
  for (std::uint64_t s = 0; s < steps; ++s)
    for (const auto& a : gen.step(s).records) {
      decoder.decode(&a.head);
      ++records;
      if (++in_buffer == buffer_records) deliver();
    }
  deliver();
  return records;
}

template <class Record>
std::uint64_t summed(const std::vector<Record>& v) {
  std::uint64_t ns = 0;
  for (const auto& r : v) ns += r.end - r.start;
  return ns;
}

template <class Record>
bool same_records(const std::vector<Record>& a, const std::vector<Record>& b) {
  auto key = [](const Record& r) { return std::make_tuple(r.start, r.end, r.correlation); };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [&](const Record& x, const Record& y) { return key(x) == key(y); });
}

} // namespace

TEST_CASE("the default memory limit leaves a run that fits as an unlimited collection leaves it, record for record") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const std::uint64_t seed = rng();
  const nvscope::collector_options defaults;
  REQUIRE(defaults.memory_limit != nvscope::no_memory_limit); // bounded by default
  REQUIRE_FALSE(defaults.bounded);
  nvscope::trace limited, unlimited;
  nd::raw_budget budget(defaults.memory_limit);
  std::vector<std::string> notes;
  const auto n = decode_weighed(seed, 2000, limited, &budget, notes);
  decode_weighed(seed, 2000, unlimited, nullptr, notes);
  CHECK(notes.empty());
  CHECK_FALSE(budget.over());
  CHECK(budget.records_folded() == 0);
  CHECK(limited.kernels.size() + limited.copies.size() + limited.memsets.size() + limited.syncs.size() == n);
  CHECK(same_records(limited.kernels, unlimited.kernels));
  CHECK(same_records(limited.copies, unlimited.copies));
  CHECK(same_records(limited.memsets, unlimited.memsets));
  CHECK(same_records(limited.syncs, unlimited.syncs));
  for (std::size_t i = 0; i < limited.kernels.size(); ++i) REQUIRE(limited.kernels[i].name == unlimited.kernels[i].name);
}

TEST_CASE("past the memory limit: the first records are kept whole, the rest folded into the totals, said once, memory flat") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const std::uint64_t seed = rng();
  constexpr std::size_t limit = 1 << 20;
  nvscope::trace limited, unlimited;
  nd::raw_budget budget(limit);
  std::vector<std::string> notes;
  const auto n = decode_weighed(seed, 20000, limited, &budget, notes, 1000);
  decode_weighed(seed, 20000, unlimited, nullptr, notes);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("memory limit of 1 MiB reached") != std::string::npos);
  REQUIRE(budget.over());
  // Kept: at most the limit and the buffer that crossed it, and the run's first records.
  CHECK(nd::raw_bytes(limited) <= limit + 1000 * sizeof(nvscope::kernel_record));
  CHECK(nd::raw_bytes(limited) > limit);
  CHECK(limited.kernels.size() < unlimited.kernels.size() / 4);
  CHECK(std::equal(limited.kernels.begin(), limited.kernels.end(), unlimited.kernels.begin(),
                   [](const auto& a, const auto& b) { return a.start == b.start && a.correlation == b.correlation; }));
  // Kept and folded together are the whole run.
  const auto& f = budget.folded();
  const std::uint64_t kept = limited.kernels.size() + limited.copies.size() + limited.memsets.size() + limited.syncs.size();
  CHECK(kept + budget.records_folded() == n);
  CHECK(limited.kernels.size() + f.run.kernels == unlimited.kernels.size());
  CHECK(summed(limited.kernels) + f.run.kernel_ns == summed(unlimited.kernels));
  CHECK(summed(limited.copies) + f.run.copy_ns == summed(unlimited.copies));
  CHECK(summed(limited.memsets) + f.run.memset_ns == summed(unlimited.memsets));
  CHECK(summed(limited.syncs) + f.run.sync_ns == summed(unlimited.syncs));
  std::uint64_t by_name = 0;
  for (const auto& [name, s] : f.kernels) by_name += s.count();
  CHECK(by_name == f.run.kernels);
  CHECK(f.kernels.size() == 6);
  CHECK(budget.last_kept_correlation() > 0);
  CHECK(budget.last_kept_correlation() < 20000 * 256);
}

TEST_CASE("an NVTX range window is followed as its range opens and closes: records before and after it folded, inside kept") {
  auto& log = nd::nvtx_log();
  auto event = [&](nd::nvtx_event_kind kind, std::uint64_t time, const char* name, std::uint64_t key = 0, std::uint64_t domain = 0) {
    nd::nvtx_event e;
    e.kind = kind, e.time = time, e.os_thread = 1, e.name = name, e.key = key, e.domain = domain;
    std::lock_guard<std::mutex> lock(log.mutex);
    log.events.push_back(e);
  };
  auto same_clock = [](std::uint64_t t) { return t; };
  auto kernels_at = [](std::initializer_list<std::uint64_t> starts) {
    nvscope::trace live;
    for (auto s : starts) {
      nvscope::kernel_record k;
      k.start = s, k.end = s + 10, k.correlation = static_cast<std::uint32_t>(s), k.name = live.strings.intern("gemm");
      live.kernels.push_back(k);
    }
    return live;
  };
  auto kept_starts = [](const nd::long_run_folder& f) {
    std::vector<std::uint64_t> v;
    for (const auto& k : f.window_records().kernels) v.push_back(k.start);
    return v;
  };
  auto launched = [](std::uint32_t, nvscope::timestamp_ns s) { return s; };
  SUBCASE("a push/pop range in a named domain, the first one only, nested ranges inside it") {
    {
      std::lock_guard<std::mutex> lock(log.mutex);
      log.events.clear();
    }
    nd::long_run_folder folder;
    nd::bounded_state b;
    const nd::range_rule rule = [](std::string_view n, std::string_view d) { return n == "epoch_2" && d == "trainer"; };
    event(nd::nvtx_event_kind::domain_created, 10, "trainer", 0, 7);
    event(nd::nvtx_event_kind::push, 1000, "epoch_2", 0, 0); // the default domain: not it
    event(nd::nvtx_event_kind::pop, 2000, "", 0, 0);
    nd::scan_step_events(b, folder, nullptr, same_clock, rule);
    auto live = kernels_at({1500});
    folder.take(live, launched);
    CHECK(folder.folded().run.kernels == 1); // before the window: folded at once
    event(nd::nvtx_event_kind::push, 3000, "epoch_2", 0, 7);
    event(nd::nvtx_event_kind::push, 3100, "inner", 0, 7);
    event(nd::nvtx_event_kind::pop, 3200, "", 0, 7); // inner: the window stays open
    nd::scan_step_events(b, folder, nullptr, same_clock, rule);
    live = kernels_at({3150, 3500});
    folder.take(live, launched);
    event(nd::nvtx_event_kind::pop, 4000, "", 0, 7);
    event(nd::nvtx_event_kind::push, 5000, "epoch_2", 0, 7); // a second one: not a window
    event(nd::nvtx_event_kind::pop, 6000, "", 0, 7);
    nd::scan_step_events(b, folder, nullptr, same_clock, rule);
    live = kernels_at({3900, 4500, 5500});
    folder.take(live, launched);
    CHECK(kept_starts(folder) == std::vector<std::uint64_t>{3150, 3500, 3900});
    CHECK(folder.folded().run.kernels == 3);
    REQUIRE(folder.windows().size() == 1);
    CHECK(folder.windows()[0].begin == 3000);
    CHECK(folder.windows()[0].end == 4000);
  }
  SUBCASE("a start/end range, by its id") {
    {
      std::lock_guard<std::mutex> lock(log.mutex);
      log.events.clear();
    }
    nd::long_run_folder folder;
    nd::bounded_state b;
    const nd::range_rule rule = [](std::string_view n, std::string_view) { return n == "ckpt"; };
    event(nd::nvtx_event_kind::start, 1000, "ckpt", 99);
    event(nd::nvtx_event_kind::start, 1100, "other", 100);
    event(nd::nvtx_event_kind::end, 1200, "", 100); // another range's end
    nd::scan_step_events(b, folder, nullptr, same_clock, rule);
    auto live = kernels_at({900, 1300});
    folder.take(live, launched);
    event(nd::nvtx_event_kind::end, 2000, "", 99);
    nd::scan_step_events(b, folder, nullptr, same_clock, rule);
    live = kernels_at({1900, 2100});
    folder.take(live, launched);
    CHECK(kept_starts(folder) == std::vector<std::uint64_t>{1300, 1900});
    CHECK(folder.folded().run.kernels == 2);
  }
}

namespace {

// The GPU records' launch calls, as the collector's launch log gives them (the feed's lag).
std::vector<nd::timed_host_call> launch_calls(const nvscope::trace& t) {
  std::vector<nd::timed_host_call> calls;
  auto add = [&](const auto& records) {
    for (const auto& r : records) calls.push_back(nd::timed_host_call{r.start - lf::lag(r.correlation), r.correlation, 0, false});
  };
  add(t.kernels);
  add(t.copies);
  add(t.memsets);
  return calls;
}

template <class Row, class Name>
void check_rows(const std::vector<Row>& a, const std::vector<Row>& b, const Name& name) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(name(a[i]) == name(b[i]));
    const auto& x = a[i].time;
    const auto& y = b[i].time;
    CHECK(std::make_tuple(x.count, x.total, x.min, x.max, x.median) == std::make_tuple(y.count, y.total, y.min, y.max, y.median));
  }
}

std::vector<std::tuple<std::uint64_t, std::uint64_t, std::string, bool, bool>> range_list(const nvscope::trace& t) {
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::string, bool, bool>> v;
  for (const auto& r : t.ranges) v.emplace_back(r.start, r.end, std::string(t.strings[r.name]), r.is_mark, r.is_push_pop);
  std::sort(v.begin(), v.end());
  return v;
}

} // namespace

TEST_CASE("NVTX ranges, marks and API records outside every kept step are folded as they close: counted, not kept, memory flat") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  nd::long_run_limits limits;
  limits.memory_limit = std::size_t{1} << 20;
  nd::long_run_folder folder(limits);
  const lf::generator gen(rng(), 200, true);
  lf::feed f;
  const std::uint64_t steps = feed_records / 410 + 1; // about 410 CUPTI records a step with its API records
  long long rss_early = 0;
  f.run(gen, folder, 0, steps, 4096, [](const lf::step_content&) {}, [&](std::uint64_t records) {
    if (rss_early == 0 && records >= 1'000'000) rss_early = vm_rss_bytes();
  });
  folder.finish(lf::origin + steps * lf::period);
  const long long rss_end = vm_rss_bytes();
  CHECK(f.events == steps * lf::events_per_step);
  CHECK(f.live.ranges.empty()); // every range closed, none left in the live trace
  const auto& folded = folder.folded();
  const auto& c = folder.counts();
  CHECK(c.records_kept <= 8 * 420); // 3 + 3 kept, up to 2 held: their GPU records, API calls, ranges
  CHECK(c.late_records == 0);
  CHECK(c.bytes_high_water <= limits.memory_limit);
  // between steps: every data_load, decode and prefetch range folded, none kept
  auto folded_count = [&](const char* name, bool push_pop = true) {
    const auto it = folded.ranges.find(nvscope::range_key{"", name, push_pop});
    return it == folded.ranges.end() ? 0 : it->second.count();
  };
  CHECK(folded_count("data_load") == steps);
  CHECK(folded_count("decode") == steps);
  CHECK(folded_count("prefetch", false) == steps);
  CHECK(folded_count("prefetch", true) == 0);
  // inside steps: kept with the 6 steps of the flight recorder, folded with the rest
  CHECK(folded_count("forward") == steps - 6);
  CHECK(folded.run.marks == steps - 6);
  // step ranges (one name a step) go to the steps' sketch: neither the groups nor the string
  // table grow with the steps
  CHECK(folded.ranges.size() == 6);
  CHECK(f.live.strings.size() < 40);
  std::uint64_t step_names_kept = 0;
  auto count_named = [&](const nd::step_records& s) {
    for (const auto& r : s.ranges) step_names_kept += r.name == folder.step_marker();
  };
  for (const auto& s : folder.recent()) count_named(s);
  for (const auto& s : folder.slowest()) count_named(s);
  CHECK(step_names_kept == 6); // named only when the result is made (bounded_records)
  nvscope::trace out;
  out.strings = f.live.strings;
  nd::bounded_records(folder, out);
  std::size_t steps_named = 0;
  for (const auto& r : out.ranges) steps_named += nd::plain_step_name(out.strings[r.name]) && r.start % lf::period == lf::origin % lf::period;
  CHECK(steps_named == 6);
  CHECK(out.ranges.size() == 6 * 5);
  const auto it = folded.ranges.find(nvscope::range_key{"", "data_load", true});
  REQUIRE(it != folded.ranges.end());
  CHECK(it->second.min() == 980'000); // pushed at end + 20 us, popped at end + 1 ms
  CHECK(it->second.max() == 980'000);
  const auto whole = folder.whole();
  CHECK(whole.run.ranges == 7 * steps);
  CHECK(whole.run.marks == steps);
  CHECK(whole.run.api_calls + whole.run.kernels + whole.run.copies + whole.run.memsets + whole.run.syncs == f.records);
  CHECK(whole.run.api_calls > 190 * steps);
  CHECK(whole.run.api_ns == 2000 * whole.run.api_calls);
  auto check_kept = [&](const nd::step_records& s) {
    CHECK(s.ranges.size() == 5); // step_N, forward, backward, allreduce, the mark
    CHECK(s.api_calls.size() == s.kernels.size() + s.copies.size() + s.memsets.size());
    for (const auto& r : s.ranges) CHECK(r.start >= s.summary.begin);
  };
  for (const auto& s : folder.recent()) check_kept(s);
  for (const auto& s : folder.slowest()) check_kept(s);
  if (!sanitized) CHECK(rss_end - rss_early <= 16ll << 20);
  MESSAGE(f.records << " CUPTI records and " << f.events << " NVTX events: VmRSS after 1 M records " << (rss_early >> 20)
                    << " MiB, at the end " << (rss_end >> 20) << " MiB");
}

TEST_CASE("a window's raw records and tables equal those of a collection that kept only the window (only_in_capture's rule)") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const std::uint64_t seed = rng();
  const lf::generator gen(seed, 50, true);
  constexpr std::uint64_t steps = 40;
  // from the middle of step 10 to the middle of step 20: step_10's range begins before it
  // (folded), step_20's inside it and ends after (kept whole); kernels by their launch
  const nvscope::time_window w{lf::origin + 10 * lf::period + 2'500'000, lf::origin + 20 * lf::period + 2'500'000};
  nd::long_run_limits limits;
  limits.keep_steps = 0, limits.keep_slowest = 0;
  std::uint64_t summaries = 0;
  nd::long_run_folder folder(limits, [&](const nvscope::step_totals& t) { // a step inside the window, one across its edge
    if (t.number == 15 || t.number == 20) check_summary(t, gen.step(t.number).expected), ++summaries;
  });
  folder.window_begun(w.begin);
  folder.window_ended(w.end);
  lf::feed f;
  f.run(gen, folder, 0, steps, 512, [](const lf::step_content&) {}, [](std::uint64_t) {});
  folder.finish(lf::origin + steps * lf::period);
  nvscope::trace bounded;
  bounded.strings = f.live.strings, bounded.kernel_names = f.live.kernel_names, bounded.kernel_configs = f.live.kernel_configs;
  bounded.threads = f.live.threads;
  nd::bounded_records(folder, bounded);
  nd::finish_trace(bounded, launch_calls(bounded), nullptr);

  // the reference: every record and range kept to the end, then only_in_capture's filter
  nvscope::trace all;
  nd::activity_decoder decoder{all, true};
  std::vector<nd::nvtx_event> events;
  for (std::uint64_t s = 0; s < steps; ++s) {
    const auto c = gen.step(s);
    for (const auto& a : c.records) decoder.decode(&a.head);
    events.insert(events.end(), c.events.begin(), c.events.end());
  }
  nd::nvtx_events_to_ranges(events, all, [](std::uint64_t t) { return t; }, [](std::uint64_t) { return 0u; });
  const std::vector<nvscope::time_window> windows{w};
  nd::finish_trace(all, launch_calls(all), &windows);

  for (auto* t : {&bounded, &all}) t->begin = lf::origin, t->finish = lf::origin + steps * lf::period;
  CHECK(same_records(bounded.kernels, all.kernels));
  CHECK(same_records(bounded.copies, all.copies));
  CHECK(same_records(bounded.memsets, all.memsets));
  CHECK(same_records(bounded.syncs, all.syncs));
  CHECK(same_records(bounded.api_calls, all.api_calls));
  CHECK(bounded.launches.size() == all.launches.size());
  CHECK(range_list(bounded) == range_list(all));
  REQUIRE(bounded.kernels.size() > 300);
  // the edges: step_10 began before the window (not kept), step_20 inside it (kept whole)
  bool step_10 = false, step_20_whole = false;
  for (const auto& r : bounded.ranges) {
    step_10 = step_10 || bounded.strings[r.name] == "step_10";
    step_20_whole = step_20_whole || (bounded.strings[r.name] == "step_20" && r.end > w.end);
  }
  CHECK_FALSE(step_10);
  CHECK(step_20_whole);
  // the nsys tables of the window
  const auto a = nvscope::analyze(bounded), b = nvscope::analyze(all);
  check_rows(a.kernels, b.kernels, [](const auto& r) { return r.name; });
  check_rows(a.ranges, b.ranges, [](const auto& r) { return r.range + r.style; });
  check_rows(a.range_kernels, b.range_kernels, [](const auto& r) { return r.range + r.style + r.kernel; });
  REQUIRE(a.projections.size() == b.projections.size());
  for (std::size_t i = 0; i < a.projections.size(); ++i) {
    CHECK(a.projections[i].range == b.projections[i].range);
    CHECK(a.projections[i].projected.total == b.projections[i].projected.total);
    CHECK(a.projections[i].total_gpu_ops == b.projections[i].total_gpu_ops);
  }
  CHECK(summaries == 2);
  // each record once: kept in the window or folded, never both
  const auto whole = folder.whole();
  CHECK(whole.run.api_calls + whole.run.kernels + whole.run.copies + whole.run.memsets + whole.run.syncs == f.records);
  CHECK(whole.run.ranges + whole.run.marks == steps * 8);
  // and what the window left out is in the totals: 10 steps' worth of the in-step ranges folded
  const auto& folded = folder.folded();
  const auto fw = folded.ranges.find(nvscope::range_key{"", "forward", true});
  REQUIRE(fw != folded.ranges.end());
  std::uint64_t forward_kept = 0;
  for (const auto& r : bounded.ranges) forward_kept += bounded.strings[r.name] == "forward";
  CHECK(fw->second.count() + forward_kept == steps);
}

TEST_CASE("sync calls from host callbacks are paired as each wait ends; a wait still going on is held to the next buffer") {
  auto call = [](std::uint32_t thread, std::uint64_t t, bool exit, std::uint32_t corr) {
    nd::sync_call c;
    c.time = t, c.thread = thread, c.correlation = corr, c.flags = exit ? nd::host_call_exit : 0u;
    return c;
  };
  std::vector<nd::sync_call> pending{call(1, 10, false, 1), call(2, 11, false, 2), call(1, 20, true, 1), call(2, 12, false, 3),
                                     call(1, 30, false, 4), call(2, 13, true, 3), call(2, 40, true, 2)};
  auto done = nd::complete_sync_calls(pending);
  REQUIRE(pending.size() == 1); // thread 1's second wait
  CHECK(pending[0].correlation == 4);
  nd::sync_pairing_counts n;
  auto syncs = nd::syncs_from_host_calls(done, &n);
  REQUIRE(syncs.size() == 2);
  CHECK(syncs[0].correlation == 1);
  CHECK(syncs[0].end == 20);
  CHECK(syncs[1].correlation == 2); // thread 2's nested call folded into the outer wait
  CHECK(syncs[1].end == 40);
  CHECK(n.nested == 1);
  pending.push_back(call(1, 50, true, 4));
  done = nd::complete_sync_calls(pending);
  CHECK(pending.empty());
  syncs = nd::syncs_from_host_calls(done, &n);
  REQUIRE(syncs.size() == 1);
  CHECK(syncs[0].start == 30);
  CHECK(syncs[0].end == 50);
}

TEST_CASE("ranges are released from the builder as they close; the open ones stay, renumbered, and close later") {
  nvscope::trace live;
  nd::live_ranges ranges(live, [](std::uint64_t t) { return t; }, [](std::uint64_t) { return 0u; }, nvscope::nvtx_registrations{});
  auto ev = [](nd::nvtx_event_kind kind, std::uint64_t t, const char* name, std::uint64_t key = 0) {
    nd::nvtx_event e;
    e.kind = kind, e.time = t, e.os_thread = 1, e.name = name, e.key = key;
    return e;
  };
  using k = nd::nvtx_event_kind;
  ranges.add({ev(k::push, 10, "outer"), ev(k::push, 20, "a"), ev(k::pop, 30, ""), ev(k::start, 35, "io", 9), ev(k::mark, 40, "m"),
              ev(k::push, 50, "b")});
  REQUIRE(ranges.closed().size() == 2); // a, the mark
  CHECK(live.strings[ranges.closed()[0].name] == "a");
  CHECK(ranges.closed()[1].is_mark);
  CHECK(live.ranges.size() == 3); // outer, io, b: open
  ranges.closed().clear();
  ranges.add({ev(k::pop, 60, ""), ev(k::end, 65, "", 9), ev(k::pop, 70, ""), ev(k::pop, 80, "")});
  REQUIRE(ranges.closed().size() == 3);
  CHECK(live.strings[ranges.closed()[0].name] == "outer"); // in the order they opened
  CHECK(ranges.closed()[0].end == 70);
  CHECK(live.strings[ranges.closed()[1].name] == "io");
  CHECK(ranges.closed()[1].end == 65);
  CHECK(live.strings[ranges.closed()[2].name] == "b");
  CHECK(ranges.closed()[2].end == 60);
  CHECK(live.ranges.empty());
  CHECK(ranges.unmatched() == 1); // the last pop
}

TEST_CASE("every window source folds from the start: records before the window are counted, not kept; inside it kept raw") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  const std::uint64_t seed = rng();
  const lf::generator gen(seed, 60, true);
  constexpr std::uint64_t steps = 30, from = 10, to = 20;
  enum class source { capture_guard, profiler_api, nvtx_range, step_schedule, delay_duration };
  for (const source src : {source::capture_guard, source::profiler_api, source::nvtx_range, source::step_schedule, source::delay_duration}) {
    CAPTURE(static_cast<int>(src));
    nd::long_run_limits limits;
    limits.keep_steps = 0, limits.keep_slowest = 0;
    if (src == source::step_schedule) limits.keep_raw = [](std::uint64_t n) { return n >= from && n < to; }; // --skip=10 --active=10
    nd::long_run_folder folder(limits);
    nd::bounded_state b;
    auto same_clock = [](std::uint64_t t) { return t; };
    const nd::range_rule rule = [](std::string_view n, std::string_view) { return n == "capture"; }; // --nvtx-capture=capture
    auto nvtx = [](nd::nvtx_event_kind kind, std::uint64_t t) {
      nd::nvtx_event e;
      e.kind = kind, e.time = t, e.os_thread = 9, e.name = kind == nd::nvtx_event_kind::push ? "capture" : "";
      return std::vector<nd::nvtx_event>{e};
    };
    const std::uint64_t w_begin = gen.step(from).begin, w_end = gen.step(to).begin;
    if (src == source::delay_duration) { // collector::keep_raw_between, known at start
      folder.window_begun(w_begin);
      folder.window_ended(w_end);
    }
    std::uint64_t before_window = 0; // records placed before the window began: none of them kept
    lf::feed f;
    f.run(gen, folder, 0, steps, 256, [&](const lf::step_content& c) {
      const bool opens = c.expected.number == from, closes = c.expected.number == to;
      if (opens) {
        before_window = folder.folded().run.kernels;
        CHECK(folder.window_records().count() == 0);
        CHECK(folder.counts().records_kept <= 3 * c.records.size()); // at most the steps held, not yet summarised
      }
      if (!opens && !closes) return;
      switch (src) {
        case source::capture_guard: opens ? folder.window_begun(c.begin) : folder.window_ended(c.begin); break; // collector::capture_started/stopped
        case source::profiler_api: nd::follow_profiler_switches(b, folder, {nd::profiler_call{c.begin, opens}}, same_clock); break;
        case source::nvtx_range:
          nd::scan_step_events(b, folder, nvtx(opens ? nd::nvtx_event_kind::push : nd::nvtx_event_kind::pop, c.begin), nullptr, same_clock, rule);
          break;
        default: break;
      }
    }, [](std::uint64_t) {});
    folder.finish(lf::origin + steps * lf::period);
    CHECK(before_window > 8 * 60); // steps 0..7 at least were folded by the time the window opened
    // what the window keeps: every record of steps 10..19 (by launch or start), or with the step
    // schedule the records inside those steps' ranges
    std::uint64_t want = 0, ranges = 0;
    for (std::uint64_t s = from; s < to; ++s) {
      const auto c = gen.step(s);
      want += src == source::step_schedule ? c.records.size() - 3 : c.records.size();
      ranges += src == source::step_schedule ? 5 : 8;
    }
    const auto& w = folder.window_records();
    CHECK(w.count() - w.ranges.size() == want);
    CHECK(w.ranges.size() == ranges);
    const auto& t = folder.folded().run;
    CHECK(t.kernels + t.copies + t.memsets + t.syncs + t.api_calls + w.count() - w.ranges.size() == f.records); // each once
    CHECK(t.ranges + t.marks + w.ranges.size() == 8 * steps);
  }
}

TEST_CASE("launch calls wait by correlation for their record, in any order of arrival; the earliest of a runtime and its driver call wins") {
  NVSCOPE_SEEDED_RNG(std::mt19937_64, rng);
  nd::bounded_state b;
  std::vector<std::uint32_t> ids(5000);
  for (std::uint32_t i = 0; i < ids.size(); ++i) ids[i] = 10 + 3 * i;
  std::vector<std::uint32_t> arrival = ids;
  for (std::size_t i = 0; i + 8 < arrival.size(); i += 8) std::shuffle(arrival.begin() + i, arrival.begin() + i + 8, rng); // threads drained in turn
  for (auto id : arrival) b.add_call(nd::timed_host_call{1000 + id, id, id % 7, false});
  b.add_call(nd::timed_host_call{900 + 40, 40, 1, false});  // the runtime call before its driver call: earlier, wins
  b.add_call(nd::timed_host_call{5000 + 43, 43, 1, false}); // later: the first stays
  CHECK(b.calls_waiting() == ids.size());
  std::vector<std::uint32_t> lookups = ids;
  std::shuffle(lookups.begin() + 100, lookups.end(), rng); // records come nearly in order, then in any
  for (auto id : lookups) {
    const auto t = b.launched_at(id, 1);
    CHECK(t == (id == 40 ? 940u : 1000u + id));
  }
  CHECK(b.launched_at(11, 77) == 77); // never logged: its start
  CHECK(b.launched_at(40, 77) == 77); // taken once
  CHECK(b.calls_waiting() == 0);
  CHECK(b.used.size() == ids.size());
}
