#pragma once
// Internal: a small streaming JSON writer for the exports (objects, arrays, keys, escaped
// strings, numbers), after nlohmann's serializer and fmt's memory_buffer. Not promised.
//
// The writer places commas itself; callers say what comes next, never paste separators.
// Bytes go to a 4 KiB staging buffer first and reach the output string a block at a time:
// a Chrome trace of a million kernels is ~10^8 small pieces, and one std::string::append
// each (an out-of-line call with its own capacity check) was a fifth of the time. Streamed
// (`stream_to`), the output string is a 1 MiB block handed to a sink whenever it fills: the
// text is never whole in memory.

#include <nvscope/export/detail/json_text.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace nvscope {
inline namespace v1 {
namespace detail {

class json_writer {
 public:
  /// `expected_bytes`: a guess of the output's size, reserved once.
  explicit json_writer(std::size_t expected_bytes = 0) {
    out_.reserve(expected_bytes);
    prefer_huge_pages(out_.data(), out_.capacity());
  }
  json_writer(const json_writer&) = delete;
  json_writer& operator=(const json_writer&) = delete;

  /// From here on, the text goes to `sink(context, block)` a block at a time (the last at
  /// `finish_stream`). Call before anything is written. sink returns false once it has
  /// failed (a full disk): the writer then throws `stream_stopped` from whichever call handed
  /// it the block, so that the caller stops making text nobody will read; the writer is not
  /// to be used after that.
  struct stream_stopped {};
  using sink_fn = bool (*)(void* context, std::string_view block);
  void stream_to(sink_fn sink, void* context) {
    sink_ = sink;
    context_ = context;
    out_.reserve(stream_block + stage_size);
  }
  /// Hands the rest to the sink (throws stream_stopped if it fails).
  void finish_stream() {
    flush();
    drain();
  }

  /// An object or array; `one_per_line` puts each element on a line of its own (the
  /// trace's event list, so that a reader can grep it).
  json_writer& begin_object() { return open('{', false); }
  json_writer& begin_array(bool one_per_line = false) { return open('[', one_per_line); }
  json_writer& end_object() { return close('}'); }
  json_writer& end_array() { return close(']'); }

  /// A member's key: one of the writer's own words, a literal (ASCII, no quote or
  /// backslash), so it is not escaped and its length is known when compiling.
  template <std::size_t N>
  json_writer& key(const char (&k)[N]) {
    separate();
    char* p = room(N + 2);
    *p = '"';
    std::memcpy(p + 1, k, N - 1);
    p[N] = '"';
    p[N + 1] = ':';
    size_ += N + 2;
    after_key_ = true;
    return *this;
  }

  json_writer& value(std::uint64_t v) {
    separate();
    char* p = room(24);
    size_ += static_cast<std::size_t>(std::to_chars(p, p + 24, v).ptr - p);
    return *this;
  }
  json_writer& value(std::int64_t v) {
    separate();
    char* p = room(24);
    size_ += static_cast<std::size_t>(std::to_chars(p, p + 24, v).ptr - p);
    return *this;
  }
  json_writer& value(std::uint32_t v) { return value(static_cast<std::uint64_t>(v)); }
  json_writer& value(std::uint16_t v) { return value(static_cast<std::uint64_t>(v)); }
  json_writer& value(double v) {
    std::string s;
    append_f(s, v); // %.6g, NaN and infinities as 0: JSON has neither
    return literal(s);
  }
  json_writer& value(bool v) { return literal(v ? "true" : "false"); }

  /// Nanoseconds as a number of microseconds, exact: "1234.567".
  json_writer& microseconds(std::uint64_t ns) {
    separate();
    char* p = room(28);
    char* end = std::to_chars(p, p + 24, ns / 1000).ptr;
    const auto frac = static_cast<unsigned>(ns % 1000);
    end[0] = '.';
    end[1] = static_cast<char>('0' + frac / 100);
    end[2] = static_cast<char>('0' + frac / 10 % 10);
    end[3] = static_cast<char>('0' + frac % 10);
    size_ += static_cast<std::size_t>(end + 4 - p);
    return *this;
  }

  /// A string, escaped (json_text.hpp's rules: control characters, quotes, backslashes,
  /// invalid UTF-8 as U+FFFD).
  json_writer& string(std::string_view s) {
    if (plain(s)) {
      separate();
      char* p = room(s.size() + 2);
      *p = '"';
      std::memcpy(p + 1, s.data(), s.size());
      p[s.size() + 1] = '"';
      size_ += s.size() + 2;
      return *this;
    }
    scratch_.clear();
    append_json_string(scratch_, s);
    return literal(scratch_);
  }

  /// JSON text made elsewhere and written as it is: a string already escaped (a cache of
  /// names escaped once), or a literal.
  json_writer& literal(std::string_view json) {
    separate();
    put(json);
    return *this;
  }
  template <std::size_t N>
  json_writer& literal(const char (&json)[N]) {
    separate();
    std::memcpy(room(N - 1), json, N - 1);
    size_ += N - 1;
    return *this;
  }

  /// The output; the writer is empty afterwards.
  std::string take() {
    flush();
    return std::move(out_);
  }
  /// Raw bytes outside any value (a final newline).
  void raw(std::string_view bytes) { put(bytes); }

 private:
  static constexpr std::size_t stage_size = 4096;
  static constexpr std::size_t stream_block = std::size_t{1} << 20;

  json_writer& open(char c, bool one_per_line) {
    separate();
    const char text[2] = {c, '\n'};
    put(text, one_per_line ? 2 : 1);
    ++depth_; // one bit a level: at most 63 levels, far more than any export nests
    const std::uint64_t bit = 1ull << depth_;
    need_comma_ &= ~bit;
    one_per_line_ = one_per_line ? one_per_line_ | bit : one_per_line_ & ~bit;
    return *this;
  }
  json_writer& close(char c) {
    const std::uint64_t bit = 1ull << depth_;
    if (one_per_line_ & bit) put("\n", 1);
    put(&c, 1);
    if (depth_ > 0) --depth_;
    return *this;
  }
  // The comma (and line break) before a value or key, unless a key just went out.
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    const std::uint64_t bit = 1ull << depth_;
    if (need_comma_ & bit) put(one_per_line_ & bit ? std::string_view(",\n", 2) : std::string_view(",", 1));
    need_comma_ |= bit;
  }

  // A pointer to at least `n` free bytes of the stage (n <= stage_size).
  char* room(std::size_t n) {
    if (size_ + n > stage_size) flush();
    return stage_ + size_;
  }
  void put(const char* s, std::size_t n) {
    if (n > stage_size / 2) {
      flush();
      out_.append(s, n);
      if (sink_ != nullptr && out_.size() >= stream_block) drain();
      return;
    }
    std::memcpy(room(n), s, n);
    size_ += n;
  }
  void put(std::string_view s) { put(s.data(), s.size()); }
  void flush() {
    if (sink_ == nullptr && out_.size() + size_ > out_.capacity()) grow(out_.size() + size_);
    out_.append(stage_, size_);
    size_ = 0;
    if (sink_ != nullptr && out_.size() >= stream_block) drain();
  }
  void drain() {
    const bool ok = out_.empty() || sink_(context_, out_);
    out_.clear();
    if (!ok) throw stream_stopped{};
  }
  // Past the reserved size: a new buffer of twice the size, advised before the text is
  // copied in. std::string's own regrowth would fault the copy in 4 KiB pages.
  void grow(std::size_t need) {
    std::string bigger;
    bigger.reserve(std::max(need, 2 * out_.capacity()));
    prefer_huge_pages(bigger.data(), bigger.capacity());
    bigger.append(out_);
    out_.swap(bigger);
  }
  // A large output is written once, front to back: on Linux, ask for 2 MiB pages (where
  // transparent huge pages are on "madvise", the usual setting). The first touch of each 4 KiB
  // page costs a fault; a huge page is one fault for 512 of them. Only an advice: ignored where
  // unsupported.
  static void prefer_huge_pages(char* data, std::size_t size) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
    if (size < 16 * huge) return;
    const auto begin = (reinterpret_cast<std::uintptr_t>(data) + huge - 1) & ~(huge - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(data) + size) & ~(huge - 1);
    if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)data;
    (void)size;
#endif
  }
  // True when `s` needs no escaping: printable ASCII without quote or backslash.
  static bool plain(std::string_view s) noexcept {
    if (s.size() > stage_size / 2) return false;
    for (const char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') return false;
    }
    return true;
  }

  std::string out_;
  sink_fn sink_ = nullptr;
  void* context_ = nullptr;
  std::string scratch_;
  char stage_[stage_size];
  std::size_t size_ = 0;
  int depth_ = 0;
  std::uint64_t need_comma_ = 0;   // bit d: level d has an element already
  std::uint64_t one_per_line_ = 0; // bit d: level d puts elements on lines of their own
  bool after_key_ = false;
};

} // namespace detail
} // namespace v1
} // namespace nvscope
