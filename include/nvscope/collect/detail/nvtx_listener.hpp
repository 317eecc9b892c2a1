// nvscope-target: cupti
#pragma once

// NVTX ranges through CUPTI's NVTX callback domain. CUPTI 13's MARKER activity delivers
// nvtxRangePushA/nvtxMarkA but not the domain calls (nvtxDomainRangePushEx, which nvtx3's C++
// API and nvscope's annotations use): seen on the GPU machine, 2026-11-21. The callbacks see
// every NVTX call of the process once NVTX has loaded libcupti as its tool; each call is kept
// as a small event (copied name, steady_clock time, thread) and turned into range records when
// the collector stops.

#include <nvscope/annotate/domain.hpp>
#include <nvscope/collect/detail/finish.hpp>
#include <nvscope/collect/detail/launch_log.hpp>
#include <nvscope/trace.hpp>

#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

enum class nvtx_event_kind : std::uint8_t { push, pop, start, end, mark, domain_created, thread_named, string_registered };

struct nvtx_event {
  std::uint64_t time = 0; // steady_clock ns
  std::uint64_t os_thread = 0;
  std::uint64_t key = 0;  // domain handle (push/pop/mark/domain_created), range id (start/end), os thread (named)
  std::uint64_t domain = 0;
  std::uint64_t registered = 0; // string handle when the name came registered (resolved at stop)
  std::string name;
  std::uint32_t color = 0;
  std::uint32_t category = 0;
  recorded_payload value;
  nvtx_event_kind kind = nvtx_event_kind::push;
};

struct nvtx_events {
  std::mutex mutex;
  std::vector<nvtx_event> events;
};

inline nvtx_events& nvtx_log() {
  static auto* log = new nvtx_events(); // leaked: NVTX calls may come during exit
  return *log;
}

inline void fill_from_attributes(nvtx_event& e, const nvtxEventAttributes_t* a) {
  if (a == nullptr) return;
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII && a->message.ascii != nullptr) e.name = a->message.ascii;
  else if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED && a->message.registered != nullptr)
    e.registered = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(a->message.registered));
  if (a->colorType == NVTX_COLOR_ARGB) e.color = a->color;
  e.category = a->category;
  switch (a->payloadType) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: e.value.kind = payload_kind::uint64; e.value.value.u = a->payload.ullValue; break;
    case NVTX_PAYLOAD_TYPE_INT64: e.value.kind = payload_kind::int64; e.value.value.i = a->payload.llValue; break;
    case NVTX_PAYLOAD_TYPE_DOUBLE: e.value.kind = payload_kind::float64; e.value.value.d = a->payload.dValue; break;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: e.value.kind = payload_kind::uint32; e.value.value.u = a->payload.uiValue; break;
    case NVTX_PAYLOAD_TYPE_INT32: e.value.kind = payload_kind::int32; e.value.value.i = a->payload.iValue; break;
    case NVTX_PAYLOAD_TYPE_FLOAT: e.value.kind = payload_kind::float32; e.value.value.d = a->payload.fValue; break;
    default: break;
  }
}

inline std::uint64_t nvtx_handle(const void* h) noexcept {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(h));
}

// Push and pop, in any domain. False: not one of them.
inline bool describe_push_pop(CUpti_CallbackId cbid, const void* p, nvtx_event& e) {
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      e.kind = nvtx_event_kind::push;
      if (auto* m = static_cast<const nvtxRangePushA_params*>(p)->message) e.name = m;
      return true;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      e.kind = nvtx_event_kind::push;
      fill_from_attributes(e, static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib);
      return true;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      auto* q = static_cast<const nvtxDomainRangePushEx_params*>(p);
      e.kind = nvtx_event_kind::push;
      e.domain = nvtx_handle(q->domain);
      fill_from_attributes(e, q->core.eventAttrib);
      return true;
    }
    case CUPTI_CBID_NVTX_nvtxRangePop: e.kind = nvtx_event_kind::pop; return true;
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      e.kind = nvtx_event_kind::pop;
      e.domain = nvtx_handle(static_cast<const nvtxDomainRangePop_params*>(p)->domain);
      return true;
    default: return false;
  }
}

// Marks, start and end, in any domain. False: not one of them, or a start with no id.
inline bool describe_mark_start_end(CUpti_CallbackId cbid, const CUpti_NvtxData* d, nvtx_event& e) {
  const void* p = d->functionParams;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxMarkA:
      if (auto* m = static_cast<const nvtxMarkA_params*>(p)->message) e.name = m;
      break;
    case CUPTI_CBID_NVTX_nvtxMarkEx: fill_from_attributes(e, static_cast<const nvtxMarkEx_params*>(p)->eventAttrib); break;
    case CUPTI_CBID_NVTX_nvtxDomainMarkEx:
      e.domain = nvtx_handle(static_cast<const nvtxDomainMarkEx_params*>(p)->domain);
      fill_from_attributes(e, static_cast<const nvtxDomainMarkEx_params*>(p)->core.eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      if (auto* m = static_cast<const nvtxRangeStartA_params*>(p)->message) e.name = m;
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      fill_from_attributes(e, static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
      e.domain = nvtx_handle(static_cast<const nvtxDomainRangeStartEx_params*>(p)->domain);
      fill_from_attributes(e, static_cast<const nvtxDomainRangeStartEx_params*>(p)->core.eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxRangeEnd: e.key = static_cast<const nvtxRangeEnd_params*>(p)->id; break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: e.key = static_cast<const nvtxDomainRangeEnd_params*>(p)->core.id; break;
    default: return false;
  }
  const bool is_mark = cbid == CUPTI_CBID_NVTX_nvtxMarkA || cbid == CUPTI_CBID_NVTX_nvtxMarkEx ||
                       cbid == CUPTI_CBID_NVTX_nvtxDomainMarkEx;
  const bool is_end = cbid == CUPTI_CBID_NVTX_nvtxRangeEnd || cbid == CUPTI_CBID_NVTX_nvtxDomainRangeEnd;
  e.kind = is_mark ? nvtx_event_kind::mark : is_end ? nvtx_event_kind::end : nvtx_event_kind::start;
  if (e.kind != nvtx_event_kind::start) return true;
  if (d->functionReturnValue == nullptr) return false; // the id is needed to find its end
  e.key = *static_cast<const nvtxRangeId_t*>(d->functionReturnValue);
  return true;
}

// Domains created, strings registered, threads named. False: not one of them.
inline bool describe_naming(CUpti_CallbackId cbid, const CUpti_NvtxData* d, nvtx_event& e) {
  const void* p = d->functionParams;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
      if (d->functionReturnValue == nullptr) return false;
      e.kind = nvtx_event_kind::domain_created;
      e.domain = nvtx_handle(*static_cast<const nvtxDomainHandle_t*>(d->functionReturnValue));
      if (auto* m = static_cast<const nvtxDomainCreateA_params*>(p)->name) e.name = m;
      return true;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
      if (d->functionReturnValue == nullptr) return false;
      auto* q = static_cast<const nvtxDomainRegisterStringA_params*>(p);
      e.kind = nvtx_event_kind::string_registered;
      e.domain = nvtx_handle(q->domain);
      e.key = nvtx_handle(*static_cast<const nvtxStringHandle_t*>(d->functionReturnValue));
      if (q->string != nullptr) e.name = q->string;
      return true;
    }
    case CUPTI_CBID_NVTX_nvtxNameOsThreadA: {
      auto* q = static_cast<const nvtxNameOsThreadA_params*>(p);
      e.kind = nvtx_event_kind::thread_named;
      e.key = q->threadId;
      if (q->name != nullptr) e.name = q->name;
      return true;
    }
    default: return false;
  }
}

// Called from the collector's CUPTI callback for the NVTX domain. False: not an NVTX call we keep.
inline bool record_nvtx_call(CUpti_CallbackId cbid, const CUpti_NvtxData* d) {
  nvtx_event e;
  if (!describe_push_pop(cbid, d->functionParams, e) && !describe_mark_start_end(cbid, d, e) &&
      !describe_naming(cbid, d, e))
    return false;
  e.time = steady_ns();
  thread_local const std::uint64_t this_os_thread = os_thread_id(); // one gettid per thread
  e.os_thread = this_os_thread;
  auto& log = nvtx_log();
  std::lock_guard<std::mutex> lock(log.mutex);
  log.events.push_back(std::move(e));
  return true;
}

// The NVTX calls recorded (callback ids of the NVTX domain).
struct nvtx_callback_list {
  static constexpr CUpti_CallbackId ids[] = {
      CUPTI_CBID_NVTX_nvtxRangePushA,    CUPTI_CBID_NVTX_nvtxRangePushEx,       CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
      CUPTI_CBID_NVTX_nvtxRangePop,      CUPTI_CBID_NVTX_nvtxDomainRangePop,    CUPTI_CBID_NVTX_nvtxMarkA,
      CUPTI_CBID_NVTX_nvtxMarkEx,        CUPTI_CBID_NVTX_nvtxDomainMarkEx,      CUPTI_CBID_NVTX_nvtxRangeStartA,
      CUPTI_CBID_NVTX_nvtxRangeStartEx,  CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, CUPTI_CBID_NVTX_nvtxRangeEnd,
      CUPTI_CBID_NVTX_nvtxDomainRangeEnd, CUPTI_CBID_NVTX_nvtxDomainCreateA,    CUPTI_CBID_NVTX_nvtxNameOsThreadA,
      CUPTI_CBID_NVTX_nvtxDomainRegisterStringA};
};

// Turns the NVTX events into range records: push/pop per thread and domain, start/end by id.
// Domain and string handles are named by the registrations seen among the events, else by
// those nvscope noted before the collector listened (`known`, from registered_nvtx_names():
// domains are created and strings registered once, at first use, often during a warm-up the
// collector does not see).
template <class ToTrace, class ThreadIndex>
class range_builder {
 public:
  range_builder(trace& t, ToTrace& to_trace, ThreadIndex& thread_index, const nvtx_registrations& known)
      : t_(t), to_trace_(to_trace), thread_index_(thread_index) {
    for (const auto& kv : known.domains) domains_[kv.first] = t_.strings.intern(kv.second);
    for (const auto& kv : known.strings) strings_[kv.first] = t_.strings.intern(kv.second);
  }

  void add(const nvtx_event& e) {
    switch (e.kind) {
      case nvtx_event_kind::domain_created: domains_[e.domain] = t_.strings.intern(e.name); break;
      case nvtx_event_kind::string_registered: strings_[e.key] = t_.strings.intern(e.name); break;
      case nvtx_event_kind::thread_named: t_.threads[thread_index_(e.key)].name = t_.strings.intern(e.name); break;
      case nvtx_event_kind::push:
      case nvtx_event_kind::start:
      case nvtx_event_kind::mark: open(e); break;
      case nvtx_event_kind::pop: pop(e); break;
      case nvtx_event_kind::end: end(e); break;
    }
  }

  // Pops and ends that matched no open range.
  std::uint64_t unmatched() const noexcept { return unmatched_; }

  // Hands each closed range and mark in the trace to `take`, in the order they opened, and
  // keeps only the open ones there (renumbered in the stacks): a bounded collection releases
  // ranges as they close, so what stays is bounded by the ranges open at once.
  template <class Take>
  void release_closed(Take&& take) {
    auto& ranges = t_.ranges;
    std::vector<std::size_t> moved_to(ranges.size(), 0);
    std::size_t open = 0;
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      if (ranges[i].is_mark || ranges[i].end != 0) {
        take(ranges[i]);
        continue;
      }
      moved_to[i] = open;
      if (open != i) ranges[open] = ranges[i];
      ++open;
    }
    ranges.resize(open);
    for (auto& kv : stacks_)
      for (auto& i : kv.second) i = moved_to[i];
    for (auto& kv : started_) kv.second = moved_to[kv.second];
  }

 private:
  string_id name_of(const nvtx_event& e) {
    if (e.registered == 0) return t_.strings.intern(e.name);
    auto it = strings_.find(e.registered);
    return it != strings_.end() ? it->second : t_.strings.intern("<unknown registered string>");
  }

  string_id domain_of(std::uint64_t handle) {
    if (handle == 0) return 0;
    auto it = domains_.find(handle);
    return it != domains_.end() ? it->second : t_.strings.intern("<domain>");
  }

  void open(const nvtx_event& e) {
    range_record r;
    r.start = to_trace_(e.time);
    r.domain = domain_of(e.domain);
    r.name = name_of(e);
    r.color = e.color;
    r.category = e.category;
    r.payload = e.value;
    r.thread = thread_index_(e.os_thread);
    r.is_push_pop = e.kind != nvtx_event_kind::start;
    r.is_mark = e.kind == nvtx_event_kind::mark;
    if (r.is_mark) r.end = r.start;
    t_.ranges.push_back(r);
    if (e.kind == nvtx_event_kind::push) stacks_[{e.os_thread, e.domain}].push_back(t_.ranges.size() - 1);
    if (e.kind == nvtx_event_kind::start) started_[e.key] = t_.ranges.size() - 1;
  }

  void pop(const nvtx_event& e) {
    auto& s = stacks_[{e.os_thread, e.domain}];
    if (s.empty()) {
      ++unmatched_;
      return;
    }
    t_.ranges[s.back()].end = to_trace_(e.time);
    s.pop_back();
  }

  void end(const nvtx_event& e) {
    auto it = started_.find(e.key);
    if (it == started_.end()) {
      ++unmatched_;
      return;
    }
    auto& r = t_.ranges[it->second];
    r.end = to_trace_(e.time);
    r.end_thread = thread_index_(e.os_thread);
    started_.erase(it);
  }

  trace& t_;
  ToTrace& to_trace_;
  ThreadIndex& thread_index_;
  std::unordered_map<std::uint64_t, string_id> domains_;
  std::unordered_map<std::uint64_t, string_id> strings_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<std::size_t>> stacks_; // (thread, domain)
  std::unordered_map<std::uint64_t, std::size_t> started_;
  std::uint64_t unmatched_ = 0;
};

// The events in the order logged, as range records in `t`. `to_trace` maps a steady time to
// the trace clock, `thread_index` an OS thread to its index. Returns how many pops and ends
// matched nothing.
template <class ToTrace, class ThreadIndex>
std::uint64_t nvtx_events_to_ranges(const std::vector<nvtx_event>& events, trace& t, ToTrace&& to_trace,
                                    ThreadIndex&& thread_index, const nvtx_registrations& known = {}) {
  range_builder<std::remove_reference_t<ToTrace>, std::remove_reference_t<ThreadIndex>> b(t, to_trace, thread_index,
                                                                                          known);
  for (const auto& e : events) b.add(e);
  return b.unmatched();
}

// True when this shared object's NVTX has initialised with no tool behind it: the collector
// came too late to route NVTX to CUPTI, and sees no range of this run.
inline bool nvtx_initialised_without_tool() noexcept {
  const auto& g = NVTX_VERSIONED_IDENTIFIER(nvtxGlobals);
  return g.initState == NVTX_INIT_STATE_COMPLETE && g.nvtxRangePushA_impl_fnptr == nullptr &&
         g.nvtxMarkA_impl_fnptr == nullptr;
}

} // namespace detail
} // namespace v1
} // namespace nvscope
