// The recording NVTX tool: a shared library NVTX loads through NVTX_INJECTION64_PATH. It
// answers every NVTX call it can with a line of text in an in-memory log (and, when
// NVSCOPE_RECORDER_LOG names a file, in that file too), so that tests can assert exact
// event sequences. See README.md for the line format and how to read the log.

#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

#define RECORDER_API extern "C" __attribute__((visibility("default")))

namespace {

struct domain_rec {
  std::string name;
};
struct string_rec {
  const domain_rec* domain; // null: default domain
  std::string text;
};

struct state {
  std::mutex mutex;
  std::vector<std::string> lines;
  std::size_t max_lines = std::size_t{1} << 20;
  std::uint64_t dropped = 0;
  std::uint64_t seq = 0;
  std::FILE* file = nullptr;
  std::deque<domain_rec> domains;     // stable addresses: they are the handles
  std::deque<string_rec> strings;     // idem
  std::atomic<std::uint64_t> next_range_id{1};
};

state& st() {
  static state* s = new state(); // leaked: NVTX may call us from static destructors
  return *s;
}

std::uint32_t tid() { return static_cast<std::uint32_t>(::syscall(SYS_gettid)); }

void escape_into(std::string& out, const char* s) {
  if (s == nullptr) {
    out += "\\0";
    return;
  }
  for (; *s; ++s) {
    const unsigned char c = static_cast<unsigned char>(*s);
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else if (c < 0x20 || c == 0x7F) {
      char b[8];
      std::snprintf(b, sizeof(b), "\\x%02x", c);
      out += b;
    } else out += static_cast<char>(c);
  }
}

struct line {
  std::string text;
  explicit line(const char* kind) {
    text = "kind=";
    text += kind;
    field("tid", std::to_string(tid()));
  }
  line& field(const char* key, const std::string& value) {
    text += '\t';
    text += key;
    text += '=';
    text += value;
    return *this;
  }
  line& str(const char* key, const char* value) {
    text += '\t';
    text += key;
    text += '=';
    escape_into(text, value);
    return *this;
  }
  line& domain(nvtxDomainHandle_t d) {
    const auto* r = reinterpret_cast<const domain_rec*>(d);
    return str("domain", r ? r->name.c_str() : "");
  }
  line& attributes(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
    if (a == nullptr) return field("error", "null_attributes");
    if (a->version != NVTX_VERSION || a->size < NVTX_EVENT_ATTRIB_STRUCT_SIZE)
      field("error", "bad_attributes_version");
    switch (a->messageType) {
      case NVTX_MESSAGE_TYPE_ASCII: field("msgtype", "ascii"); str("msg", a->message.ascii); break;
      case NVTX_MESSAGE_TYPE_UNICODE: field("msgtype", "unicode"); break;
      case NVTX_MESSAGE_TYPE_REGISTERED: {
        field("msgtype", "registered");
        const auto* s = reinterpret_cast<const string_rec*>(a->message.registered);
        if (s == nullptr) field("error", "null_registered_string");
        else {
          str("msg", s->text.c_str());
          if (s->domain != reinterpret_cast<const domain_rec*>(d)) field("error", "string_registered_in_other_domain");
        }
        break;
      }
      default: field("msgtype", "none");
    }
    if (a->colorType == NVTX_COLOR_ARGB) {
      char b[16];
      std::snprintf(b, sizeof(b), "%08" PRIx32, a->color);
      field("color", b);
    }
    if (a->category != 0) field("category", std::to_string(a->category));
    char b[64];
    switch (a->payloadType) {
      case NVTX_PAYLOAD_TYPE_INT32: std::snprintf(b, sizeof(b), "int32:%" PRId32, a->payload.iValue); field("payload", b); break;
      case NVTX_PAYLOAD_TYPE_INT64: std::snprintf(b, sizeof(b), "int64:%" PRId64, static_cast<std::int64_t>(a->payload.llValue)); field("payload", b); break;
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32: std::snprintf(b, sizeof(b), "uint32:%" PRIu32, a->payload.uiValue); field("payload", b); break;
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64: std::snprintf(b, sizeof(b), "uint64:%" PRIu64, static_cast<std::uint64_t>(a->payload.ullValue)); field("payload", b); break;
      case NVTX_PAYLOAD_TYPE_FLOAT: std::snprintf(b, sizeof(b), "float:%.9g", static_cast<double>(a->payload.fValue)); field("payload", b); break;
      case NVTX_PAYLOAD_TYPE_DOUBLE: std::snprintf(b, sizeof(b), "double:%.17g", a->payload.dValue); field("payload", b); break;
      case NVTX_PAYLOAD_UNKNOWN: break;
      default: field("payload", "unknown_type:" + std::to_string(a->payloadType));
    }
    return *this;
  }
};

// Caller holds the lock.
void emit_locked(state& s, line& l) {
  l.field("seq", std::to_string(s.seq++));
  if (s.lines.size() >= s.max_lines) {
    ++s.dropped;
    return;
  }
  if (s.file != nullptr) {
    std::fputs(l.text.c_str(), s.file);
    std::fputc('\n', s.file);
    std::fflush(s.file);
  }
  s.lines.push_back(std::move(l.text));
}

void emit(line& l) {
  state& s = st();
  std::lock_guard<std::mutex> lock(s.mutex);
  emit_locked(s, l);
}

// Push/pop depth per thread and domain, as NVTX returns it.
int& depth_of(nvtxDomainHandle_t d) {
  thread_local std::map<nvtxDomainHandle_t, int> depth;
  return depth[d];
}

int push(nvtxDomainHandle_t d, line& l) {
  int level = depth_of(d)++;
  l.field("depth", std::to_string(level + 1));
  emit(l);
  return level;
}
int pop(nvtxDomainHandle_t d, const char* kind) {
  line l(kind);
  l.domain(d);
  int& depth = depth_of(d);
  if (depth == 0) {
    l.field("error", "pop_without_push");
    emit(l);
    return -1;
  }
  l.field("depth", std::to_string(depth));
  emit(l);
  return --depth;
}

// Core (v1 API, default domain).
void NVTX_API mark_ex(const nvtxEventAttributes_t* a) { line l("mark"); l.domain(nullptr).attributes(nullptr, a); emit(l); }
void NVTX_API mark_a(const char* m) { line l("mark"); l.domain(nullptr).field("msgtype", "ascii").str("msg", m); emit(l); }
nvtxRangeId_t NVTX_API start_ex(const nvtxEventAttributes_t* a) {
  const auto id = st().next_range_id.fetch_add(1);
  line l("start"); l.domain(nullptr).attributes(nullptr, a).field("id", std::to_string(id)); emit(l);
  return id;
}
nvtxRangeId_t NVTX_API start_a(const char* m) {
  const auto id = st().next_range_id.fetch_add(1);
  line l("start"); l.domain(nullptr).field("msgtype", "ascii").str("msg", m).field("id", std::to_string(id)); emit(l);
  return id;
}
void NVTX_API end_(nvtxRangeId_t id) { line l("end"); l.domain(nullptr).field("id", std::to_string(id)); emit(l); }
int NVTX_API push_ex(const nvtxEventAttributes_t* a) { line l("push"); l.domain(nullptr).attributes(nullptr, a); return push(nullptr, l); }
int NVTX_API push_a(const char* m) { line l("push"); l.domain(nullptr).field("msgtype", "ascii").str("msg", m); return push(nullptr, l); }
int NVTX_API pop_() { return pop(nullptr, "pop"); }
void NVTX_API name_category_a(uint32_t c, const char* n) { line l("name_category"); l.domain(nullptr).field("category", std::to_string(c)).str("name", n); emit(l); }
void NVTX_API name_os_thread_a(uint32_t t, const char* n) { line l("name_thread"); l.field("thread", std::to_string(t)).str("name", n); emit(l); }

// Core2 (domains).
void NVTX_API d_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) { line l("mark"); l.domain(d).attributes(d, a); emit(l); }
nvtxRangeId_t NVTX_API d_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  const auto id = st().next_range_id.fetch_add(1);
  line l("start"); l.domain(d).attributes(d, a).field("id", std::to_string(id)); emit(l);
  return id;
}
void NVTX_API d_end(nvtxDomainHandle_t d, nvtxRangeId_t id) { line l("end"); l.domain(d).field("id", std::to_string(id)); emit(l); }
int NVTX_API d_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) { line l("push"); l.domain(d).attributes(d, a); return push(d, l); }
int NVTX_API d_pop(nvtxDomainHandle_t d) { return pop(d, "pop"); }
void NVTX_API d_name_category_a(nvtxDomainHandle_t d, uint32_t c, const char* n) { line l("name_category"); l.domain(d).field("category", std::to_string(c)).str("name", n); emit(l); }
nvtxStringHandle_t NVTX_API d_register_a(nvtxDomainHandle_t d, const char* str) {
  state& s = st();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.strings.push_back(string_rec{reinterpret_cast<const domain_rec*>(d), str ? str : ""});
  line l("register"); l.domain(d).str("msg", str); emit_locked(s, l);
  return reinterpret_cast<nvtxStringHandle_t>(&s.strings.back());
}
nvtxDomainHandle_t NVTX_API d_create_a(const char* name) {
  state& s = st();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.domains.push_back(domain_rec{name ? name : ""});
  line l("domain_create"); l.str("domain", name); emit_locked(s, l);
  return reinterpret_cast<nvtxDomainHandle_t>(&s.domains.back());
}
void NVTX_API d_destroy(nvtxDomainHandle_t d) { line l("domain_destroy"); l.domain(d); emit(l); }
void NVTX_API initialize(const void*) { line l("initialize"); emit(l); }

// CUDA runtime and driver object naming (handles are recorded as numbers).
void NVTX_API name_cuda_device_a(int dev, const char* n) { line l("name_cuda_device"); l.field("device", std::to_string(dev)).str("name", n); emit(l); }
void NVTX_API name_cuda_stream_a(void* stream, const char* n) { line l("name_cuda_stream"); l.field("stream", std::to_string(reinterpret_cast<std::uintptr_t>(stream))).str("name", n); emit(l); }
void NVTX_API name_cuda_event_a(void* ev, const char* n) { line l("name_cuda_event"); l.field("event", std::to_string(reinterpret_cast<std::uintptr_t>(ev))).str("name", n); emit(l); }
void NVTX_API name_cu_device_a(int dev, const char* n) { line l("name_cu_device"); l.field("device", std::to_string(dev)).str("name", n); emit(l); }
void NVTX_API name_cu_context_a(void* c, const char* n) { line l("name_cu_context"); l.field("context", std::to_string(reinterpret_cast<std::uintptr_t>(c))).str("name", n); emit(l); }
void NVTX_API name_cu_stream_a(void* c, const char* n) { line l("name_cu_stream"); l.field("stream", std::to_string(reinterpret_cast<std::uintptr_t>(c))).str("name", n); emit(l); }
void NVTX_API name_cu_event_a(void* c, const char* n) { line l("name_cu_event"); l.field("event", std::to_string(reinterpret_cast<std::uintptr_t>(c))).str("name", n); emit(l); }

// NVSCOPE_RECORDER_COUNT_ONLY=1: range and mark calls only count (for benchmarks that want
// a tool attached whose own cost is near zero); domains and strings are still registered.
std::atomic<std::uint64_t> counted{0};
int NVTX_API count_push(nvtxDomainHandle_t, const nvtxEventAttributes_t*) { counted.fetch_add(1, std::memory_order_relaxed); return 0; }
int NVTX_API count_pop(nvtxDomainHandle_t) { counted.fetch_add(1, std::memory_order_relaxed); return 0; }
void NVTX_API count_mark(nvtxDomainHandle_t, const nvtxEventAttributes_t*) { counted.fetch_add(1, std::memory_order_relaxed); }
nvtxRangeId_t NVTX_API count_start(nvtxDomainHandle_t, const nvtxEventAttributes_t*) { return counted.fetch_add(1, std::memory_order_relaxed) + 1; }
void NVTX_API count_end(nvtxDomainHandle_t, nvtxRangeId_t) { counted.fetch_add(1, std::memory_order_relaxed); }
int NVTX_API count_push_a(const char*) { counted.fetch_add(1, std::memory_order_relaxed); return 0; }
int NVTX_API count_pop_v() { counted.fetch_add(1, std::memory_order_relaxed); return 0; }

template <class F>
void set(NvtxFunctionTable table, unsigned int size, unsigned int id, F f) {
  if (id < size && table[id] != nullptr) *table[id] = reinterpret_cast<NvtxFunctionPointer>(f);
}

} // namespace

RECORDER_API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  const auto* cb = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (cb == nullptr || cb->GetModuleFunctionTable == nullptr) return 0;
  state& s = st();
  if (const char* max = std::getenv("NVSCOPE_RECORDER_MAX_EVENTS")) {
    const long long v = std::atoll(max);
    if (v > 0) s.max_lines = static_cast<std::size_t>(v);
  }
  if (const char* path = std::getenv("NVSCOPE_RECORDER_LOG")) {
    if (path[0] != '\0') {
      s.file = std::fopen(path, "w");
      if (s.file == nullptr) std::fprintf(stderr, "nvscope recorder: cannot open NVSCOPE_RECORDER_LOG=%s; logging in memory only\n", path);
    }
  }
  NvtxFunctionTable t = nullptr;
  unsigned int n = 0;
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) && t) {
    set(t, n, NVTX_CBID_CORE_MarkEx, &mark_ex);
    set(t, n, NVTX_CBID_CORE_MarkA, &mark_a);
    set(t, n, NVTX_CBID_CORE_RangeStartEx, &start_ex);
    set(t, n, NVTX_CBID_CORE_RangeStartA, &start_a);
    set(t, n, NVTX_CBID_CORE_RangeEnd, &end_);
    set(t, n, NVTX_CBID_CORE_RangePushEx, &push_ex);
    set(t, n, NVTX_CBID_CORE_RangePushA, &push_a);
    set(t, n, NVTX_CBID_CORE_RangePop, &pop_);
    set(t, n, NVTX_CBID_CORE_NameCategoryA, &name_category_a);
    set(t, n, NVTX_CBID_CORE_NameOsThreadA, &name_os_thread_a);
  }
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) && t) {
    set(t, n, NVTX_CBID_CORE2_DomainMarkEx, &d_mark_ex);
    set(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, &d_start_ex);
    set(t, n, NVTX_CBID_CORE2_DomainRangeEnd, &d_end);
    set(t, n, NVTX_CBID_CORE2_DomainRangePushEx, &d_push_ex);
    set(t, n, NVTX_CBID_CORE2_DomainRangePop, &d_pop);
    set(t, n, NVTX_CBID_CORE2_DomainNameCategoryA, &d_name_category_a);
    set(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, &d_register_a);
    set(t, n, NVTX_CBID_CORE2_DomainCreateA, &d_create_a);
    set(t, n, NVTX_CBID_CORE2_DomainDestroy, &d_destroy);
    set(t, n, NVTX_CBID_CORE2_Initialize, &initialize);
  }
  const char* count_only = std::getenv("NVSCOPE_RECORDER_COUNT_ONLY");
  if (count_only != nullptr && count_only[0] != '\0' && count_only[0] != '0') {
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n) && t) {
      set(t, n, NVTX_CBID_CORE_RangePushA, &count_push_a);
      set(t, n, NVTX_CBID_CORE_RangePop, &count_pop_v);
    }
    if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n) && t) {
      set(t, n, NVTX_CBID_CORE2_DomainMarkEx, &count_mark);
      set(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, &count_start);
      set(t, n, NVTX_CBID_CORE2_DomainRangeEnd, &count_end);
      set(t, n, NVTX_CBID_CORE2_DomainRangePushEx, &count_push);
      set(t, n, NVTX_CBID_CORE2_DomainRangePop, &count_pop);
    }
  }
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CUDART, &t, &n) && t) {
    set(t, n, NVTX_CBID_CUDART_NameCudaDeviceA, &name_cuda_device_a);
    set(t, n, NVTX_CBID_CUDART_NameCudaStreamA, &name_cuda_stream_a);
    set(t, n, NVTX_CBID_CUDART_NameCudaEventA, &name_cuda_event_a);
  }
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CUDA, &t, &n) && t) {
    set(t, n, NVTX_CBID_CUDA_NameCuDeviceA, &name_cu_device_a);
    set(t, n, NVTX_CBID_CUDA_NameCuContextA, &name_cu_context_a);
    set(t, n, NVTX_CBID_CUDA_NameCuStreamA, &name_cu_stream_a);
    set(t, n, NVTX_CBID_CUDA_NameCuEventA, &name_cu_event_a);
  }
  return 1;
}

// The log, one event a line (README.md). Copies at most cap - 1 bytes and a NUL into buf
// (buf may be null when cap is 0); returns the full size in bytes, without the NUL.
RECORDER_API std::size_t nvscope_recorder_read(char* buf, std::size_t cap) {
  state& s = st();
  std::lock_guard<std::mutex> lock(s.mutex);
  std::string all;
  for (const auto& l : s.lines) {
    all += l;
    all += '\n';
  }
  if (buf != nullptr && cap > 0) {
    const std::size_t n = all.size() < cap - 1 ? all.size() : cap - 1;
    std::memcpy(buf, all.data(), n);
    buf[n] = '\0';
  }
  return all.size();
}

// Forgets the lines logged so far (not the registered strings and domains).
RECORDER_API void nvscope_recorder_clear() {
  state& s = st();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.lines.clear();
}

// Range and mark calls counted in NVSCOPE_RECORDER_COUNT_ONLY mode.
RECORDER_API std::uint64_t nvscope_recorder_counted() { return counted.load(std::memory_order_relaxed); }

// Events not logged because the log was full (NVSCOPE_RECORDER_MAX_EVENTS, default 2^20).
RECORDER_API std::uint64_t nvscope_recorder_dropped() {
  state& s = st();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.dropped;
}
