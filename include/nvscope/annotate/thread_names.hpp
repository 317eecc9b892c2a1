// nvscope-target: nvscope
#pragma once

/// \file annotate/thread_names.hpp
/// Names for OS threads, shown by Nsight Systems instead of bare thread ids. Naming CUDA
/// streams and devices is in cuda_naming.hpp (it needs the CUDA runtime).
///
/// \code
///   std::thread loader([] {
///     nvscope::name_current_thread("data_loader");
///     ...
///   });
/// \endcode

#include <cstdint>

#include <nvscope/annotate/switch.hpp>
#include <nvscope/annotate/message.hpp>

#if NVSCOPE_DETAIL_ENABLED
#include <nvscope/annotate/detail/nvtx_core.hpp>
#endif

#if defined(_WIN32)
extern "C" __declspec(dllimport) unsigned long __stdcall GetCurrentThreadId(void);
#elif defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#elif defined(__APPLE__)
#include <pthread.h>
#endif

namespace nvscope {
inline namespace v1 {

/// The calling thread's OS id, as NVTX and Nsight Systems number threads (Linux: gettid).
/// \code
///   std::printf("thread %u\n", nvscope::current_os_thread_id());
/// \endcode
inline std::uint32_t current_os_thread_id() noexcept {
#if defined(_WIN32)
  return static_cast<std::uint32_t>(GetCurrentThreadId());
#elif defined(__linux__)
  return static_cast<std::uint32_t>(::syscall(SYS_gettid));
#elif defined(__APPLE__)
  std::uint64_t tid = 0;
  pthread_threadid_np(nullptr, &tid);
  return static_cast<std::uint32_t>(tid);
#else
  return 0;
#endif
}

inline namespace NVSCOPE_DETAIL_MODE {

/// Names the OS thread `os_thread_id` (name.hpp's rules apply to `name`).
/// \code
///   nvscope::name_os_thread(nvscope::current_os_thread_id(), "main");
/// \endcode
inline void name_os_thread(std::uint32_t os_thread_id, name_ref name) noexcept {
#if NVSCOPE_DETAIL_ENABLED
  if (!enabled()) return;
  char buffer[max_name_length + 1];
  detail::sanitize_name(name, buffer);
  nvtxNameOsThreadA(os_thread_id, buffer);
#else
  (void)os_thread_id;
  (void)name;
#endif
}

/// Names the calling thread.
/// \code
///   nvscope::name_current_thread("worker_3");
/// \endcode
inline void name_current_thread(name_ref name) noexcept { name_os_thread(current_os_thread_id(), name); }

} // namespace NVSCOPE_DETAIL_MODE
} // namespace v1
} // namespace nvscope
