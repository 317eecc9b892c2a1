// nvscope-target: nvscope
#pragma once

/// \file trace/sketch.hpp
/// `duration_sketch`: quantiles of a stream of durations (ns) in bounded memory, with a
/// relative-error guarantee, mergeable exactly: DDSketch (Masson, Rim and Lee, "DDSketch: A
/// Fast and Fully-Mergeable Quantile Sketch with Relative-Error Guarantees", VLDB 2019).
///
/// Chosen for its published bound, which holds for every input and every quantile, not on
/// average: with gamma = (1 + alpha) / (1 - alpha), a value x >= 1 falls in bucket
/// i = ceil(log_gamma(x)), which holds (gamma^(i-1), gamma^i]; the bucket answers
/// 2 gamma^i / (gamma + 1), within alpha * x of every value it holds (the paper's
/// Proposition 3). So quantile(q) is within alpha of the exact q-quantile, relatively, whatever
/// the distribution (t-digest's error depends on it; an HDR histogram's bound is the same kind,
/// but DDSketch's index is one logarithm with no precision table). Zero is a bucket of its own,
/// answered exactly. Count, sum, min and max are kept exactly beside the buckets.
///
/// Here alpha = 0.01 (`relative_error`). Buckets live in one dense array from the lowest
/// bucket used to the highest, so the memory is bounded by the values' range:
/// ceil(ln(max / min) / ln(gamma)) + 1 buckets of 8 bytes, and for any durations from 1 ns to
/// 2^64 ns at most `max_buckets` = ceil(64 ln 2 / ln(gamma)) + 1 = 2,219 (17,752 bytes).
///
/// Merging adds bucket counts: merging sketches of two sets gives, bucket for bucket, the
/// sketch of their union, in any order and grouping (a bucket is a function of the value
/// alone). Sketches merge across processes built with the same libm (`std::log` places values
/// on bucket edges).
///
/// Quantiles by nearest rank, as the rest of nvscope (docs/analysis.md): quantile(q) answers
/// the value of rank max(1, ceil(q n)); the first and last ranks answer min and max exactly.
/// median() is nsys's median: the value of rank (n + 1) / 2 for an odd count, the mean of
/// ranks n / 2 and n / 2 + 1 for an even one, each within alpha, so the mean is too.
///
/// \code
///   nvscope::duration_sketch s;
///   for (const auto& k : t.kernels) s.add(k.end - k.start);
///   double p99 = s.quantile(0.99);      // within 1 % of the exact p99
///   other.merge(s);                     // as if other had seen s's values too
/// \endcode

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// What a `duration_sketch` holds, as plain numbers: what a writer stores and a reader gives
/// back to `duration_sketch::from_parts` (a profile of another process or rank).
struct sketch_parts {
  std::uint64_t zero_count = 0;
  std::uint32_t first_bucket = 0;
  std::vector<std::uint64_t> buckets; ///< counts of buckets first_bucket, first_bucket + 1, ...
  std::uint64_t min = 0, max = 0, sum_high = 0, sum_low = 0;
};

/// Count, sum, extremes (exact) and quantiles (within `relative_error`) of durations.
class duration_sketch {
 public:
  /// alpha: every quantile is within this share of the exact one.
  static constexpr double relative_error = 0.01;
  /// gamma = (1 + alpha) / (1 - alpha), the ratio of a bucket's upper edge to its lower one.
  static constexpr double gamma = (1.0 + relative_error) / (1.0 - relative_error);
  /// ln(gamma), written out so that every build places values alike (tested against std::log).
  static constexpr double log_gamma = 0.020000666706669435;
  /// Buckets that durations from 1 ns to 2^64 ns need: ceil(64 ln 2 / ln(gamma)) + 1.
  static constexpr std::size_t max_buckets = 2219;

  /// Adds one value.
  void add(std::uint64_t value) { add(value, 1); }

  /// Adds `count` copies of `value` (count 0 adds nothing).
  void add(std::uint64_t value, std::uint64_t count) {
    if (count == 0) return;
    if (value == 0) zero_ += count;
    else *slot(bucket_of(value)) += count;
    min_ = count_ ? std::min(min_, value) : value;
    max_ = count_ ? std::max(max_, value) : value;
    count_ += count;
    add_product(value, count);
  }

  /// Adds `other`'s values: bucket for bucket, the sketch of both sets.
  void merge(const duration_sketch& other) {
    if (other.count_ == 0) return;
    if (&other == this) {
      const duration_sketch copy = other;
      merge(copy);
      return;
    }
    if (!other.buckets_.empty()) {
      slot(other.first_);
      slot(other.first_ + static_cast<std::uint32_t>(other.buckets_.size()) - 1);
      const auto* from = other.buckets_.data();
      auto* to = buckets_.data() + (other.first_ - first_);
      for (std::size_t i = 0; i < other.buckets_.size(); ++i) to[i] += from[i];
    }
    zero_ += other.zero_;
    min_ = count_ ? std::min(min_, other.min_) : other.min_;
    max_ = count_ ? std::max(max_, other.max_) : other.max_;
    count_ += other.count_;
    sum_low_ += other.sum_low_;
    sum_high_ += other.sum_high_ + (sum_low_ < other.sum_low_);
  }

  /// The q-quantile by nearest rank (q clamped to [0, 1]), within `relative_error`; 0 when empty.
  double quantile(double q) const {
    if (count_ == 0) return 0.0;
    const double r = std::ceil((q > 0.0 ? std::min(q, 1.0) : 0.0) * static_cast<double>(count_));
    return at_rank(std::min(count_, std::max<std::uint64_t>(1, static_cast<std::uint64_t>(r))));
  }

  /// nsys's median (the mean of the two middle values of an even count), within `relative_error`.
  double median() const {
    if (count_ == 0) return 0.0;
    if (count_ % 2) return at_rank((count_ + 1) / 2);
    return (at_rank(count_ / 2) + at_rank(count_ / 2 + 1)) / 2.0;
  }

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t min() const noexcept { return min_; }
  std::uint64_t max() const noexcept { return max_; }
  /// The sum, exact while it is below 2^64 (584 years of ns); saturated above.
  std::uint64_t sum() const noexcept { return sum_high_ ? std::numeric_limits<std::uint64_t>::max() : sum_low_; }
  /// The exact sum as two words: sum = sum_high * 2^64 + sum_low.
  std::uint64_t sum_high() const noexcept { return sum_high_; }
  std::uint64_t sum_low() const noexcept { return sum_low_; }
  /// The exact mean (from both words of the sum); 0 when empty.
  double average() const noexcept {
    return count_ ? (static_cast<double>(sum_high_) * 18446744073709551616.0 + static_cast<double>(sum_low_)) / static_cast<double>(count_) : 0.0;
  }

  /// How many zeros were added.
  std::uint64_t zero_count() const noexcept { return zero_; }
  /// The index of `buckets()[0]`.
  std::uint32_t first_bucket() const noexcept { return first_; }
  /// Counts of buckets first_bucket() ... first_bucket() + size - 1; both ends non-zero.
  const std::vector<std::uint64_t>& buckets() const noexcept { return buckets_; }
  /// Its parts, for a writer.
  sketch_parts parts() const { return {zero_, first_, buckets_, min_, max_, sum_high_, sum_low_}; }
  /// The sketch of `p`, as `parts()` gave them; throws std::invalid_argument, one line, where
  /// they make no sketch (a bucket past max_buckets, a zero count at either end of the
  /// buckets, min above max, zeros counted while min is not 0).
  static duration_sketch from_parts(const sketch_parts& p) {
    const char* wrong = !p.buckets.empty() && (p.buckets.front() == 0 || p.buckets.back() == 0) ? "a zero count at an end of the buckets"
                        : p.first_bucket + p.buckets.size() > max_buckets ? "a bucket past max_buckets"
                        : p.min > p.max                                    ? "min above max"
                        : p.zero_count && p.min                            ? "zeros counted but min is not 0"
                                                                           : nullptr;
    if (wrong) throw std::invalid_argument(std::string("nvscope: not a duration sketch: ") + wrong);
    duration_sketch s;
    s.zero_ = p.zero_count;
    s.first_ = p.buckets.empty() ? 0 : p.first_bucket;
    s.buckets_ = p.buckets;
    s.count_ = p.zero_count;
    for (const auto c : p.buckets) s.count_ += c;
    s.min_ = s.count_ ? p.min : 0;
    s.max_ = s.count_ ? p.max : 0;
    s.sum_high_ = p.sum_high;
    s.sum_low_ = p.sum_low;
    return s;
  }

  /// Bytes held: the object and its bucket array (reserved included).
  std::size_t memory_bytes() const noexcept { return sizeof(*this) + buckets_.capacity() * sizeof(std::uint64_t); }

  /// The bucket of value >= 1: ceil(log_gamma(value)).
  static std::uint32_t bucket_of(std::uint64_t value) noexcept {
    return static_cast<std::uint32_t>(std::ceil(std::log(static_cast<double>(value)) / log_gamma));
  }
  /// What bucket `i` answers: 2 gamma^i / (gamma + 1), within alpha of all it holds.
  static double bucket_value(std::uint32_t i) noexcept { return 2.0 * std::exp(i * log_gamma) / (gamma + 1.0); }

  /// Bucket for bucket: the same values seen, in any order or grouping.
  friend bool operator==(const duration_sketch& a, const duration_sketch& b) noexcept {
    return a.count_ == b.count_ && a.zero_ == b.zero_ && a.min_ == b.min_ && a.max_ == b.max_ && a.sum_low_ == b.sum_low_ &&
           a.sum_high_ == b.sum_high_ && (a.buckets_.empty() || a.first_ == b.first_) && a.buckets_ == b.buckets_;
  }
  friend bool operator!=(const duration_sketch& a, const duration_sketch& b) noexcept { return !(a == b); }

 private:
  // The count of bucket i, the dense array grown to hold it (never past max_buckets).
  std::uint64_t* slot(std::uint32_t i) {
    if (buckets_.empty()) {
      reserve_for(1);
      first_ = i;
      buckets_.assign(1, 0);
    } else if (i < first_) {
      reserve_for(buckets_.size() + (first_ - i));
      buckets_.insert(buckets_.begin(), first_ - i, 0);
      first_ = i;
    } else if (i - first_ >= buckets_.size()) {
      reserve_for(i - first_ + 1);
      buckets_.resize(i - first_ + 1, 0);
    }
    return &buckets_[i - first_];
  }
  // Room for n buckets: doubling, capped at max_buckets, so the array never holds more.
  void reserve_for(std::size_t n) {
    if (n > buckets_.capacity()) buckets_.reserve(std::max(n, std::min(max_buckets, 2 * buckets_.capacity())));
  }

  // sum += value * count, in two words (each split in 32-bit halves).
  void add_product(std::uint64_t value, std::uint64_t count) noexcept {
    const std::uint64_t vl = value & 0xffffffffu, vh = value >> 32, cl = count & 0xffffffffu, ch = count >> 32;
    const std::uint64_t ll = vl * cl, lh = vl * ch, hl = vh * cl, hh = vh * ch;
    const std::uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    const std::uint64_t low = (mid << 32) | (ll & 0xffffffffu);
    const std::uint64_t high = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
    sum_low_ += low;
    sum_high_ += high + (sum_low_ < low);
  }

  // The value of rank r (1 <= r <= count): min and max exactly, else its bucket's answer
  // clamped to [min, max] (which only brings it nearer the value).
  double at_rank(std::uint64_t r) const {
    if (r == 1) return static_cast<double>(min_);
    if (r == count_) return static_cast<double>(max_);
    if (r <= zero_) return 0.0;
    std::uint64_t seen = zero_;
    std::size_t i = 0;
    while (i + 1 < buckets_.size() && (seen += buckets_[i]) < r) ++i;
    const double v = bucket_value(first_ + static_cast<std::uint32_t>(i));
    return std::min(static_cast<double>(max_), std::max(static_cast<double>(min_), v));
  }

  std::vector<std::uint64_t> buckets_;
  std::uint64_t count_ = 0, zero_ = 0, min_ = 0, max_ = 0, sum_low_ = 0, sum_high_ = 0;
  std::uint32_t first_ = 0;
};

} // namespace v1
} // namespace nvscope
