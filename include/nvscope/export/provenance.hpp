// nvscope-target: nvscope
#pragma once

/// \file export/provenance.hpp
/// Where an output came from, in every JSON output nvscope writes (the summary's
/// "provenance", the Chrome trace's "otherData"): nvscope's version, the host, pid, rank,
/// local rank and world size, the launcher's job id, the command line, and, from the trace
/// (what the collector read from CUDA and CUPTI), the start time, devices, driver, CUDA and
/// CUPTI versions, clock state, the collector's own overhead and the clock reference (trace
/// clock and wall clock read together at start and at end) that `nvscope merge` aligns ranks
/// by. What is not known is written `null`, never guessed: a trace made without a GPU has
/// no device, driver or clock reference. docs/output.md describes every field; the schemas
/// are in schemas/.
///
/// \code
///   const auto p = nvscope::process_provenance();   // this process: host, pid, rank, ...
///   std::string j = nvscope::provenance_json(p, t);  // {"nvscope_version": "0.1.0", ...}
/// \endcode

#include <nvscope/export/detail/json_text.hpp>
#include <nvscope/trace.hpp>
#include <nvscope/version.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

namespace nvscope {
inline namespace v1 {

/// The version of each JSON output's layout ("format": {"name": ..., "version": ...}): raised
/// when a field changes meaning or goes; new fields do not raise it.
inline constexpr int summary_format_version = 1;      ///< "nvscope-summary" (older summaries have no "format")
inline constexpr int chrome_trace_format_version = 1; ///< "nvscope-chrome-trace"
inline constexpr int diagnosis_format_version = 1;    ///< "nvscope-diagnosis" (older ones have no "format")

/// The variables read for a process's place in a job, first set wins (rank: as `%r` tries
/// them, without LOCAL_RANK, which is the local rank).
inline constexpr const char* global_rank_variables[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID", "RANK"};
inline constexpr const char* local_rank_variables[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
                                                       "LOCAL_RANK"};
inline constexpr const char* world_size_variables[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "WORLD_SIZE"};
/// Launchers' job ids: every one that is set is kept, by name.
inline constexpr const char* job_id_variables[] = {"SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", "PBS_JOBID", "LSB_JOBID",
                                                   "FLUX_JOB_ID"};

/// What the process knows about itself; -1 and empty mean not known.
struct run_provenance {
  std::string host;
  std::uint64_t pid = 0;
  long long rank = -1;
  long long local_rank = -1;
  long long world_size = -1;
  std::vector<std::pair<std::string, std::string>> job_ids; ///< {"SLURM_JOB_ID", "4711"}, ...
  std::vector<std::string> command_line;                    ///< argv, from /proc/self/cmdline
};

namespace detail {

// The first of `names` set to a whole non-negative number, else -1.
template <std::size_t N>
long long first_number_of(const char* const (&names)[N]) {
  for (const char* name : names) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v < '0' || *v > '9') continue;
    char* end = nullptr;
    const long long n = std::strtoll(v, &end, 10);
    if (*end == '\0') return n;
  }
  return -1;
}

inline std::vector<std::string> own_command_line() {
  std::vector<std::string> args;
  std::FILE* f = std::fopen("/proc/self/cmdline", "rb");
  if (f == nullptr) return args;
  std::string word;
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) {
    if (c != '\0') word += static_cast<char>(c);
    else args.push_back(std::move(word)), word.clear();
  }
  if (!word.empty()) args.push_back(std::move(word));
  std::fclose(f);
  return args;
}

// "2026-12-02T03:56:28.123456789Z" for ns since the Unix epoch.
inline std::string utc_text(std::uint64_t wall_ns) {
  const std::time_t secs = static_cast<std::time_t>(wall_ns / 1000000000u);
  std::tm tm{};
  if (gmtime_r(&secs, &tm) == nullptr) return {};
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09uZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<unsigned>(wall_ns % 1000000000u));
  return buf;
}

inline void json_key(std::string& out, const char* key, bool first = false) {
  out += first ? "\"" : ", \"";
  out += key;
  out += "\": ";
}

inline void json_known(std::string& out, const char* key, long long v) {
  json_key(out, key);
  if (v < 0) out += "null";
  else append_i(out, v);
}

inline void json_known(std::string& out, const char* key, const std::string& v) {
  json_key(out, key);
  if (v.empty()) out += "null";
  else append_json_string(out, v);
}

inline void json_clock(std::string& out, const char* key, const clock_reference& c) {
  json_key(out, key);
  if (c.trace_ns == 0) {
    out += "null";
    return;
  }
  out += "{\"trace_ns\": ";
  append_u(out, c.trace_ns);
  out += ", \"wall_ns\": ";
  append_u(out, c.wall_ns);
  out += "}";
}

// "job_ids": {...}, "command_line": [...]
inline void json_job(std::string& out, const run_provenance& p) {
  json_key(out, "job_ids");
  out += "{";
  for (std::size_t i = 0; i < p.job_ids.size(); ++i) {
    if (i) out += ", ";
    append_json_string(out, p.job_ids[i].first);
    out += ": ";
    append_json_string(out, p.job_ids[i].second);
  }
  out += "}";
  json_key(out, "command_line");
  out += "[";
  for (std::size_t i = 0; i < p.command_line.size(); ++i) {
    if (i) out += ", ";
    append_json_string(out, p.command_line[i]);
  }
  out += "]";
}

// "devices": [{"id": 0, "name": "NVIDIA H200", "uuid": "GPU-..."}], or null when none is known.
inline void json_devices(std::string& out, const trace& t) {
  json_key(out, "devices");
  if (t.devices.empty()) {
    out += "null";
    return;
  }
  out += "[";
  for (std::size_t i = 0; i < t.devices.size(); ++i) {
    const auto& d = t.devices[i];
    out += i ? ", {\"id\": " : "{\"id\": ";
    append_u(out, d.id);
    json_known(out, "name", std::string(d.name ? t.strings[d.name] : ""));
    json_known(out, "uuid", std::string(d.uuid ? t.strings[d.uuid] : ""));
    out += "}";
  }
  out += "]";
}

// What the collector read: versions, clocks, overhead.
inline void json_recording(std::string& out, const recording_context& c) {
  json_known(out, "driver_version", c.driver);
  json_known(out, "cuda_driver_api_version", c.cuda_driver_api > 0 ? c.cuda_driver_api : -1);
  json_known(out, "cuda_runtime_version", c.cuda_runtime > 0 ? c.cuda_runtime : -1);
  json_known(out, "cupti_api_version", c.cupti_api > 0 ? static_cast<long long>(c.cupti_api) : -1);
  json_key(out, "clocks_locked");
  out += c.clocks_locked < 0 ? "null" : c.clocks_locked ? "true" : "false";
  json_known(out, "collector_overhead_ns", c.overhead_measured ? static_cast<long long>(c.overhead_ns) : -1);
  json_clock(out, "clock_start", c.at_start);
  json_clock(out, "clock_end", c.at_end);
}

} // namespace detail

/// This process's host, pid, rank, local rank, world size, job ids and command line.
/// \code
///   auto p = nvscope::process_provenance();  // p.rank == 3 under torchrun's RANK=3
/// \endcode
inline run_provenance process_provenance() {
  run_provenance p;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) p.host = host;
  p.pid = static_cast<std::uint64_t>(::getpid());
  p.rank = detail::first_number_of(global_rank_variables);
  p.local_rank = detail::first_number_of(local_rank_variables);
  p.world_size = detail::first_number_of(world_size_variables);
  for (const char* name : job_id_variables)
    if (const char* v = std::getenv(name); v != nullptr && *v) p.job_ids.emplace_back(name, v);
  p.command_line = detail::own_command_line();
  return p;
}

/// The provenance object of an output made from trace `t` by the process `p` describes:
/// `{"nvscope_version": "0.1.0", "host": ..., "pid": ..., "rank": ..., "local_rank": ...,
///   "world_size": ..., "job_ids": {...}, "command_line": [...], "start_time_utc": ...,
///   "devices": [...], "driver_version": ..., "cuda_driver_api_version": ...,
///   "cuda_runtime_version": ..., "cupti_api_version": ..., "clocks_locked": ...,
///   "collector_overhead_ns": ..., "clock_start": {"trace_ns", "wall_ns"}, "clock_end": ...}`.
/// \code
///   out += nvscope::provenance_json(nvscope::process_provenance(), t);
/// \endcode
inline std::string provenance_json(const run_provenance& p, const trace& t) {
  using namespace detail;
  std::string out = "{";
  json_key(out, "nvscope_version", true);
  append_json_string(out, std::to_string(NVSCOPE_VERSION_MAJOR) + "." + std::to_string(NVSCOPE_VERSION_MINOR) + "." +
                              std::to_string(NVSCOPE_VERSION_PATCH));
  json_known(out, "host", p.host);
  json_known(out, "pid", p.pid ? static_cast<long long>(p.pid) : -1);
  json_known(out, "rank", p.rank);
  json_known(out, "local_rank", p.local_rank);
  json_known(out, "world_size", p.world_size);
  json_job(out, p);
  json_known(out, "start_time_utc", t.context.at_start.wall_ns ? utc_text(t.context.at_start.wall_ns) : std::string());
  json_devices(out, t);
  json_recording(out, t.context);
  out += "}";
  return out;
}

/// `"format": {"name": NAME, "version": V}`'s value.
inline std::string format_json(const char* name, int version) {
  return std::string("{\"name\": \"") + name + "\", \"version\": " + std::to_string(version) + "}";
}

} // namespace v1
} // namespace nvscope
