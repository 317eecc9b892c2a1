// nvscope-target: nvscope
#pragma once

/// \file annotate/mark.hpp
/// Marks: instant events (a tick on the timeline), with the same options as ranges.
///
/// \code
///   nvscope::mark("checkpoint_saved");
///   nvscope::mark("loss", nvscope::payload{loss}, nvscope::colors::red);   // double payload
///   nvscope::mark(nvscope::domain::named("io"), "eof");
///   NVSCOPE_MARK("epoch_end", nvscope::payload{epoch});  // compiled out with NVSCOPE_DISABLE
/// \endcode

#include <cstddef>

#include <nvscope/annotate/attributes.hpp>
#include <nvscope/annotate/color.hpp>
#include <nvscope/annotate/switch.hpp>
#include <nvscope/annotate/domain.hpp>
#include <nvscope/annotate/message.hpp>

namespace nvscope {
inline namespace v1 {
inline namespace NVSCOPE_DETAIL_MODE {

/// Emits a mark named `name` in domain `d` (the name is registered once, as for ranges).
template <class... Opts>
inline void mark(const domain& d, name_ref name, const Opts&... opts) noexcept {
  detail::check_options<Opts...>();
#if NVSCOPE_DETAIL_ENABLED
  if (!NVSCOPE_DETAIL_NVTX_LIVE(nvtxDomainMarkEx) || !enabled()) return;
  detail::domain_entry& e = d.entry();
  char buffer[max_name_length + 1];
  const detail::resolved_name r = detail::resolve_name(e, name, buffer, true);
  nvtxEventAttributes_t a = detail::make_attributes(r, current_auto_colors());
  (detail::apply_option(a, opts), ...);
  nvtxDomainMarkEx(e.get(), &a);
#else
  (void)d;
  (void)name;
  ((void)opts, ...);
#endif
}

/// Emits a mark named `name` in the default domain.
template <class... Opts>
inline void mark(name_ref name, const Opts&... opts) noexcept {
  mark(domain(), name, opts...);
}

/// Emits a mark in the domain of tag `D`.
/// \code
///   nvscope::mark_in<my_lib>("cache_miss", nvscope::payload{key});
/// \endcode
template <class D, class... Opts>
inline void mark_in(name_ref name, const Opts&... opts) noexcept {
  mark(domain::of<D>(), name, opts...);
}

} // namespace NVSCOPE_DETAIL_MODE
} // namespace v1
} // namespace nvscope

#if NVSCOPE_DETAIL_ENABLED
/// A mark in the default domain; expands to nothing with NVSCOPE_DISABLE.
#define NVSCOPE_MARK(...) ::nvscope::mark(__VA_ARGS__)
/// A mark in the domain of tag `Domain`; expands to nothing with NVSCOPE_DISABLE.
#define NVSCOPE_MARK_IN(Domain, ...) ::nvscope::mark_in<Domain>(__VA_ARGS__)
#else
#define NVSCOPE_MARK(...)
#define NVSCOPE_MARK_IN(Domain, ...)
#endif
