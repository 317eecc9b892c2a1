// The one file of this program that compiles nvscope's analysis definitions (`analyze`,
// `attribute`, `api_call_launches`): NVSCOPE_IMPLEMENTATION before the include, as
// docs/analysis.md ("Building") asks of every program that calls them.
#define NVSCOPE_IMPLEMENTATION
#include <nvscope/analysis.hpp>
#include <nvscope/export.hpp>
