// nvscope-target: cupti
#pragma once

// CUPTI, loaded at run time. The collector reaches every CUPTI function through this table so
// that a program built with the collector still starts where libcupti is missing, and then
// says so in one line instead of failing in the dynamic loader before main.
//
// Every call goes through NVSCOPE_CUPTI_CALL, which names the failed function, its result
// and the place, and turns the common failures into a sentence a user can act on.

#include <cupti.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace nvscope {
inline namespace v1 {
namespace detail {

// The CUPTI result names, for messages; kept here so that messages need no loaded library.
inline const char* cupti_result_name(int code) noexcept {
  switch (code) {
    case 0: return "CUPTI_SUCCESS";
    case 1: return "CUPTI_ERROR_INVALID_PARAMETER";
    case 2: return "CUPTI_ERROR_INVALID_DEVICE";
    case 3: return "CUPTI_ERROR_INVALID_CONTEXT";
    case 7: return "CUPTI_ERROR_INVALID_OPERATION";
    case 8: return "CUPTI_ERROR_OUT_OF_MEMORY";
    case 11: return "CUPTI_ERROR_API_NOT_IMPLEMENTED";
    case 12: return "CUPTI_ERROR_MAX_LIMIT_REACHED";
    case 14: return "CUPTI_ERROR_NOT_COMPATIBLE";
    case 15: return "CUPTI_ERROR_NOT_INITIALIZED";
    case 21: return "CUPTI_ERROR_INVALID_KIND";
    case 23: return "CUPTI_ERROR_DISABLED";
    case 27: return "CUPTI_ERROR_NOT_SUPPORTED";
    case 33: return "CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED";
    case 35: return "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
    case 39: return "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
    case 40: return "CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES";
    case 41: return "CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED";
    case 43: return "CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED";
    case 999: return "CUPTI_ERROR_UNKNOWN";
    default: return "CUPTI error";
  }
}

// What a failed CUPTI call means for the user, in a few words (no trailing period).
inline std::string cupti_failure_hint(int code) {
  switch (code) {
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      if (const char* injected = std::getenv("CUDA_INJECTION64_PATH");
          injected != nullptr && std::strstr(injected, "nvscope_inject") != nullptr)
        return "`nvscope run` already records this process (CUPTI takes one client); the "
               "program's own collector stays off and the run's profile has its work";
      return "another profiler (nsys, ncu or compute-sanitizer) already holds CUPTI; this run is "
             "not collected in-process, and NVTX ranges still reach that tool";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "no permission to profile this GPU (see NVreg_RestrictProfilingToAdminUsers)";
    case CUPTI_ERROR_NOT_INITIALIZED:
      return "CUPTI could not initialise: no usable GPU or driver";
    case CUPTI_ERROR_NOT_COMPATIBLE:
      return "this libcupti does not match the CUDA driver";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
      return "CUPTI does not support tracing on this device";
    default:
      return {};
  }
}

// One line: "<call> failed: <NAME> (<code>)[: <hint>] [<file>:<line>]".
inline std::string cupti_error_message(const char* call, int code, const char* file, int line) {
  std::string msg = std::string(call) + " failed: " + cupti_result_name(code) + " (" +
                    std::to_string(code) + ")";
  std::string hint = cupti_failure_hint(code);
  if (!hint.empty()) msg += ": " + hint;
  if (file != nullptr) {
    const char* base = file;
    for (const char* p = file; *p != '\0'; ++p)
      if (*p == '/') base = p + 1;
    msg += " [" + std::string(base) + ":" + std::to_string(line) + "]";
  }
  return msg;
}

// The result of a checked call: ok, or the CUPTI code with its one-line message.
struct call_status {
  int code = 0;
  std::string message;
  explicit operator bool() const noexcept { return code == 0; }
};

// The CUPTI entry points the collector needs, listed once (X-macro), resolved from libcupti.
#define NVSCOPE_CUPTI_REQUIRED_FUNCTIONS(X) \
  X(cuptiGetVersion) \
  X(cuptiSubscribe) \
  X(cuptiUnsubscribe) \
  X(cuptiEnableCallback) \
  X(cuptiGetCallbackName) \
  X(cuptiActivityRegisterCallbacks) \
  X(cuptiActivityEnable) \
  X(cuptiActivityDisable) \
  X(cuptiActivityFlushAll) \
  X(cuptiActivityGetNextRecord) \
  X(cuptiActivityGetNumDroppedRecords) \
  X(cuptiGetTimestamp) \
  X(cuptiSetThreadIdType) \
  X(cuptiGetThreadIdType)

struct cupti_api {
  bool loaded = false;
  std::string error; // why not, in one line
  std::string path;  // the file libcupti was loaded from (NVTX's injection path)
#define NVSCOPE_CUPTI_FN(name) decltype(&::name) name = nullptr;
  NVSCOPE_CUPTI_REQUIRED_FUNCTIONS(NVSCOPE_CUPTI_FN)
  // Optional (null when absent): the stream id of a waited-on stream, for syncs recorded from
  // callbacks.
  NVSCOPE_CUPTI_FN(cuptiGetStreamIdEx)
#undef NVSCOPE_CUPTI_FN
};

inline bool cupti_resolve(cupti_api& api, void* handle) {
  bool ok = true;
#define NVSCOPE_CUPTI_FN(name)                                                 \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(handle, #name));       \
  if (api.name == nullptr && ok) {                                             \
    ok = false;                                                                \
    api.error = "libcupti has no " #name " (too old a CUPTI?)";                 \
  }
  NVSCOPE_CUPTI_REQUIRED_FUNCTIONS(NVSCOPE_CUPTI_FN)
#undef NVSCOPE_CUPTI_FN
  api.cuptiGetStreamIdEx = reinterpret_cast<decltype(api.cuptiGetStreamIdEx)>(dlsym(handle, "cuptiGetStreamIdEx"));
  return ok;
}

// Finds libcupti: NVSCOPE_CUPTI_PATH when set (and only it), else a copy the process already
// holds, else the usual names through the loader's search path, CUDA_HOME and CUDA_PATH.
inline cupti_api* load_cupti() {
  auto* api = new cupti_api(); // never freed: callbacks may run during process exit
  std::string tried;
  void* handle = nullptr;
  auto attempt = [&](const std::string& name) {
    if (handle != nullptr || name.empty()) return;
    handle = dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      if (tried.empty()) tried = why != nullptr ? why : name + ": not found";
    }
  };
  const char* forced = std::getenv("NVSCOPE_CUPTI_PATH");
  if (forced != nullptr && *forced != '\0') {
    attempt(forced);
  } else {
    if (dlsym(RTLD_DEFAULT, "cuptiSubscribe") != nullptr) handle = RTLD_DEFAULT;
    for (const char* name : {"libcupti.so", "libcupti.so.13", "libcupti.so.12"}) attempt(name);
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
      const char* root = std::getenv(var);
      if (root == nullptr || *root == '\0') continue;
      attempt(std::string(root) + "/lib64/libcupti.so");
      attempt(std::string(root) + "/extras/CUPTI/lib64/libcupti.so");
    }
    attempt("/usr/local/cuda/lib64/libcupti.so");
    attempt("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so");
  }
  if (handle == nullptr) {
    api->error = "libcupti could not be loaded (" + tried +
                 "); add its folder to LD_LIBRARY_PATH or set NVSCOPE_CUPTI_PATH";
    return api;
  }
  if (!cupti_resolve(*api, handle)) return api;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(api->cuptiGetTimestamp), &info) != 0 && info.dli_fname != nullptr)
    api->path = info.dli_fname;
  api->loaded = true;
  return api;
}

// The process's one table (per shared object that includes this header).
inline cupti_api& cupti() {
  static cupti_api* api = load_cupti();
  return *api;
}

inline call_status cupti_check(CUptiResult r, const char* call, const char* file, int line) {
  call_status s;
  s.code = static_cast<int>(r);
  if (r != CUPTI_SUCCESS) s.message = cupti_error_message(call, s.code, file, line);
  return s;
}

} // namespace detail
} // namespace v1
} // namespace nvscope

/// Calls CUPTI function `fn` with `args` (parenthesised) through the loaded table and returns
/// a `detail::call_status` whose message names the call.
#define NVSCOPE_CUPTI_CALL(fn, args) \
  ::nvscope::detail::cupti_check(::nvscope::detail::cupti().fn args, #fn, __FILE__, __LINE__)
