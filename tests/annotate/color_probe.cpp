// Annotates a fixed set of names once each; run with the recorder and NVSCOPE_RECORDER_LOG
// so that another process can compare the automatic colours it chose.
#include <nvscope/annotate.hpp>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    nvscope::scoped_range r{argv[i]};
  }
  NVSCOPE_RANGE("probe_literal");
  return 0;
}
