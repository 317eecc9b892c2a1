// nvscope-target: nvscope
#pragma once

/// \file capture/backend.hpp
/// What a capture mechanism is (`capture_backend`), the error it reports (`capture_error`),
/// and `recording_capture_backend`, a fake that records every start and stop so that code
/// driving capture can be tested without a GPU or a profiler. Needs no CUDA.
///
/// \code
///   nvscope::recording_capture_backend fake;
///   nvscope::add_capture_backend(fake);
///   { nvscope::capture_guard g; }                 // fake.starts() == 1, fake.stops() == 1
///   nvscope::remove_capture_backend(fake);
/// \endcode

#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {

/// Why a capture call failed. `none` means it did not.
enum class capture_errc : int {
  none = 0,
  backend_failed,   ///< the mechanism reported an error (for CUDA: `native` is the cudaError_t)
  backend_threw,    ///< the mechanism threw; the exception was caught and turned into this
  not_started,      ///< a stop with no matching start (a bug in the caller, reported, ignored)
  bad_schedule,     ///< schedule options or an NVSCOPE_CAPTURE value that make no sense
  wrong_thread,     ///< a step ended on another thread than the one that began it
};

/// One capture error: a code for programs, a one-line message for people.
///
/// \code
///   nvscope::capture_guard g;
///   if (g.error()) std::fprintf(stderr, "%s\n", g.error().message.c_str());
/// \endcode
struct capture_error {
  capture_errc code = capture_errc::none;
  int native = 0;        ///< the mechanism's own error code (cudaError_t for cudaProfiler)
  std::string message;   ///< one line, starts with "nvscope: ", no trailing newline

  /// True when this is an error.
  explicit operator bool() const noexcept { return code != capture_errc::none; }
};

/// One way of telling a profiler to record: `cudaProfilerStart/Stop`, an NVTX capture range,
/// a test fake. nvscope calls `start()` at the outermost capture start and `stop()` at the
/// last stop, always alternating, serialised process-wide. Return an error instead of
/// throwing (a throw is caught and reported, never lost).
///
/// \code
///   struct my_backend : nvscope::capture_backend {
///     const char* name() const noexcept override { return "mine"; }
///     nvscope::capture_error start() override { return {}; }
///     nvscope::capture_error stop() override { return {}; }
///   };
/// \endcode
class capture_backend {
 public:
  virtual ~capture_backend() = default;
  /// A short name used in error messages, e.g. "cudaProfiler".
  virtual const char* name() const noexcept = 0;
  virtual capture_error start() = 0;
  virtual capture_error stop() = 0;
};

/// A fake backend that records what it was told. Thread-safe; may be made to fail.
///
/// \code
///   nvscope::recording_capture_backend fake;
///   fake.fail_next_start(2, "simulated");      // next start() returns an error
///   fake.events();                             // {"start", "stop", ...}
/// \endcode
class recording_capture_backend : public capture_backend {
 public:
  explicit recording_capture_backend(std::string name = "recording") : name_(std::move(name)) {}

  const char* name() const noexcept override { return name_.c_str(); }

  capture_error start() override {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back("start");
    if (throw_next_) {
      throw_next_ = false;
      throw std::runtime_error("simulated throw from " + name_);
    }
    if (fail_next_start_) {
      fail_next_start_ = false;
      return {capture_errc::backend_failed, fail_code_, "nvscope: " + name_ + " start failed: " + fail_message_};
    }
    if (active_) ++double_starts_;
    active_ = true;
    ++starts_;
    return {};
  }

  capture_error stop() override {
    std::lock_guard<std::mutex> lock(mutex_);
    events_.push_back("stop");
    if (!active_) ++stray_stops_;
    active_ = false;
    ++stops_;
    return {};
  }

  /// The next start() fails with `code` and `message` (and leaves the fake inactive).
  void fail_next_start(int code, std::string message) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_next_start_ = true;
    fail_code_ = code;
    fail_message_ = std::move(message);
  }
  /// The next start() throws std::runtime_error.
  void throw_next_start() {
    std::lock_guard<std::mutex> lock(mutex_);
    throw_next_ = true;
  }

  bool active() const { std::lock_guard<std::mutex> l(mutex_); return active_; }
  std::size_t starts() const { std::lock_guard<std::mutex> l(mutex_); return starts_; }
  std::size_t stops() const { std::lock_guard<std::mutex> l(mutex_); return stops_; }
  /// Starts while already active, and stops while inactive: both must stay 0.
  std::size_t double_starts() const { std::lock_guard<std::mutex> l(mutex_); return double_starts_; }
  std::size_t stray_stops() const { std::lock_guard<std::mutex> l(mutex_); return stray_stops_; }
  std::vector<std::string> events() const { std::lock_guard<std::mutex> l(mutex_); return events_; }
  void clear() {
    std::lock_guard<std::mutex> l(mutex_);
    events_.clear();
    starts_ = stops_ = double_starts_ = stray_stops_ = 0;
  }

 private:
  mutable std::mutex mutex_;
  std::string name_;
  std::vector<std::string> events_;
  bool active_ = false;
  bool fail_next_start_ = false;
  bool throw_next_ = false;
  int fail_code_ = 0;
  std::string fail_message_;
  std::size_t starts_ = 0, stops_ = 0, double_starts_ = 0, stray_stops_ = 0;
};

} // namespace v1
} // namespace nvscope
