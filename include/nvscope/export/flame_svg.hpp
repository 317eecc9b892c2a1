// nvscope-target: nvscope
#pragma once

/// \file export/flame_svg.hpp
/// An interactive flame graph of GPU time by NVTX range stack, as one self-contained SVG file
/// that a browser opens (no flamegraph.pl, no speedscope): each frame's width is its GPU
/// time; hover shows a frame's name, time and share; a click zooms into a frame (its callers
/// stay, dimmed, across the full width; "Reset zoom" goes back); "Search" (or Ctrl-F) colours
/// the frames whose name matches a regular expression and shows the share they cover. The
/// script is in the file, so it works offline and from a CI artifact.
///
/// \code
///   nvscope::write_file("gpu.flame.svg", nvscope::to_flame_svg(nvscope::to_folded(t)));
/// \endcode

#include <nvscope/export/detail/svg.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// How the flame graph is drawn.
struct flame_options {
  std::string title = "GPU time by NVTX range"; ///< the heading
  unsigned width = 1200;                        ///< pixels
  unsigned frame_height = 17;                   ///< pixels per level
  double min_frame_px = 0.1;                    ///< narrower frames are left out (their time stays in the parent)
};

namespace detail {

// The stacks of folded text as a tree: node 0 is the root ("all"), children by name.
struct flame_tree {
  struct node {
    std::string name;
    std::uint64_t total = 0;
    std::uint32_t depth = 0;
    std::map<std::string, std::uint32_t, std::less<>> children; // by name, as flamegraph.pl orders them
  };
  std::vector<node> nodes{node{"all", 0, 0, {}}};

  std::uint32_t child(std::uint32_t parent, std::string_view name) {
    const auto it = nodes[parent].children.find(name);
    if (it != nodes[parent].children.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(nodes.size());
    const std::uint32_t depth = nodes[parent].depth + 1;
    nodes[parent].children.emplace(std::string(name), id); // before the push: `nodes` may move
    nodes.push_back(node{std::string(name), 0, depth, {}});
    return id;
  }
  // One folded line, "a;b;c 123"; a line without a weight is skipped.
  void add_line(std::string_view line) {
    const std::size_t space = line.rfind(' ');
    if (space == std::string_view::npos || space + 1 >= line.size()) return;
    std::uint64_t weight = 0;
    for (char c : line.substr(space + 1)) {
      if (c < '0' || c > '9') return;
      weight = weight * 10 + static_cast<std::uint64_t>(c - '0');
    }
    std::uint32_t at = 0;
    nodes[0].total += weight;
    std::string_view stack = line.substr(0, space);
    while (!stack.empty()) {
      const std::size_t semi = stack.find(';');
      at = child(at, stack.substr(0, semi));
      nodes[at].total += weight;
      stack = semi == std::string_view::npos ? std::string_view{} : stack.substr(semi + 1);
    }
  }
};

inline flame_tree read_folded(std::string_view folded) {
  flame_tree tree;
  while (!folded.empty()) {
    const std::size_t nl = folded.find('\n');
    tree.add_line(folded.substr(0, nl));
    folded = nl == std::string_view::npos ? std::string_view{} : folded.substr(nl + 1);
  }
  return tree;
}

// One frame: a group carrying what the script needs (offset and width in the unit of the
// stacks, depth, name), a tooltip, its box and its label (cut to fit; the script cuts again
// as it zooms).
struct flame_frame_writer {
  std::string& out;
  const flame_options& o;
  double total, scale, bottom;

  void frame(const flame_tree::node& n, std::uint64_t x) const {
    const double px = 10 + x * scale, pw = n.total * scale;
    const double y = bottom - (n.depth + 1.0) * o.frame_height;
    const std::string share = fixed(100.0 * n.total / total, 2);
    out += "<g class=\"frame\" data-x=\"" + std::to_string(x) + "\" data-w=\"" + std::to_string(n.total) +
           "\" data-depth=\"" + std::to_string(n.depth) + "\" data-name=\"";
    append_xml(out, n.name);
    out += "\"><title>";
    append_xml(out, n.name);
    out += " (" + readable_ns(static_cast<double>(n.total)) + ", " + share + "%)</title>";
    out += "<rect x=\"" + fixed(px, 2) + "\" y=\"" + fixed(y, 1) + "\" width=\"" + fixed(std::max(pw - 0.5, 0.1), 2) +
           "\" height=\"" + std::to_string(o.frame_height - 1) + "\" rx=\"2\" fill=\"" +
           (n.depth == 0 ? std::string("rgb(230,120,60)") : warm_colour(n.name)) + "\"/>";
    const std::size_t fits = pw > 24 ? static_cast<std::size_t>((pw - 6) / 7) : 0;
    std::string label = fits >= n.name.size() ? n.name : fits > 2 ? n.name.substr(0, fits - 2) + ".." : std::string();
    out += "<text x=\"" + fixed(px + 3, 2) + "\" y=\"" + fixed(y + o.frame_height - 5, 1) + "\">";
    append_xml(out, label);
    out += "</text></g>\n";
  }
};

// Every frame wide enough to draw, parents before children, children in name order.
inline void write_flame_frames(std::string& out, const flame_tree& tree, const flame_options& o, double bottom) {
  const double total = static_cast<double>(std::max<std::uint64_t>(tree.nodes[0].total, 1));
  const flame_frame_writer w{out, o, total, (o.width - 20.0) / total, bottom};
  std::vector<std::pair<std::uint32_t, std::uint64_t>> todo{{0, 0}}; // node, offset
  while (!todo.empty()) {
    const auto [id, x] = todo.back();
    todo.pop_back();
    const auto& n = tree.nodes[id];
    if (n.total * w.scale < o.min_frame_px) continue;
    w.frame(n, x);
    std::uint64_t offset = x + n.total;
    for (auto it = n.children.rbegin(); it != n.children.rend(); ++it) { // pushed last-first: drawn in order
      offset -= tree.nodes[it->second].total;
      todo.emplace_back(it->second, offset);
    }
  }
}

inline const char* flame_style() {
  return "<style>text{font:12px Verdana,Helvetica,sans-serif;fill:#000}.frame text{pointer-events:none}"
         ".frame:hover rect{stroke:#000;stroke-width:0.7}.frame.parent rect{opacity:0.5}.hidden{display:none}"
         ".button{cursor:pointer;fill:#1f4e9a}.heading{font-size:17px}</style>\n";
}

// The flame graph's script: hover, click to zoom, search. Frames carry their own geometry
// in data- attributes; zooming rescales those inside the clicked frame to the full width.
inline constexpr char flame_script[] = R"JS(
var nvscopeFlame = (function () {
  var frames, details, left = 10, width, total, searching = null;
  function attr(g, k) { return +g.getAttribute('data-' + k); }
  function label(g, w) {
    var name = g.getAttribute('data-name'), fits = w > 24 ? Math.floor((w - 6) / 7) : 0;
    g.querySelector('text').textContent = fits >= name.length ? name : fits > 2 ? name.slice(0, fits - 2) + '..' : '';
  }
  function place(g, x, w) {
    var r = g.querySelector('rect'), t = g.querySelector('text');
    r.setAttribute('x', x.toFixed(2)); r.setAttribute('width', Math.max(w - 0.5, 0.1).toFixed(2));
    t.setAttribute('x', (x + 3).toFixed(2)); label(g, w);
  }
  function zoom(target) {
    var x0 = attr(target, 'x'), w0 = attr(target, 'w'), d0 = attr(target, 'depth'), scale = width / w0;
    for (var i = 0; i < frames.length; ++i) {
      var g = frames[i], x = attr(g, 'x'), w = attr(g, 'w'), d = attr(g, 'depth');
      g.classList.remove('parent', 'hidden');
      if (d < d0 && x <= x0 && x + w >= x0 + w0) { g.classList.add('parent'); place(g, left, width); }
      else if (d >= d0 && x >= x0 && x + w <= x0 + w0 && (x - x0 + w) * scale >= 0.1) place(g, left + (x - x0) * scale, w * scale);
      else g.classList.add('hidden');
    }
    document.getElementById('reset').classList.toggle('hidden', d0 === 0);
  }
  function reset() { zoom(frames[0]); }
  function search(term) {
    var re = null;
    if (term) { try { re = new RegExp(term); } catch (e) { re = new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')); } }
    var spans = [];
    for (var i = 0; i < frames.length; ++i) {
      var g = frames[i], hit = re !== null && re.test(g.getAttribute('data-name'));
      var r = g.querySelector('rect');
      if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));
      r.setAttribute('fill', hit ? 'rgb(220,60,220)' : r.getAttribute('data-fill'));
      if (hit) spans.push([attr(g, 'x'), attr(g, 'x') + attr(g, 'w')]);
    }
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var covered = 0, end = -1;
    for (var j = 0; j < spans.length; ++j) {
      var s = Math.max(spans[j][0], end);
      if (spans[j][1] > s) { covered += spans[j][1] - s; end = spans[j][1]; }
    }
    searching = re;
    document.getElementById('matched').textContent = re ? 'Matched: ' + (100 * covered / total).toFixed(2) + '%' : '';
    document.getElementById('search').textContent = re ? 'Reset search' : 'Search';
    return re ? covered / total : 0;
  }
  function ask() {
    if (searching) { search(''); return; }
    var term = window.prompt('Search frames (regular expression)', '');
    if (term) search(term);
  }
  function init() {
    frames = document.querySelectorAll('.frame');
    details = document.getElementById('details');
    width = +document.documentElement.getAttribute('width') - 2 * left;
    if (!frames.length) return;
    total = attr(frames[0], 'w') || 1;
    for (var i = 0; i < frames.length; ++i) {
      (function (g) {
        g.addEventListener('click', function () { zoom(g); });
        g.addEventListener('mouseover', function () { details.textContent = g.querySelector('title').textContent; });
        g.addEventListener('mouseout', function () { details.textContent = ' '; });
      })(frames[i]);
    }
    document.getElementById('reset').addEventListener('click', reset);
    document.getElementById('search').addEventListener('click', ask);
    window.addEventListener('keydown', function (e) { if (e.ctrlKey && e.key === 'f') { e.preventDefault(); ask(); } });
  }
  return { init: init, zoom: zoom, reset: reset, search: search };
})();
window.addEventListener('load', nvscopeFlame.init);
)JS";

} // namespace detail

/// `folded` (to_folded's text, or any `a;b;c weight` lines) as an interactive flame graph:
/// one self-contained SVG file, its script inside, root at the bottom. Weights are read as
/// nanoseconds of GPU time. An empty input gives a picture that says so.
/// \code
///   nvscope::write_file("gpu.flame.svg", nvscope::to_flame_svg(nvscope::to_folded(t)));
/// \endcode
inline std::string to_flame_svg(std::string_view folded, const flame_options& o = {}) {
  const detail::flame_tree tree = detail::read_folded(folded);
  std::uint32_t depth = 0;
  for (const auto& n : tree.nodes) depth = std::max(depth, n.depth);
  const unsigned height = 70 + (depth + 1) * o.frame_height + 30;
  const std::string w = std::to_string(o.width), h = std::to_string(height);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" id=\"nvscope-flame\" width=\"" + w + "\" height=\"" + h +
         "\" viewBox=\"0 0 " + w + " " + h + "\">\n";
  out += detail::flame_style();
  out += "<script type=\"text/ecmascript\"><![CDATA[";
  out += detail::flame_script;
  out += "]]></script>\n<rect width=\"100%\" height=\"100%\" fill=\"rgb(250,248,240)\"/>\n";
  out += "<text class=\"heading\" x=\"" + std::to_string(o.width / 2) + "\" y=\"26\" text-anchor=\"middle\">";
  detail::append_xml(out, o.title);
  out += " (" + detail::readable_ns(static_cast<double>(tree.nodes[0].total)) + ")</text>\n";
  out += "<text id=\"reset\" class=\"button hidden\" x=\"10\" y=\"26\">Reset zoom</text>\n";
  out += "<text id=\"search\" class=\"button\" x=\"" + std::to_string(o.width - 10) + "\" y=\"26\" text-anchor=\"end\">Search</text>\n";
  out += "<text id=\"details\" x=\"10\" y=\"" + std::to_string(height - 10) + "\"> </text>\n";
  out += "<text id=\"matched\" x=\"" + std::to_string(o.width - 10) + "\" y=\"" + std::to_string(height - 10) +
         "\" text-anchor=\"end\"></text>\n";
  if (tree.nodes[0].total == 0) out += "<text x=\"10\" y=\"60\">no GPU time recorded</text>\n";
  out += "<g id=\"frames\">\n";
  if (tree.nodes[0].total != 0) detail::write_flame_frames(out, tree, o, height - 30.0);
  out += "</g>\n</svg>\n";
  return out;
}

} // namespace v1
} // namespace nvscope
