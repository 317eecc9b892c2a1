// Field-by-field comparison of the engine's rows with the reference definitions' (reference_test,
// reports_test): integers and doubles of the same formula exactly, a sample deviation summed in
// another order to 1e-12 relative; a difference names the table, the row and the field.
#pragma once

#include <nvscope/analyze/stats.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace engine_vs_reference {

inline bool near(double a, double b) { return a == b || std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b)); }

// One compared field: `where` names it when it differs.
#define SAME(a, b, where)                                                              \
  do {                                                                                 \
    const auto& a_ = (a);                                                              \
    const auto& b_ = (b);                                                              \
    if (!(a_ == b_)) FAIL_CHECK((where) << ": engine " << a_ << ", reference " << b_); \
  } while (0)
#define NEAR(a, b, where)                                                                                       \
  do {                                                                                                          \
    if (!engine_vs_reference::near((a), (b))) FAIL_CHECK((where) << ": engine " << (a) << ", reference " << (b)); \
  } while (0)

inline void same_stats(const nvscope::duration_stats& e, const nvscope::duration_stats& r, const std::string& where) {
  SAME(e.count, r.count, where + " count");
  SAME(e.total, r.total, where + " total");
  SAME(e.min, r.min, where + " min");
  SAME(e.max, r.max, where + " max");
  SAME(e.average, r.average, where + " average");
  SAME(e.median, r.median, where + " median");
  NEAR(e.stddev, r.stddev, where + " stddev");
}

// The same number of rows, and each pair compared by `compare(engine, reference, "table row i")`.
template <class Row, class Compare>
void same_rows(const std::vector<Row>& engine, const std::vector<Row>& reference, const std::string& table, Compare compare) {
  CHECK_MESSAGE(engine.size() == reference.size(), table, " rows: engine ", engine.size(), ", reference ", reference.size());
  for (std::size_t i = 0; i < std::min(engine.size(), reference.size()); ++i) compare(engine[i], reference[i], table + " row " + std::to_string(i));
}

} // namespace engine_vs_reference
