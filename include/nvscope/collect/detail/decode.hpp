// nvscope-target: cupti
#pragma once

// CUPTI activity records to trace records. This is the only place that reads a CUPTI record
// struct; everything past it sees the plain records of trace.hpp. It needs CUPTI's headers but
// not its library, so the host tests feed it hand-made records.

#include <nvscope/collect/detail/demangle.hpp>
#include <nvscope/collect/detail/launch_log.hpp>
#include <nvscope/trace.hpp>

#include <cupti.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// Returns the name of a runtime or driver API callback id, or nullptr.
using api_name_fn = const char* (*)(bool is_driver, std::uint32_t cbid);

struct decode_counts {
  std::uint64_t records = 0;
  std::uint64_t incomplete = 0;        // GPU records with a start or end of 0, or end < start
  std::uint64_t unknown_kinds = 0;     // kinds this decoder does not turn into records
  std::uint64_t overhead_ns = 0;       // CUPTI's own overhead records, summed
};

inline memory_kind to_memory_kind(std::uint32_t k) noexcept {
  switch (k) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE: return memory_kind::pageable;
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED: return memory_kind::pinned;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE: return memory_kind::device;
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY: return memory_kind::array;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED: return memory_kind::managed;
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC: return memory_kind::device_static;
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC: return memory_kind::managed_static;
    default: return memory_kind::unknown;
  }
}

inline copy_kind to_copy_kind(std::uint32_t k) noexcept {
  switch (k) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return copy_kind::host_to_device;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return copy_kind::device_to_host;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return copy_kind::host_to_array;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return copy_kind::array_to_host;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return copy_kind::array_to_array;
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return copy_kind::array_to_device;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return copy_kind::device_to_array;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return copy_kind::device_to_device;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return copy_kind::host_to_host;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return copy_kind::peer_to_peer;
    default: return copy_kind::unknown;
  }
}

inline sync_kind to_sync_kind(std::uint32_t k) noexcept {
  switch (k) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE: return sync_kind::event;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT: return sync_kind::stream_wait_event;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE: return sync_kind::stream;
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE: return sync_kind::context;
    default: return sync_kind::unknown;
  }
}

// The fields every GPU activity record carries under the same CUPTI names: when it ran, which
// launch it belongs to (correlation id), on which stream. A kernel record keeps these alone.
template <class Record, class Activity>
void decode_launch_fields(Record& r, const Activity& a) noexcept {
  r.start = a.start;
  r.end = a.end;
  r.correlation = a.correlationId;
  r.stream = a.streamId;
}

// The same, with the stream's context.
template <class Record, class Activity>
void decode_stream_fields(Record& r, const Activity& a) noexcept {
  decode_launch_fields(r, a);
  r.context = a.contextId;
}

// The same, with the device and the CUDA graph of a copy or memset (a kernel's are in its
// configuration).
template <class Record, class Activity>
void decode_device_fields(Record& r, const Activity& a) noexcept {
  decode_stream_fields(r, a);
  r.device = static_cast<std::uint16_t>(a.deviceId);
  r.graph = a.graphId;
}

// A kernel's configuration: grid, block, registers per thread, shared memory per block (static
// + dynamic), and where it ran (device, context, CUDA graph).
inline kernel_config decode_kernel_config(const CUpti_ActivityKernel10& k) noexcept {
  kernel_config c;
  c.grid[0] = static_cast<std::uint32_t>(k.gridX);
  c.grid[1] = static_cast<std::uint32_t>(k.gridY);
  c.grid[2] = static_cast<std::uint32_t>(k.gridZ);
  c.block[0] = static_cast<std::uint16_t>(k.blockX);
  c.block[1] = static_cast<std::uint16_t>(k.blockY);
  c.block[2] = static_cast<std::uint16_t>(k.blockZ);
  c.registers = k.registersPerThread;
  c.shared_bytes = static_cast<std::uint32_t>(k.staticSharedMemory) + static_cast<std::uint32_t>(k.dynamicSharedMemory);
  c.device = static_cast<std::uint16_t>(k.deviceId);
  c.context = k.contextId;
  c.graph = k.graphId;
  return c;
}

// A launch or sync call taken from a RUNTIME or DRIVER activity record (launches from the
// activity API instead of callbacks): its start, thread as an index, and the flags the
// caller's table gives its callback id.
using api_host_call = traced_host_call;

class activity_decoder {
 public:
  activity_decoder(trace& out, bool demangle_names, api_name_fn api_name = nullptr)
      : out_(&out), demangle_(demangle_names), api_name_(api_name) {
    out.kernel_name_spelling = demangle_names ? kernel_name_spelling() : name_spelling::mangled;
  }

  const decode_counts& counts() const noexcept { return counts_; }
  const trace& output() const noexcept { return *out_; }

  // The index in `trace::threads` of an OS thread, added on first sight.
  std::uint32_t thread_index(std::uint64_t os_thread) {
    auto it = threads_.find(os_thread);
    if (it != threads_.end()) return it->second;
    auto idx = static_cast<std::uint32_t>(out_->threads.size());
    thread_info info;
    info.os_id = os_thread;
    out_->threads.push_back(info);
    threads_.emplace(os_thread, idx);
    return idx;
  }

  // Take launch and sync calls from RUNTIME/DRIVER records: `runtime_flags` / `driver_flags`
  // give each callback id's flags (0: not wanted). Records are kept as `api_record`s only when
  // `keep_runtime` / `keep_driver` say so.
  void take_api_calls(const std::vector<std::uint8_t>* runtime_flags, const std::vector<std::uint8_t>* driver_flags,
                      bool keep_runtime, bool keep_driver) {
    runtime_flags_ = runtime_flags;
    driver_flags_ = driver_flags;
    keep_runtime_ = keep_runtime;
    keep_driver_ = keep_driver;
  }
  std::vector<api_host_call>& api_host_calls() noexcept { return api_host_calls_; }

  void decode(const CUpti_Activity* rec) {
    ++counts_.records;
    switch (rec->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        kernel(*reinterpret_cast<const CUpti_ActivityKernel10*>(rec));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        memcpy_(*reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec));
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        memset_(*reinterpret_cast<const CUpti_ActivityMemset4*>(rec));
        break;
      case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
        sync(*reinterpret_cast<const CUpti_ActivitySynchronization2*>(rec));
        break;
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER:
        api(*reinterpret_cast<const CUpti_ActivityAPI*>(rec), rec->kind == CUPTI_ACTIVITY_KIND_DRIVER);
        break;
      case CUPTI_ACTIVITY_KIND_OVERHEAD: {
        const auto& o = *reinterpret_cast<const CUpti_ActivityOverhead3*>(rec);
        if (o.end > o.start) counts_.overhead_ns += o.end - o.start;
        break;
      }
      case CUPTI_ACTIVITY_KIND_NAME:
        thread_name(*reinterpret_cast<const CUpti_ActivityName*>(rec));
        break;
      default:
        ++counts_.unknown_kinds;
        break;
    }
  }

 private:
  bool complete(std::uint64_t start, std::uint64_t end) {
    if (start == 0 || end == 0 || end < start) {
      ++counts_.incomplete;
      return false;
    }
    return true;
  }

  // The kernel's name (demangled unless told otherwise), its other forms noted in
  // `trace::kernel_names`; cached by CUPTI's name pointer, checked by content.
  string_id kernel_name(const char* name) {
    if (name == nullptr) return out_->strings.intern("<unnamed kernel>");
    auto it = names_.find(name);
    if (it != names_.end() && it->second.mangled == name) return it->second.id;
    const std::string demangled = demangle_kernel_name(name);
    const string_id id = out_->strings.intern(demangle_ ? demangled : std::string(name));
    note_name_forms(id, name, kernel_base_name(demangled));
    names_[name] = cached_name{std::string(name), id};
    return id;
  }

  void note_name_forms(string_id id, std::string_view mangled, std::string_view base) {
    const std::string_view shown = out_->strings[id];
    const bool base_differs = base != shown, mangled_differs = mangled != shown; // before interning moves `shown`
    kernel_name_forms forms;
    if (base_differs) forms.base = out_->strings.intern(base);
    if (mangled_differs) forms.mangled = out_->strings.intern(mangled);
    if (forms.base != 0 || forms.mangled != 0) out_->kernel_names[id] = forms;
  }

  void kernel(const CUpti_ActivityKernel10& k) {
    if (!complete(k.start, k.end)) return;
    kernel_record r;
    decode_launch_fields(r, k);
    r.config = out_->kernel_configs.intern(decode_kernel_config(k));
    r.name = kernel_name(k.name);
    out_->kernels.push_back(r);
  }

  void memcpy_(const CUpti_ActivityMemcpy6& m) {
    if (!complete(m.start, m.end)) return;
    copy_record r;
    decode_device_fields(r, m);
    r.bytes = m.bytes;
    r.kind = to_copy_kind(m.copyKind);
    r.src = to_memory_kind(m.srcKind);
    r.dst = to_memory_kind(m.dstKind);
    out_->copies.push_back(r);
  }

  void memset_(const CUpti_ActivityMemset4& m) {
    if (!complete(m.start, m.end)) return;
    memset_record r;
    decode_device_fields(r, m);
    r.bytes = m.bytes;
    r.value = m.value;
    r.memory = to_memory_kind(m.memoryKind);
    out_->memsets.push_back(r);
  }

  void sync(const CUpti_ActivitySynchronization2& s) {
    if (!complete(s.start, s.end)) return;
    sync_record r;
    decode_stream_fields(r, s);
    r.kind = to_sync_kind(s.type);
    r.thread = no_thread; // set from the host call with the same correlation id
    out_->syncs.push_back(r);
  }

  void api(const CUpti_ActivityAPI& a, bool is_driver) {
    if (const auto* table = is_driver ? driver_flags_ : runtime_flags_) {
      const std::uint32_t flags = a.cbid < table->size() ? (*table)[a.cbid] : 0u;
      if (flags != 0 && a.start != 0)
        api_host_calls_.push_back(api_host_call{a.start, a.correlationId, thread_index(a.threadId), flags});
      if (!(is_driver ? keep_driver_ : keep_runtime_)) return;
    }
    if (!complete(a.start, a.end)) return;
    api_record r;
    r.start = a.start;
    r.end = a.end;
    r.correlation = a.correlationId;
    r.thread = thread_index(a.threadId);
    r.is_driver = is_driver;
    const std::uint64_t key = (static_cast<std::uint64_t>(is_driver) << 32) | a.cbid;
    if (key == last_api_key_ && last_api_name_ != no_index) { // calls come in runs of one name
      r.name = last_api_name_;
      return out_->api_calls.push_back(r);
    }
    auto it = api_names_.find(key);
    if (it == api_names_.end()) {
      const char* n = api_name_ != nullptr ? api_name_(is_driver, a.cbid) : nullptr;
      std::string name = n != nullptr ? std::string(n) : (is_driver ? "cu#" : "cuda#") + std::to_string(a.cbid);
      it = api_names_.emplace(key, out_->strings.intern(name)).first;
    }
    r.name = last_api_name_ = it->second;
    last_api_key_ = key;
    out_->api_calls.push_back(r);
  }

  void thread_name(const CUpti_ActivityName& n) {
    if (n.objectKind != CUPTI_ACTIVITY_OBJECT_THREAD || n.name == nullptr) return;
    out_->threads[thread_index(n.objectId.pt.threadId)].name = out_->strings.intern(n.name);
  }

 public:
  static constexpr std::uint32_t no_thread = no_index;

 private:
  struct cached_name {
    std::string mangled;
    string_id id = 0;
  };
  trace* out_;
  bool demangle_;
  api_name_fn api_name_;
  decode_counts counts_;
  std::unordered_map<const char*, cached_name> names_;
  std::unordered_map<std::uint64_t, std::uint32_t> threads_;
  std::unordered_map<std::uint64_t, string_id> api_names_;
  std::uint64_t last_api_key_ = 0;      // the last API record's (domain, cbid) and its name
  string_id last_api_name_ = no_index;
  const std::vector<std::uint8_t>* runtime_flags_ = nullptr;
  const std::vector<std::uint8_t>* driver_flags_ = nullptr;
  bool keep_runtime_ = true;
  bool keep_driver_ = true;
  std::vector<api_host_call> api_host_calls_;
};

} // namespace detail
} // namespace v1
} // namespace nvscope
