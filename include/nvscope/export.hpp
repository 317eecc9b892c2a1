// nvscope-target: nvscope
#pragma once

/// \file export.hpp
/// The export layer: every file and text nvscope writes, from a `trace` and the
/// `analysis_report` made of it. Text and CSV tables (export/table.hpp), the JSON summary
/// (export/summary_json.hpp), the Chrome trace (export/chrome_trace.hpp), folded stacks
/// (export/folded.hpp), the summary that fits one screen (export/screen.hpp), and output
/// paths with `%p %h %r %q{VAR}` (export/output_path.hpp). The other nsys reports and the
/// recipes are included on their own, `<nvscope/export/reports.hpp>` and
/// `<nvscope/export/recipes.hpp>`, so that a file that only writes the summary does not compile
/// them. Full guide: docs/analysis.md.
///
/// \code
///   #include <nvscope/export.hpp>
///
///   auto r = nvscope::analyze(t);
///   std::fputs(nvscope::to_screen(r, t).c_str(), stderr);   // one screen; to_text(r, t): every row
///   nvscope::write_output("trace_%p.json", nvscope::to_chrome_trace(t));
///   nvscope::write_output("stacks.folded", nvscope::to_folded(t));
/// \endcode

#include <nvscope/export/folded.hpp>
#include <nvscope/export/charts_svg.hpp>
#include <nvscope/export/chrome_trace.hpp>
#include <nvscope/export/flame_svg.hpp>
#include <nvscope/export/output_path.hpp>
#include <nvscope/export/provenance.hpp>
#include <nvscope/export/screen.hpp>
#include <nvscope/export/summary_json.hpp>
#include <nvscope/export/table.hpp>
