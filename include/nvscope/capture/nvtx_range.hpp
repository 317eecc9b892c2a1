// nvscope-target: nvscope
#pragma once

/// \file capture/nvtx_range.hpp
/// The NVTX capture mechanism: while capture is on, an NVTX range NAME is open in domain
/// DOMAIN, so that `nsys profile --capture-range=nvtx --nvtx-capture=NAME@DOMAIN` records
/// exactly the captured steps. The name is a registered string, which nsys matches by
/// default (without `NSYS_NVTX_PROFILER_REGISTER_ONLY=0`). The range is a start/end range,
/// so that capture may start on one thread and stop on another. Needs no CUDA.
///
/// \code
///   nvscope::add_capture_backend(nvscope::nvtx_capture_range());   // "capture@nvscope"
///   // nsys profile --capture-range=nvtx --nvtx-capture=capture@nvscope ./train
/// \endcode

#include <nvscope/annotate/domain.hpp>
#include <nvscope/capture/backend.hpp>
#include <nvscope/detail/quote.hpp>

#include <nvtx3/nvToolsExt.h>

#include <string>
#include <utility>

namespace nvscope {
inline namespace v1 {

/// A capture backend that opens and closes a registered-string NVTX start/end range.
///
/// \code
///   nvscope::nvtx_capture_backend mine("profile_me", "my_lib");  // --nvtx-capture=profile_me@my_lib
///   nvscope::add_capture_backend(mine);
/// \endcode
class nvtx_capture_backend : public capture_backend {
 public:
  /// `range_name` and `domain_name` must be non-empty and must not contain '@'.
  explicit nvtx_capture_backend(std::string range_name = "capture", std::string domain_name = "nvscope")
      : range_(std::move(range_name)), domain_name_(std::move(domain_name)),
        label_("nvtx:" + range_ + "@" + domain_name_) {}

  const char* name() const noexcept override { return label_.c_str(); }

  /// What to pass to nsys: `--nvtx-capture=<this>`.
  std::string nsys_capture_argument() const { return range_ + "@" + domain_name_; }

  capture_error start() override {
    if (range_.empty() || domain_name_.empty() || range_.find('@') != std::string::npos ||
        domain_name_.find('@') != std::string::npos)
      return {capture_errc::backend_failed, 0,
              "nvscope: NVTX capture range '" + detail::escape_input(range_ + "@" + domain_name_, 256) +
                  "' is not usable (empty name or domain, or an '@' inside)"};
    if (!domain_) {
      domain_ = nvtxDomainCreateA(domain_name_.c_str());
      string_ = nvtxDomainRegisterStringA(domain_, range_.c_str());
      // Named where the collector looks, should it start listening after this first use.
      note_nvtx_domain(domain_, domain_name_.c_str());
      note_nvtx_string(string_, range_.c_str());
    }
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = string_;
    id_ = nvtxDomainRangeStartEx(domain_, &a);
    return {};
  }

  capture_error stop() override {
    nvtxDomainRangeEnd(domain_, id_);
    id_ = 0;
    return {};
  }

 private:
  std::string range_;
  std::string domain_name_;
  std::string label_;
  nvtxDomainHandle_t domain_ = nullptr;
  nvtxStringHandle_t string_ = nullptr;
  nvtxRangeId_t id_ = 0;
};

/// The process's default NVTX capture range, `capture@nvscope`.
///
/// \code
///   nvscope::add_capture_backend(nvscope::nvtx_capture_range());
/// \endcode
inline nvtx_capture_backend& nvtx_capture_range() {
  static nvtx_capture_backend b;
  return b;
}

} // namespace v1
} // namespace nvscope
