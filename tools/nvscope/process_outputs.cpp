#include "process_outputs.hpp"
#include "window.hpp"

#include <nvscope/detail/quote.hpp>
#include <nvscope/export/recipes.hpp>

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace nvscope {
inline namespace v1 {
namespace tool {
namespace {

static_assert(static_cast<int>(color_choice::automatic) == static_cast<int>(color_when::automatic) &&
                  static_cast<int>(color_choice::always) == static_cast<int>(color_when::always) &&
                  static_cast<int>(color_choice::never) == static_cast<int>(color_when::never),
              "run_options' colour choices are nvscope::color_when's");

// mkdir -p for an expanded folder.
std::string make_folder(const std::string& dir) {
  std::string partial;
  for (std::size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      if (!partial.empty() && ::mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST)
        return "nvscope: run: cannot create folder '" + nvscope::detail::escape_input(partial, 256) + "': " + std::strerror(errno);
    }
    if (i < dir.size()) partial += dir[i];
  }
  return {};
}

void note_write(process_end& w, const std::string& path, const write_result& r) {
  if (!r) {
    w.errors.push_back(r.error);
    return;
  }
  struct stat st {};
  const std::uint64_t bytes = ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  w.files.push_back(screen_file{path, bytes});
}

void write_one(process_end& w, const std::string& stem, const char* suffix, const std::string& content) {
  const std::string path = stem + suffix;
  note_write(w, path, write_file(path, content));
}

// --reports: each as STEM.NAME.csv (nsys stats --format csv's columns), all as text and JSON.
void write_reports(process_end& w, const std::string& stem, const std::vector<report_choice>& chosen, const trace& t, const analysis_report& r) {
  std::string text;
  for (const auto& c : chosen) {
    write_one(w, stem, ("." + choice_name(c) + ".csv").c_str(), report_csv(t, r, c));
    text += report_text(t, r, c) + "\n";
  }
  write_one(w, stem, ".reports.txt", text);
  write_one(w, stem, ".reports.json", reports_json(t, r, chosen));
}

// --recipes: each as STEM.NAME.csv with the recipe's columns; a pace recipe as the files nsys
// writes, STEM.NAME.pace_start.csv ... STEM.NAME.stats.csv.
void write_recipes(process_end& w, const std::string& stem, const std::string& list, const trace& t) {
  const auto chosen = parse_recipes(list);
  for (std::size_t i = 0; i < chosen.recipes.size(); ++i)
    for (const auto& f : recipe_files(t, chosen.recipes[i], chosen.params[i]))
      write_one(w, stem, ("." + std::string(recipe_name(chosen.recipes[i])) + f.suffix + ".csv").c_str(), f.csv);
}

// Every file `o` asks for; the stem of their names when they could be placed, else empty.
std::string write_outputs(process_end& w, const run_options& o, const trace& t, const analysis_report& r, const attribution& a,
                          const totals* run) {
  const auto dir = expand_output_path(o.output_dir);
  const auto name = expand_output_path(o.name);
  if (!dir || !name) {
    w.errors.push_back(!dir ? dir.error : name.error);
    return {};
  }
  if (auto e = make_folder(dir.path); !e.empty()) {
    w.errors.push_back(e);
    return {};
  }
  const std::string stem = dir.path + "/" + name.path;
  if (o.outputs.summary) write_one(w, stem, ".txt", to_text(r, t));
  if (o.outputs.csv)
    for (report which : all_reports) write_one(w, stem, (std::string(".") + report_name(which) + ".csv").c_str(), to_csv(r, which));
  if (o.outputs.json) write_one(w, stem, ".json", to_json(r, t, process_provenance(), run ? *run : run_totals_of(o, t)));
  if (!o.reports.empty()) write_reports(w, stem, parse_reports(o.reports).reports, t, r);
  if (!o.recipes.empty()) write_recipes(w, stem, o.recipes, t);
  if (o.outputs.trace) note_write(w, stem + ".trace.json", write_chrome_trace(stem + ".trace.json", t, {}, a)); // streamed: ~270 B a record, never held whole
  if (o.outputs.folded || o.outputs.flame) {
    folded_options f;
    if (!o.steps.empty()) f.step_pattern = glob_regex(o.steps); // the same steps as the window and the analysis
    const std::string folded = to_folded(t, f, a);
    if (o.outputs.folded) write_one(w, stem, ".folded", folded);
    if (o.outputs.flame) write_one(w, stem, ".flame.svg", to_flame_svg(folded)); // drawn from the same stacks
  }
  if (o.outputs.steps) write_one(w, stem, ".steps.svg", to_steps_svg(r, t));
  if (o.outputs.histograms) write_one(w, stem, ".kernels.svg", to_kernel_histograms_svg(t));
  return stem;
}

} // namespace

std::string path_list(const std::vector<screen_file>& files) {
  std::string list;
  for (const auto& f : files) list += (list.empty() ? "" : ", ") + f.path;
  return list;
}

totals run_totals_of(const run_options& o, const trace& t) {
  analysis_options ao;
  if (!o.steps.empty()) ao.step_pattern = glob_regex(o.steps);
  fold_options f;
  f.steps = step_ranges(t, ao);
  totals all;
  fold(t, all, f);
  return all;
}

process_end end_process(const run_options& o, const trace& t, const analysis_report& r, const attribution& a,
                        const std::string& pid, const char* why, bool color, const totals* run) {
  process_end e;
  const std::string stem = write_outputs(e, o, t, r, a, run);
  const std::string title = "nvscope: run: process " + pid + " (" + why + "):";
  const summary_view shows = o.outputs.summary ? o.summary_shows : summary_view::none;
  if (shows == summary_view::screen) {
    screen_options s;
    s.color = color;
    s.title = title;
    for (const auto& f : e.files)
      if (f.path == stem + ".txt") s.full_text = f.path;
    s.files = e.files;
    e.summary = to_screen(r, t, s);
    return e;
  }
  if (shows == summary_view::full) e.summary = title + "\n" + to_text(r, t);
  if (!e.files.empty()) e.files_line = "nvscope: run: process " + pid + " wrote " + file_list(e.files);
  return e;
}

} // namespace tool
} // namespace v1
} // namespace nvscope
