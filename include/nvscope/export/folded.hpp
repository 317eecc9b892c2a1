// nvscope-target: nvscope
#pragma once

/// \file export/folded.hpp
/// Folded stacks of GPU time by NVTX path, for `flamegraph.pl` and speedscope: one line per
/// distinct stack, `outer;inner;kernel <ns>`, sorted. As llm.c's flame-graph script does, layer
/// and step numbers are stripped by default (`layer_12` -> `layer_N`, `step_3` -> `step_N`), so
/// that all layers and steps add up in one frame.
///
/// \code
///   nvscope::folded_options o;
///   o.include_steps = false;                       // drop the step level altogether
///   nvscope::write_file("stacks.folded", nvscope::to_folded(t, o));
///   // perl flamegraph.pl stacks.folded > gpu.svg
/// \endcode

#include <nvscope/analyze/index.hpp>
#include <nvscope/analyze/names.hpp>
#include <nvscope/analyze/step_names.hpp>

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// How stacks are named.
struct folded_options {
  bool strip_layer_numbers = true; ///< digits in range names other than steps become N
  bool strip_step_numbers = true;  ///< step_3 -> step_N
  bool include_steps = true;       ///< false: step ranges are left out of the path
  bool include_copies = true;      ///< copies and memsets as frames named like nsys's operations
  std::string step_range;          ///< as `analysis_options::step_range`
  std::string step_pattern;        ///< as `analysis_options::step_pattern`: the same rule decides what a step is
};

namespace detail {
struct folded_key_hash {
  std::size_t operator()(std::uint64_t v) const noexcept {
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdull;
    v ^= v >> 33;
    return static_cast<std::size_t>(v);
  }
};
// ';' separates frames and a newline ends the line: neither may appear inside a frame.
inline void append_frame(std::string& out, std::string_view s) {
  for (char c : s) out.push_back(c == ';' ? ':' : (c == '\n' || c == '\r') ? ' ' : c);
}
} // namespace detail

/// GPU time (kernels, and copies/memsets unless left out) folded by the NVTX push/pop path of
/// the launching thread at launch; work with no range is a stack of its own name alone.
/// \code
///   std::string folded = nvscope::to_folded(t);   // "step_N;forward;layer_N;gemm 123456\n..."
/// \endcode
inline std::string to_folded(const trace& t, const folded_options& options = {}) {
  const attribution a = attribute(t);
  analysis_options ao;
  ao.step_range = options.step_range;
  ao.step_pattern = options.step_pattern;
  const step_matcher is_step(ao);
  // Accumulate per (owner range, frame name) first: strings are built once per distinct pair.
  std::unordered_map<std::uint64_t, std::uint64_t, detail::folded_key_hash> by_owner;
  auto add = [&](std::uint32_t owner, std::uint32_t frame, std::uint64_t ns) {
    by_owner[(static_cast<std::uint64_t>(owner) << 32) | frame] += ns;
  };
  constexpr std::uint32_t copy_frame_base = 0xfffff000u; // frames for copy kinds and memset
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const auto& k = t.kernels[i];
    if (detail::valid_interval(k.start, k.end)) add(a.kernel_owner[i], k.name, k.end - k.start);
  }
  if (options.include_copies) {
    for (std::size_t i = 0; i < t.copies.size(); ++i) {
      const auto& c = t.copies[i];
      if (detail::valid_interval(c.start, c.end)) add(a.copy_owner[i], copy_frame_base + static_cast<std::uint32_t>(c.kind), c.end - c.start);
    }
    for (std::size_t i = 0; i < t.memsets.size(); ++i) {
      const auto& s = t.memsets[i];
      if (detail::valid_interval(s.start, s.end)) add(a.memset_owner[i], copy_frame_base + 0xff, s.end - s.start);
    }
  }
  std::map<std::string, std::uint64_t> stacks;
  std::vector<std::uint32_t> path;
  std::string line;
  for (const auto& [key, ns] : by_owner) {
    const auto owner = static_cast<std::uint32_t>(key >> 32);
    const auto frame = static_cast<std::uint32_t>(key & 0xffffffffu);
    path.clear();
    for (auto r = owner; r != attribution::none; r = a.parent[r]) path.push_back(r);
    line.clear();
    for (auto it = path.rbegin(); it != path.rend(); ++it) {
      const auto name = t.strings[t.ranges[*it].name];
      const bool step = is_step(name);
      if (step && !options.include_steps) continue;
      const bool strip = step ? options.strip_step_numbers : options.strip_layer_numbers;
      detail::append_frame(line, strip ? std::string_view(detail::strip_numbers(name)) : name);
      line.push_back(';');
    }
    if (frame >= copy_frame_base)
      line += frame == copy_frame_base + 0xff ? detail::memset_operation_name : detail::copy_operation_name(static_cast<copy_kind>(frame - copy_frame_base));
    else
      detail::append_frame(line, t.strings[frame]);
    stacks[line] += ns;
  }
  std::string out;
  for (const auto& [stack, ns] : stacks) {
    out += stack;
    out.push_back(' ');
    out += std::to_string(ns);
    out.push_back('\n');
  }
  return out;
}

} // namespace v1
} // namespace nvscope
