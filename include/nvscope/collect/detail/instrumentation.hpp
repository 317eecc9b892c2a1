// nvscope-target: cupti
#pragma once

// Beginning and ending the CUPTI instrumentation, symmetric: subscribe, enable the callbacks,
// set the thread id type, register the buffer callbacks, enable the activity kinds; and the
// same undone in reverse. How far `begin` got is a stage, so that a failure part way, and the
// final `end`, undo exactly what was done. Problems are kept as one-line messages.

#include <nvscope/collect/detail/activity_kinds.hpp>
#include <nvscope/collect/detail/callbacks.hpp>
#include <nvscope/collect/detail/cupti_api.hpp>
#include <nvscope/collect/detail/nvtx_listener.hpp>
#include <nvscope/collect/detail/process_state.hpp>

#include <cupti.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// How far the instrumentation got, in the order of its steps.
enum class instrumentation_stage : std::uint8_t {
  none,
  subscribed,         // cuptiSubscribe (with the API and NVTX callbacks it enabled)
  thread_ids_set,     // cuptiSetThreadIdType(SYSTEM)
  buffers_registered, // cuptiActivityRegisterCallbacks: cannot be undone; no decoder attached afterwards
  kinds_enabled,      // cuptiActivityEnable, for each kind in `enabled`
};

class instrumentation {
 public:
  // Begins every step; on a failure, undoes what was done and returns false.
  bool begin(const instrumentation_plan& plan) {
    plan_ = plan;
    stage_ = instrumentation_stage::none;
    const bool ok = subscribe() && set_thread_ids() && register_buffers() && enable_kinds();
    if (!ok) end();
    return ok;
  }

  // Flushes, then undoes each step in reverse. Returns the records CUPTI says it dropped.
  std::uint64_t end() {
    std::uint64_t dropped = 0;
    if (stage_ >= instrumentation_stage::kinds_enabled) dropped = disable_kinds();
    if (stage_ >= instrumentation_stage::thread_ids_set) cupti().cuptiSetThreadIdType(prior_thread_type_);
    if (stage_ >= instrumentation_stage::subscribed && collector_state().subscriber != nullptr) unsubscribe();
    stage_ = instrumentation_stage::none;
    return dropped;
  }

  instrumentation_stage stage() const noexcept { return stage_; }

  // The problems met since the last call, oldest first.
  std::vector<std::string> take_problems() { return std::exchange(problems_, {}); }

 private:
  bool check(const call_status& s) {
    if (!s) problems_.push_back(s.message);
    return static_cast<bool>(s);
  }

  bool subscribe() {
    if (!plan_.subscribes()) return true;
    auto& p = collector_state();
    if (!check(NVSCOPE_CUPTI_CALL(cuptiSubscribe, (&p.subscriber, &on_callback, nullptr)))) return false;
    stage_ = instrumentation_stage::subscribed;
    return (!plan_.host_callbacks() || enable_api_callbacks(1)) && (!plan_.nvtx || enable_nvtx_callbacks(1)) &&
           (!plan_.profiler_calls || enable_profiler_callbacks(1));
  }

  void unsubscribe() {
    auto& p = collector_state();
    if (plan_.host_callbacks()) enable_api_callbacks(0);
    if (plan_.nvtx) enable_nvtx_callbacks(0);
    if (plan_.profiler_calls) enable_profiler_callbacks(0);
    check(NVSCOPE_CUPTI_CALL(cuptiUnsubscribe, (p.subscriber)));
    p.subscriber = nullptr;
  }

  bool enable_nvtx_callbacks(std::uint32_t enable) {
    auto& p = collector_state();
    for (CUpti_CallbackId id : nvtx_callback_list::ids) {
      auto s = NVSCOPE_CUPTI_CALL(cuptiEnableCallback, (enable, p.subscriber, CUPTI_CB_DOMAIN_NVTX, id));
      if (!s && enable) return check(s);
    }
    return true;
  }

  // Profiler start and stop in both API domains (a runtime call and the driver call inside
  // it give two starts; the windows are built so that this does not matter).
  bool enable_profiler_callbacks(std::uint32_t enable) {
    auto& p = collector_state();
    const struct {
      CUpti_CallbackDomain domain;
      CUpti_CallbackId id;
    } calls[] = {{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000},
                 {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000},
                 {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart},
                 {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop}};
    for (const auto& c : calls) {
      auto s = NVSCOPE_CUPTI_CALL(cuptiEnableCallback, (enable, p.subscriber, c.domain, c.id));
      if (!s && enable) return check(s);
    }
    return true;
  }

  // The launch and sync callbacks, on or off: in the driver domain, whose calls the runtime
  // makes too (a runtime sync fires the driver sync call's callbacks), and in the runtime
  // domain only for launch_source::runtime_and_driver_callbacks.
  bool enable_api_callbacks(std::uint32_t enable) {
    if (!enable_api_domain(true, enable)) return false;
    return !plan_.runtime_domain || enable_api_domain(false, enable);
  }

  bool enable_api_domain(bool is_driver, std::uint32_t enable) {
    auto& p = collector_state();
    const auto& table = p.tables.of(is_driver);
    const auto domain = is_driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
    for (std::uint32_t cbid = 1; cbid < table.size(); ++cbid) {
      const std::uint8_t flags = table[cbid];
      // Without launch callbacks (api_activity, or record_launches off) only sync spans.
      if (flags == 0 || (!plan_.launch_callbacks && (flags & host_call_sync_span) == 0)) continue;
      auto s = NVSCOPE_CUPTI_CALL(cuptiEnableCallback, (enable, p.subscriber, domain, cbid));
      if (!s && enable) return check(s);
    }
    return true;
  }

  // System thread ids (gettid), as the launch log records them.
  bool set_thread_ids() {
    CUpti_ActivityThreadIdType prior{};
    if (cupti().cuptiGetThreadIdType(&prior) == CUPTI_SUCCESS) prior_thread_type_ = prior;
    if (!check(NVSCOPE_CUPTI_CALL(cuptiSetThreadIdType, (CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)))) return false;
    stage_ = instrumentation_stage::thread_ids_set;
    return true;
  }

  bool register_buffers() {
    if (!check(NVSCOPE_CUPTI_CALL(cuptiActivityRegisterCallbacks, (&on_buffer_requested, &on_buffer_completed))))
      return false;
    stage_ = instrumentation_stage::buffers_registered;
    return true;
  }

  bool enable_kinds() {
    enabled_.clear();
    stage_ = instrumentation_stage::kinds_enabled;
    for (const auto& e : activity_kind_list::entries) {
      if (!plan_.enables(e)) continue;
      auto s = NVSCOPE_CUPTI_CALL(cuptiActivityEnable, (e.kind));
      if (s) {
        enabled_.push_back(e.kind);
      } else if (e.optional) {
        problems_.push_back(s.message + " (optional kind " + std::to_string(static_cast<int>(e.kind)) +
                            "; going on without it)");
      } else {
        return check(s);
      }
    }
    return true;
  }

  // Flush, disable in reverse, flush what was still in flight; CUPTI's dropped count.
  std::uint64_t disable_kinds() {
    check(NVSCOPE_CUPTI_CALL(cuptiActivityFlushAll, (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)));
    for (auto it = enabled_.rbegin(); it != enabled_.rend(); ++it) check(NVSCOPE_CUPTI_CALL(cuptiActivityDisable, (*it)));
    enabled_.clear();
    check(NVSCOPE_CUPTI_CALL(cuptiActivityFlushAll, (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)));
    std::size_t dropped = 0;
    if (cupti().cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) != CUPTI_SUCCESS) dropped = 0;
    return dropped;
  }

  instrumentation_plan plan_;
  instrumentation_stage stage_ = instrumentation_stage::none;
  CUpti_ActivityThreadIdType prior_thread_type_ = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
  std::vector<CUpti_ActivityKind> enabled_;
  std::vector<std::string> problems_;
};

} // namespace detail
} // namespace v1
} // namespace nvscope
