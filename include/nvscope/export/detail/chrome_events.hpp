#pragma once
// Internal: the events of a Chrome trace (Trace Event Format) and the tracks they go on,
// written through json_writer. Not promised.

#include <nvscope/export/detail/json_writer.hpp>
#include <nvscope/trace.hpp>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace detail {

// Each device is a process of its own, numbered far beyond any real process id.
inline constexpr std::uint64_t gpu_process_offset = 1000000000ull;

inline std::uint64_t gpu_pid(std::uint64_t host_pid, std::uint16_t device) noexcept {
  return host_pid + gpu_process_offset + device;
}

// The tracks of one host thread, in the order the viewer shows them. Push/pop ranges, marks,
// API calls and launches share the thread's own track (its OS id); start/end ranges may
// cross each other, so they get a track of their own and never break the nesting of the
// push/pop one; synchronisations get one too.
enum class host_track : std::uint8_t { calls = 0, start_end_ranges = 1, synchronisation = 2 };
inline constexpr std::uint64_t start_end_track_base = 3000000000ull;
inline constexpr std::uint64_t sync_track_base = 3500000000ull;

// Where an event goes: a process (host or device) and a track (thread or stream) in it.
struct chrome_track {
  std::uint64_t pid = 0;
  std::uint64_t tid = 0;
};

// The trace's threads and time origin as the Chrome trace numbers them.
class chrome_frame {
 public:
  explicit chrome_frame(const trace& t)
      : t_(t), pid_(t.process_id ? t.process_id : 1), threads_(t.threads.empty() ? 1u : static_cast<std::uint32_t>(t.threads.size())),
        origin_(earliest(t)) {}

  std::uint64_t host_pid() const noexcept { return pid_; }
  std::uint32_t thread_count() const noexcept { return threads_; }
  // A thread index as the trace gives it; one out of range goes to the first thread.
  std::uint32_t thread(std::uint32_t index) const noexcept { return index < threads_ ? index : 0; }
  // The OS id of a thread, or index + 1 when the trace has none.
  std::uint64_t os_id(std::uint32_t thread) const noexcept {
    if (thread < t_.threads.size() && t_.threads[thread].os_id) return t_.threads[thread].os_id;
    return static_cast<std::uint64_t>(thread) + 1;
  }
  chrome_track host(std::uint32_t index, host_track kind = host_track::calls) const noexcept {
    const std::uint32_t th = thread(index);
    switch (kind) {
      case host_track::calls: break;
      case host_track::start_end_ranges: return {pid_, start_end_track_base + th};
      case host_track::synchronisation: return {pid_, sync_track_base + th};
    }
    return {pid_, os_id(th)};
  }
  std::uint64_t sort_index(std::uint32_t thread, host_track kind) const noexcept {
    return static_cast<std::uint64_t>(thread) * 3 + static_cast<std::uint64_t>(kind);
  }
  chrome_track stream(std::uint16_t device, std::uint32_t stream) const noexcept { return {gpu_pid(pid_, device), stream}; }
  // Nanoseconds from the origin (the earliest timestamp), so that microseconds stay exact.
  timestamp_ns relative(timestamp_ns v) const noexcept { return v > origin_ ? v - origin_ : 0; }
  // The trace-clock time that "ts": 0 stands for (otherData.time_origin_ns).
  timestamp_ns origin() const noexcept { return origin_; }

 private:
  static timestamp_ns earliest(const trace& t) noexcept {
    timestamp_ns origin = std::numeric_limits<timestamp_ns>::max();
    const auto lower = [&](timestamp_ns v) { origin = v && v < origin ? v : origin; };
    lower(t.begin);
    for (const auto& r : t.ranges) lower(r.start);
    for (const auto& k : t.kernels) lower(k.start);
    for (const auto& c : t.copies) lower(c.start);
    for (const auto& s : t.memsets) lower(s.start);
    for (const auto& s : t.syncs) lower(s.start);
    for (const auto& l : t.launches) lower(l.time);
    for (const auto& c : t.api_calls) lower(c.start);
    return origin == std::numeric_limits<timestamp_ns>::max() ? 0 : origin;
  }

  const trace& t_;
  std::uint64_t pid_;
  std::uint32_t threads_;
  timestamp_ns origin_;
};

// Event writers: each opens the event object, writes the fields every event of its phase
// has, and leaves the object open where the caller adds more (name, cat, args).
class chrome_events {
 public:
  chrome_events(const trace& t, const chrome_frame& frame, std::size_t expected_bytes)
      : t_(t), frame_(frame), w_(expected_bytes), escaped_(t.strings.size()), escaped_done_(t.strings.size(), 0) {}

  json_writer& json() noexcept { return w_; }

  void metadata(const char* what, chrome_track at, bool per_thread, std::string_view name) {
    w_.begin_object().key("ph").literal("\"M\"").key("name").string(what).key("pid").value(at.pid);
    if (per_thread) w_.key("tid").value(at.tid);
    w_.key("args").begin_object().key("name").string(name).end_object().end_object();
  }
  void sort_index(chrome_track at, std::uint64_t index) {
    w_.begin_object().key("ph").literal("\"M\"").key("name").literal("\"thread_sort_index\"").key("pid").value(at.pid);
    w_.key("tid").value(at.tid).key("args").begin_object().key("sort_index").value(index).end_object().end_object();
  }
  // {"ph":"X","pid":..,"tid":..,"ts":..,"dur":..,"name":  (the caller writes the name next)
  json_writer& slice(chrome_track at, timestamp_ns start, timestamp_ns end) {
    w_.begin_object().key("ph").literal("\"X\"").key("pid").value(at.pid).key("tid").value(at.tid);
    w_.key("ts").microseconds(frame_.relative(start)).key("dur").microseconds(end > start ? end - start : 0);
    return w_.key("name");
  }
  // {"ph":"i","s":"t",..,"name":  a mark, on its thread
  json_writer& instant(chrome_track at, timestamp_ns time) {
    w_.begin_object().key("ph").literal("\"i\"").key("s").literal("\"t\"").key("pid").value(at.pid);
    return w_.key("tid").value(at.tid).key("ts").microseconds(frame_.relative(time)).key("name");
  }
  // The ends of a launch arrow, written into the open slice object of the launch (or the API
  // call covering it) and of each piece of GPU work it caused: Perfetto's and chrome://tracing's
  // flow binding on slices ("bind_id" with "flow_out" on the source, "flow_in" on each
  // destination), which ties the arrow to the very slice, whatever else starts at the same
  // time on that track. The id is the launch's correlation id, so that the arrow is found by it
  // (Perfetto's flow table); it is a top-level field, not in args: speedscope names a frame by
  // its name and args, and a per-launch value there would make every launch a frame.
  void flow_out(std::uint64_t correlation) { w_.key("bind_id").value(correlation).key("flow_out").value(true); }
  void flow_in(std::uint64_t correlation) { w_.key("bind_id").value(correlation).key("flow_in").value(true); }

  // A string of the trace's table as a JSON string, escaped once on first use: kernel names
  // repeat millions of times.
  std::string_view name(string_id id) {
    if (id >= escaped_.size()) return "\"<unknown>\"";
    if (!escaped_done_[id]) {
      append_json_string(escaped_[id], t_.strings[id]);
      escaped_done_[id] = 1;
    }
    return escaped_[id];
  }
  // "#rrggbb" of an ARGB colour.
  static std::string color(std::uint32_t argb) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%06x", argb & 0xffffffu);
    return buf;
  }

  std::string take() { return w_.take(); }

 private:
  const trace& t_;
  const chrome_frame& frame_;
  json_writer w_;
  std::vector<std::string> escaped_;
  std::vector<char> escaped_done_;
};

} // namespace detail
} // namespace v1
} // namespace nvscope
