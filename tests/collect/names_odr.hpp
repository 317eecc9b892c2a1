#pragma once
// Functions of names_disabled_tu.cpp, a translation unit built with NVSCOPE_DISABLE that
// includes the collector: the collector's name lookup as that unit sees it.

#include <nvscope/collector.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace names_odr {

// nvscope::compiled_in() there (false: it really is built with NVSCOPE_DISABLE).
bool compiled_in_there();

// Every domain name and registered string the registry holds, as seen there.
std::vector<std::string> registered_names_there();

// The domain name and range name the collector's range builder gives a push carrying
// `domain` and registered string `string` when it saw neither registered: {domain, name}.
std::vector<std::string> resolve_there(std::uint64_t domain, std::uint64_t string);

// A collector constructed there (routes NVTX to CUPTI: call before the first NVTX call).
std::unique_ptr<nvscope::collector> make_collector_there();

} // namespace names_odr
