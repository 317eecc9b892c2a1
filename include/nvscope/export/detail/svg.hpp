#pragma once
// Internal: what nvscope's SVG pictures share (export/flame_svg.hpp, export/charts_svg.hpp):
// XML text, colours, durations as people read them, and the charts' zoom script. Not promised.

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace nvscope {
inline namespace v1 {
namespace detail {

// `s` as XML character data or an attribute value: markup escaped, control characters and
// bytes that are not UTF-8 replaced by '?' (a browser refuses the whole file for one of them).
inline void append_xml(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else if (c == '\'') out += "&#39;";
    else if (c < 0x20) out += c == '\t' ? ' ' : '?';
    else if (c < 0x80) out += static_cast<char>(c);
    else {
      const std::size_t n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
      bool ok = n != 0 && i + n <= s.size();
      for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
      if (!ok) {
        out += '?';
        continue;
      }
      out.append(s.substr(i, n));
      i += n - 1;
    }
  }
}

inline std::string xml(std::string_view s) {
  std::string out;
  append_xml(out, s);
  return out;
}

// A number with `decimals` digits after the point, as SVG coordinates want it.
inline std::string fixed(double v, int decimals = 1) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// A duration in the unit that keeps it readable (ns, us, ms or s, two or three digits).
inline std::string readable_ns(double ns) {
  if (ns < 1e3) return fixed(ns, 0) + " ns";
  if (ns < 1e6) return fixed(ns / 1e3, ns < 1e4 ? 2 : 1) + " us";
  if (ns < 1e9) return fixed(ns / 1e6, ns < 1e7 ? 2 : 1) + " ms";
  return fixed(ns / 1e9, 2) + " s";
}

// A warm colour chosen from the name (FNV-1a), the same in every picture and every run, so
// that a kernel keeps its colour from one flame graph to the next.
inline std::string warm_colour(std::string_view name) {
  std::uint32_t h = 2166136261u;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 16777619u;
  const unsigned r = 205 + h % 50, g = 80 + (h >> 8) % 140, b = 40 + (h >> 16) % 50;
  return "rgb(" + std::to_string(r) + "," + std::to_string(g) + "," + std::to_string(b) + ")";
}

// The charts' script: a click on a plot (a <g class="plot"> holding a <g class="zoom">) zooms
// its time axis four times around the point clicked, keeping the plot filled; "Reset zoom"
// or a double click goes back. The span shown is written in the plot's caption.
inline constexpr char chart_script[] = R"JS(
var nvscopeChart = (function () {
  function state(p) { return { k: +(p.getAttribute('data-k') || 1), t: +(p.getAttribute('data-t') || 0) }; }
  function apply(p, k, t) {
    p.setAttribute('data-k', k); p.setAttribute('data-t', t);
    p.querySelector('.zoom').setAttribute('transform', 'translate(' + t + ',0) scale(' + k + ',1)');
    var left = +p.getAttribute('data-left'), width = +p.getAttribute('data-width');
    var v0 = +p.getAttribute('data-v0'), v1 = +p.getAttribute('data-v1');
    var unit = p.getAttribute('data-unit') || 'ns';
    var value = function (x) {
      var f = (x - left) / width;
      return unit === 'log-ns' ? Math.exp(Math.log(v0) + f * (Math.log(v1) - Math.log(v0))) : v0 + f * (v1 - v0);
    };
    var say = function (v) { return unit === 'step' ? 'step ' + Math.max(0, Math.floor(v) + 1) : show(v); };
    var cap = p.querySelector('.caption');
    if (cap) cap.textContent = k > 1 ? 'zoom x' + k + ': ' + say(value((left - t) / k)) + ' to ' +
        say(value((left + width - t) / k)) + ' (double click: back)' : '';
  }
  function show(ns) {
    if (ns < 1e3) return ns.toFixed(0) + ' ns';
    if (ns < 1e6) return (ns / 1e3).toFixed(1) + ' us';
    if (ns < 1e9) return (ns / 1e6).toFixed(2) + ' ms';
    return (ns / 1e9).toFixed(2) + ' s';
  }
  function zoomAt(p, x) {
    var s = state(p), left = +p.getAttribute('data-left'), width = +p.getAttribute('data-width');
    var data = (x - s.t) / s.k, k = Math.min(s.k * 4, 65536);
    var t = x - k * data;
    t = Math.min(left - k * left, Math.max(left + width - k * (left + width), t));
    apply(p, k, t);
  }
  function point(evt) {
    var svg = document.documentElement, pt = svg.createSVGPoint();
    pt.x = evt.clientX; pt.y = evt.clientY;
    return pt.matrixTransform(svg.getScreenCTM().inverse());
  }
  function init() {
    var plots = document.querySelectorAll('.plot');
    for (var i = 0; i < plots.length; ++i) {
      (function (p) {
        p.addEventListener('click', function (evt) { zoomAt(p, point(evt).x); });
        p.addEventListener('dblclick', function () { apply(p, 1, 0); });
      })(plots[i]);
    }
    var reset = document.getElementById('reset');
    if (reset) reset.addEventListener('click', function () { for (var i = 0; i < plots.length; ++i) apply(plots[i], 1, 0); });
  }
  return { init: init, zoomAt: zoomAt, reset: function (p) { apply(p, 1, 0); } };
})();
window.addEventListener('load', nvscopeChart.init);
)JS";

} // namespace detail
} // namespace v1
} // namespace nvscope
