// nvscope-target: nvscope
#pragma once

/// \file analyze/attribution.hpp
/// `attribution`: where each GPU record came from (its launch and the innermost push/pop range
/// open on the launching thread), and how ranges nest. A plain type: `attribute(t)` fills it
/// (defined in the program's implementation file, see docs/analysis.md), `index_trace(t).links`
/// too; the exports take it so that a trace indexed once is not indexed again.
///
/// \code
///   auto a = nvscope::attribute(t);
///   auto r = a.kernel_owner[0];        // index into t.ranges, or attribution::none
///   auto up = a.parent[r];             // the range that encloses it on its thread
/// \endcode

#include <nvscope/trace.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// One index per record: into `trace::launches` or `trace::ranges`, `no_index` for none.
using record_indexes = std::vector<std::uint32_t>;

/// Where each GPU record came from: its launch and the innermost push/pop range open on the
/// launching thread at that moment; and how ranges nest (computed from times, per thread).
struct attribution {
  static constexpr std::uint32_t none = no_index;
  record_indexes kernel_launch, copy_launch, memset_launch; ///< into trace::launches
  record_indexes kernel_owner, copy_owner, memset_owner;    ///< into trace::ranges
  std::vector<std::uint32_t> parent;   ///< per range: enclosing push/pop range on its thread (marks too)
  std::vector<std::uint16_t> depth;    ///< per range: 0 for outermost
  std::vector<timestamp_ns> range_end; ///< per range: its end, or the trace end when unclosed
  timestamp_ns trace_end = 0;
};

/// Ties every kernel, copy and memset to its launch (by correlation id) and to the innermost
/// push/pop range open on the launching thread at the launch (under `credit`, see
/// `attribution_rule`); ranges get their parents and depths. All kernels of one graph launch share a correlation id, so one launch and range.
/// The `links` of `index_trace(t)`, without the rest of the index (the start/end ranges open at
/// each launch, range groups), which they do not depend on. Defined where the program defines
/// `NVSCOPE_IMPLEMENTATION` (docs/analysis.md, "Building").
/// \code
///   auto a = nvscope::attribute(t);
///   auto r = a.kernel_owner[0];   // index into t.ranges, or attribution::none
/// \endcode
attribution attribute(const trace& t, attribution_rule credit = attribution_rule::thread);

/// Per CUDA API call of `t` (`trace::api_calls`), the launch with its correlation id (an index
/// into `trace::launches`, the first of that id), or `attribution::none`: the lookup analysis
/// links GPU records with, for exports that draw API calls. Defined with `attribute`.
/// \code
///   auto l = nvscope::api_call_launches(t);
///   if (l[0] != nvscope::attribution::none) std::printf("%llu\n", (unsigned long long)t.launches[l[0]].time);
/// \endcode
std::vector<std::uint32_t> api_call_launches(const trace& t);

namespace detail {
// Throws std::invalid_argument (one line, naming `who`) unless `a` has a slot for every
// record and range of `t`: an attribution of another trace would be read past its end.
inline void check_attribution(const trace& t, const attribution& a, const char* who) {
  const bool fits = a.kernel_launch.size() == t.kernels.size() && a.kernel_owner.size() == t.kernels.size() &&
                    a.copy_launch.size() == t.copies.size() && a.copy_owner.size() == t.copies.size() &&
                    a.memset_launch.size() == t.memsets.size() && a.memset_owner.size() == t.memsets.size() &&
                    a.parent.size() == t.ranges.size() && a.depth.size() == t.ranges.size() && a.range_end.size() == t.ranges.size();
  if (!fits) throw std::invalid_argument(std::string("nvscope: ") + who + ": the attribution is not of this trace (pass attribute(t) of the same trace)");
}
} // namespace detail

} // namespace v1
} // namespace nvscope
