#pragma once
// Reading the recording NVTX tool's log from inside a test (see README.md). Test-only.

#include <nvtx3/nvToolsExt.h>

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace nvscope_test {

/// One logged NVTX call: `kind` plus its key=value fields (unescaped).
struct event {
  std::string kind;
  std::map<std::string, std::string> fields;

  bool has(const std::string& key) const { return fields.count(key) != 0; }
  std::string get(const std::string& key) const {
    auto it = fields.find(key);
    return it == fields.end() ? std::string() : it->second;
  }
  std::string domain() const { return get("domain"); }
  std::string msg() const { return get("msg"); }
  std::uint64_t tid() const { return std::strtoull(get("tid").c_str(), nullptr, 10); }
};

inline std::string unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) { out += s[i]; continue; }
    const char c = s[++i];
    if (c == 't') out += '\t';
    else if (c == 'n') out += '\n';
    else if (c == '\\') out += '\\';
    else if (c == 'x' && i + 2 < s.size() + 0) { out += static_cast<char>(std::strtol(s.substr(i + 1, 2).c_str(), nullptr, 16)); i += 2; }
    else { out += '\\'; out += c; }
  }
  return out;
}

/// Parses the log text (one event a line, tab-separated key=value fields).
inline std::vector<event> parse_log(const std::string& text) {
  std::vector<event> events;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    const std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.empty()) continue;
    event e;
    std::size_t f = 0;
    while (f <= line.size()) {
      std::size_t tab = line.find('\t', f);
      if (tab == std::string::npos) tab = line.size();
      const std::string field = line.substr(f, tab - f);
      const std::size_t eq = field.find('=');
      if (eq != std::string::npos) e.fields[field.substr(0, eq)] = unescape(field.substr(eq + 1));
      f = tab + 1;
    }
    e.kind = e.get("kind");
    events.push_back(std::move(e));
  }
  return events;
}

/// The recorder loaded into this process by NVTX (through NVTX_INJECTION64_PATH).
class recorder {
 public:
  /// Forces NVTX to load its tool, then finds the recorder's functions. `attached()` says
  /// whether it worked, `why_not()` why not.
  static recorder& instance() {
    static recorder r;
    return r;
  }
  bool attached() const { return read_ != nullptr; }
  const std::string& why_not() const { return why_not_; }

  std::vector<event> events() const { return parse_log(text()); }
  std::string text() const {
    if (!attached()) throw std::runtime_error("nvtx recorder not attached: " + why_not_);
    const std::size_t n = read_(nullptr, 0);
    std::string s(n + 1, '\0');
    read_(&s[0], s.size());
    s.resize(n);
    return s;
  }
  void clear() const {
    if (attached()) clear_();
  }
  std::uint64_t dropped() const { return attached() ? dropped_() : 0; }

 private:
  recorder() {
    nvtxInitialize(nullptr); // NVTX loads its tool at its first call
    const char* path = std::getenv("NVTX_INJECTION64_PATH");
    if (path == nullptr || path[0] == '\0') {
      why_not_ = "NVTX_INJECTION64_PATH is not set";
      return;
    }
    void* h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (h == nullptr) {
      why_not_ = std::string("the tool is not loaded: ") + path;
      return;
    }
    read_ = reinterpret_cast<read_fn>(dlsym(h, "nvscope_recorder_read"));
    clear_ = reinterpret_cast<void (*)()>(dlsym(h, "nvscope_recorder_clear"));
    dropped_ = reinterpret_cast<std::uint64_t (*)()>(dlsym(h, "nvscope_recorder_dropped"));
    if (read_ == nullptr || clear_ == nullptr || dropped_ == nullptr) {
      read_ = nullptr;
      why_not_ = std::string("the loaded tool is not the nvscope recorder: ") + path;
    }
  }
  using read_fn = std::size_t (*)(char*, std::size_t);
  read_fn read_ = nullptr;
  void (*clear_)() = nullptr;
  std::uint64_t (*dropped_)() = nullptr;
  std::string why_not_;
};

/// Only the events of kinds that annotate (push/pop/start/end/mark), in order.
inline std::vector<event> annotations(const std::vector<event>& all) {
  std::vector<event> out;
  for (const auto& e : all)
    if (e.kind == "push" || e.kind == "pop" || e.kind == "start" || e.kind == "end" || e.kind == "mark") out.push_back(e);
  return out;
}

} // namespace nvscope_test
