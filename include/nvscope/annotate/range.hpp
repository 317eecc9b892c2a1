// nvscope-target: nvscope
#pragma once

/// \file annotate/range.hpp
/// Ranges: a named span of time on one thread (scoped, nested) or between any two points
/// of a program (unique, may start and end on different threads).
///
/// Macros (a range in one line; the name is a string literal, registered once per call
/// site, coloured automatically from the name unless a colour is given):
/// - `NVSCOPE_RANGE("name", options...)` and `NVSCOPE_RANGE_IN(Domain, "name", options...)`
/// - `NVSCOPE_FUNC_RANGE(options...)` and `NVSCOPE_FUNC_RANGE_IN(Domain, options...)`:
///   named after the enclosing function (qualified, with its parameter list; template
///   arguments dropped; lambdas carry their line)
/// - `NVSCOPE_RANGE_F("layer_%d", i)` and `NVSCOPE_RANGE_F_IN(Domain, "fmt", ...)`:
///   printf-style name built on the stack (no heap), registered once per distinct name
///
/// Options, in any order: `nvscope::color`, `nvscope::category`, a payload
/// (`nvscope::payload{x}` or a bare number).
///
/// \code
///   void train(int steps) {
///     NVSCOPE_FUNC_RANGE();
///     for (int s = 0; s < steps; ++s) {
///       NVSCOPE_RANGE_F("step_%d", s);
///       { NVSCOPE_RANGE("forward", nvscope::colors::green, nvscope::payload{s}); forward(); }
///       { NVSCOPE_RANGE("backward"); backward(); }
///     }
///   }
/// \endcode

#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <new>
#include <tuple>
#include <utility>

#include <nvscope/annotate/attributes.hpp>
#include <nvscope/annotate/color.hpp>
#include <nvscope/annotate/switch.hpp>
#include <nvscope/annotate/domain.hpp>
#include <nvscope/annotate/message.hpp>

namespace nvscope {
inline namespace v1 {
namespace detail {
struct formatted_tag {};
struct function_site {};
inline namespace NVSCOPE_DETAIL_MODE {

#if NVSCOPE_DETAIL_ENABLED
// What one macro call site keeps: a constant-initialised function-local static (no guard),
// filled at its first use while annotation is enabled (domain, registered name, colour).
struct lazy_site : site_flag {
  domain_entry& (*domain_of)() noexcept;
  const char* text; // the literal, or __PRETTY_FUNCTION__
  std::size_t size;
  int line;         // > 0: a function range (text is a signature)
  nvtxDomainHandle_t domain = nullptr;
  nvtxEventAttributes_t attr{};

  constexpr lazy_site(domain_entry& (*d)() noexcept, const char* t, std::size_t n, int function_line) noexcept
      : domain_of(d), text(t), size(n), line(function_line) {}

  // Slow path: fills the site once and links it, unless annotation is off. Under the list's
  // lock, so that set_enabled(false) cannot miss a site being switched on.
#if defined(__GNUC__) || defined(__clang__)
  __attribute__((noinline, cold))
#endif
  bool activate() noexcept {
    auto& list = site_list();
    std::lock_guard<std::mutex> lock(list.mutex);
    if (!enabled()) return false;
    if (!linked) {
      domain_entry& d = domain_of();
      domain = d.get();
      char buffer[max_name_length + 1];
      char scratch[max_name_length + 1];
      resolved_name r;
      if (line > 0) {
        const std::size_t n = function_name(text, line, buffer);
        r = resolve_name(d, name_ref(std::string_view(buffer, n)), scratch, false);
        if (r.handle == nullptr) r.text = "(nvscope: out of memory)";
      } else {
        r = resolve_name(d, name_ref(std::string_view(text, size)), scratch, false);
        if (r.handle == nullptr) r.text = name_is_clean(text, size) ? text : "(nvscope: out of memory)";
      }
      attr = make_attributes(r, current_auto_colors());
      linked = true;
      next = list.head;
      list.head = this;
    }
    active.store(true, std::memory_order_release);
    return true;
  }
};

template <class D>
inline domain_entry& domain_entry_of() noexcept {
  return domain::of<D>().entry();
}

template <class... Opts>
inline nvtxEventAttributes_t attributes_with(const nvtxEventAttributes_t& base, const option_pack<Opts...>& pack) noexcept {
  nvtxEventAttributes_t a = base;
  std::apply([&a](const auto&... o) { (apply_option(a, o), ...); }, pack.values);
  return a;
}
#endif
} // namespace NVSCOPE_DETAIL_MODE
} // namespace detail

inline namespace NVSCOPE_DETAIL_MODE {

/// A range that begins where it is declared and ends at the end of the scope, on the same
/// thread (NVTX push/pop). Neither copyable nor movable, and never on the heap, so its
/// nesting always matches the scopes'. Exceptions unwinding through it end it.
///
/// A run-time name (any `name_ref`) is registered in the range's domain the first time it
/// is seen (later uses cost a hash lookup); see name.hpp for null/empty/long/invalid names.
/// \code
///   {
///     nvscope::scoped_range r{"load_batch"};                       // default domain
///     nvscope::scoped_range d{nvscope::domain::named("io"), file_name, nvscope::colors::orange};
///   }
/// \endcode
class scoped_range {
 public:
  /// A range named `name` in the default domain.
  template <class... Opts>
  explicit scoped_range(name_ref name, const Opts&... opts) noexcept : scoped_range(domain(), name, opts...) {}

  /// A range named `name` in domain `d`.
  template <class... Opts>
  scoped_range(const domain& d, name_ref name, const Opts&... opts) noexcept {
    detail::check_options<Opts...>();
#if NVSCOPE_DETAIL_ENABLED
    if (!NVSCOPE_DETAIL_NVTX_LIVE(nvtxDomainRangePushEx) || !enabled()) return;
    detail::domain_entry& e = d.entry();
    char buffer[max_name_length + 1];
    const detail::resolved_name r = detail::resolve_name(e, name, buffer, true);
    nvtxEventAttributes_t a = detail::make_attributes(r, current_auto_colors());
    (detail::apply_option(a, opts), ...);
    push(e.get(), a);
#else
    (void)d;
    (void)name;
    ((void)opts, ...);
#endif
  }

  /// A range in domain `d` named printf-style (what NVSCOPE_RANGE_F expands to). Nothing is
  /// formatted while annotation is disabled.
  scoped_range(detail::formatted_tag, const domain& d, const char* format, ...) noexcept NVSCOPE_DETAIL_PRINTF(4, 5) {
#if NVSCOPE_DETAIL_ENABLED
    if (!NVSCOPE_DETAIL_NVTX_LIVE(nvtxDomainRangePushEx) || !enabled()) return;
    char buffer[max_name_length + 1];
    bool truncated = false;
    va_list args;
    va_start(args, format);
    const std::size_t n = detail::format_name(buffer, &truncated, format, args);
    va_end(args);
    detail::domain_entry& e = d.entry();
    const detail::resolved_name r = detail::registered_clean(e, buffer, n, true, buffer);
    const nvtxEventAttributes_t a = detail::make_attributes(r, current_auto_colors());
    push(e.get(), a);
#else
    (void)d;
    (void)format;
#endif
  }

#if NVSCOPE_DETAIL_ENABLED
  /// \cond internal
  // What the literal and function macros expand to; `s` is null while disabled.
  template <class... Opts>
  scoped_range(detail::lazy_site& s, const detail::option_pack<Opts...>& pack) noexcept {
    if (NVSCOPE_DETAIL_NVTX_LIVE(nvtxDomainRangePushEx) &&
        (NVSCOPE_DETAIL_LIKELY(s.active.load(std::memory_order_acquire)) || (enabled() && s.activate()))) {
      if constexpr (sizeof...(Opts) == 0) {
        (void)pack;
        push(s.domain, s.attr);
      } else {
        push(s.domain, detail::attributes_with(s.attr, pack));
      }
    }
  }
  /// \endcond
#endif

  ~scoped_range() noexcept {
#if NVSCOPE_DETAIL_ENABLED
    if (pushed_) nvtxDomainRangePop(domain_);
#endif
  }

  scoped_range(const scoped_range&) = delete;
  scoped_range(scoped_range&&) = delete;
  scoped_range& operator=(const scoped_range&) = delete;
  scoped_range& operator=(scoped_range&&) = delete;
  static void* operator new(std::size_t) = delete;
  static void* operator new[](std::size_t) = delete;

 private:
#if NVSCOPE_DETAIL_ENABLED
  void push(nvtxDomainHandle_t d, const nvtxEventAttributes_t& a) noexcept {
    domain_ = d;
    nvtxDomainRangePushEx(d, &a);
    pushed_ = true;
  }
  nvtxDomainHandle_t domain_ = nullptr;
  bool pushed_ = false;
#endif
};

/// A range with a handle: starts when constructed, ends at `end()` or when the handle is
/// destroyed, on whatever thread that happens (NVTX start/end). Movable, not copyable.
/// `end()` is idempotent and safe to race with another `end()`; a moved-from or
/// default-constructed handle ends nothing. A range never ended explicitly ends in the
/// handle's destructor.
/// \code
///   nvscope::unique_range copy{"h2d_copy", nvscope::colors::orange};
///   std::thread t([r = std::move(copy)]() mutable { wait_for_copy(); r.end(); });
/// \endcode
class unique_range {
 public:
  /// An empty handle (no range).
  unique_range() noexcept = default;

  /// Starts a range named `name` in the default domain.
  template <class... Opts>
  explicit unique_range(name_ref name, const Opts&... opts) noexcept : unique_range(domain(), name, opts...) {}

  /// Starts a range named `name` in domain `d`.
  template <class... Opts>
  unique_range(const domain& d, name_ref name, const Opts&... opts) noexcept {
    detail::check_options<Opts...>();
#if NVSCOPE_DETAIL_ENABLED
    if (!NVSCOPE_DETAIL_NVTX_LIVE(nvtxDomainRangeStartEx) || !enabled()) return;
    detail::domain_entry& e = d.entry();
    char buffer[max_name_length + 1];
    const detail::resolved_name r = detail::resolve_name(e, name, buffer, true);
    nvtxEventAttributes_t a = detail::make_attributes(r, current_auto_colors());
    (detail::apply_option(a, opts), ...);
    domain_ = e.get();
    id_ = nvtxDomainRangeStartEx(domain_, &a);
    live_.store(true, std::memory_order_release);
#else
    (void)d;
    (void)name;
    ((void)opts, ...);
#endif
  }

  unique_range(unique_range&& other) noexcept { take(other); }
  unique_range& operator=(unique_range&& other) noexcept {
    if (this != &other) {
      end();
      take(other);
    }
    return *this;
  }
  unique_range(const unique_range&) = delete;
  unique_range& operator=(const unique_range&) = delete;

  ~unique_range() noexcept { end(); }

  /// Ends the range; later calls (and the destructor) do nothing.
  void end() noexcept {
#if NVSCOPE_DETAIL_ENABLED
    if (live_.exchange(false, std::memory_order_acq_rel)) nvtxDomainRangeEnd(domain_, id_);
#endif
  }

  /// True while the range has started and not ended.
  bool active() const noexcept {
#if NVSCOPE_DETAIL_ENABLED
    return live_.load(std::memory_order_acquire);
#else
    return false;
#endif
  }

 private:
  void take(unique_range& other) noexcept {
#if NVSCOPE_DETAIL_ENABLED
    const bool live = other.live_.exchange(false, std::memory_order_acq_rel);
    domain_ = other.domain_;
    id_ = other.id_;
    live_.store(live, std::memory_order_release);
#else
    (void)other;
#endif
  }
#if NVSCOPE_DETAIL_ENABLED
  nvtxDomainHandle_t domain_ = nullptr;
  nvtxRangeId_t id_ = 0;
  std::atomic<bool> live_{false};
#endif
};

} // namespace NVSCOPE_DETAIL_MODE
} // namespace v1
} // namespace nvscope

#if NVSCOPE_DETAIL_ENABLED

#define NVSCOPE_DETAIL_RANGE(id, Domain, ...)                                                         \
  static ::nvscope::detail::lazy_site NVSCOPE_DETAIL_CAT(id, _site)(                                   \
      &::nvscope::detail::domain_entry_of<Domain>, "" NVSCOPE_DETAIL_FIRST(__VA_ARGS__, ~),            \
      sizeof("" NVSCOPE_DETAIL_FIRST(__VA_ARGS__, ~)) - 1, 0);                                          \
  ::nvscope::scoped_range NVSCOPE_DETAIL_CAT(id, _range)(NVSCOPE_DETAIL_CAT(id, _site),                \
                                                         ::nvscope::detail::options_after_name(__VA_ARGS__))
#define NVSCOPE_RANGE_IN(Domain, ...) NVSCOPE_DETAIL_RANGE(NVSCOPE_DETAIL_UNIQUE(nvscope_), Domain, __VA_ARGS__)

#define NVSCOPE_DETAIL_FUNC_RANGE(id, Domain, ...)                                                     \
  static ::nvscope::detail::lazy_site NVSCOPE_DETAIL_CAT(id, _site)(                                   \
      &::nvscope::detail::domain_entry_of<Domain>, NVSCOPE_DETAIL_PRETTY_FUNCTION, 0, __LINE__);        \
  ::nvscope::scoped_range NVSCOPE_DETAIL_CAT(id, _range)(NVSCOPE_DETAIL_CAT(id, _site),                \
                                                         ::nvscope::detail::options(__VA_ARGS__))
#define NVSCOPE_FUNC_RANGE_IN(Domain, ...) NVSCOPE_DETAIL_FUNC_RANGE(NVSCOPE_DETAIL_UNIQUE(nvscope_), Domain, __VA_ARGS__)

#define NVSCOPE_RANGE_F_IN(Domain, ...)                                                                 \
  ::nvscope::scoped_range NVSCOPE_DETAIL_UNIQUE(nvscope_range_)(                                        \
      ::nvscope::detail::formatted_tag{}, ::nvscope::domain::of<Domain>(), __VA_ARGS__)

#else // NVSCOPE_DISABLE: the macros vanish, their arguments are not evaluated.

#define NVSCOPE_RANGE_IN(Domain, ...)
#define NVSCOPE_FUNC_RANGE_IN(Domain, ...)
#define NVSCOPE_RANGE_F_IN(Domain, ...)

#endif

/// A scoped range named by a string literal, in the default domain.
#define NVSCOPE_RANGE(...) NVSCOPE_RANGE_IN(::nvscope::default_domain, __VA_ARGS__)
/// A scoped range named after the enclosing function, in the default domain.
#define NVSCOPE_FUNC_RANGE(...) NVSCOPE_FUNC_RANGE_IN(::nvscope::default_domain, __VA_ARGS__)
/// A scoped range with a printf-style name, in the default domain.
#define NVSCOPE_RANGE_F(...) NVSCOPE_RANGE_F_IN(::nvscope::default_domain, __VA_ARGS__)
