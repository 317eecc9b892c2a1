#pragma once
// How the processes of one `nvscope run` tell the tool what became of them: each injected
// process appends one-line notes ("started", "written FILES", "unprofiled WHY") to a file
// named by its pid in the session folder (NVSCOPE_RUN_SESSION), which the tool reads once
// the program has ended. Plain files: no socket to leak, nothing to clean up in the program.

#include <exception>
#include <new>
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


/// Writes "nvscope: run: process PID: its profile was not written (WHY); ..." into `line`
/// (control characters of WHY as '?'). Allocates nothing: it may be out of memory.
void failure_line(char (&line)[512], long long pid, const char* why) noexcept;

/// Runs `work` (a process' end: analysis and files, called from atexit or a signal's thread,
/// where an exception would end the program with SIGABRT) and contains whatever it throws:
/// true with the line in `line` when it threw, false when it returned.
template <class Work>
bool contain_failure(Work&& work, long long pid, char (&line)[512]) noexcept {
  try {
    work();
    return false;
  } catch (const std::bad_alloc&) {
    failure_line(line, pid, "out of memory");
  } catch (const std::exception& e) {
    failure_line(line, pid, e.what()); // inside the handler: the exception, and its what(), end with it
  } catch (...) {
    failure_line(line, pid, "an exception that is not a std::exception");
  }
  return true;
}

} // namespace tool
} // namespace v1
} // namespace nvscope
