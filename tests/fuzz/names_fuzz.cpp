// libFuzzer target: names cleaned for NVTX (annotate/message.hpp). Whatever the bytes, the
// result is clean, at most max_name_length bytes, the same whatever the buffer held before
// (no read of an unwritten byte), and a clean name passes unchanged.
#include <nvscope/annotate/message.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "name property broken: %s\n", what);
  std::abort();
}

std::string cleaned(std::string_view name, unsigned char poison) {
  char out[nvscope::max_name_length + 1];
  std::memset(out, poison, sizeof out);
  const std::size_t n = nvscope::detail::sanitize_name(nvscope::name_ref(name), out);
  if (n > nvscope::max_name_length) broken("longer than max_name_length");
  if (out[n] != '\0') broken("not NUL-terminated");
  return std::string(out, n);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view name(reinterpret_cast<const char*>(data), size);
  const std::string a = cleaned(name, 0x00), b = cleaned(name, 0x80), c = cleaned(name, 0xff);
  if (a != b || a != c) broken("depends on what the buffer held before");
  if (!nvscope::detail::name_is_clean(a.data(), a.size())) broken("result is not clean");
  if (nvscope::detail::name_is_clean(name.data(), name.size()) && a != name) broken("a clean name was changed");
  if (size > nvscope::max_name_length && a.compare(a.size() - 3, 3, "...") != 0) broken("a cut without '...'");
  return 0;
}
