// nvscope-target: nvscope
#pragma once

// The selection behind analyze/stats.hpp's entry points (stats_of, quantiles_of,
// weighted_stats_of): values at chosen ranks found by histograms over the values' range, read in
// place, never moved; their moments in one read. Not promised: call the entry points.

#include <nvscope/analyze/detail/inlining.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>

namespace nvscope {
inline namespace v1 {
namespace detail {


// Calls f(v) for each value of [first, last), in order: the value source of `ranks_of` and
// `stats_of` over one array (a caller may pass any callable that does the same over values it
// computes or over several arrays, to take statistics without copying them into one).
struct each_value {
  const std::uint64_t* first;
  const std::uint64_t* last;
  template <class F>
  void operator()(F&& f) const {
    for (auto* p = first; p != last; ++p) f(*p);
  }
};

// The histograms a level counts into, in turn (count_level), summed once the level is read: a run
// of equal values is spread over them. Its callers allocate this many; count_four fills them.
inline constexpr std::size_t histogram_ways = 4;

// One read of a histogram level: each value v that `each` yields within [lo, lo + range] counted
// in bucket (v - lo) >> shift of one of the histogram_ways histograms in turn (histogram w at
// counts + w * stride).
template <class Each, class Count>
void count_level(const Each& each, Count* counts, std::size_t stride, std::uint64_t lo, std::uint64_t range, int shift) noexcept {
  std::uint32_t turn = 0;
  each([counts, stride, &turn, lo, range, shift](std::uint64_t v) {
    if (v - lo <= range) ++counts[(turn++ % histogram_ways) * stride + ((v - lo) >> shift)];
  });
}

// Steps of count_level's read of an array: p[0 .. 3] each into its own histogram, and one value
// alone.
static_assert(histogram_ways == 4, "count_four fills four histograms, one a value of its step");
template <class Count>
NVSCOPE_DETAIL_INLINE void count_four(const std::uint64_t* p, Count* counts, std::size_t stride, std::uint64_t lo, std::uint64_t range, int shift) noexcept {
  const std::uint64_t a = p[0] - lo, b = p[1] - lo, c = p[2] - lo, d = p[3] - lo;
  if (a <= range) ++counts[a >> shift];
  if (b <= range) ++counts[stride + (b >> shift)];
  if (c <= range) ++counts[2 * stride + (c >> shift)];
  if (d <= range) ++counts[3 * stride + (d >> shift)];
}
template <class Count>
NVSCOPE_DETAIL_INLINE void count_one(std::uint64_t v, Count* counts, std::uint64_t lo, std::uint64_t range, int shift) noexcept {
  if (v - lo <= range) ++counts[(v - lo) >> shift];
}

// The same read of an array, four values a step, each into its own histogram: no turn kept.
template <class Count>
void count_level(const each_value& each, Count* counts, std::size_t stride, std::uint64_t lo, std::uint64_t range, int shift) noexcept {
  const std::uint64_t* p = each.first;
  for (; each.last - p >= 4; p += 4) count_four(p, counts, stride, lo, range, shift);
  for (; p != each.last; ++p) count_one(*p, counts, lo, range, shift);
}

// Where rank k lies in one histogram level over [lo, hi], buckets 2^shift wide (count[b]: the
// values of bucket b): the bucket, how many values lie under it, and its values' bounds.
struct level_bucket {
  std::size_t b;
  std::uint64_t below, bottom, top; // bucket b's values: [bottom, top]
};
template <class Count>
level_bucket bucket_of_rank(const Count* count, std::uint64_t k, std::uint64_t lo, std::uint64_t hi, int shift) noexcept {
  level_bucket at{0, 0, 0, 0};
  while (at.below + count[at.b] <= k) at.below += count[at.b++];
  at.bottom = lo + (static_cast<std::uint64_t>(at.b) << shift);
  const std::uint64_t width = shift ? (std::uint64_t{1} << shift) - 1 : 0;
  at.top = hi - at.bottom <= width ? hi : at.bottom + width;
  return at;
}

// Ranks k and k + 1 where k is the largest value of bucket `at` and k + 1 the smallest of the
// next bucket that holds values (every value `each` yields lies within [lo, hi]).
template <class Each, class Count>
std::pair<std::uint64_t, std::uint64_t> ranks_across(const Each& each, const Count* count, const level_bucket& at, std::uint64_t lo, std::uint64_t hi,
                                                     int shift) noexcept {
  std::size_t c = at.b + 1;
  while (count[c] == 0) ++c;
  const std::uint64_t c_bottom = lo + (static_cast<std::uint64_t>(c) << shift);
  if (shift == 0) return {at.bottom, c_bottom};
  std::uint64_t largest = at.bottom, smallest = hi;
  each([&largest, &smallest, bottom = at.bottom, span = at.top - at.bottom, c_bottom, c_span = hi - c_bottom](std::uint64_t v) {
    if (v - bottom <= span && v > largest) largest = v;
    if (v - c_bottom <= c_span && v < smallest) smallest = v;
  });
  return {largest, smallest};
}

// The values at ranks k < m and k + 1 (`next`) or k alone of v[0 .. m), all within
// [lo, lo + range]; writes over v (a copy of the values). A histogram of about m / 2 buckets
// (8 to 256) over the range finds the bucket holding rank k, whose values are then moved to the
// front, and so on until they are all one value or at most 16 are left (nth_element on those).
// Invariant: the ranks sought are ranks k (and k + 1) of v[0 .. m).
inline std::pair<std::uint64_t, std::uint64_t> select_ranks(std::uint64_t* v, std::uint32_t m, std::uint64_t k, bool next, std::uint64_t lo,
                                                           std::uint64_t range) noexcept {
  constexpr std::uint32_t few = 16;
  std::uint32_t count[257]; // a bucket past the last, empty: the search for a next rank's bucket stops there
  next = next && k + 1 < m;  // else rank k alone (a caller's count that was wrong)
  for (;;) {
    if (range == 0) return {lo, lo};
    if (m <= few) {
      std::nth_element(v, v + k, v + m);
      return {v[k], next && k + 1 < m ? *std::min_element(v + k + 1, v + m) : v[k]};
    }
    int bits = 0, bucket_bits = 3; // the range's bits; the buckets': m / 2 rounded down to a power of two, 8 to 256
    while (bits < 64 && (range >> bits) != 0) ++bits;
    while (bucket_bits < 8 && (std::uint32_t{2} << (bucket_bits + 1)) <= m) ++bucket_bits;
    const int shift = bits > bucket_bits ? bits - bucket_bits : 0;
    const std::size_t buckets = static_cast<std::size_t>(range >> shift) + 1;
    std::fill(count, count + buckets + 1, 0u);
    for (std::uint32_t i = 0; i < m; ++i) ++count[(v[i] - lo) >> shift];
    const auto at = bucket_of_rank(count, k, lo, lo + range, shift);
    k -= at.below;
    if (next && k + 1 >= count[at.b]) return ranks_across(each_value{v, v + m}, count, at, lo, lo + range, shift);
    std::uint32_t kept = 0; // every rank sought in the bucket: its values moved to the front, in place
    for (std::uint32_t i = 0; i < m; ++i) {
      const std::uint64_t x = v[i];
      v[kept] = x;
      kept += x - at.bottom <= at.top - at.bottom;
    }
    m = kept;
    lo = at.bottom;
    range = at.top - at.bottom;
  }
}

// The values at ranks k and k + 1 (`next`) or k alone of the values `each` yields within
// [lo, lo + range], when there are at most `most` of them: selected from a copy on the stack.
template <std::size_t most, class Each>
std::pair<std::uint64_t, std::uint64_t> ranks_in_copy(const Each& each, std::uint64_t k, bool next, std::uint64_t lo,
                                                     std::uint64_t range) noexcept {
  std::uint64_t copy[most];
  std::uint32_t m = 0;
  each([&copy, &m, lo, range](std::uint64_t v) {
    if (v - lo <= range && m < most) copy[m++] = v; // at most `most` by the caller's count; never past the copy
  });
  if (m == 0) return {lo, lo}; // a caller's count that was wrong: no value to select
  return select_ranks(copy, m, k < m ? k : m - 1, next, lo, range);
}

// One level of ranks_of over the values `each` yields within [lo, hi]: counted in
// histogram_ways histograms of up to 2^bits buckets each (histogram w at counts + (w << bits)),
// summed into the first, and the bucket holding rank k found; `shift` set to the level's.
template <class Each, class Count>
level_bucket rank_level(const Each& each, Count* counts, int bits, std::uint64_t lo, std::uint64_t hi, std::uint64_t k, int& shift) noexcept {
  const std::size_t stride = std::size_t{1} << bits;
  const std::uint64_t range = hi - lo;
  int range_bits = 0;
  while (range_bits < 64 && (range >> range_bits) != 0) ++range_bits;
  shift = range_bits > bits ? range_bits - bits : 0;
  const std::size_t buckets = static_cast<std::size_t>(range >> shift) + 1;
  for (std::size_t w = 0; w < histogram_ways; ++w) std::fill(counts + w * stride, counts + w * stride + buckets, Count{0});
  count_level(each, counts, stride, lo, range, shift);
  for (std::size_t i = 0; i < buckets; ++i) counts[i] += counts[stride + i] + counts[2 * stride + i] + counts[3 * stride + i];
  return bucket_of_rank(counts, k, lo, hi, shift);
}

// The values at 0-based ranks `k` and, when `next`, `k + 1` (else the first again) of the n
// values `each` yields, all within [lo, hi]. Reads the values, never moves them: histograms of
// 1,024 buckets narrow the range, a level per 10 bits of it, until a bucket holds the ranks
// alone or few enough values to select from a copy on the stack. From 16,384 values on, a
// level has 4,096 buckets (12 bits; 64 KB of counts on the heap, where there is memory for
// them), so that a span of up to 4,096 ns, one short kernel's usual spread, is one level's
// buckets of 1 ns. A level re-reads the values where its bucket holds many of them or the
// level after it is the last; else (once: `copies`) it reads a copy of its bucket's (on no
// memory for it, the values again). Linear: each level is one read of the values, and a level
// takes 10 or 12 bits off the range. Stack: 40 KB, twice at most.
template <class Each>
std::pair<std::uint64_t, std::uint64_t> ranks_of(const Each& each, std::uint64_t n, std::uint64_t k, bool next, std::uint64_t lo,
                                                std::uint64_t hi, bool copies = true) noexcept {
  constexpr int bucket_bits = 10, many_bits = 12;
  constexpr std::size_t bucket_count = std::size_t{1} << bucket_bits;
  constexpr std::uint64_t many_from = std::uint64_t{1} << 14; // values: from here the four histograms' counts are no more than the values
  if (lo == hi) return {lo, lo}; // every value one: no counts asked for
  std::uint64_t counts[histogram_ways][bucket_count];
  const std::unique_ptr<std::uint32_t[]> many( // 32-bit counts: at most 2^32 - 1 values
      n >= many_from && n <= 0xffffffffu ? new (std::nothrow) std::uint32_t[histogram_ways << many_bits] : nullptr);
  for (;;) { // invariant: the n values within [lo, hi] hold the ranks sought, counted among them
    if (lo == hi) return {lo, lo};
    if (n <= bucket_count) return ranks_in_copy<bucket_count>(each, k, next, lo, hi - lo);
    const bool wide = many && n >= many_from;
    int shift = 0;
    const auto at = wide ? rank_level(each, many.get(), many_bits, lo, hi, k, shift) : rank_level(each, counts[0], bucket_bits, lo, hi, k, shift);
    const std::uint64_t in_b = wide ? many[at.b] : counts[0][at.b]; // bucket at.b's values
    k -= at.below;
    const std::uint64_t bottom = at.bottom, top = at.top;
    if (!next || k + 1 < in_b) { // every rank sought in bucket at.b
      if (copies && in_b > bucket_count && in_b <= n / 8 && top - bottom >= bucket_count) {
        const std::unique_ptr<std::uint64_t[]> copy(new (std::nothrow) std::uint64_t[in_b]);
        if (copy) { // else (no memory for it) the next level reads the values again
          std::uint64_t* out = copy.get();
          each([&out, bottom, span = top - bottom](std::uint64_t v) {
            if (v - bottom <= span) *out++ = v;
          });
          return ranks_of(each_value{copy.get(), out}, in_b, k, next, bottom, top, false);
        }
      }
      n = in_b;
      lo = bottom;
      hi = top;
      continue;
    }
    // rank k is bucket at.b's largest, k + 1 beyond it
    return wide ? ranks_across(each, many.get(), at, lo, hi, shift) : ranks_across(each, counts[0], at, lo, hi, shift);
  }
}

// The search of values_at_ranks (below): the ranks sought, and the ranges ("parts") holding
// those not found yet, disjoint, each with how many of the values lie in it and under it.
template <class Each>
class rank_search {
 public:
  static constexpr std::size_t most = 4, bucket_count = 1024, ways = histogram_ways; // ways: count_level's
  static constexpr int bucket_bits = 10;

  rank_search(const Each& each, std::uint64_t n, const std::uint64_t* ranks, std::size_t m, std::uint64_t* out) noexcept
      : each_(each), n_(n), ranks_(ranks), m_(m < most ? m : most), out_(out) {}

  void run(std::uint64_t lo, std::uint64_t hi) noexcept {
    if (m_ == 0) return;
    if (n_ == 0 || lo >= hi) {
      for (std::size_t i = 0; i < m_; ++i) out_[i] = lo;
      return;
    }
    // The copies (32 KB) and, past 1,024 values, the histograms (64 KB).
    copies_.reset(n_ <= 0xffffffffu ? new (std::nothrow) std::uint64_t[most * bucket_count] : nullptr);
    if (copies_ && n_ > bucket_count) counts_.reset(new (std::nothrow) std::uint32_t[most * ways * bucket_count]);
    if (!copies_ || (n_ > bucket_count && !counts_)) { // no memory for them (or counts past 32 bits): ranks_of, a rank at a time
      for (std::size_t i = 0; i < m_; ++i) out_[i] = ranks_of(each_, n_, ranks_[i] < n_ ? ranks_[i] : n_ - 1, false, lo, hi).first;
      return;
    }
    parts_[0] = {lo, hi - lo, 0, n_, 0, 0};
    np_ = 1;
    for (std::size_t i = 0; i < m_; ++i) part_of_[i] = 0;
    while (prepare()) {
      read();
      next_level();
      if (read_held()) return;
    }
  }

 private:
  struct part {
    std::uint64_t lo, range, below, n; // values within [lo, lo + range]; `below` of them lie under lo
    int shift;                         // histogram: the bucket of v is (v - lo) >> shift
    std::uint32_t copied;              // copy: values copied so far
  };
  static constexpr std::size_t found = most; // part_of_ of a rank found

  // The open rank of part j with the lowest rank, or `found` when it has none left.
  std::size_t lowest_in(std::size_t j) const noexcept {
    std::size_t lowest = found;
    for (std::size_t i = 0; i < m_; ++i)
      if (part_of_[i] == j && (lowest == found || ranks_[i] < ranks_[lowest])) lowest = i;
    return lowest;
  }
  // Every rank of part j equal to rank i's, moved to `to` (its value `value` when found).
  void settle(std::size_t j, std::size_t i, std::size_t to, std::uint64_t value = 0) noexcept {
    for (std::size_t r = 0; r < m_; ++r)
      if (part_of_[r] == j && ranks_[r] == ranks_[i]) {
        part_of_[r] = to;
        if (to == found) out_[r] = value;
      }
  }
  // Each part with ranks left: found where it is one value, else counted by a histogram or, when
  // it holds at most 1,024 values, copied. False when no rank is left.
  bool prepare() noexcept {
    bool any = false;
    for (std::size_t j = 0; j < np_; ++j) {
      open_[j] = lowest_in(j) != found;
      if (open_[j] && parts_[j].range == 0) {
        for (std::size_t i = lowest_in(j); i != found; i = lowest_in(j)) settle(j, i, found, parts_[j].lo);
        open_[j] = false;
      }
      if (!open_[j]) continue;
      any = true;
      copy_[j] = parts_[j].n <= bucket_count;
      parts_[j].copied = 0;
      if (copy_[j]) continue;
      int bits = 0;
      while (bits < 64 && (parts_[j].range >> bits) != 0) ++bits;
      parts_[j].shift = bits > bucket_bits ? bits - bucket_bits : 0;
      std::fill(counts_.get() + j * ways * bucket_count, counts_.get() + (j + 1) * ways * bucket_count, 0u);
    }
    return any;
  }
  // One pass over the values for every open part.
  void read() noexcept {
    if (np_ == 1 && !copy_[0]) { // one range, counted (the usual first level): the read of ranks_of
      count_level(each_, counts_.get(), bucket_count, parts_[0].lo, parts_[0].range, parts_[0].shift);
      return;
    }
    std::uint32_t turn = 0;
    each_([&](std::uint64_t v) {
      for (std::size_t j = 0; j < np_; ++j) {
        part& p = parts_[j];
        if (!open_[j] || v - p.lo > p.range) continue;
        if (!copy_[j]) ++counts_[(j * ways + turn++ % ways) * bucket_count + ((v - p.lo) >> p.shift)];
        else if (p.copied < bucket_count) copies_[j * bucket_count + p.copied++] = v;
        return; // the parts do not overlap
      }
    });
  }
  // Part j's ranks selected in its copy, lowest first, each over what lies above the last.
  void select_in_copy(std::size_t j) noexcept {
    std::uint64_t* c = copies_.get() + j * bucket_count;
    const std::uint64_t have = parts_[j].copied;
    std::uint64_t from = 0;
    for (std::size_t i = lowest_in(j); i != found; i = lowest_in(j)) {
      if (have == 0) { // a caller's count that was wrong: no value to select
        settle(j, i, found, parts_[j].lo);
        continue;
      }
      std::uint64_t k = ranks_[i] >= parts_[j].below ? ranks_[i] - parts_[j].below : 0;
      if (k >= have) k = have - 1;
      if (k >= from) {
        std::nth_element(c + from, c + k, c + have);
        from = k + 1;
      }
      settle(j, i, found, c[k]);
    }
  }
  // Part j's ranks taken to the buckets holding them: parts of the next level in `next`.
  void narrow(std::size_t j, part* next, std::size_t& nn) noexcept {
    const part& p = parts_[j];
    const std::uint32_t* w = counts_.get() + j * ways * bucket_count;
    auto count_of = [w](std::size_t x) -> std::uint64_t {
      return std::uint64_t{w[x]} + w[bucket_count + x] + w[2 * bucket_count + x] + w[3 * bucket_count + x];
    };
    const std::size_t buckets = static_cast<std::size_t>(p.range >> p.shift) + 1;
    const std::uint64_t width = p.shift ? (std::uint64_t{1} << p.shift) - 1 : 0;
    std::uint64_t below = p.below, in_b = count_of(0); // values under bucket b; in it
    std::size_t b = 0;
    for (std::size_t i = lowest_in(j); i != found; i = lowest_in(j)) {
      const std::uint64_t k = ranks_[i] > p.below ? ranks_[i] : p.below;
      while (b + 1 < buckets && below + in_b <= k) { // past the last bucket only on a wrong count: kept there
        below += in_b;
        in_b = count_of(++b);
      }
      const std::uint64_t bottom = p.lo + (static_cast<std::uint64_t>(b) << p.shift);
      std::size_t q = 0;
      while (q < nn && next[q].lo != bottom) ++q;
      if (q == nn) { // bucket b's values: [bottom, bottom + range]
        next[q].lo = bottom;
        next[q].range = p.range - (bottom - p.lo) <= width ? p.range - (bottom - p.lo) : width;
        next[q].below = below;
        next[q].n = in_b;
        next[q].shift = 0;
        next[q].copied = 0;
        ++nn;
      }
      settle(j, i, found + 1 + q);
    }
  }
  // After a pass: the copied parts' ranks found, the counted parts' narrowed to the next level.
  void next_level() noexcept {
    part next[most];
    std::size_t nn = 0;
    for (std::size_t j = 0; j < np_; ++j) {
      if (!open_[j]) continue;
      if (copy_[j]) select_in_copy(j);
      else narrow(j, next, nn);
    }
    for (std::size_t i = 0; i < m_; ++i)
      if (part_of_[i] > found) part_of_[i] -= found + 1;
    for (std::size_t q = 0; q < nn; ++q) parts_[q] = next[q];
    np_ = nn;
  }
  // Where the parts hold more than 1,024 values but at most n / 8, they are copied once and the
  // rest of the search reads the copy, not every value again (ranges of 30 bits and more).
  // True when that search found every rank.
  bool read_held() noexcept {
    std::uint64_t held = 0, low = ~std::uint64_t{0}, high = 0;
    for (std::size_t q = 0; q < np_; ++q) {
      held += parts_[q].n;
      low = parts_[q].lo < low ? parts_[q].lo : low;
      high = parts_[q].lo + parts_[q].range > high ? parts_[q].lo + parts_[q].range : high;
    }
    if (held <= bucket_count || held > n_ / 8) return false;
    const std::unique_ptr<std::uint64_t[]> kept(new (std::nothrow) std::uint64_t[held]);
    if (!kept) return false; // the next level reads the values again
    std::uint64_t got = 0;
    each_([&](std::uint64_t v) {
      for (std::size_t q = 0; q < np_; ++q)
        if (v - parts_[q].lo <= parts_[q].range) {
          if (got < held) kept[got++] = v;
          return;
        }
    });
    std::uint64_t local[most], value[most]; // each rank's place among the copied values: the parts under its own, then its place there
    for (std::size_t i = 0; i < m_; ++i) {
      local[i] = 0; // found already: its answer stays
      if (part_of_[i] >= np_) continue;
      const part& own = parts_[part_of_[i]];
      local[i] = ranks_[i] - own.below;
      for (std::size_t q = 0; q < np_; ++q)
        if (parts_[q].lo < own.lo) local[i] += parts_[q].n;
    }
    rank_search<each_value>(each_value{kept.get(), kept.get() + got}, got, local, m_, value).run(low, high);
    for (std::size_t i = 0; i < m_; ++i)
      if (part_of_[i] < np_) out_[i] = value[i];
    return true;
  }

  const Each& each_;
  std::uint64_t n_;
  const std::uint64_t* ranks_;
  std::size_t m_;
  std::uint64_t* out_;
  std::unique_ptr<std::uint64_t[]> copies_; // per part, bucket_count values
  std::unique_ptr<std::uint32_t[]> counts_; // per part, `ways` histograms of bucket_count
  part parts_[most];
  std::size_t np_ = 0;
  std::size_t part_of_[most]; // each rank's part; `found`: its value is in out_
  bool open_[most] = {}, copy_[most] = {};
};

// The values at the 0-based ranks ranks[0 .. m) (m <= 4, any order, repeats allowed) of the n
// values `each` yields, all within [lo, hi], into out[0 .. m). Reads the values, never moves
// them. The ranks whose values lie in one range share a histogram of 1,024 buckets over it (4
// interleaved, as in ranks_of), which narrows that range to the bucket holding them, 10 bits a
// level; a range of at most 1,024 values is copied instead and its ranks selected in the copy,
// and buckets holding at most n / 8 values are copied once for the levels after. Each level is
// one pass over the values for every rank not yet found, so a median's two middle values with
// two percentiles take the passes one rank takes alone.
// Memory: 96 KB on the heap for the copies and histograms (32 KB up to 1,024 values; none to be
// had: ranks_of, a rank at a time), again for the search over a copy.
template <class Each>
void values_at_ranks(const Each& each, std::uint64_t n, const std::uint64_t* ranks, std::size_t m, std::uint64_t lo, std::uint64_t hi,
                     std::uint64_t* out) noexcept {
  rank_search<Each>(each, n, ranks, m, out).run(lo, hi);
}

// The median of n values within [lo, hi] (the mean of the two middle ones for an even count).
template <class Each>
double median_of(const Each& each, std::uint64_t n, std::uint64_t lo, std::uint64_t hi) noexcept {
  if (n == 0) return 0.0;
  const auto [a, b] = ranks_of(each, n, (n - 1) / 2, n % 2 == 0, lo, hi);
  return n % 2 ? static_cast<double>(a) : (static_cast<double>(a) + static_cast<double>(b)) / 2.0;
}

// The values `each` yields; its first read also sums their squared deviations from `mean` into
// `m2`, in the values' order (stats_of's standard deviation, without a pass of its own).
template <class Each>
struct deviations_on_first_read {
  const Each& each;
  double mean;
  double& m2;
  bool& summed;
  template <class F>
  void operator()(F&& f) const {
    if (summed) return each(f);
    summed = true;
    each([&](std::uint64_t v) {
      const double d = static_cast<double>(v) - mean;
      m2 += d * d;
      f(v);
    });
  }
};

// count_level of an array on its first read: the deviations summed in order, beside the counts.
template <class Count>
void count_level(const deviations_on_first_read<each_value>& e, Count* counts, std::size_t stride, std::uint64_t lo, std::uint64_t range,
                 int shift) noexcept {
  if (e.summed) return count_level(e.each, counts, stride, lo, range, shift);
  e.summed = true;
  double m2 = e.m2;
  const double mean = e.mean;
  const std::uint64_t *p = e.each.first, *last = e.each.last;
  for (; last - p >= 4; p += 4) {
    const double a = static_cast<double>(p[0]) - mean, b = static_cast<double>(p[1]) - mean, c = static_cast<double>(p[2]) - mean,
                 d = static_cast<double>(p[3]) - mean;
    m2 += a * a;
    m2 += b * b;
    m2 += c * c;
    m2 += d * d;
    count_four(p, counts, stride, lo, range, shift);
  }
  for (; p != last; ++p) {
    const double d = static_cast<double>(*p) - mean;
    m2 += d * d;
    count_one(*p, counts, lo, range, shift);
  }
  e.m2 = m2;
}

// The smallest and largest of the values `each` yields (no values: {~0, 0}).
template <class Each>
std::pair<std::uint64_t, std::uint64_t> extremes_of(const Each& each) noexcept {
  std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
  each([&](std::uint64_t v) {
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  });
  return {lo, hi};
}

// The figures of the values `each` yields that one read of them gives: count, total, extremes and
// mean (the median and standard deviation left 0).
struct value_moments {
  std::uint64_t count = 0, total = 0, min = 0, max = 0;
  double average = 0.0;
};
template <class Each>
value_moments moments_by(const Each& each) noexcept {
  value_moments s;
  std::uint64_t n = 0, lo = ~std::uint64_t{0}, hi = 0, sum = 0;
  each([&](std::uint64_t v) {
    ++n;
    sum += v;
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  });
  if (n == 0) return s;
  s.count = n;
  s.total = sum;
  s.min = lo;
  s.max = hi;
  s.average = static_cast<double>(sum) / static_cast<double>(n);
  return s;
}

// The same of an array, four values a step in four sums and extremes of their own, joined at
// the end (four chains of compares that do not wait on each other). Arrays of 16 values or
// fewer are read one at a time.
inline value_moments moments_by(const each_value& each) noexcept {
  const std::uint64_t *p = each.first, *const last = each.last;
  if (last - p <= 16) return moments_by<each_value>(each);
  std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0, h0 = 0, h1 = 0, h2 = 0, h3 = 0;
  std::uint64_t l0 = ~std::uint64_t{0}, l1 = l0, l2 = l0, l3 = l0;
  const auto step = [](std::uint64_t v, std::uint64_t& sum, std::uint64_t& lo, std::uint64_t& hi) {
    sum += v;
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  };
  for (; last - p >= 4; p += 4) step(p[0], s0, l0, h0), step(p[1], s1, l1, h1), step(p[2], s2, l2, h2), step(p[3], s3, l3, h3);
  for (; p != last; ++p) step(*p, s0, l0, h0);
  value_moments s;
  s.count = static_cast<std::uint64_t>(last - each.first);
  s.total = s0 + s1 + s2 + s3;
  s.min = std::min(std::min(l0, l1), std::min(l2, l3));
  s.max = std::max(std::max(h0, h1), std::max(h2, h3));
  s.average = static_cast<double>(s.total) / static_cast<double>(s.count);
  return s;
}

} // namespace detail
} // namespace v1
} // namespace nvscope
