// nvscope-target: nvscope
#pragma once

/// \file capture/listener.hpp
/// The hook between capture (guards, schedules) and whoever wants to follow it, such as the
/// in-process collector recording only inside capture ranges. Needs no CUDA.
///
/// \code
///   struct printer : nvscope::capture_listener {
///     void capture_started() noexcept override { std::puts("recording"); }
///     void capture_stopped() noexcept override { std::puts("stopped"); }
///   };
///   printer p;
///   nvscope::add_capture_listener(p);      // told of every start and stop from now on
///   ...
///   nvscope::remove_capture_listener(p);   // before p goes away
/// \endcode

#include <algorithm>
#include <mutex>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// Told when process-wide capture starts (after the outermost start reached the profiler)
/// and stops (before the last stop reaches it). Called on the thread that started or
/// stopped capture; must not throw and must not add or remove listeners from inside.
class capture_listener {
 public:
  virtual ~capture_listener() = default;
  virtual void capture_started() noexcept = 0;
  virtual void capture_stopped() noexcept = 0;
};

namespace detail {
struct capture_listener_registry {
  std::mutex mutex;
  std::vector<capture_listener*> listeners;
  bool active = false;
};
// Function-local static: one registry per shared object that includes this header.
inline capture_listener_registry& listener_registry() noexcept {
  static capture_listener_registry registry;
  return registry;
}
// Called by the capture layer. Serialised, so listeners see start/stop strictly alternate.
inline void notify_capture(bool started) noexcept {
  auto& r = listener_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.active == started) return;
  r.active = started;
  for (capture_listener* l : r.listeners) {
    if (started) l->capture_started();
    else l->capture_stopped();
  }
}
} // namespace detail

/// Registers `l`. A listener added while capture is active is told `capture_started()` at once.
inline void add_capture_listener(capture_listener& l) {
  auto& r = detail::listener_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (std::find(r.listeners.begin(), r.listeners.end(), &l) != r.listeners.end()) return;
  r.listeners.push_back(&l);
  if (r.active) l.capture_started();
}

/// Unregisters `l`; a no-op for a listener never added.
inline void remove_capture_listener(capture_listener& l) noexcept {
  auto& r = detail::listener_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.listeners.erase(std::remove(r.listeners.begin(), r.listeners.end(), &l), r.listeners.end());
}

/// True between a capture start and its stop, as the capture layer reported them.
inline bool capture_active() noexcept {
  auto& r = detail::listener_registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.active;
}

} // namespace v1
} // namespace nvscope
