// nvscope-target: nvscope
#pragma once

/// \file analyze/unranged.hpp
/// `unranged_of(t, x)`: the kernels that no range encloses (`analysis_report::unranged`), per
/// launching thread. In PyTorch these are mostly the backward pass: autograd's thread launches
/// it and opens no range, so by nsys's thread rule its kernels belong to no range; the summary
/// says so, and `attribution_rule::process` credits them. Reference:
/// reference::unranged (analyze/reference/activity.hpp).
///
/// \code
///   const auto x = nvscope::index_trace(t);
///   auto u = nvscope::unranged_of(t, x);
///   std::printf("%llu kernels outside every range\n", (unsigned long long)u.kernels);
/// \endcode

#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/names.hpp>
#include <nvscope/analyze/report.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {

namespace detail {
// Whether no range encloses launch `l`: no push/pop owner (as the index credits it) and no
// start/end range open at it.
inline bool encloses_none(const trace_index& x, std::uint32_t l) noexcept {
  return x.launch_owner[l] == attribution::none && x.start_end_offset[l] == x.start_end_offset[l + 1];
}
} // namespace detail

/// Each valid kernel with a launch whose launch no range encloses (`trace_index::for_enclosing`
/// finds none), counted with its duration per launching thread (its TID and name); threads by
/// GPU time, largest first, then by index.
inline unranged_kernels unranged_of(const trace& t, const trace_index& x) {
  unranged_kernels out;
  out.credit = x.credit;
  std::unordered_map<std::uint32_t, std::size_t> row_of; // thread: row of out.threads
  for (std::size_t k = 0; k < t.kernels.size(); ++k) {
    const auto l = x.links.kernel_launch[k];
    if (!x.kernel_ok[k] || l == attribution::none || !detail::encloses_none(x, l)) continue;
    const auto thread = t.launches[l].thread;
    const auto [it, added] = row_of.emplace(thread, out.threads.size());
    if (added) {
      const bool named = thread < t.threads.size() && t.threads[thread].name;
      out.threads.push_back({thread, detail::os_thread_id(t, thread), named ? std::string(t.strings[t.threads[thread].name]) : std::string(), 0, 0});
    }
    auto& row = out.threads[it->second];
    const auto ns = t.kernels[k].end - t.kernels[k].start;
    ++row.kernels, row.gpu_ns += ns;
    ++out.kernels, out.gpu_ns += ns;
  }
  std::sort(out.threads.begin(), out.threads.end(), [](const unranged_thread& a, const unranged_thread& b) {
    return std::make_pair(~a.gpu_ns, a.thread) < std::make_pair(~b.gpu_ns, b.thread);
  });
  return out;
}

} // namespace v1
} // namespace nvscope
