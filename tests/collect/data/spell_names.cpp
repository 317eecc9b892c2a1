// Reads mangled names, one a line, and writes each as nvscope's reader spells it without
// libcufilt (include/nvscope/collect/detail/nsys_spelling.hpp), or an empty line where its
// rules do not read the name. compare_spelling.sh puts the lines beside cu++filt's.
#include <nvscope/collect/detail/nsys_spelling.hpp>

#include <iostream>
#include <string>

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto spelled = nvscope::detail::demangle_nsys_spelling(line);
    std::cout << (spelled ? *spelled : std::string()) << '\n';
  }
  return 0;
}
