#pragma once
// Reads tests/collect/data (see its README): NVSCOPE_KERNEL_NAMES_DATA names the folder.

#include <fstream>
#include <set>
#include <string>
#include <vector>

namespace kernel_names_corpus {

struct row {
  std::string mangled;
  std::string nsys_demangled;
};

// `mangled,"demangled"` lines after the header; the demangled field is quoted (it holds commas).
inline std::vector<row> demangled_rows() {
  std::ifstream in(std::string(NVSCOPE_KERNEL_NAMES_DATA) + "/nsys_kernel_names.csv");
  std::vector<row> rows;
  std::string line;
  std::getline(in, line); // header
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back(); // written with CRLF line ends
    const auto comma = line.find(',');
    if (comma == std::string::npos) continue;
    std::string demangled = line.substr(comma + 1);
    if (demangled.size() >= 2 && demangled.front() == '"' && demangled.back() == '"')
      demangled = demangled.substr(1, demangled.size() - 2);
    rows.push_back({line.substr(0, comma), demangled});
  }
  return rows;
}

inline std::set<std::string> base_names() {
  std::ifstream in(std::string(NVSCOPE_KERNEL_NAMES_DATA) + "/nsys_kernel_base_names.txt");
  std::set<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) names.insert(line);
  }
  return names;
}

} // namespace kernel_names_corpus
