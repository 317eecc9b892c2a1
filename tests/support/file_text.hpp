// The whole content of a file as bytes; empty when it cannot be read. Shared by the tests that
// read back what nvscope wrote.
#pragma once
#include <fstream>
#include <sstream>
#include <string>

namespace nvscope_test {

inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace nvscope_test
