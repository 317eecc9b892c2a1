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

#include <nvscope/analyze/attribution.hpp>
#include <nvscope/trace.hpp>

#include <string>

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

/// GPU time (kernels, and copies/memsets unless left out) folded by the NVTX push/pop path of
/// the launching thread at launch; work with no range is a stack of its own name alone.
/// \code
///   std::string folded = nvscope::to_folded(t);   // "step_N;forward;layer_N;gemm 123456\n..."
/// \endcode
/// With `a`, the trace's attribution from an earlier pass (`attribute(t)`, or the `links` of
/// `index_trace(t)`): the trace is not indexed again. An attribution of another trace throws
/// std::invalid_argument.
/// \code
///   const auto x = nvscope::index_trace(t);
///   auto report = nvscope::analyze(t, x, {});
///   std::string folded = nvscope::to_folded(t, {}, x.links);
/// \endcode
std::string to_folded(const trace& t, const folded_options& options, const attribution& a);

/// The same, the trace indexed here (`attribute(t)`).
std::string to_folded(const trace& t, const folded_options& options = {});

} // namespace v1
} // namespace nvscope

#if defined(NVSCOPE_IMPLEMENTATION)
#include <nvscope/analysis.hpp> // the implementation file compiles attribute() and analyze() too
#include <nvscope/analyze/intervals.hpp>
#include <nvscope/analyze/names.hpp>
#include <nvscope/analyze/step_names.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace nvscope {
inline namespace v1 {

namespace detail {
// ';' separates frames and a newline ends the line: neither may appear inside a frame.
inline void append_frame(std::string& out, std::string_view s) {
  for (char c : s) out.push_back(c == ';' ? ':' : (c == '\n' || c == '\r') ? ' ' : c);
}

// The distinct NVTX paths of a trace as a tree: node 0 is "no range", every other node one
// frame below its parent. Each range's node is found once (its parent's first), and each
// range name is matched and stripped once, so the pass is linear in ranges and GPU records;
// strings are built only per distinct (path, frame) at the end.
class folded_paths {
 public:
  folded_paths(const trace& t, const attribution& a, const folded_options& o) : t_(t), a_(a), o_(o), is_step_(step_options(o)) {
    node_of_range_.assign(t.ranges.size(), unresolved);
    label_of_name_.assign(t.strings.size(), unresolved);
    nodes_.push_back({0, 0});
  }
  // The node of the path ending at `range` (none: the root).
  std::uint32_t node(std::uint32_t range) {
    if (range == attribution::none) return 0;
    pending_.clear();
    for (auto r = range; r != attribution::none && node_of_range_[r] == unresolved; r = a_.parent[r]) pending_.push_back(r);
    for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
      const auto up = a_.parent[*it];
      const auto below = up == attribution::none ? 0 : node_of_range_[up];
      const auto label = label_of(t_.ranges[*it].name);
      node_of_range_[*it] = label == skipped ? below : child(below, label);
    }
    return node_of_range_[range];
  }
  // "outer;inner;" for a node (paths may be tens of thousands deep: no recursion).
  void append_path(std::string& out, std::uint32_t n) {
    pending_.clear();
    for (; n != 0; n = nodes_[n].parent) pending_.push_back(n);
    for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
      out += labels_[nodes_[*it].label];
      out.push_back(';');
    }
  }

 private:
  static constexpr std::uint32_t unresolved = 0xffffffffu, skipped = 0xfffffffeu;
  struct node_t {
    std::uint32_t parent, label;
  };
  static analysis_options step_options(const folded_options& o) {
    analysis_options ao;
    ao.step_range = o.step_range;
    ao.step_pattern = o.step_pattern;
    return ao;
  }
  // A range name's frame text, interned; `skipped` for steps left out.
  std::uint32_t label_of(string_id name) {
    if (name < label_of_name_.size() && label_of_name_[name] != unresolved) return label_of_name_[name];
    const auto text = t_.strings[name];
    const bool step = is_step_(text);
    std::uint32_t id = skipped;
    if (!step || o_.include_steps) {
      const bool strip = step ? o_.strip_step_numbers : o_.strip_layer_numbers;
      std::string frame;
      append_frame(frame, strip ? std::string_view(strip_numbers(text)) : text);
      id = static_cast<std::uint32_t>(label_ids_.emplace(frame, static_cast<std::uint32_t>(labels_.size())).first->second);
      if (id == labels_.size()) labels_.push_back(std::move(frame));
    }
    if (name < label_of_name_.size()) label_of_name_[name] = id;
    return id;
  }
  std::uint32_t child(std::uint32_t parent, std::uint32_t label) {
    const auto key = (static_cast<std::uint64_t>(parent) << 32) | label;
    const auto it = children_.emplace(key, static_cast<std::uint32_t>(nodes_.size())).first;
    if (it->second == nodes_.size()) nodes_.push_back({parent, label});
    return it->second;
  }

  const trace& t_;
  const attribution& a_;
  const folded_options& o_;
  const step_matcher is_step_;
  std::vector<std::uint32_t> node_of_range_, label_of_name_, pending_;
  std::vector<node_t> nodes_;
  std::vector<std::string> labels_;
  std::unordered_map<std::string, std::uint32_t> label_ids_;
  std::unordered_map<std::uint64_t, std::uint32_t> children_;
};

// GPU time per (path node, frame): frames are kernel name ids, or copy_frame_base + copy kind,
// or memset_frame.
inline constexpr std::uint32_t copy_frame_base = 0xfffff000u, memset_frame = copy_frame_base + 0xff;

inline void append_leaf(std::string& out, const trace& t, std::uint32_t frame) {
  if (frame == memset_frame) out += memset_operation_name;
  else if (frame >= copy_frame_base) out += copy_operation_name(static_cast<copy_kind>(frame - copy_frame_base));
  else append_frame(out, t.strings[frame]);
}

} // namespace detail

std::string to_folded(const trace& t, const folded_options& options, const attribution& a) {
  detail::check_attribution(t, a, "to_folded");
  detail::folded_paths paths(t, a, options);
  std::unordered_map<std::uint64_t, std::uint64_t> by_leaf; // (node, frame) -> ns: one entry per distinct stack
  auto add = [&](std::uint32_t owner, std::uint32_t frame, std::uint64_t ns) {
    by_leaf[(static_cast<std::uint64_t>(paths.node(owner)) << 32) | frame] += ns;
  };
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const auto& k = t.kernels[i];
    if (detail::valid_interval(k.start, k.end)) add(a.kernel_owner[i], k.name, k.end - k.start);
  }
  if (options.include_copies) {
    for (std::size_t i = 0; i < t.copies.size(); ++i) {
      const auto& c = t.copies[i];
      if (detail::valid_interval(c.start, c.end)) add(a.copy_owner[i], detail::copy_frame_base + static_cast<std::uint32_t>(c.kind), c.end - c.start);
    }
    for (std::size_t i = 0; i < t.memsets.size(); ++i) {
      const auto& s = t.memsets[i];
      if (detail::valid_interval(s.start, s.end)) add(a.memset_owner[i], detail::memset_frame, s.end - s.start);
    }
  }
  std::map<std::string, std::uint64_t> stacks; // equal text from different leaves adds up
  std::string line;
  for (const auto& [key, ns] : by_leaf) {
    line.clear();
    paths.append_path(line, static_cast<std::uint32_t>(key >> 32));
    detail::append_leaf(line, t, static_cast<std::uint32_t>(key & 0xffffffffu));
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

std::string to_folded(const trace& t, const folded_options& options) { return to_folded(t, options, attribute(t)); }

} // namespace v1
} // namespace nvscope
#endif
