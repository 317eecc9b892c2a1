#pragma once
// `nvscope merge DIR|FILES... [-o OUT]`: one report over the per-rank Chrome traces that
// `nvscope run` wrote (STEM.trace.json, one per rank, in a shared folder): each host's clock
// offset measured from the collectives' ends (analyze/merge.hpp), per rank its steps, GPU busy,
// communication and compute time and their overlap (nsys's nccl_gpu_overlap_trace), the
// stragglers by both rules; one screen on stdout, the same as JSON in OUT. Partial input (an
// unreadable file, a rank missing or twice, two jobs mixed): one line each on stderr, the rest
// merged. docs/merge.md.

#include <string>

namespace nvscope {
inline namespace v1 {
namespace tool {

/// argv[0] is the tool, argv[1] "merge". Exit 0 merged, 2 nothing to merge or misuse.
int merge_main(int argc, char** argv);

/// The same, with what it prints returned in `out` and `err` (for tests).
int merge_run(int argc, const char* const* argv, std::string& out, std::string& err);

} // namespace tool
} // namespace v1
} // namespace nvscope
