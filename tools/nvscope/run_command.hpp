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

/// `nvscope env [options]`: checks the options as `nvscope run` does and prints, one NAME=value
/// a line, the variables it would give the program (injection library, NVTX's route to CUPTI,
/// NVSCOPE_RUN_*), for a process that profiles itself (the Python package's attach()).
/// 2 on a bad option, 1 when this machine cannot profile (the reason in one line).
int env_main(int argc, char** argv);

} // namespace tool
} // namespace v1
} // namespace nvscope
