// nvscope-target: cupti
#pragma once

// NVTX ranges through CUPTI's NVTX callback domain. CUPTI 13's MARKER activity delivers
// nvtxRangePushA/nvtxMarkA but not the domain calls (nvtxDomainRangePushEx, which nvtx3's C++
// API and nvscope's annotations use): seen on the GPU machine, 2026-11-21. The callbacks see
// every NVTX call of the process once NVTX has loaded libcupti as its tool; each call is kept
// as a small event (copied name, steady_clock time, thread) and turned into range records when
// the collector stops.

#include <nvscope/annotate/detail/mode.hpp>
#include <nvscope/collect/detail/finish.hpp>
#include <nvscope/collect/detail/launch_log.hpp>
#include <nvscope/trace.hpp>

#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#if NVSCOPE_DETAIL_ENABLED
#include <nvscope/annotate/detail/nvtx_core.hpp>
#endif

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

// Called from the collector's CUPTI callback for the NVTX domain. False: not an NVTX call we keep.
inline bool record_nvtx_call(CUpti_CallbackId cbid, const CUpti_NvtxData* d) {
  nvtx_event e;
  const void* p = d->functionParams;
  auto handle = [](const void* h) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(h)); };
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      e.kind = nvtx_event_kind::push;
      if (auto* m = static_cast<const nvtxRangePushA_params*>(p)->message) e.name = m;
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      e.kind = nvtx_event_kind::push;
      fill_from_attributes(e, static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      auto* q = static_cast<const nvtxDomainRangePushEx_params*>(p);
      e.kind = nvtx_event_kind::push;
      e.domain = handle(q->domain);
      fill_from_attributes(e, q->core.eventAttrib);
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangePop: e.kind = nvtx_event_kind::pop; break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      e.kind = nvtx_event_kind::pop;
      e.domain = handle(static_cast<const nvtxDomainRangePop_params*>(p)->domain);
      break;
    case CUPTI_CBID_NVTX_nvtxMarkA:
      e.kind = nvtx_event_kind::mark;
      if (auto* m = static_cast<const nvtxMarkA_params*>(p)->message) e.name = m;
      break;
    case CUPTI_CBID_NVTX_nvtxMarkEx:
      e.kind = nvtx_event_kind::mark;
      fill_from_attributes(e, static_cast<const nvtxMarkEx_params*>(p)->eventAttrib);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainMarkEx: {
      auto* q = static_cast<const nvtxDomainMarkEx_params*>(p);
      e.kind = nvtx_event_kind::mark;
      e.domain = handle(q->domain);
      fill_from_attributes(e, q->core.eventAttrib);
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
      if (d->functionReturnValue == nullptr) return false; // the id is needed to find its end
      e.kind = nvtx_event_kind::start;
      e.key = *static_cast<const nvtxRangeId_t*>(d->functionReturnValue);
      if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartA) {
        if (auto* m = static_cast<const nvtxRangeStartA_params*>(p)->message) e.name = m;
      } else if (cbid == CUPTI_CBID_NVTX_nvtxRangeStartEx) {
        fill_from_attributes(e, static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib);
      } else {
        auto* q = static_cast<const nvtxDomainRangeStartEx_params*>(p);
        e.domain = handle(q->domain);
        fill_from_attributes(e, q->core.eventAttrib);
      }
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      e.kind = nvtx_event_kind::end;
      e.key = static_cast<const nvtxRangeEnd_params*>(p)->id;
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
      e.kind = nvtx_event_kind::end;
      e.key = static_cast<const nvtxDomainRangeEnd_params*>(p)->core.id;
      break;
    case CUPTI_CBID_NVTX_nvtxDomainCreateA: {
      if (d->functionReturnValue == nullptr) return false;
      e.kind = nvtx_event_kind::domain_created;
      e.domain = handle(*static_cast<const nvtxDomainHandle_t*>(d->functionReturnValue));
      if (auto* m = static_cast<const nvtxDomainCreateA_params*>(p)->name) e.name = m;
      break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
      if (d->functionReturnValue == nullptr) return false;
      auto* q = static_cast<const nvtxDomainRegisterStringA_params*>(p);
      e.kind = nvtx_event_kind::string_registered;
      e.domain = handle(q->domain);
      e.key = handle(*static_cast<const nvtxStringHandle_t*>(d->functionReturnValue));
      if (q->string != nullptr) e.name = q->string;
      break;
    }
    case CUPTI_CBID_NVTX_nvtxNameOsThreadA: {
      auto* q = static_cast<const nvtxNameOsThreadA_params*>(p);
      e.kind = nvtx_event_kind::thread_named;
      e.key = q->threadId;
      if (q->name != nullptr) e.name = q->name;
      break;
    }
    default: return false;
  }
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

// Names of domains and registered strings known before the events: what nvscope's own
// annotations registered before the collector listened (domains are created and strings
// registered once, at first use, often during a warm-up the collector does not see).
struct nvtx_names {
  std::unordered_map<std::uint64_t, std::string> domains; // domain handle -> name
  std::unordered_map<std::uint64_t, std::string> strings; // string handle -> string
};

inline nvtx_names registered_nvtx_names() {
  nvtx_names names;
#if NVSCOPE_DETAIL_ENABLED
  auto key = [](const void* h) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(h)); };
  for_each_registration([&](nvtxDomainHandle_t d, const char* domain_name, nvtxStringHandle_t s, const char* str) {
    if (s == nullptr) names.domains[key(d)] = domain_name;
    else names.strings[key(s)] = str;
  });
#endif
  return names;
}

// Turns the events into range records (push/pop per thread and domain, start/end by id).
// `to_trace` maps a steady time to the trace clock, `thread_index` an OS thread to its index.
// Returns how many pops and ends matched nothing.
template <class ToTrace, class ThreadIndex>
std::uint64_t nvtx_events_to_ranges(std::vector<nvtx_event> events, trace& t, ToTrace&& to_trace,
                                    ThreadIndex&& thread_index, const nvtx_names& known = {}) {
  std::uint64_t unmatched = 0;
  std::unordered_map<std::uint64_t, string_id> domains;
  std::unordered_map<std::uint64_t, string_id> strings;
  for (const auto& kv : known.domains) domains[kv.first] = t.strings.intern(kv.second);
  for (const auto& kv : known.strings) strings[kv.first] = t.strings.intern(kv.second);
  auto name_of = [&](const nvtx_event& e) -> string_id {
    if (e.registered == 0) return t.strings.intern(e.name);
    auto it = strings.find(e.registered);
    return it != strings.end() ? it->second : t.strings.intern("<unknown registered string>");
  };
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<std::size_t>> stacks; // (thread, domain)
  std::unordered_map<std::uint64_t, std::size_t> started;
  auto domain_id = [&](std::uint64_t h) -> string_id {
    if (h == 0) return 0;
    auto it = domains.find(h);
    return it != domains.end() ? it->second : t.strings.intern("<domain>");
  };
  for (auto& e : events) {
    const std::uint32_t thread = thread_index(e.os_thread);
    switch (e.kind) {
      case nvtx_event_kind::domain_created: domains[e.domain] = t.strings.intern(e.name); break;
      case nvtx_event_kind::string_registered: strings[e.key] = t.strings.intern(e.name); break;
      case nvtx_event_kind::thread_named: t.threads[thread_index(e.key)].name = t.strings.intern(e.name); break;
      case nvtx_event_kind::push:
      case nvtx_event_kind::start:
      case nvtx_event_kind::mark: {
        range_record r;
        r.start = to_trace(e.time);
        r.domain = domain_id(e.domain);
        r.name = name_of(e);
        r.color = e.color;
        r.category = e.category;
        r.payload = e.value;
        r.thread = thread;
        r.is_push_pop = e.kind != nvtx_event_kind::start;
        r.is_mark = e.kind == nvtx_event_kind::mark;
        if (r.is_mark) r.end = r.start;
        t.ranges.push_back(r);
        if (e.kind == nvtx_event_kind::push) stacks[{e.os_thread, e.domain}].push_back(t.ranges.size() - 1);
        if (e.kind == nvtx_event_kind::start) started[e.key] = t.ranges.size() - 1;
        break;
      }
      case nvtx_event_kind::pop: {
        auto& s = stacks[{e.os_thread, e.domain}];
        if (s.empty()) {
          ++unmatched;
          break;
        }
        t.ranges[s.back()].end = to_trace(e.time);
        s.pop_back();
        break;
      }
      case nvtx_event_kind::end: {
        auto it = started.find(e.key);
        if (it == started.end()) {
          ++unmatched;
          break;
        }
        t.ranges[it->second].end = to_trace(e.time);
        started.erase(it);
        break;
      }
    }
  }
  return unmatched;
}

} // namespace detail
} // namespace v1
} // namespace nvscope
