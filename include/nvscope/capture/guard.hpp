// nvscope-target: nvscope
#pragma once

/// \file capture/guard.hpp
/// RAII capture: `capture_guard` starts capture on construction and stops it on
/// destruction. Guards nest, on one thread or many: a process-wide count makes only the
/// outermost start and the last stop reach the profiler (`cudaProfilerStart/Stop` do not
/// nest by themselves). Which profiler is told is the process-wide list of backends.
/// Needs no CUDA; the cudaProfiler backend is in <nvscope/capture/cuda_profiler.hpp>.
///
/// \code
///   nvscope::use_cuda_profiler_capture();     // once, from <nvscope/capture/cuda_profiler.hpp>
///   {
///     nvscope::capture_guard g;              // cudaProfilerStart()
///     run_step();
///     { nvscope::capture_guard inner; }      // nested: nothing reaches the profiler
///   }                                        // cudaProfilerStop()
/// \endcode

#include <nvscope/capture/backend.hpp>
#include <nvscope/capture/listener.hpp>
#include <nvscope/capture/detail/state.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <new>

namespace nvscope {
inline namespace v1 {

/// Adds `b` to the process-wide backends (a no-op if already there). If capture is on
/// now, `b` is started at once, so that it sees a balanced start/stop. `b` must outlive
/// its registration. Returns the error of that immediate start, if any.
///
/// \code
///   nvscope::add_capture_backend(nvscope::cuda_profiler_capture());
/// \endcode
inline capture_error add_capture_backend(capture_backend& b) {
  auto& s = detail::state();
  capture_error e;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    for (auto& slot : s.backends)
      if (slot.backend == &b) return {};
    s.backends.push_back({&b, false});
    if (s.depth > 0) {
      e = detail::call_backend(b, true);
      s.backends.back().started = !e;
    }
  }
  if (e) detail::report_capture_error(e);
  return e;
}

/// Removes `b`; if capture is on and `b` was started, `b` is stopped first.
///
/// \code
///   nvscope::remove_capture_backend(my_backend);
/// \endcode
inline capture_error remove_capture_backend(capture_backend& b) noexcept {
  auto& s = detail::state();
  capture_error e;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    for (auto it = s.backends.begin(); it != s.backends.end(); ++it) {
      if (it->backend != &b) continue;
      if (it->started) e = detail::call_backend(b, false);
      s.backends.erase(it);
      break;
    }
  }
  if (e) detail::report_capture_error(e);
  return e;
}

/// How many captures are open now (guards, unique captures, schedules in a recorded
/// step), over all threads. 0 means the profiler is not recording.
///
/// \code
///   assert(nvscope::capture_depth() == 0);
/// \endcode
inline std::uint64_t capture_depth() noexcept {
  auto& s = detail::state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.depth;
}

/// How many times capture went from off to on in this process (outermost starts).
///
/// \code
///   std::printf("%llu capture ranges\n", (unsigned long long)nvscope::capture_count());
/// \endcode
inline std::uint64_t capture_count() noexcept {
  auto& s = detail::state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.outermost_starts;
}

/// The last capture error reported in this process (empty if none).
///
/// \code
///   if (auto e = nvscope::last_capture_error()) log(e.message);
/// \endcode
inline capture_error last_capture_error() {
  auto& s = detail::state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return s.last_error;
}

/// Replaces what is done with each capture error (default: print its line to stderr).
/// `nullptr` silences them; they stay readable through `last_capture_error()` and
/// `capture_guard::error()`. Returns the previous handler.
///
/// \code
///   nvscope::set_capture_error_handler([](const nvscope::capture_error& e) noexcept {
///     my_log(e.message);
///   });
/// \endcode
inline capture_error_handler set_capture_error_handler(capture_error_handler h) noexcept {
  auto& s = detail::state();
  std::lock_guard<std::mutex> lock(s.mutex);
  capture_error_handler old = s.handler;
  s.handler = h;
  return old;
}

/// Scoped capture. Construction starts capture (if it is the outermost), destruction stops
/// it (if it is the last). Never throws; an error from a backend is reported once and kept
/// in `error()`, and the program goes on. Neither copyable nor movable; see
/// `unique_capture` for a capture that outlives a scope.
///
/// \code
///   void profiled_region() {
///     nvscope::capture_guard g;
///     if (g.error()) { /* the profiler was not told; g.error().message says why */ }
///     launch_kernels();
///   }
/// \endcode
class capture_guard {
 public:
  capture_guard() noexcept : error_(detail::capture_acquire()) {}
  ~capture_guard() { detail::capture_release(); }
  capture_guard(const capture_guard&) = delete;
  capture_guard& operator=(const capture_guard&) = delete;
  capture_guard(capture_guard&&) = delete;
  capture_guard& operator=(capture_guard&&) = delete;
  static void* operator new(std::size_t) = delete;
  static void* operator new[](std::size_t) = delete;

  /// The error from the start this guard caused (none if it was nested or succeeded).
  const capture_error& error() const noexcept { return error_; }

 private:
  capture_error error_;
};

/// A movable capture that may outlive a scope, be stored in an object, or be ended early
/// with `reset()`. Default-constructed it holds nothing.
///
/// \code
///   nvscope::unique_capture c = nvscope::unique_capture::start();
///   auto later = std::move(c);    // still one capture
///   later.reset();                // stops (if it was the last)
/// \endcode
class unique_capture {
 public:
  unique_capture() noexcept = default;
  /// Starts a capture and returns its holder.
  static unique_capture start() noexcept {
    unique_capture c;
    c.error_ = detail::capture_acquire();
    c.held_ = true;
    return c;
  }
  unique_capture(unique_capture&& o) noexcept : held_(o.held_), error_(std::move(o.error_)) {
    o.held_ = false;
  }
  unique_capture& operator=(unique_capture&& o) noexcept {
    if (this != &o) {
      reset();
      held_ = o.held_;
      error_ = std::move(o.error_);
      o.held_ = false;
    }
    return *this;
  }
  unique_capture(const unique_capture&) = delete;
  unique_capture& operator=(const unique_capture&) = delete;
  ~unique_capture() { reset(); }

  /// Ends this capture now (a no-op if it holds none).
  void reset() noexcept {
    if (held_) {
      held_ = false;
      detail::capture_release();
    }
  }
  /// True while this object holds a capture.
  bool holds() const noexcept { return held_; }
  const capture_error& error() const noexcept { return error_; }

 private:
  bool held_ = false;
  capture_error error_;
};

} // namespace v1
} // namespace nvscope
