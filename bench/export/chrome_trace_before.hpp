// The Chrome trace writer as it was before issue 8 (commit 2085ae5: one 315-line function
// pasting strings), kept verbatim (but for reading a kernel's configuration from
// `trace::kernel_configs`, where it moved) so that the benchmark times old against new in one binary
// and checks that both write the same bytes. Not part of the SDK.
#pragma once

#include <nvscope/analysis.hpp>
#include <nvscope/analyze/analyze.hpp> // the engine's passes, called alone
#include <nvscope/export/chrome_trace.hpp>
#include <nvscope/export/detail/json_text.hpp>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace nvscope_bench {
using namespace nvscope;

inline std::string to_chrome_trace_before(const trace& t, const chrome_trace_options& options = {}) {
  using namespace nvscope::detail;
  attribution a = attribute(t);
  const std::uint64_t pid = t.process_id ? t.process_id : 1;
  // Origin: the earliest timestamp, so that microsecond values stay small and exact.
  timestamp_ns origin = std::numeric_limits<timestamp_ns>::max();
  auto lower = [&](timestamp_ns v) { if (v && v < origin) origin = v; };
  lower(t.begin);
  for (const auto& r : t.ranges) lower(r.start);
  for (const auto& k : t.kernels) lower(k.start);
  for (const auto& c : t.copies) lower(c.start);
  for (const auto& s : t.memsets) lower(s.start);
  for (const auto& s : t.syncs) lower(s.start);
  for (const auto& l : t.launches) lower(l.time);
  for (const auto& c : t.api_calls) lower(c.start);
  if (origin == std::numeric_limits<timestamp_ns>::max()) origin = 0;
  const auto rel = [&](timestamp_ns v) { return v > origin ? v - origin : 0; };

  const auto thread_count = std::max<std::size_t>(t.threads.size(), 1);
  auto host_tid = [&](std::uint32_t thread) -> std::uint64_t {
    if (thread < t.threads.size() && t.threads[thread].os_id) return t.threads[thread].os_id;
    return static_cast<std::uint64_t>(thread) + 1;
  };
  // Start/end ranges may cross each other: a track of their own per thread, so they never
  // break the nesting of the push/pop track.
  auto startend_tid = [&](std::uint32_t thread) { return 3000000000ull + thread; };
  auto sync_tid = [&](std::uint32_t thread) { return 3500000000ull + thread; };

  std::string out;
  // About what each record takes (a kernel: its slice and the two ends of its arrow), so that
  // the text is not copied as it grows: for a million kernels that copying was most of the time.
  out.reserve(4096 + 420 * t.kernels.size() + 320 * (t.copies.size() + t.memsets.size()) +
              160 * (t.ranges.size() + t.syncs.size() + t.api_calls.size()) + 120 * t.launches.size());
  // otherData as the writer makes it now (format, time origin, provenance: issues 46 and 49), so
  // that the events' bytes are what is compared.
  out += "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"nvscope\",\"format\":";
  out += format_json("nvscope-chrome-trace", chrome_trace_format_version) + ",\"time_origin_ns\":" + std::to_string(origin);
  out += ",\"provenance\":" + provenance_json(process_provenance(), t) + "},\"traceEvents\":[\n";
  bool first = true;
  auto begin_event = [&]() { out += first ? "" : ",\n"; first = false; };
  auto meta = [&](const char* what, std::uint64_t p, std::uint64_t tid, std::string_view name, bool thread) {
    begin_event();
    out += "{\"ph\":\"M\",\"name\":\"";
    out += what;
    out += "\",\"pid\":";
    append_u(out, p);
    if (thread) { out += ",\"tid\":"; append_u(out, tid); }
    out += ",\"args\":{\"name\":";
    append_json_string(out, name);
    out += "}}";
  };
  auto sort_index = [&](std::uint64_t p, std::uint64_t tid, std::uint64_t index) {
    begin_event();
    out += "{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":";
    append_u(out, p);
    out += ",\"tid\":";
    append_u(out, tid);
    out += ",\"args\":{\"sort_index\":";
    append_u(out, index);
    out += "}}";
  };
  // Each string of the table escaped once, on first use: kernel names repeat millions of times.
  std::vector<std::string> escaped(t.strings.size());
  std::vector<char> escaped_done(t.strings.size(), 0);
  auto escaped_name = [&](string_id id) -> const std::string& {
    if (id >= escaped.size()) {
      static const std::string unknown = "\"<unknown>\"";
      return unknown;
    }
    if (!escaped_done[id]) {
      detail::append_json_string(escaped[id], t.strings[id]);
      escaped_done[id] = 1;
    }
    return escaped[id];
  };
  auto slice_head = [&](std::uint64_t p, std::uint64_t tid, timestamp_ns start, timestamp_ns end) {
    begin_event();
    out += "{\"ph\":\"X\",\"pid\":";
    append_u(out, p);
    out += ",\"tid\":";
    append_u(out, tid);
    out += ",\"ts\":";
    append_us(out, rel(start));
    out += ",\"dur\":";
    append_us(out, end > start ? end - start : 0);
    out += ",\"name\":";
  };
  auto slice_cat = [&](const char* cat) {
    out += ",\"cat\":\"";
    out += cat;
    out += "\"";
  };
  // A slice named by a string of the table (escaped once).
  auto slice_named = [&](std::uint64_t p, std::uint64_t tid, timestamp_ns start, timestamp_ns end, string_id name, const char* cat) {
    slice_head(p, tid, start, end);
    out += escaped_name(name);
    slice_cat(cat);
  };
  auto slice = [&](std::uint64_t p, std::uint64_t tid, timestamp_ns start, timestamp_ns end, std::string_view name, const char* cat) {
    slice_head(p, tid, start, end);
    append_json_string(out, name);
    slice_cat(cat);
  };

  meta("process_name", pid, 0, "Host (pid " + std::to_string(t.process_id) + ")", false);
  for (std::uint32_t i = 0; i < thread_count; ++i) {
    std::string name = i < t.threads.size() && t.threads[i].name ? std::string(t.strings[t.threads[i].name])
                                                                   : "thread " + std::to_string(host_tid(i));
    meta("thread_name", pid, host_tid(i), name, true);
    sort_index(pid, host_tid(i), i * 3);
  }
  // Devices and streams actually used.
  std::vector<std::pair<std::uint16_t, std::uint32_t>> streams;
  for (const auto& k : t.kernels) streams.emplace_back(t.kernel_configs[k.config].device, k.stream);
  for (const auto& c : t.copies) streams.emplace_back(c.device, c.stream);
  for (const auto& s : t.memsets) streams.emplace_back(s.device, s.stream);
  std::sort(streams.begin(), streams.end());
  streams.erase(std::unique(streams.begin(), streams.end()), streams.end());
  std::uint16_t last_device = 0xffff;
  for (const auto& [device, stream] : streams) {
    if (device != last_device) {
      std::string name = "GPU " + std::to_string(device);
      for (const auto& d : t.devices)
        if (d.id == device && d.name) name += " (" + std::string(t.strings[d.name]) + ")";
      meta("process_name", gpu_pid(pid, device), 0, name, false);
      last_device = device;
    }
    meta("thread_name", gpu_pid(pid, device), stream, "Stream " + std::to_string(stream), true);
  }

  // Tracks of start/end ranges and of synchronisations, named before their first event.
  std::vector<char> startend_used(thread_count, 0), sync_used(thread_count, 0);
  for (const auto& r : t.ranges)
    if (!r.is_mark && !r.is_push_pop) startend_used[r.thread < thread_count ? r.thread : 0] = 1;
  for (const auto& s : t.syncs)
    if (valid_interval(s.start, s.end)) sync_used[s.thread < thread_count ? s.thread : 0] = 1;
  for (std::uint32_t th = 0; th < thread_count; ++th)
    if (startend_used[th]) {
      meta("thread_name", pid, startend_tid(th), "start/end ranges of thread " + std::to_string(host_tid(th)), true);
      sort_index(pid, startend_tid(th), th * 3 + 1);
    }
  for (std::uint32_t th = 0; th < thread_count; ++th)
    if (sync_used[th]) {
      meta("thread_name", pid, sync_tid(th), "synchronisation of thread " + std::to_string(host_tid(th)), true);
      sort_index(pid, sync_tid(th), th * 3 + 2);
    }

  // Ranges and marks.
  for (std::size_t i = 0; i < t.ranges.size(); ++i) {
    const auto& r = t.ranges[i];
    const auto th = r.thread < thread_count ? r.thread : 0;
    // "domain:name" outside the default domain; the plain name (escaped once) inside it.
    auto put_name = [&]() {
      if (r.domain == 0) {
        out += escaped_name(r.name);
        return;
      }
      std::string name(t.strings[r.domain]);
      name += ':';
      name += t.strings[r.name];
      append_json_string(out, name);
    };
    if (r.is_mark) {
      begin_event();
      out += "{\"ph\":\"i\",\"s\":\"t\",\"pid\":";
      append_u(out, pid);
      out += ",\"tid\":";
      append_u(out, host_tid(th));
      out += ",\"ts\":";
      append_us(out, rel(r.start));
      out += ",\"name\":";
      put_name();
      out += ",\"cat\":\"nvtx\"}";
      continue;
    }
    const std::uint64_t tid = r.is_push_pop ? host_tid(th) : startend_tid(th);
    slice_head(pid, tid, r.start, a.range_end[i]);
    put_name();
    slice_cat("nvtx");
    out += ",\"args\":{\"depth\":";
    append_u(out, a.depth[i]);
    if (r.end == 0) out += ",\"unclosed\":true";
    if (r.color) { out += ",\"color\":\""; char buf[16]; std::snprintf(buf, sizeof buf, "#%06x", r.color & 0xffffffu); out += buf; out += "\""; }
    switch (r.payload.kind) {
      case payload_kind::none: break;
      case payload_kind::int32:
      case payload_kind::int64: out += ",\"payload\":"; detail::append_i(out, r.payload.value.i); break;
      case payload_kind::uint32:
      case payload_kind::uint64: out += ",\"payload\":"; append_u(out, r.payload.value.u); break;
      case payload_kind::float32:
      case payload_kind::float64: out += ",\"payload\":"; append_f(out, r.payload.value.d); break;
    }
    out += "}}";
  }
  for (const auto& s : t.syncs) {
    if (!valid_interval(s.start, s.end)) continue;
    const auto th = s.thread < thread_count ? s.thread : 0;
    static constexpr const char* kinds[] = {"sync", "cudaEventSynchronize", "cudaStreamWaitEvent", "cudaStreamSynchronize", "cudaDeviceSynchronize"};
    slice(pid, sync_tid(th), s.start, s.end, kinds[std::min<std::size_t>(static_cast<std::size_t>(s.kind), 4)], "sync");
    out += ",\"args\":{\"stream\":";
    append_u(out, s.stream);
    out += "}}";
  }

  // Host side of launches: API calls when recorded, else a 1 ns "launch" slice the arrow starts from.
  // The launch arrows are flow bindings on the slices (issue 46): "bind_id" (the launch's
  // correlation id) with "flow_out" on the launch's API call or 1 ns launch slice, "flow_in" on
  // each piece of GPU work it caused. This copy follows the writer's format so that the byte
  // check still compares the two writers' events.
  std::vector<char> launch_used(t.launches.size(), 0);
  for (auto l : a.kernel_launch) if (l != attribution::none) launch_used[l] = 1;
  for (auto l : a.copy_launch) if (l != attribution::none) launch_used[l] = 1;
  for (auto l : a.memset_launch) if (l != attribution::none) launch_used[l] = 1;
  auto bind = [&](std::uint64_t correlation, const char* end) {
    out += ",\"bind_id\":";
    append_u(out, correlation);
    out += end;
  };
  std::vector<char> has_api(t.launches.size(), 0);
  if (options.api_calls && !t.api_calls.empty()) {
    const detail::launch_lookup lookup(t.launches);
    for (const auto& c : t.api_calls) {
      if (!valid_interval(c.start, c.end)) continue;
      const auto th = c.thread < thread_count ? c.thread : 0;
      slice(pid, host_tid(th), c.start, c.end, t.strings[c.name], "cuda_api");
      const auto l = lookup.find(c.correlation);
      if (l != attribution::none && c.start <= t.launches[l].time && t.launches[l].time <= c.end) {
        has_api[l] = 1;
        if (launch_used[l] && options.flows) bind(t.launches[l].correlation, ",\"flow_out\":true");
      }
      out += "}";
    }
  }
  for (std::size_t l = 0; l < t.launches.size(); ++l) {
    if (!launch_used[l] || has_api[l]) continue;
    const auto& lr = t.launches[l];
    slice(pid, host_tid(lr.thread < thread_count ? lr.thread : 0), lr.time, lr.time + 1, "launch", "launch");
    if (options.flows) bind(lr.correlation, ",\"flow_out\":true");
    out += "}";
  }

  // GPU work, each the end of its launch's arrow.
  auto flow = [&](std::uint32_t launch) {
    if (options.flows && launch != attribution::none) bind(t.launches[launch].correlation, ",\"flow_in\":true");
    out += "}";
  };
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const auto& k = t.kernels[i];
    if (!valid_interval(k.start, k.end)) continue;
    const auto& kc = t.kernel_configs[k.config];
    const auto gp = gpu_pid(pid, kc.device);
    slice_named(gp, k.stream, k.start, k.end, k.name, "kernel");
    out += ",\"args\":{";
    auto triple = [&](const char* key, std::uint64_t x, std::uint64_t y, std::uint64_t z) {
      out += key;
      append_u(out, x);
      out += ',';
      append_u(out, y);
      out += ',';
      append_u(out, z);
      out += ']';
    };
    triple("\"grid\":[", kc.grid[0], kc.grid[1], kc.grid[2]);
    triple(",\"block\":[", kc.block[0], kc.block[1], kc.block[2]);
    out += ",\"registers\":";
    append_u(out, kc.registers);
    out += ",\"shared_bytes\":";
    append_u(out, kc.shared_bytes);
    if (kc.graph) {
      out += ",\"graph\":";
      append_u(out, kc.graph);
    }
    if (a.kernel_owner[i] != attribution::none) {
      out += ",\"range\":";
      out += escaped_name(t.ranges[a.kernel_owner[i]].name);
    }
    out += "}";
    flow(a.kernel_launch[i]);
  }
  for (std::size_t i = 0; i < t.copies.size(); ++i) {
    const auto& c = t.copies[i];
    if (!valid_interval(c.start, c.end)) continue;
    const auto gp = gpu_pid(pid, c.device);
    slice(gp, c.stream, c.start, c.end, copy_operation_name(c.kind), "memcpy");
    out += ",\"args\":{\"bytes\":";
    append_u(out, c.bytes);
    out += "}";
    flow(a.copy_launch[i]);
  }
  for (std::size_t i = 0; i < t.memsets.size(); ++i) {
    const auto& s = t.memsets[i];
    if (!valid_interval(s.start, s.end)) continue;
    const auto gp = gpu_pid(pid, s.device);
    slice(gp, s.stream, s.start, s.end, "[CUDA memset]", "memset");
    out += ",\"args\":{\"bytes\":";
    append_u(out, s.bytes);
    out += "}";
    flow(a.memset_launch[i]);
  }
  out += "\n]}\n";
  return out;
}

} // namespace nvscope_bench
