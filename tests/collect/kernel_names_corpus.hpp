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
// One corpus: "" for the PyTorch names, "issue_" for issue_kernels.cu's.
inline std::vector<row> demangled_rows(const std::string& corpus) {
  std::ifstream in(std::string(NVSCOPE_KERNEL_NAMES_DATA) + "/nsys_" + corpus + "kernel_names.csv");
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

inline std::set<std::string> base_names(const std::string& corpus) {
  std::ifstream in(std::string(NVSCOPE_KERNEL_NAMES_DATA) + "/nsys_" + corpus + "kernel_base_names.txt");
  std::set<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) names.insert(line);
  }
  return names;
}

// Both corpora, and the number of rows and base names each has (data/README.md).
struct corpus_info {
  const char* prefix;
  std::size_t rows;
  std::size_t bases;
};
inline constexpr corpus_info corpora[] = {{"", 47, 34}, {"issue_", 11, 9}};

} // namespace kernel_names_corpus
