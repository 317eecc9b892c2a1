// nvscope-target: nvscope
#pragma once

// The view every diagnosis pass reads, built once from the trace and its attribution: GPU
// operations in start order with their launch call, the innermost range on a thread at any
// time, each thread's synchronisations, the API name of a correlation id (the lookups it is
// made of: detail/lookups.hpp). Internal.

#include <nvscope/analyze/detail/buckets.hpp>
#include <nvscope/analyze/kernel_runs.hpp>
#include <nvscope/analyze/detail/inlining.hpp>
#include <nvscope/analyze/detail/launch_lookup.hpp>
#include <nvscope/analyze/detail/scratch.hpp>
#include <nvscope/analyze/diagnose/detail/lookups.hpp>
#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/stats.hpp>
#include <nvscope/analyze/diagnosis.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {
namespace diag {

// A figure in ns (a median, a sum of shares) as an integer, saturating: a double of 2^64 or
// more (durations near the 64-bit clock's end round up to it) has no conversion; below 0 is 0.
inline std::uint64_t whole_ns(double v) noexcept {
  if (!(v > 0)) return 0;
  return v < 18446744073709549568.0 ? static_cast<std::uint64_t>(v) : ~std::uint64_t{0}; // the largest double below 2^64
}

enum class op_kind : std::uint8_t { kernel, copy, memset };

// One GPU operation: 32 bytes, since the passes stream millions of them. The record's index,
// kind and whether an API record gives its launch call share one word; its stream and device
// are read from the record where a pass asks (timeline::stream_of, device_of), and its call's
// end lives beside the operations (timeline::call_end). No member initialisers: the timeline's
// column of them is sized once, unset, and each written in full by add_op.
struct gpu_op {
  static constexpr unsigned kind_shift = 30, call_bit = 29;
  static constexpr std::uint32_t most_records = 1u << call_bit; // of one kind (build_timeline refuses more)

  timestamp_ns start;
  timestamp_ns end;
  timestamp_ns call_start; // launch call start (API record, else launch record); 0: unknown
  std::uint32_t thread;    // the launching thread; diagnosis_none: unknown
  std::uint32_t record;    // index into kernels, copies or memsets | has_call << call_bit | kind << kind_shift

  std::uint32_t index() const noexcept { return record & (most_records - 1); } // its correlation and owner: timeline's correlation_of, owner_of
  op_kind kind() const noexcept { return static_cast<op_kind>(record >> kind_shift); }
  bool has_call() const noexcept { return (record >> call_bit & 1u) != 0; } // an API record gives the call's end
};
static_assert(sizeof(gpu_op) == 32, "gpu_op: 32 bytes, two to a cache line");

// Operation indexes grouped by a key: the groups in key order, operations in start order
// inside each (numbered by first appearance, then bucketed: linear). Keys below `dense` are
// looked up in a table, others hashed, and only where the key changes from one operation to
// the next.
struct op_groups {
  std::vector<std::uint64_t> keys;  // by group
  scratch_vector<std::uint32_t> first; // group g: order[first[g], first[g + 1])
  scratch_column<std::uint32_t> order; // every place written once

  std::size_t size() const noexcept { return keys.size(); }
  const std::uint32_t* begin(std::size_t g) const noexcept { return order.data() + first[g]; }
  const std::uint32_t* end(std::size_t g) const noexcept { return order.data() + first[g + 1]; }
};

// The view. Pointers stay valid while the trace and attribution live.
struct timeline {
  const trace* t = nullptr;
  const attribution* a = nullptr;
  scratch_column<gpu_op> ops; // by start (huge pages where offered: millions of them)
  scratch_vector<timestamp_ns> call_ends; // per op where any_call: its API call's end (read where has_call); else empty
  static constexpr std::uint32_t no_name = 0xffffffffu;
  scratch_column<std::uint32_t> names;     // per op: its kernel name's number (names numbered as they first come), no_name for copies and memsets
  std::vector<string_id> kernel_names;     // by number: the kernel name
  std::vector<std::uint32_t> name_ops;     // by number: the operations of that name
  std::vector<std::uint32_t> transfers; // the copies' and memsets' places in `ops`, in its order
  op_groups by_stream;     // ops by (device, stream)
  thread_table threads;    // thread index -> slot of the three per-thread tables below
  // Per thread slot (huge pages where offered: a range per operator makes millions):
  std::vector<scratch_vector<std::uint32_t>> ranges_by_thread; // push/pop ranges by start
  std::vector<scratch_vector<timestamp_ns>> range_starts_by_thread;
  std::vector<scratch_vector<std::pair<timestamp_ns, timestamp_ns>>> syncs_by_thread; // by start
  call_table calls; // correlation -> runtime call (else driver)
  timestamp_ns begin = 0; // first operation's start
  timestamp_ns end = 0;   // last operation's end
  time_window window{};   // what is diagnosed, by start time; end == 0: everything
  bool any_call = false;  // some operation's launch call is known from an API record (gpu_op::has_call)

  bool inside(timestamp_ns start) const noexcept { return in_window(window, start); }

  // Innermost push/pop range open on `thread` at `time`, or none. `hints`: see lookup_hints.
  NVSCOPE_DETAIL_INLINE std::uint32_t range_at(std::uint32_t thread, timestamp_ns time, lookup_hints* hints = nullptr) const noexcept {
    const auto slot = hints ? hints->slot(threads, thread) : threads.slot(thread);
    if (slot >= ranges_by_thread.size()) return diagnosis_none;
    const auto& starts = range_starts_by_thread[slot];
    const auto place = hints && slot < hints->ranges.size()
                           ? place_after(starts, time, hints->ranges[slot])
                           : static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), time) - starts.begin());
    if (place == 0) return diagnosis_none;
    std::uint32_t r = ranges_by_thread[slot][place - 1];
    while (r != diagnosis_none && r < a->range_end.size() && a->range_end[r] < time) r = a->parent[r];
    return r < t->ranges.size() ? r : diagnosis_none;
  }

  // The end of the last synchronisation `thread` sat in at some moment of [from, to], or 0.
  timestamp_ns last_sync_end(std::uint32_t thread, timestamp_ns from, timestamp_ns to, lookup_hints* hints = nullptr) const noexcept {
    const auto slot = hints ? hints->slot(threads, thread) : threads.slot(thread);
    if (slot >= syncs_by_thread.size()) return 0;
    const auto& s = syncs_by_thread[slot];
    const auto key = std::make_pair(to, ~timestamp_ns{0});
    auto it = s.begin() + static_cast<std::ptrdiff_t>(hints && slot < hints->syncs.size()
                                                          ? place_after(s, key, hints->syncs[slot])
                                                          : static_cast<std::size_t>(std::upper_bound(s.begin(), s.end(), key) - s.begin()));
    timestamp_ns last = 0;
    for (int back = 0; it != s.begin() && back < 8; ++back) { // syncs of one thread do not overlap
      --it;
      if (it->second >= from) last = std::max(last, it->second);
    }
    return last;
  }

  // The innermost push/pop range open where `op` was launched (attribution's owner), or none.
  std::uint32_t owner_of(const gpu_op& op) const noexcept {
    const auto kind = op.kind();
    const record_indexes& owners = kind == op_kind::kernel ? a->kernel_owner : kind == op_kind::copy ? a->copy_owner : a->memset_owner;
    return op.index() < owners.size() ? owners[op.index()] : diagnosis_none;
  }

  // f(the record of `op`), whichever kind it is.
  template <class F>
  decltype(auto) with_record(const gpu_op& op, F&& f) const {
    const auto kind = op.kind();
    return kind == op_kind::kernel ? f(t->kernels[op.index()]) : kind == op_kind::copy ? f(t->copies[op.index()]) : f(t->memsets[op.index()]);
  }
  std::uint32_t correlation_of(const gpu_op& op) const noexcept {
    return with_record(op, [](const auto& r) { return r.correlation; });
  }
  std::uint32_t stream_of(const gpu_op& op) const noexcept {
    return with_record(op, [](const auto& r) { return r.stream; });
  }
  std::uint16_t device_of(const gpu_op& op) const noexcept {
    return with_record(op, [this](const auto& r) { return nvscope::device_of(*t, r); });
  }
  // The end of operation i's launch call (its start where no API record gives one).
  timestamp_ns call_end(std::size_t i) const noexcept { return ops[i].has_call() ? call_ends[i] : ops[i].call_start; }

  string_id call_name(std::uint32_t correlation) const noexcept {
    const auto* c = calls.find(correlation);
    return c == nullptr ? 0 : c->name;
  }
};

// range_at's answers for lookups whose times mostly grow and whose thread mostly stays (the
// idle walk's: each stretch's start, on the thread that launched the operation after it). The
// last answer is held here with what keeps it true: while the thread stays, no range of its
// starts and the range found has not ended, a later time finds it again (the ranges the walk
// up passed had ended already), without the lookup's reads of the thread's columns. Else
// range_at looks up with `hints`.
class range_cursor {
 public:
  range_cursor(const timeline& tl, lookup_hints& hints) noexcept : tl_(&tl), hints_(&hints) {}
  NVSCOPE_DETAIL_INLINE std::uint32_t at(std::uint32_t thread, timestamp_ns time) {
    if (thread == thread_ && time >= time_ && time < next_start_ && time <= end_) {
      time_ = time;
      return range_;
    }
    return look_up(thread, time);
  }

 private:
  std::uint32_t look_up(std::uint32_t thread, timestamp_ns time) {
    const timeline& tl = *tl_;
    range_ = tl.range_at(thread, time, hints_);
    thread_ = thread;
    time_ = time;
    next_start_ = 0; // held only where the thread has a slot with its ranges (else none kept)
    const auto slot = hints_->slot(tl.threads, thread);
    if (slot >= tl.range_starts_by_thread.size() || slot >= hints_->ranges.size()) return range_;
    const auto& starts = tl.range_starts_by_thread[slot];
    const std::size_t place = hints_->ranges[slot]; // range_at's: the first range started after `time`
    next_start_ = place < starts.size() ? starts[place] : ~timestamp_ns{0};
    end_ = range_ < tl.a->range_end.size() ? tl.a->range_end[range_] : ~timestamp_ns{0}; // none: none again later
    return range_;
  }
  const timeline* tl_;
  lookup_hints* hints_;
  std::uint32_t thread_ = diagnosis_none, range_ = diagnosis_none;
  timestamp_ns time_ = 0, next_start_ = 0, end_ = 0; // next_start_: the thread's next range's start after time_
};

// Operation `at` of `ops` (tl's) made of record r, the i-th of its kind, launched by launch l
// (or none): its thread and call start from the launch record, the call's from the API record
// where the table has one (`any_calls`: the table is not empty). Written field by field where it
// stays.
template <class Record>
NVSCOPE_DETAIL_INLINE void make_op(timeline& tl, gpu_op* ops, std::size_t at, op_kind kind, const Record& r, std::uint32_t i, std::uint32_t l,
                                   const launch_record* launches, std::size_t nl, bool any_calls) {
  std::uint32_t record = i | static_cast<std::uint32_t>(kind) << gpu_op::kind_shift, thread = diagnosis_none;
  timestamp_ns call_start = 0;
  if (l != diagnosis_none && l < nl) {
    thread = launches[l].thread;
    call_start = launches[l].time;
  }
  if (any_calls)
    if (const auto* c = tl.calls.find(r.correlation)) {
      call_start = c->start;
      record |= 1u << gpu_op::call_bit;
      if (!tl.any_call) tl.call_ends.resize(tl.ops.size()); // the first call known: a column for every operation
      tl.call_ends[at] = c->end;
      tl.any_call = true;
    }
  gpu_op& op = ops[at];
  op.start = r.start;
  op.end = r.end;
  op.call_start = call_start;
  op.thread = thread;
  op.record = record;
}

// Writes operation `at` (the column sized already): record i of one kind.
template <class Record>
void add_op(timeline& tl, std::size_t at, op_kind kind, const Record& r, std::uint32_t i, const record_indexes& launch_of) {
  const trace& t = *tl.t;
  make_op(tl, tl.ops.data(), at, kind, r, i, i < launch_of.size() ? launch_of[i] : diagnosis_none, t.launches.data(), t.launches.size(), !tl.calls.empty());
}

// The records of one kind that the timeline takes (complete, started inside the window), by
// (start, end), ties in record order: sorted only where they are not already (a collector's
// records mostly are). Where every record is taken and they are in order already (the rule),
// no list is kept: the i-th is record i, read straight from the records.
struct op_order {
  scratch_vector<std::uint32_t> list; // empty where `all`
  std::size_t count = 0;
  bool all = false;
  std::uint32_t operator[](std::size_t i) const noexcept { return all ? static_cast<std::uint32_t>(i) : list[i]; }
  std::size_t size() const noexcept { return count; }
};

template <class Record>
op_order ops_in_order(const timeline& tl, const std::vector<Record>& records) {
  op_order out;
  bool sorted = true;
  std::pair<timestamp_ns, timestamp_ns> last{0, 0};
  std::size_t taken = 0;
  for (std::uint32_t i = 0; i < records.size(); ++i) { // first, only whether all are taken in order
    const auto& r = records[i];
    if (r.end == 0 || r.end < r.start || !tl.inside(r.start)) break;
    const std::pair<timestamp_ns, timestamp_ns> at{r.start, r.end};
    if (at < last) break;
    last = at;
    ++taken;
  }
  out.count = taken;
  out.all = taken == records.size();
  if (out.all) return out;
  auto& order = out.list;
  order.reserve(records.size());
  for (std::uint32_t i = 0; i < taken; ++i) order.push_back(i);
  for (std::uint32_t i = static_cast<std::uint32_t>(taken); i < records.size(); ++i) {
    const auto& r = records[i];
    if (r.end == 0 || r.end < r.start || !tl.inside(r.start)) continue; // incomplete: counted by analyze's losses
    const std::pair<timestamp_ns, timestamp_ns> at{r.start, r.end};
    sorted = sorted && !(at < last);
    last = at;
    order.push_back(i);
  }
  const auto by_start = [&](std::uint32_t x, std::uint32_t y) {
    return records[x].start != records[y].start ? records[x].start < records[y].start : records[x].end < records[y].end;
  };
  if (!sorted) std::stable_sort(order.begin(), order.end(), by_start);
  out.count = order.size();
  return out;
}

// Keys numbered as they first came, put in ascending order: returns each number's place.
inline std::vector<std::uint32_t> key_places(std::vector<std::uint64_t>& keys) {
  std::vector<std::uint32_t> rank(keys.size()), place(keys.size());
  for (std::uint32_t g = 0; g < rank.size(); ++g) rank[g] = g;
  std::sort(rank.begin(), rank.end(), [&](std::uint32_t x, std::uint32_t y) { return keys[x] < keys[y]; });
  for (std::uint32_t r = 0; r < rank.size(); ++r) place[rank[r]] = r;
  std::sort(keys.begin(), keys.end());
  return place;
}

// Operations by (device, stream), numbered as add_operations makes them (a run of one stream
// costs a compare) and counted a run at a time, then placed by one pass: a stable grouping by
// key, without a pass that reads every operation again for its key.
class stream_numbering {
 public:
  explicit stream_numbering(std::size_t ops) : group_(ops) {}
  // Operation `at` (of the `ops` the numbering was made for, each once, in order): record r's
  // stream. A run's operations are counted where it ends, not one by one.
  template <class Record>
  void add(const trace& t, std::size_t at, const Record& r) {
    const std::uint64_t key = (static_cast<std::uint64_t>(device_of(t, r)) << 32) | r.stream;
    if (last_ == no_index || key != last_key_) start_run(key, at);
    group_[at] = last_;
  }
  op_groups groups() {
    if (last_ != no_index) count_[last_] += static_cast<std::uint32_t>(group_.size() - run_start_); // the last run
    last_ = no_index;
    op_groups out;
    out.keys = std::move(numbers_.keys());
    const auto place = key_places(out.keys);
    out.first.assign(place.size() + 1, 0);
    for (std::uint32_t g = 0; g < place.size(); ++g) out.first[place[g] + 1] = count_[g];
    for (std::size_t p = 0; p < place.size(); ++p) out.first[p + 1] += out.first[p];
    out.order.resize(group_.size());
    auto cursor = out.first;
    // A run of one stream (the rule) places its operations through one cursor, written back to
    // the table where the run ends.
    std::uint32_t* const order = out.order.data();
    const std::uint32_t* const group = group_.data();
    std::uint32_t run_group = no_index, next = 0, *slot = nullptr;
    for (std::uint32_t i = 0, n = static_cast<std::uint32_t>(group_.size()); i < n; ++i) {
      if (group[i] != run_group) {
        if (slot) *slot = next;
        run_group = group[i];
        slot = &cursor[place[run_group]];
        next = *slot;
      }
      order[next++] = i;
    }
    return out;
  }

 private:
  // The run of key `key` starts at operation `at`: the one before it (from run_start_) counted.
  void start_run(std::uint64_t key, std::size_t at) {
    if (last_ != no_index) count_[last_] += static_cast<std::uint32_t>(at - run_start_);
    last_key_ = key;
    last_ = numbers_.of(key);
    if (last_ == count_.size()) count_.push_back(0);
    run_start_ = at;
  }
  key_numbers numbers_;
  scratch_column<std::uint32_t> group_; // per operation: its stream's number (each written by add)
  std::vector<std::uint32_t> count_;    // per number: its operations
  std::uint64_t last_key_ = 0;
  std::uint32_t last_ = no_index;
  std::size_t run_start_ = 0; // the first operation of last_'s run
};

// Kernel names numbered as the operations are made (tl.kernel_names, in the order key_numbers
// numbers them: a name of the string table by an array read, any other id through its hash
// table), each name's operations counted (tl.name_ops); a run of one name costs a compare.
class name_numbering {
 public:
  name_numbering(const trace& t, timeline& tl) : tl_(&tl), numbers_(t.strings.size()) {
    tl.kernel_names.clear(); // so that a name's number is its place there
    tl.name_ops.clear();
  }
  std::uint32_t of(string_id name) {
    if (last_number_ == timeline::no_name || name != last_name_) {
      last_name_ = name;
      last_number_ = numbers_.of(name);
      if (last_number_ == tl_->kernel_names.size()) { // first seen: numbers come 0, 1, 2, ...
        tl_->kernel_names.push_back(name);
        tl_->name_ops.push_back(0);
      }
    }
    ++tl_->name_ops[last_number_];
    return last_number_;
  }

 private:
  timeline* tl_;
  key_numbers numbers_; // string id -> its number, which indexes tl.kernel_names
  string_id last_name_ = 0;
  std::uint32_t last_number_ = timeline::no_name;
};

// The kernels kernels[k ..) whose (start, end) is not after `until` (the next transfer's), made
// operations as add_op makes them (with their names and streams numbered), from operation `at`;
// returns the first kernel left.
inline std::size_t take_kernel_run(timeline& tl, const op_order& kernels, std::size_t k, std::pair<timestamp_ns, timestamp_ns> until, std::size_t& at,
                                   name_numbering& names, stream_numbering& streams) {
  const trace& t = *tl.t;
  const kernel_record* const records = t.kernels.data();
  const std::uint32_t* const launch_of = tl.a->kernel_launch.data();
  const std::size_t launches_known = tl.a->kernel_launch.size(), nl = t.launches.size();
  const launch_record* const launches = t.launches.data();
  gpu_op* const ops = tl.ops.data();
  std::uint32_t* const name_col = tl.names.data();
  const bool any_calls = !tl.calls.empty();
  timestamp_ns end = tl.end;
  std::size_t n = at;
  for (; k < kernels.size(); ++k) {
    const auto i = kernels[k];
    const kernel_record& r = records[i];
    if (until < std::make_pair(r.start, r.end)) break;
    make_op(tl, ops, n, op_kind::kernel, r, i, i < launches_known ? launch_of[i] : diagnosis_none, launches, nl, any_calls);
    name_col[n] = names.of(r.name);
    streams.add(t, n, r);
    end = r.end > end ? r.end : end;
    ++n;
  }
  tl.end = end;
  at = n;
  return k;
}

// Every operation, by (start, end), ties in kind order (kernels, copies, memsets): the three
// kinds' ordered runs merged as the operations are made, each written once where it stays (the
// columns sized first: their number is known); the last end; and the operations by stream. The
// kernels up to the next transfer are taken as one run (most operations are kernels): a compare
// a kernel, not the three-way choice.
inline void add_operations(timeline& tl) {
  const trace& t = *tl.t;
  const attribution& a = *tl.a;
  for (const auto n : {t.kernels.size(), t.copies.size(), t.memsets.size()})
    if (n > gpu_op::most_records) throw std::length_error("nvscope: diagnose: more than 2^29 GPU records of one kind (gpu_op's index)");
  const auto kernels = ops_in_order(tl, t.kernels), copies = ops_in_order(tl, t.copies), memsets = ops_in_order(tl, t.memsets);
  const std::size_t total = kernels.size() + copies.size() + memsets.size();
  tl.ops.resize(total); // unset: every place written below
  tl.names.resize(total);
  name_numbering names(t, tl);
  stream_numbering streams(total);
  std::size_t at = 0;
  auto take = [&](op_kind kind, const auto& r, std::uint32_t i, const record_indexes& launch_of, std::uint32_t name) {
    if (kind != op_kind::kernel) tl.transfers.push_back(static_cast<std::uint32_t>(at));
    add_op(tl, at, kind, r, i, launch_of);
    tl.names[at] = name;
    streams.add(t, at, r);
    tl.end = std::max(tl.end, r.end);
    ++at;
  };
  constexpr std::pair<timestamp_ns, timestamp_ns> done{~timestamp_ns{0}, ~timestamp_ns{0}};
  auto head = [&](const auto& records, const op_order& order, std::size_t i) {
    return i < order.size() ? std::make_pair(records[order[i]].start, records[order[i]].end) : done;
  };
  std::size_t k = 0, c = 0, m = 0;
  auto kk = head(t.kernels, kernels, 0), cc = head(t.copies, copies, 0), mm = head(t.memsets, memsets, 0);
  while (at < total) {
    k = take_kernel_run(tl, kernels, k, std::min(cc, mm), at, names, streams);
    kk = head(t.kernels, kernels, k);
    if (at == total) break;
    if (c < copies.size() && !(mm < cc)) { // no kernel before it: a copy, else a memset
      take(op_kind::copy, t.copies[copies[c]], copies[c], a.copy_launch, timeline::no_name);
      cc = head(t.copies, copies, ++c);
    } else {
      take(op_kind::memset, t.memsets[memsets[m]], memsets[m], a.memset_launch, timeline::no_name);
      mm = head(t.memsets, memsets, ++m);
    }
  }
  tl.by_stream = streams.groups();
}

inline void index_ranges_and_syncs(timeline& tl) {
  const trace& t = *tl.t;
  const std::size_t slots = tl.threads.size();
  tl.ranges_by_thread.assign(slots, {});
  tl.range_starts_by_thread.assign(slots, {});
  tl.syncs_by_thread.assign(slots, {});
  // Each thread's push/pop ranges and their starts, in one read of the records; a thread's are
  // sorted (and their starts taken again) only where they came out of order (seldom).
  std::vector<char> in_order(slots, 1);
  for (std::uint32_t i = 0; i < t.ranges.size(); ++i) {
    const auto& r = t.ranges[i];
    if (r.is_mark || !r.is_push_pop) continue;
    const auto s = tl.threads.slot(r.thread);
    auto& starts = tl.range_starts_by_thread[s];
    in_order[s] = in_order[s] && (starts.empty() || starts.back() <= r.start);
    tl.ranges_by_thread[s].push_back(i);
    starts.push_back(r.start);
  }
  for (std::size_t s = 0; s < slots; ++s) {
    if (in_order[s]) continue;
    auto& v = tl.ranges_by_thread[s];
    std::sort(v.begin(), v.end(), [&](std::uint32_t x, std::uint32_t y) {
      return t.ranges[x].start != t.ranges[y].start ? t.ranges[x].start < t.ranges[y].start : x < y;
    });
    for (std::size_t k = 0; k < v.size(); ++k) tl.range_starts_by_thread[s][k] = t.ranges[v[k]].start;
  }
  for (const auto& s : t.syncs)
    if (s.end >= s.start && s.end != 0) tl.syncs_by_thread[tl.threads.slot(s.thread)].emplace_back(s.start, s.end);
  for (auto& v : tl.syncs_by_thread) std::sort(v.begin(), v.end());
}

// The view of `t`'s operations inside `window`; `threads`: the trace's thread table.
inline timeline build_timeline(const trace& t, const attribution& a, const time_window& window, const thread_table& threads) {
  timeline tl;
  tl.t = &t;
  tl.a = &a;
  tl.window = window;
  tl.threads = threads;
  tl.calls.build(t.api_calls);
  index_ranges_and_syncs(tl);
  add_operations(tl);
  if (!tl.ops.empty()) tl.begin = tl.ops.front().start; // tl.end: set by add_operations
  return tl;
}

// The same, the thread table read here (the passes called alone).
inline timeline build_timeline(const trace& t, const attribution& a, const time_window& window = {}) {
  return build_timeline(t, a, window, thread_table(t));
}

} // namespace diag
} // namespace detail
} // namespace v1
} // namespace nvscope
