#include "option_docs.hpp"
#include "run_options.hpp"

#include <nvscope/version.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <vector>

namespace nvscope {
inline namespace v1 {
namespace tool {
namespace {

constexpr const char* sections[] = {"Output", "Window", "Analysis", "Collection", "Long runs"};

constexpr const char* intro =
    "Runs the program with nvscope's collector injected into every process of the tree that uses CUDA; at the end of "
    "each such process writes the files and prints one screen of summary (every table in STEM.txt). Each option may "
    "also be given as an environment variable NVSCOPE_RUN_<NAME> (--output-dir: NVSCOPE_RUN_OUTPUT_DIR); the command "
    "line wins. An option is written --opt=value or --opt value (nsys's letters: -o PATH or -oPATH); the value is "
    "never -- or another option. nsys's option names mean what they mean to nsys (docs/run.md, \"nsys's options\").";

// Exit statuses, one per line: status, meaning.
constexpr const char* exits[][2] = {
    {"the program's", "its own status; killed by a signal: the same signal"},
    {"2", "a bad option or pattern (the program is not started)"},
    {"126", "the program exists but cannot run"},
    {"127", "the program is not found"},
    {"1", "the program could not be waited for (one line says why)"},
};

// "-o, --output=PATH": nsys's letter first, where the option has one.
std::string spelled(const option_doc& o) {
  return (o.short_name.empty() ? "" : "-" + o.short_name + ", ") + "--" + o.name + "=" + o.value;
}

// `text` cut into lines of at most `width` columns, each after `indent` spaces but the first.
std::string wrap(const std::string& text, std::size_t indent, std::size_t width) {
  std::string out, line;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(' ', pos);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(pos, end - pos);
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    pos = end + 1;
  }
  return out + line;
}

std::string help_text() {
  std::string s = "usage: nvscope run [options] -- program [args...]\n\n" + wrap(intro, 0, 96) +
                  "\nFull guide: docs/run.md (installed as share/doc/nvscope/run.md); man nvscope.\n";
  const auto docs = run_option_docs();
  for (const char* section : sections) {
    s += std::string("\n") + section + "\n";
    for (const auto& o : docs) {
      if (o.section != section) continue;
      std::string first = "  " + spelled(o);
      first += first.size() < 26 ? std::string(26 - first.size(), ' ') : "\n" + std::string(26, ' ');
      s += first + wrap(o.help + (o.fallback.empty() ? "" : " (default " + o.fallback + ")"), 26, 100) + "\n";
    }
  }
  s += "\nExit status:\n";
  for (const auto& e : exits) s += "  " + std::string(e[0]) + std::string(16 - std::strlen(e[0]), ' ') + e[1] + "\n";
  return s;
}

// roff: a backslash doubled, a leading '.' or '\'' guarded, '-' as a minus.
std::string roff(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

} // namespace

const char* run_usage() {
  static const std::string text = help_text();
  return text.c_str();
}

std::string man_page() {
  std::string m = ".TH NVSCOPE 1 \"\" \"nvscope " + std::to_string(NVSCOPE_VERSION_MAJOR) + "." + std::to_string(NVSCOPE_VERSION_MINOR) +
                  "." + std::to_string(NVSCOPE_VERSION_PATCH) + "\" \"User Commands\"\n";
  m += ".SH NAME\nnvscope \\- profile CUDA programs in-process: nsys-style tables, a verdict, traces and pictures\n";
  m += ".SH SYNOPSIS\n.B nvscope run\n[\\fIoptions\\fR] \\fB\\-\\-\\fR \\fIprogram\\fR [\\fIargs\\fR...]\n.br\n"
       ".B nvscope diff\n\\fIbase.json\\fR \\fInew.json\\fR [\\fIoptions\\fR]\n.br\n.B nvscope \\-\\-version\n";
  m += ".SH DESCRIPTION\n" + roff(intro) + "\n";
  const auto docs = run_option_docs();
  m += ".SH OPTIONS\n";
  for (const char* section : sections) {
    m += ".SS " + std::string(section) + "\n";
    for (const auto& o : docs) {
      if (o.section != section) continue;
      m += ".TP\n" + (o.short_name.empty() ? std::string() : "\\fB\\-" + roff(o.short_name) + "\\fR, ") + "\\fB\\-\\-" + roff(o.name) + "\\fR=\\fI" + roff(o.value) + "\\fR\n" + roff(o.help);
      m += o.fallback.empty() ? "\n" : " (default \\fB" + roff(o.fallback) + "\\fR)\n";
    }
  }
  m += ".SH ENVIRONMENT\nEach option \\fB\\-\\-NAME\\fR is also read from \\fBNVSCOPE_RUN_NAME\\fR (upper case, \\- as _).\n";
  m += ".SH EXIT STATUS\n";
  for (const auto& e : exits) m += ".TP\n" + roff(e[0]) + "\n" + roff(e[1]) + "\n";
  m += ".SH SEE ALSO\n.BR nsys (1);\nthe guide docs/run.md, installed in the package's documentation folder.\n";
  return m;
}

std::string bash_completion() {
  const auto docs = run_option_docs();
  std::string names, cases;
  for (const auto& o : docs) {
    names += (names.empty() ? "" : " ") + ("--" + o.name + "=") + (o.short_name.empty() ? "" : " -" + o.short_name);
    const std::string pattern = "--" + o.name + (o.short_name.empty() ? "" : "|-" + o.short_name);
    if (o.words == "@dir") cases += "    " + pattern + ") COMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n";
    else if (!o.words.empty()) cases += "    " + pattern + ") words=\"" + o.words + "\" ;;\n";
  }
  return "# bash completion for nvscope, made from its option table (nvscope docs bash)\n"
         "_nvscope() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} opt='' words='' pre='' i\n"
         "  if [[ $COMP_CWORD -eq 1 ]]; then COMPREPLY=($(compgen -W 'run diff --help --version' -- \"$cur\")); return; fi\n"
         "  if [[ ${COMP_WORDS[1]} != run ]]; then COMPREPLY=($(compgen -f -- \"$cur\")); return; fi\n"
         "  for ((i = 2; i < COMP_CWORD; ++i)); do\n"
         "    if [[ ${COMP_WORDS[i]} == -- ]]; then COMPREPLY=($(compgen -c -- \"$cur\")); return; fi\n"
         "  done\n"
         "  if [[ $cur == = ]]; then opt=$prev; cur=''; elif [[ $prev == = ]]; then opt=${COMP_WORDS[COMP_CWORD-2]}; fi\n"
         "  if [[ -n $opt ]]; then\n"
         "    case $opt in\n" + cases +
         "    *) return ;;\n"
         "    esac\n"
         "    if [[ $cur == *,* ]]; then pre=${cur%,*},; cur=${cur##*,}; fi\n"
         "    COMPREPLY=($(compgen -P \"$pre\" -W \"$words\" -- \"$cur\")); return\n"
         "  fi\n"
         "  if [[ $cur == -* ]]; then\n"
         "    COMPREPLY=($(compgen -W '--help -- " + names + "' -- \"$cur\"))\n"
         "    compopt -o nospace 2>/dev/null; return\n"
         "  fi\n"
         "  COMPREPLY=($(compgen -c -- \"$cur\"))\n"
         "}\n"
         "complete -F _nvscope nvscope\n";
}

std::string markdown_options(const std::string& section) {
  std::string md = "<!-- options: " + section + " (made by `nvscope docs markdown " + section +
                   "` from tools/nvscope/run_options.cpp's table; a test checks it) -->\n";
  md += "| option | default | meaning |\n| --- | --- | --- |\n";
  for (const auto& o : run_option_docs()) {
    if (o.section != section) continue;
    std::string value;
    for (char c : o.value) value += c == '|' ? std::string("\\|") : std::string(1, c);
    md += "| " + (o.short_name.empty() ? std::string() : "`-" + o.short_name + "`, ") + "`--" + o.name + "=" + value + "` | " + (o.fallback.empty() ? std::string("") : "`" + o.fallback + "`") + " | ";
    for (char c : o.help) md += c == '|' ? std::string("\\|") : std::string(1, c);
    md += " |\n";
  }
  return md + "<!-- end options -->\n";
}

// `nvscope docs man|bash [FILE]`, `nvscope docs markdown SECTION`: to stdout, or to FILE (the build
// writes the installed man page and completion script this way).
int docs_main(int argc, char** argv) {
  const std::string what = argc > 2 ? argv[2] : "";
  std::string text;
  if ((what == "man" || what == "bash") && argc <= 4) text = what == "man" ? man_page() : bash_completion();
  else if (what == "markdown" && argc == 4) text = markdown_options(argv[3]);
  else {
    std::fputs("usage: nvscope docs man [FILE] | bash [FILE] | markdown Output|Window|Analysis|Collection|\"Long runs\"\n", stderr);
    return 2;
  }
  std::FILE* to = what != "markdown" && argc == 4 ? std::fopen(argv[3], "w") : stdout;
  if (to == nullptr) {
    std::fprintf(stderr, "nvscope: docs: cannot write %s: %s\n", argv[3], std::strerror(errno));
    return 1;
  }
  const bool ok = std::fputs(text.c_str(), to) >= 0;
  if (to != stdout && std::fclose(to) != 0) return 1;
  return ok ? 0 : 1;
}

} // namespace tool
} // namespace v1
} // namespace nvscope
