#include "session.hpp"

#include <nvscope/detail/quote.hpp>

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <string_view>
#include <unistd.h>

namespace nvscope {
inline namespace v1 {
namespace tool {

void session_note(const char* kind, const std::string& detail) {
  const char* folder = std::getenv(session_variable);
  if (folder == nullptr || *folder == '\0') return;
  const std::string path = std::string(folder) + "/" + std::to_string(static_cast<long long>(::getpid()));
  std::string line = std::string(kind) + " " + detail;
  for (char& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  line += '\n';
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  // One write of one line with O_APPEND: notes of several threads never interleave.
  const ssize_t n = ::write(fd, line.data(), line.size());
  (void)n;
  ::close(fd);
}

std::vector<process_notes> read_session(const std::string& folder) {
  std::vector<process_notes> out;
  DIR* d = ::opendir(folder.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string_view name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string_view::npos) continue;
    process_notes p;
    p.pid = std::atoll(e->d_name);
    std::FILE* f = std::fopen((folder + "/" + e->d_name).c_str(), "r");
    if (f == nullptr) continue;
    char buf[4096];
    while (std::fgets(buf, sizeof buf, f) != nullptr) {
      std::string line(buf);
      while (!line.empty() && line.back() == '\n') line.pop_back();
      const std::size_t sp = line.find(' ');
      p.kinds.push_back(line.substr(0, sp));
      p.details.push_back(sp == std::string::npos ? std::string() : line.substr(sp + 1));
    }
    std::fclose(f);
    out.push_back(std::move(p));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(), [](const process_notes& a, const process_notes& b) { return a.pid < b.pid; });
  return out;
}

std::vector<std::string> session_summary(const std::vector<process_notes>& notes) {
  std::vector<std::string> lines;
  bool any_profile = false, any_empty = false;
  for (const auto& p : notes) {
    const auto has = [&](std::string_view k) { return std::find(p.kinds.begin(), p.kinds.end(), k) != p.kinds.end(); };
    if (has("written") || has("write-failed")) any_profile = true;
    else if (has("empty")) any_empty = true;
    else if (has("started"))
      lines.push_back("nvscope: run: process " + std::to_string(p.pid) +
                      " ended without writing its profile (it called _exit, or died on a signal it did not "
                      "handle): its records are lost");
  }
  if (notes.empty())
    lines.push_back("nvscope: run: no process of the program used CUDA; no profile written");
  else if (!any_profile && lines.empty())
    lines.push_back(any_empty ? "nvscope: run: no process launched GPU work or opened an NVTX range; no profile written"
                              : "nvscope: run: no process was profiled; no profile written");
  return lines;
}

void failure_line(char (&line)[512], long long pid, const char* why) noexcept {
  const int n = std::snprintf(line, sizeof line, "nvscope: run: process %lld: its profile was not written (", pid);
  std::size_t at = n > 0 ? static_cast<std::size_t>(n) : 0;
  const char* tail = "); the program's own exit is unchanged";
  const std::size_t room = sizeof line - std::strlen(tail) - 1;
  for (const char* c = why != nullptr ? why : ""; *c != '\0' && at < room; ++c)
    line[at++] = static_cast<unsigned char>(*c) < 0x20 || *c == 0x7f ? '?' : *c;
  std::memcpy(line + at, tail, std::strlen(tail) + 1);
}

} // namespace tool
} // namespace v1
} // namespace nvscope
