// nvscope-target: nvscope
#pragma once

/// \file annotate/color.hpp
/// Colours for ranges and marks: ARGB/RGB values, a small named palette, and the automatic
/// colour that nvscope picks from a range's name when none is given.
///
/// The automatic colour is a pure function of the name's bytes (FNV-1a), so the same name
/// has the same colour in every run, every process and every machine.
///
/// \code
///   NVSCOPE_RANGE("load", nvscope::colors::green);          // named palette colour
///   NVSCOPE_RANGE("save", nvscope::color::rgb(255, 128, 0)); // opaque RGB
///   NVSCOPE_RANGE("step");                                   // automatic, stable colour
///   nvscope::set_auto_colors(nvscope::auto_colors::off);     // no automatic colours
/// \endcode

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace nvscope {
inline namespace v1 {

/// A 32-bit ARGB colour (alpha in the top byte), as NVTX takes it.
/// \code
///   constexpr nvscope::color teal = nvscope::color::rgb(0, 128, 128);
///   static_assert(teal.argb == 0xFF008080u);
/// \endcode
struct color {
  std::uint32_t argb = 0xFF000000u;

  constexpr color() noexcept = default;
  /// From a packed 0xAARRGGBB value. An alpha of 0 is kept as given (tools may draw it clear).
  constexpr explicit color(std::uint32_t argb_value) noexcept : argb(argb_value) {}

  /// Opaque colour from red, green and blue.
  static constexpr color rgb(std::uint8_t r, std::uint8_t g, std::uint8_t b) noexcept {
    return color{0xFF000000u | (std::uint32_t{r} << 16) | (std::uint32_t{g} << 8) | std::uint32_t{b}};
  }
  /// Colour with an explicit alpha.
  static constexpr color from_argb(std::uint8_t a, std::uint8_t r, std::uint8_t g, std::uint8_t b) noexcept {
    return color{(std::uint32_t{a} << 24) | (std::uint32_t{r} << 16) | (std::uint32_t{g} << 8) | std::uint32_t{b}};
  }
  /// Opaque colour from a packed 0xRRGGBB value.
  static constexpr color from_rgb(std::uint32_t rgb_value) noexcept {
    return color{0xFF000000u | (rgb_value & 0x00FFFFFFu)};
  }

  constexpr std::uint8_t alpha() const noexcept { return static_cast<std::uint8_t>(argb >> 24); }
  constexpr std::uint8_t red() const noexcept { return static_cast<std::uint8_t>(argb >> 16); }
  constexpr std::uint8_t green() const noexcept { return static_cast<std::uint8_t>(argb >> 8); }
  constexpr std::uint8_t blue() const noexcept { return static_cast<std::uint8_t>(argb); }

  friend constexpr bool operator==(color a, color b) noexcept { return a.argb == b.argb; }
  friend constexpr bool operator!=(color a, color b) noexcept { return a.argb != b.argb; }
};

/// A small palette of colours that stay distinguishable next to each other on a timeline.
/// The automatic colours are drawn from it (in `auto_colors::palette` mode).
/// \code
///   NVSCOPE_RANGE("h2d_copy", nvscope::colors::orange);
/// \endcode
namespace colors {
inline constexpr color blue = color::from_rgb(0x3A6FD8);
inline constexpr color orange = color::from_rgb(0xF28A1C);
inline constexpr color green = color::from_rgb(0x2FA84F);
inline constexpr color red = color::from_rgb(0xD93A3A);
inline constexpr color purple = color::from_rgb(0x8C5BC4);
inline constexpr color brown = color::from_rgb(0x8F5E3B);
inline constexpr color pink = color::from_rgb(0xE67AC0);
inline constexpr color gray = color::from_rgb(0x7F7F7F);
inline constexpr color olive = color::from_rgb(0xA8B22A);
inline constexpr color cyan = color::from_rgb(0x1CB8C9);
inline constexpr color yellow = color::from_rgb(0xF2CF1D);
inline constexpr color navy = color::from_rgb(0x24337A);
inline constexpr color black = color::from_rgb(0x000000);
inline constexpr color white = color::from_rgb(0xFFFFFF);

/// The colours automatic colouring picks from, in a fixed order (part of the stable contract).
inline constexpr color palette[] = {blue, orange, green, red, purple, brown,
                                    pink, gray, olive, cyan, yellow, navy};
inline constexpr std::size_t palette_size = sizeof(palette) / sizeof(palette[0]);
} // namespace colors

/// How a range or mark without an explicit colour is coloured.
enum class auto_colors : std::uint8_t {
  palette,  ///< one of `colors::palette`, chosen by a hash of the name (default)
  spectrum, ///< a fully saturated hue chosen by a hash of the name (more colours, less contrast)
  off       ///< no colour: the tool's default
};

namespace detail {
/// FNV-1a, 32 bits: stable across runs, processes and platforms.
constexpr std::uint32_t fnv1a(std::string_view s) noexcept {
  std::uint32_t h = 2166136261u;
  for (char c : s) {
    h ^= static_cast<std::uint8_t>(c);
    h *= 16777619u;
  }
  return h;
}

constexpr color hue_color(std::uint32_t hash) noexcept {
  // Hue in [0, 1530): six ramps of 255 steps; full saturation, full value.
  const std::uint32_t h = hash % 1530u;
  const std::uint32_t sector = h / 255u;
  const auto x = static_cast<std::uint8_t>(h % 255u);
  const auto up = x, down = static_cast<std::uint8_t>(255u - x);
  switch (sector) {
    case 0: return color::rgb(255, up, 0);
    case 1: return color::rgb(down, 255, 0);
    case 2: return color::rgb(0, 255, up);
    case 3: return color::rgb(0, down, 255);
    case 4: return color::rgb(up, 0, 255);
    default: return color::rgb(255, 0, down);
  }
}

// The automatic colour of a name whose fnv1a is `h`.
constexpr color color_from_hash(std::uint32_t h, auto_colors mode) noexcept {
  if (mode == auto_colors::spectrum) return hue_color(h);
  return colors::palette[h % colors::palette_size];
}

// 0: not read yet; otherwise 1 + the auto_colors value. Constant-initialised, no guard.
inline std::atomic<int>& auto_colors_state() noexcept {
  static std::atomic<int> state{0};
  return state;
}
} // namespace detail

/// The automatic colour of `name` in the given mode (`palette` when `off` is passed).
/// \code
///   assert(nvscope::color_for("forward") == nvscope::color_for("forward"));
/// \endcode
constexpr color color_for(std::string_view name, auto_colors mode = auto_colors::palette) noexcept {
  return detail::color_from_hash(detail::fnv1a(name), mode);
}

/// Chooses how ranges and marks without a colour are coloured, for every call site that
/// runs for the first time from now on (a call site computes its colour once). Takes
/// precedence over the environment variable `NVSCOPE_COLORS` (`palette`, `spectrum`, `off`).
/// \code
///   int main() { nvscope::set_auto_colors(nvscope::auto_colors::spectrum); ... }
/// \endcode
inline void set_auto_colors(auto_colors mode) noexcept {
  detail::auto_colors_state().store(1 + static_cast<int>(mode), std::memory_order_relaxed);
}

/// The current automatic colouring mode: the last `set_auto_colors`, else `NVSCOPE_COLORS`
/// (an unknown value reads as `palette`), else `palette`.
inline auto_colors current_auto_colors() noexcept {
  int s = detail::auto_colors_state().load(std::memory_order_relaxed);
  if (s == 0) {
    auto_colors mode = auto_colors::palette;
    if (const char* env = std::getenv("NVSCOPE_COLORS")) {
      if (std::strcmp(env, "spectrum") == 0) mode = auto_colors::spectrum;
      else if (std::strcmp(env, "off") == 0 || std::strcmp(env, "none") == 0) mode = auto_colors::off;
    }
    int expected = 0;
    detail::auto_colors_state().compare_exchange_strong(expected, 1 + static_cast<int>(mode),
                                                        std::memory_order_relaxed);
    s = detail::auto_colors_state().load(std::memory_order_relaxed);
  }
  return static_cast<auto_colors>(s - 1);
}

} // namespace v1
} // namespace nvscope
