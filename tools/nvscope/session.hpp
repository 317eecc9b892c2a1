#pragma once
// How the processes of one `nvscope run` tell the tool what became of them: each injected
// process appends one-line notes ("started", "written FILES", "unprofiled WHY") to a file
// named by its pid in the session folder (NVSCOPE_RUN_SESSION), which the tool reads once
// the program has ended. Plain files: no socket to leak, nothing to clean up in the program.

#include <string>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace tool {

/// The session folder's variable.
inline constexpr const char* session_variable = "NVSCOPE_RUN_SESSION";

/// Appends "KIND DETAIL" to this process's note file; does nothing outside a session.
void session_note(const char* kind, const std::string& detail);

/// What one process said, in the order it said it.
struct process_notes {
  long long pid = 0;
  std::vector<std::string> kinds;   ///< "started", "written", "write-failed", "unprofiled"
  std::vector<std::string> details;
};

/// Every process's notes in `folder`, by pid.
std::vector<process_notes> read_session(const std::string& folder);

/// The lines the tool prints at the end: nothing used CUDA; a process ended before it could
/// write (it called _exit or died on a signal). Empty when every process wrote its files.
std::vector<std::string> session_summary(const std::vector<process_notes>& notes);

} // namespace tool
} // namespace v1
} // namespace nvscope
