// nvscope-target: nvscope
#pragma once

/// \file annotate/domain.hpp
/// NVTX domains: a library's own namespace of ranges, marks, categories and registered
/// strings, shown as its own row in Nsight Systems.
///
/// A domain is named by a tag type (checked at compile time, created once) or at run time
/// by a string. Both kinds with the same name are the same domain. `default_domain` is
/// NVTX's default (unnamed) domain, where `NVSCOPE_RANGE` puts ranges.
///
/// \code
///   struct my_lib { static constexpr const char* name = "my_lib"; };
///
///   void solve() {
///     NVSCOPE_FUNC_RANGE_IN(my_lib);                       // tag type
///     nvscope::scoped_range r{nvscope::domain::named("io"), "read"}; // run-time name
///   }
/// \endcode

#include <cstdint>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>

#include <nvscope/annotate/attributes.hpp>
#include <nvscope/annotate/detail/name_registry.hpp>
#include <nvscope/annotate/switch.hpp>
#include <nvscope/annotate/message.hpp>

#if NVSCOPE_DETAIL_ENABLED
#include <nvscope/annotate/detail/nvtx_core.hpp>
#endif

namespace nvscope {
inline namespace v1 {

/// Tag of NVTX's default domain (the one `nsys --nvtx-capture=NAME` matches without `@`).
struct default_domain {
  static constexpr const char* name = nullptr;
};

namespace detail {
template <class D, class = void>
struct has_domain_name : std::false_type {};
template <class D>
struct has_domain_name<D, std::void_t<decltype(D::name)>>
    : std::is_convertible<decltype(D::name), const char*> {};

template <class D>
constexpr void check_domain_tag() noexcept {
  static_assert(std::is_class<D>::value, "nvscope: a domain tag must be a struct, e.g. "
                                         "struct my_lib { static constexpr const char* name = \"my_lib\"; };");
  static_assert(has_domain_name<D>::value,
                "nvscope: a domain tag needs a member `static constexpr const char* name = \"...\";` "
                "(e.g. struct my_lib { static constexpr const char* name = \"my_lib\"; };)");
}
} // namespace detail

/// The names of the NVTX domains and registered strings created in this shared object by
/// nvscope (annotations, capture ranges) or by whoever calls `note_nvtx_domain` /
/// `note_nvtx_string`, by handle (`nvtxDomainHandle_t` / `nvtxStringHandle_t` as integers).
/// A tool that starts listening after they were created (the collector) names them from here.
/// The same in every compile mode: translation units built with `NVSCOPE_DISABLE` see the
/// names the others registered.
///
/// \code
///   const nvscope::nvtx_registrations names = nvscope::registered_nvtx_names();
///   for (const auto& [handle, name] : names.domains) std::printf("%s\n", name.c_str());
/// \endcode
struct nvtx_registrations {
  std::unordered_map<std::uint64_t, std::string> domains; ///< domain handle -> domain name
  std::unordered_map<std::uint64_t, std::string> strings; ///< string handle -> registered text
};

/// A copy of every name noted so far (empty when out of memory).
inline nvtx_registrations registered_nvtx_names() {
  auto& r = detail::nvtx_names();
  nvtx_registrations out;
  try {
    std::lock_guard<std::mutex> lock(r.mutex);
    out.domains = r.domains;
    out.strings = r.strings;
  } catch (...) {
    return {};
  }
  return out;
}

/// Notes the name of an NVTX domain created outside nvscope's annotations.
/// \code
///   nvtxDomainHandle_t d = nvtxDomainCreateA("my_lib");
///   nvscope::note_nvtx_domain(d, "my_lib");
/// \endcode
inline void note_nvtx_domain(const void* handle, const char* name) noexcept {
  detail::remember_nvtx_name(detail::nvtx_names().domains, handle, name);
}

/// Notes the text of an NVTX string registered outside nvscope's annotations.
/// \code
///   nvtxStringHandle_t s = nvtxDomainRegisterStringA(d, "step");
///   nvscope::note_nvtx_string(s, "step");
/// \endcode
inline void note_nvtx_string(const void* handle, const char* text) noexcept {
  detail::remember_nvtx_name(detail::nvtx_names().strings, handle, text);
}

inline namespace NVSCOPE_DETAIL_MODE {

/// A handle to a domain; cheap to copy, valid for the whole process. Creating the NVTX
/// domain waits for its first use while annotation is enabled.
/// A null or empty name means the default domain; other names follow name.hpp's rules.
/// \code
///   nvscope::domain io = nvscope::domain::named("io");
///   io.name_category(1, "disk");
///   nvscope::mark(io, "opened");
/// \endcode
class domain {
 public:
  /// NVTX's default domain.
  domain() noexcept = default;

  /// The domain called `name` (run time). Repeated calls with one name give one domain.
  static domain named(name_ref name) noexcept {
#if NVSCOPE_DETAIL_ENABLED
    return domain(&detail::domain_entry_named(name));
#else
    (void)name;
    return domain();
#endif
  }

  /// The domain of tag type `D` (see default_domain for the shape of a tag).
  template <class D>
  static domain of() noexcept {
    detail::check_domain_tag<D>();
#if NVSCOPE_DETAIL_ENABLED
    if constexpr (std::is_same<D, default_domain>::value) {
      return domain();
    } else {
      static detail::domain_entry& e = detail::domain_entry_named(D::name);
      return domain(&e);
    }
#else
    return domain();
#endif
  }

  /// The domain's name; "" for the default domain (and always "" when compiled out).
  const char* name() const noexcept {
#if NVSCOPE_DETAIL_ENABLED
    return entry_ != nullptr ? entry_->name.c_str() : "";
#else
    return "";
#endif
  }

  /// True for NVTX's default domain.
  bool is_default() const noexcept {
#if NVSCOPE_DETAIL_ENABLED
    return entry_ == nullptr || entry_->is_default;
#else
    return true;
#endif
  }

  /// Names category `id` in this domain (what Nsight Systems shows for ranges carrying it).
  void name_category(std::uint32_t id, name_ref category_name) const noexcept {
#if NVSCOPE_DETAIL_ENABLED
    if (!enabled()) return;
    char buffer[max_name_length + 1];
    const std::size_t n = detail::sanitize_name(category_name, buffer);
    (void)n;
    nvtxDomainNameCategoryA(entry().get(), id, buffer);
#else
    (void)id;
    (void)category_name;
#endif
  }

  friend bool operator==(const domain& a, const domain& b) noexcept {
#if NVSCOPE_DETAIL_ENABLED
    return a.entry_ == b.entry_;
#else
    (void)a;
    (void)b;
    return true;
#endif
  }
  friend bool operator!=(const domain& a, const domain& b) noexcept { return !(a == b); }

#if NVSCOPE_DETAIL_ENABLED
  /// \cond internal
  detail::domain_entry& entry() const noexcept {
    return entry_ != nullptr ? *entry_ : detail::default_domain_entry();
  }
  /// \endcond

 private:
  explicit domain(detail::domain_entry* e) noexcept : entry_(e->is_default ? nullptr : e) {}
  detail::domain_entry* entry_ = nullptr;
#endif
};

/// Names category `c` in the domain of tag `D` (default: the default domain).
/// \code
///   nvscope::name_category(nvscope::category{1}, "io");
///   NVSCOPE_RANGE("read", nvscope::category{1});
/// \endcode
template <class D = default_domain>
inline void name_category(category c, name_ref category_name) noexcept {
  domain::of<D>().name_category(c.id, category_name);
}

} // namespace NVSCOPE_DETAIL_MODE
} // namespace v1
} // namespace nvscope
