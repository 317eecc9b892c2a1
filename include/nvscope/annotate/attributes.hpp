// nvscope-target: nvscope
#pragma once

/// \file annotate/attributes.hpp
/// What a range or mark may carry besides its name and colour: a category (a number the
/// tools can filter and group by, optionally named) and one payload value of six types.
///
/// \code
///   nvscope::name_category(nvscope::category{1}, "io");
///   NVSCOPE_RANGE("read_batch", nvscope::category{1}, nvscope::payload{batch_bytes});
///   nvscope::mark("loss", nvscope::payload{0.25});          // a double payload
/// \endcode

#include <cstdint>
#include <tuple>
#include <type_traits>

#include <nvscope/annotate/color.hpp>

namespace nvscope {
inline namespace v1 {

/// A category id. 0 means "no category". Name it with `name_category`.
/// \code
///   NVSCOPE_RANGE("prefetch", nvscope::category{2});
/// \endcode
struct category {
  std::uint32_t id = 0;
  constexpr category() noexcept = default;
  constexpr explicit category(std::uint32_t category_id) noexcept : id(category_id) {}
  friend constexpr bool operator==(category a, category b) noexcept { return a.id == b.id; }
  friend constexpr bool operator!=(category a, category b) noexcept { return a.id != b.id; }
};

/// One number attached to a range or mark: int32, int64, uint32, uint64, float or double,
/// chosen from the argument's type (any integer up to 32 bits becomes int32/uint32, 64-bit
/// integers int64/uint64, `long double` becomes double). `bool` is refused at compile time.
/// \code
///   nvscope::payload a{42};            // int32
///   nvscope::payload b{std::uint64_t{1} << 40};  // uint64
///   nvscope::payload c{1.5f};          // float
/// \endcode
class payload {
 public:
  enum class kind : std::uint8_t { none, int32, int64, uint32, uint64, float32, float64 };

  constexpr payload() noexcept = default;

  template <class T, std::enable_if_t<std::is_arithmetic<T>::value, int> = 0>
  constexpr payload(T value) noexcept { // NOLINT(google-explicit-constructor): payloads read best bare
    static_assert(!std::is_same<T, bool>::value,
                  "nvscope: a bool payload is ambiguous; pass an integer, e.g. nvscope::payload{flag ? 1 : 0}");
    if constexpr (std::is_floating_point<T>::value) {
      if constexpr (sizeof(T) <= sizeof(float)) {
        kind_ = kind::float32;
        f32_ = static_cast<float>(value);
      } else {
        kind_ = kind::float64;
        f64_ = static_cast<double>(value);
      }
    } else if constexpr (std::is_signed<T>::value) {
      if constexpr (sizeof(T) <= 4) {
        kind_ = kind::int32;
        i32_ = static_cast<std::int32_t>(value);
      } else {
        kind_ = kind::int64;
        i64_ = static_cast<std::int64_t>(value);
      }
    } else {
      if constexpr (sizeof(T) <= 4) {
        kind_ = kind::uint32;
        u32_ = static_cast<std::uint32_t>(value);
      } else {
        kind_ = kind::uint64;
        u64_ = static_cast<std::uint64_t>(value);
      }
    }
  }

  constexpr kind type() const noexcept { return kind_; }
  constexpr std::int32_t as_int32() const noexcept { return i32_; }
  constexpr std::int64_t as_int64() const noexcept { return i64_; }
  constexpr std::uint32_t as_uint32() const noexcept { return u32_; }
  constexpr std::uint64_t as_uint64() const noexcept { return u64_; }
  constexpr float as_float() const noexcept { return f32_; }
  constexpr double as_double() const noexcept { return f64_; }

 private:
  kind kind_ = kind::none;
  union {
    std::int32_t i32_;
    std::int64_t i64_;
    std::uint32_t u32_;
    std::uint64_t u64_ = 0;
    float f32_;
    double f64_;
  };
};

namespace detail {
template <class T>
struct is_option
    : std::integral_constant<bool, std::is_same<T, color>::value || std::is_same<T, category>::value ||
                                       std::is_same<T, payload>::value ||
                                       (std::is_arithmetic<T>::value && !std::is_same<T, bool>::value)> {};

// Checked in both modes, so code that compiles with NVSCOPE_DISABLE compiles without it.
template <class... Opts>
constexpr void check_options() noexcept {
  static_assert((is_option<std::decay_t<Opts>>::value && ...),
                "nvscope: a range or mark option must be nvscope::color, nvscope::category, "
                "nvscope::payload or a number (int32/int64/uint32/uint64/float/double)");
}

// The options of one annotation macro, kept until the range or mark is built.
template <class... Opts>
struct option_pack {
  std::tuple<Opts...> values;
};
template <class... Opts>
constexpr option_pack<Opts...> options(const Opts&... o) noexcept {
  check_options<Opts...>();
  return option_pack<Opts...>{std::tuple<Opts...>(o...)};
}
// NVSCOPE_RANGE("name", options...): the name went to the call site already.
template <std::size_t N, class... Opts>
constexpr option_pack<Opts...> options_after_name(const char (&)[N], const Opts&... o) noexcept {
  return options(o...);
}
} // namespace detail

} // namespace v1
} // namespace nvscope
