#pragma once
// What describes `nvscope run` to its users, made from the one option table the parser reads
// (run_option_docs, run_options.cpp): the --help text, the man page nvscope(1), the bash
// completion script and docs/run.md's option tables. The build writes the man page and the
// completion with `nvscope docs man` and `nvscope docs bash`; a test checks docs/run.md.

#include <string>

namespace nvscope {
inline namespace v1 {
namespace tool {

/// The man page nvscope(1), in roff (man -l nvscope.1).
std::string man_page();

/// A bash completion script for nvscope (source it, or install it as
/// share/bash-completion/completions/nvscope).
std::string bash_completion();

/// The option table of one section ("Output", "Window", "Collection") as docs/run.md holds it,
/// between its two marker lines.
std::string markdown_options(const std::string& section);

/// `nvscope docs man|bash [FILE]` or `nvscope docs markdown SECTION`: one of the above, to stdout
/// or FILE; 2 on a bad argument, 1 when FILE cannot be written.
int docs_main(int argc, char** argv);

} // namespace tool
} // namespace v1
} // namespace nvscope
