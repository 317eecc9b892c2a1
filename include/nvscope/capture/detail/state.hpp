#pragma once
// The process-wide capture state: a depth count, the backends, and the error reporter.
// Internal: use capture_guard.hpp.

#include <nvscope/capture/backend.hpp>
#include <nvscope/capture/listener.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// Called with every capture error. Must not throw. `nullptr` silences errors.
using capture_error_handler = void (*)(const capture_error&) noexcept;

namespace detail {

inline void print_capture_error(const capture_error& e) noexcept {
  std::fprintf(stderr, "%s\n", e.message.c_str());
}

struct capture_backend_slot {
  capture_backend* backend;
  bool started;   // its start() succeeded and its stop() is owed
};

struct capture_state {
  std::mutex mutex;                 // serialises depth changes and every backend call
  std::vector<capture_backend_slot> backends;
  std::uint64_t depth = 0;          // live guards (and schedule captures), all threads
  std::uint64_t outermost_starts = 0;
  bool warned_no_backend = false;
  capture_error_handler handler = &print_capture_error;
  capture_error last_error;
};

// Leaked on purpose: a capture still open at exit (a global schedule, a detached thread)
// must find this alive during static destruction.
inline capture_state& state() noexcept {
  static capture_state* s = new capture_state;
  return *s;
}

inline capture_error call_backend(capture_backend& b, bool start) noexcept {
  const char* verb = start ? "start" : "stop";
  try {
    capture_error e = start ? b.start() : b.stop();
    if (e && e.message.empty())
      e.message = std::string("nvscope: ") + b.name() + " " + verb + " failed (code " +
                  std::to_string(e.native) + ")";
    return e;
  } catch (const std::exception& ex) {
    return {capture_errc::backend_threw, 0,
            std::string("nvscope: ") + b.name() + " " + verb + " threw: " + ex.what()};
  } catch (...) {
    return {capture_errc::backend_threw, 0,
            std::string("nvscope: ") + b.name() + " " + verb + " threw an unknown exception"};
  }
}

inline bool has_capture_listeners() noexcept {
  auto& r = listener_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return !r.listeners.empty();
}

// Reports outside the lock, so that a handler may look at capture state.
inline void report_capture_errors(const std::vector<capture_error>& errors) noexcept {
  if (errors.empty()) return;
  capture_error_handler h;
  {
    auto& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    for (const capture_error& e : errors)
      if (e) s.last_error = e;
    h = s.handler;
  }
  if (h)
    for (const capture_error& e : errors) h(e);
}

inline void report_capture_error(capture_error e) noexcept {
  std::vector<capture_error> v;
  try {
    v.push_back(std::move(e));
  } catch (...) {
    return;
  }
  report_capture_errors(v);
}

// One more capture holder. The outermost one starts every backend, then tells listeners.
// Returns the first error met (also reported).
inline capture_error capture_acquire() noexcept {
  auto& s = state();
  std::vector<capture_error> errors;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.depth++ > 0) return {};
    ++s.outermost_starts;
    for (auto& slot : s.backends) {
      capture_error e = call_backend(*slot.backend, true);
      slot.started = !e;
      if (e) errors.push_back(std::move(e));
    }
    if (s.backends.empty() && !s.warned_no_backend && !has_capture_listeners()) {
      s.warned_no_backend = true;
      errors.push_back({capture_errc::none, 0,
                        "nvscope: capture started but no capture backend is set, so no profiler "
                        "is told (add one: nvscope::use_cuda_profiler_capture() from "
                        "<nvscope/capture/cuda_profiler.hpp>, or nvscope::add_capture_backend)"});
    }
    notify_capture(true);
  }
  capture_error first;
  for (const auto& e : errors)
    if (e) { first = e; break; }
  report_capture_errors(errors);
  return first;
}

// One capture holder fewer. The last one tells listeners, then stops the started backends
// in reverse order.
inline capture_error capture_release() noexcept {
  auto& s = state();
  std::vector<capture_error> errors;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    if (s.depth == 0) {
      errors.push_back({capture_errc::not_started, 0,
                        "nvscope: capture stop without a matching start (ignored)"});
    } else if (--s.depth == 0) {
      notify_capture(false);
      for (auto it = s.backends.rbegin(); it != s.backends.rend(); ++it) {
        if (!it->started) continue;
        it->started = false;
        capture_error e = call_backend(*it->backend, false);
        if (e) errors.push_back(std::move(e));
      }
    }
  }
  capture_error first = errors.empty() ? capture_error{} : errors.front();
  report_capture_errors(errors);
  return first;
}

} // namespace detail
} // namespace v1
} // namespace nvscope
