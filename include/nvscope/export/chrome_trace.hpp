// nvscope-target: nvscope
#pragma once

/// \file export/chrome_trace.hpp
/// A Chrome trace (Trace Event Format) that Perfetto UI and chrome://tracing open: the host
/// process with one track per thread holding its NVTX ranges and launches, one GPU process
/// per device with one track per CUDA stream, and flow arrows from each launch to the GPU
/// work it caused. Reads the trace and the attribution analysis makes of it.
///
/// \code
///   nvscope::write_output("trace_%p.json", nvscope::to_chrome_trace(t));   // ui.perfetto.dev
/// \endcode
/// `write_chrome_trace` writes the same bytes to a file as they are made (a trace of millions
/// of records is a gigabyte as one string).

#include <nvscope/analyze/attribution.hpp>
#include <nvscope/export/output_path.hpp>
#include <nvscope/export/provenance.hpp>
#include <nvscope/trace.hpp>

#include <string>

namespace nvscope {
inline namespace v1 {

/// What the Chrome trace holds.
struct chrome_trace_options {
  bool flows = true;      ///< arrows from each launch to its GPU work
  bool api_calls = true;  ///< CUDA API calls as slices on their threads
  /// Written into "otherData"."provenance" with the trace's recording context; null: this
  /// process's (`process_provenance()`).
  const run_provenance* provenance = nullptr;
};

/// `t` as a Chrome trace (JSON object format, microsecond timestamps from the trace start):
/// the host process with a track per thread (NVTX ranges and marks, API calls, launches)
/// plus tracks for start/end ranges and synchronisations, a process per device with a
/// track per stream, and an arrow from each launch to the GPU work it caused.
/// \code
///   nvscope::write_output("trace_%p.json", nvscope::to_chrome_trace(t));
/// \endcode
/// With `a`, the trace's attribution from an earlier pass (see to_folded): not indexed again.
std::string to_chrome_trace(const trace& t, const chrome_trace_options& options, const attribution& a);

/// The same, the trace indexed here (`attribute(t)`).
std::string to_chrome_trace(const trace& t, const chrome_trace_options& options = {});

/// The Chrome trace written to `path` as it is made, never whole in memory (about 270 bytes
/// a record: 1 GB at 2 M kernels as a string), with `write_file`'s contract (a temporary file
/// renamed into place, the old file kept if the write fails, no symbolic link followed, a
/// device or pipe written in place). The bytes are to_chrome_trace's.
/// \code
///   const auto x = nvscope::index_trace(t);
///   if (auto w = nvscope::write_chrome_trace("trace.json", t, {}, x.links); !w) std::fputs(w.error.c_str(), stderr);
/// \endcode
write_result write_chrome_trace(const std::string& path, const trace& t, const chrome_trace_options& options, const attribution& a);

/// The same, the trace indexed here (`attribute(t)`).
write_result write_chrome_trace(const std::string& path, const trace& t, const chrome_trace_options& options = {});

} // namespace v1
} // namespace nvscope

#if defined(NVSCOPE_IMPLEMENTATION)
#include <nvscope/analysis.hpp> // the implementation file compiles attribute() and analyze() too
#include <nvscope/analyze/intervals.hpp>
#include <nvscope/analyze/names.hpp>
#include <nvscope/export/detail/chrome_events.hpp>
#include <nvscope/export/output_path.hpp>
#include <nvscope/trace.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace nvscope {
inline namespace v1 {

namespace detail {

// One Chrome trace being written: the trace, what analysis attributed, and the events.
struct chrome_trace_job {
  const trace& t;
  const attribution& a;
  const chrome_trace_options& options;
  chrome_frame frame;
  chrome_events events;

  // `whole`: the text is kept whole (to_chrome_trace), its size guessed and reserved once;
  // else it is streamed (write_chrome_trace) and nothing is reserved.
  chrome_trace_job(const trace& tr, const attribution& at, const chrome_trace_options& o, bool whole = true)
      : t(tr), a(at), options(o), frame(tr), events(tr, frame, whole ? expected_bytes(tr) : 0) {}

  // About what each record takes (a kernel: its slice, launch configuration and arrow end),
  // and a quarter more, so that the text is not copied as it grows (timestamps gain digits as
  // a trace grows longer). Reserved pages that are never written cost address space, not memory.
  static std::size_t expected_bytes(const trace& t) noexcept {
    const std::size_t guess = 4096 + 300 * t.kernels.size() + 240 * (t.copies.size() + t.memsets.size()) +
                              160 * (t.ranges.size() + t.syncs.size() + t.api_calls.size()) + 120 * t.launches.size();
    return guess + guess / 4;
  }
};

// The host process and one track per thread, named and in order.
inline void name_host_threads(chrome_trace_job& job) {
  const auto& f = job.frame;
  job.events.metadata("process_name", {f.host_pid(), 0}, false, "Host (pid " + std::to_string(job.t.process_id) + ")");
  for (std::uint32_t i = 0; i < f.thread_count(); ++i) {
    const bool named = i < job.t.threads.size() && job.t.threads[i].name;
    const std::string name = named ? std::string(job.t.strings[job.t.threads[i].name]) : "thread " + std::to_string(f.os_id(i));
    job.events.metadata("thread_name", f.host(i), true, name);
    job.events.sort_index(f.host(i), f.sort_index(i, host_track::calls));
  }
}

// One process per device and one track per stream, for those the GPU work used.
inline void name_gpu_streams(chrome_trace_job& job) {
  const trace& t = job.t;
  std::vector<std::pair<std::uint16_t, std::uint32_t>> streams;
  for (const auto& k : t.kernels) streams.emplace_back(device_of(t, k), k.stream);
  for (const auto& c : t.copies) streams.emplace_back(c.device, c.stream);
  for (const auto& s : t.memsets) streams.emplace_back(s.device, s.stream);
  std::sort(streams.begin(), streams.end());
  streams.erase(std::unique(streams.begin(), streams.end()), streams.end());
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const auto [device, stream] = streams[i];
    const auto track = job.frame.stream(device, stream);
    if (i == 0 || streams[i - 1].first != device) {
      std::string name = "GPU " + std::to_string(device);
      for (const auto& d : t.devices)
        if (d.id == device && d.name) name += " (" + std::string(t.strings[d.name]) + ")";
      job.events.metadata("process_name", {track.pid, 0}, false, name);
    }
    job.events.metadata("thread_name", track, true, "Stream " + std::to_string(stream));
  }
}

// The start/end and synchronisation tracks of the threads that have any, named before their
// first event.
inline void name_extra_host_tracks(chrome_trace_job& job) {
  const auto& f = job.frame;
  std::vector<char> start_end(f.thread_count(), 0), sync(f.thread_count(), 0);
  for (const auto& r : job.t.ranges)
    if (!r.is_mark && !r.is_push_pop) start_end[f.thread(r.thread)] = 1;
  for (const auto& s : job.t.syncs)
    if (valid_interval(s.start, s.end)) sync[f.thread(s.thread)] = 1;
  const auto name = [&](const std::vector<char>& used, host_track kind, const char* words) {
    for (std::uint32_t th = 0; th < f.thread_count(); ++th) {
      if (!used[th]) continue;
      job.events.metadata("thread_name", f.host(th, kind), true, words + std::to_string(f.os_id(th)));
      job.events.sort_index(f.host(th, kind), f.sort_index(th, kind));
    }
  };
  name(start_end, host_track::start_end_ranges, "start/end ranges of thread ");
  name(sync, host_track::synchronisation, "synchronisation of thread ");
}

// "domain:name" outside the default domain; the plain name (escaped once) inside it.
inline void write_range_name(chrome_trace_job& job, const range_record& r) {
  if (r.domain == 0) {
    job.events.json().literal(job.events.name(r.name));
    return;
  }
  std::string name(job.t.strings[r.domain]);
  name += ':';
  name += job.t.strings[r.name];
  job.events.json().string(name);
}

inline void write_payload(json_writer& w, const recorded_payload& p) {
  switch (p.kind) {
    case payload_kind::none: break;
    case payload_kind::int32:
    case payload_kind::int64: w.key("payload").value(p.value.i); break;
    case payload_kind::uint32:
    case payload_kind::uint64: w.key("payload").value(p.value.u); break;
    case payload_kind::float32:
    case payload_kind::float64: w.key("payload").value(p.value.d); break;
  }
}

// Slices carry no per-event id in their args (speedscope would make each its own frame):
// what links a launch to its GPU work is the arrow, whose id is the correlation.

// Ranges as slices (push/pop on the thread's track, start/end on their own), marks as
// instants; args: nesting depth, unclosed, colour, payload.
inline void write_ranges(chrome_trace_job& job) {
  auto& w = job.events.json();
  for (std::size_t i = 0; i < job.t.ranges.size(); ++i) {
    const auto& r = job.t.ranges[i];
    if (r.is_mark) {
      job.events.instant(job.frame.host(r.thread), r.start);
      write_range_name(job, r);
      w.key("cat").literal("\"nvtx\"").end_object();
      continue;
    }
    const auto kind = r.is_push_pop ? host_track::calls : host_track::start_end_ranges;
    job.events.slice(job.frame.host(r.thread, kind), r.start, job.a.range_end[i]);
    write_range_name(job, r);
    w.key("cat").literal("\"nvtx\"").key("args").begin_object().key("depth").value(job.a.depth[i]);
    if (r.end == 0) w.key("unclosed").value(true);
    if (r.color) w.key("color").string(chrome_events::color(r.color));
    write_payload(w, r.payload);
    w.end_object().end_object();
  }
}

inline void write_syncs(chrome_trace_job& job) {
  static constexpr const char* kinds[] = {"sync", "cudaEventSynchronize", "cudaStreamWaitEvent", "cudaStreamSynchronize",
                                          "cudaDeviceSynchronize"};
  for (const auto& s : job.t.syncs) {
    if (!valid_interval(s.start, s.end)) continue;
    const char* name = kinds[std::min<std::size_t>(static_cast<std::size_t>(s.kind), 4)];
    job.events.slice(job.frame.host(s.thread, host_track::synchronisation), s.start, s.end).string(name);
    job.events.json().key("cat").literal("\"sync\"").key("args").begin_object().key("stream").value(s.stream);
    job.events.json().end_object().end_object();
  }
}

// Per launch, whether it caused GPU work (an arrow goes from it, when arrows are drawn).
inline std::vector<char> launches_with_gpu_work(const chrome_trace_job& job) {
  std::vector<char> used(job.t.launches.size(), 0);
  for (const auto* links : {&job.a.kernel_launch, &job.a.copy_launch, &job.a.memset_launch})
    for (auto l : *links)
      if (l != attribution::none) used[l] = 1;
  return used;
}

// CUDA API calls when recorded, the one covering a launch of GPU work the source of its
// arrow; returns, per launch, whether a call covers it.
inline std::vector<char> write_api_calls(chrome_trace_job& job, const std::vector<char>& used) {
  const trace& t = job.t;
  std::vector<char> covered(t.launches.size(), 0);
  if (!job.options.api_calls || t.api_calls.empty()) return covered;
  const auto launch_of = api_call_launches(t);
  auto& w = job.events.json();
  for (std::size_t i = 0; i < t.api_calls.size(); ++i) {
    const auto& c = t.api_calls[i];
    if (!valid_interval(c.start, c.end)) continue;
    job.events.slice(job.frame.host(c.thread), c.start, c.end).string(t.strings[c.name]);
    w.key("cat").literal("\"cuda_api\"");
    const auto l = launch_of[i];
    if (l != attribution::none && c.start <= t.launches[l].time && t.launches[l].time <= c.end) {
      covered[l] = 1;
      if (used[l] && job.options.flows) job.events.flow_out(t.launches[l].correlation);
    }
    w.end_object();
  }
  return covered;
}

// A 1 ns "launch" slice for each launch of GPU work that no API call covers: the arrows
// start there.
inline void write_launch_slices(chrome_trace_job& job, const std::vector<char>& used, const std::vector<char>& covered) {
  const trace& t = job.t;
  auto& w = job.events.json();
  for (std::size_t l = 0; l < t.launches.size(); ++l) {
    if (!used[l] || covered[l]) continue;
    const auto& lr = t.launches[l];
    job.events.slice(job.frame.host(lr.thread), lr.time, lr.time + 1).literal("\"launch\"");
    w.key("cat").literal("\"launch\"");
    if (job.options.flows) job.events.flow_out(lr.correlation);
    w.end_object();
  }
}

// The end of the arrow from `launch` (an index into trace::launches, or none), in the open
// object of the GPU work's slice.
inline void write_flow_end(chrome_trace_job& job, std::uint32_t launch) {
  if (!job.options.flows || launch == attribution::none) return;
  job.events.flow_in(job.t.launches[launch].correlation);
}

inline void write_kernels(chrome_trace_job& job) {
  auto& w = job.events.json();
  const auto triple = [&](const auto& key, std::uint64_t x, std::uint64_t y, std::uint64_t z) {
    w.key(key).begin_array().value(x).value(y).value(z).end_array();
  };
  for (std::size_t i = 0; i < job.t.kernels.size(); ++i) {
    const auto& k = job.t.kernels[i];
    if (!valid_interval(k.start, k.end)) continue;
    const auto& c = job.t.kernel_configs[k.config];
    const auto track = job.frame.stream(c.device, k.stream);
    job.events.slice(track, k.start, k.end).literal(job.events.name(k.name));
    w.key("cat").literal("\"kernel\"").key("args").begin_object();
    triple("grid", c.grid[0], c.grid[1], c.grid[2]);
    triple("block", c.block[0], c.block[1], c.block[2]);
    w.key("registers").value(c.registers).key("shared_bytes").value(c.shared_bytes);
    if (c.graph) w.key("graph").value(c.graph);
    if (job.a.kernel_owner[i] != attribution::none) w.key("range").literal(job.events.name(job.t.ranges[job.a.kernel_owner[i]].name));
    w.end_object();
    write_flow_end(job, job.a.kernel_launch[i]);
    w.end_object();
  }
}

// Copies and memsets: a slice on their stream with the bytes moved or set, and the arrow.
template <class Record, class Name>
void write_memory_operations(chrome_trace_job& job, const std::vector<Record>& records, const record_indexes& launches,
                             const char* category, Name name_of) {
  auto& w = job.events.json();
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (!valid_interval(r.start, r.end)) continue;
    const auto track = job.frame.stream(r.device, r.stream);
    job.events.slice(track, r.start, r.end).string(name_of(r));
    w.key("cat").string(category).key("args").begin_object().key("bytes").value(r.bytes).end_object();
    write_flow_end(job, launches[i]);
    w.end_object();
  }
}

// Every event of the trace, in to_chrome_trace's order, through job's writer.
inline void write_chrome_events(chrome_trace_job& job) {
  const trace& t = job.t;
  const attribution& a = job.a;
  json_writer& w = job.events.json();
  w.begin_object().key("displayTimeUnit").literal("\"ns\"");
  const std::string where = provenance_json(job.options.provenance ? *job.options.provenance : process_provenance(), t);
  w.key("otherData").begin_object().key("producer").literal("\"nvscope\"");
  w.key("format").literal(format_json("nvscope-chrome-trace", chrome_trace_format_version));
  w.key("time_origin_ns").value(job.frame.origin()); // "ts": 0 on the trace clock, for nvscope merge
  w.key("provenance").literal(where).end_object();
  w.key("traceEvents").begin_array(true);
  name_host_threads(job);
  name_gpu_streams(job);
  name_extra_host_tracks(job);
  write_ranges(job);
  write_syncs(job);
  const auto used = launches_with_gpu_work(job);
  write_launch_slices(job, used, write_api_calls(job, used));
  write_kernels(job);
  write_memory_operations(job, t.copies, a.copy_launch, "memcpy", [](const copy_record& c) { return copy_operation_name(c.kind); });
  write_memory_operations(job, t.memsets, a.memset_launch, "memset", [](const memset_record&) { return "[CUDA memset]"; });
  w.end_array().end_object().raw("\n");
}

} // namespace detail

std::string to_chrome_trace(const trace& t, const chrome_trace_options& options, const attribution& a) {
  detail::check_attribution(t, a, "to_chrome_trace");
  detail::chrome_trace_job job(t, a, options);
  detail::write_chrome_events(job);
  return job.events.take();
}

std::string to_chrome_trace(const trace& t, const chrome_trace_options& options) {
  return to_chrome_trace(t, options, attribute(t));
}

write_result write_chrome_trace(const std::string& path, const trace& t, const chrome_trace_options& options, const attribution& a) {
  detail::check_attribution(t, a, "write_chrome_trace");
  return write_file_from(path, [&](auto&& emit) {
    using emit_type = std::remove_reference_t<decltype(emit)>;
    detail::chrome_trace_job job(t, a, options, false);
    job.events.json().stream_to([](void* e, std::string_view block) { return (*static_cast<emit_type*>(e))(block); }, &emit);
    try {
      detail::write_chrome_events(job);
      job.events.json().finish_stream();
    } catch (const detail::json_writer::stream_stopped&) {
      // The write failed (emit said so, and write_file_from reports it): no more events made.
    }
  });
}

write_result write_chrome_trace(const std::string& path, const trace& t, const chrome_trace_options& options) {
  return write_chrome_trace(path, t, options, attribute(t));
}

} // namespace v1
} // namespace nvscope
#endif
