#pragma once
// `nvscope run [options] -- program args...`: starts the program with nvscope's injection
// library arranged for every process of its tree, forwards SIGINT/SIGTERM/SIGHUP/SIGQUIT,
// and ends with the program's exit status (or its signal).

namespace nvscope {
inline namespace v1 {
namespace tool {

/// argv[0] is the tool, argv[1] "run". Returns the exit status (or raises the program's
/// terminating signal).
int run_main(int argc, char** argv);

} // namespace tool
} // namespace v1
} // namespace nvscope
