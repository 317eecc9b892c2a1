// Built with NVSCOPE_DISABLE (see CMakeLists.txt). The collector it includes must still name
// the domains and registered strings that annotated translation units created: the lookup
// has one body in every compile mode (annotate/detail/name_registry.hpp).
#include "names_odr.hpp"

namespace names_odr {

bool compiled_in_there() { return nvscope::compiled_in(); }

std::vector<std::string> registered_names_there() {
  std::vector<std::string> out;
  const nvscope::nvtx_registrations names = nvscope::registered_nvtx_names();
  for (const auto& kv : names.domains) out.push_back(kv.second);
  for (const auto& kv : names.strings) out.push_back(kv.second);
  return out;
}

std::vector<std::string> resolve_there(std::uint64_t domain, std::uint64_t string) {
  namespace nd = nvscope::detail;
  nvscope::trace t;
  std::vector<nd::nvtx_event> events(2);
  events[0].kind = nd::nvtx_event_kind::push;
  events[0].time = 1;
  events[0].domain = domain;
  events[0].registered = string;
  events[1].kind = nd::nvtx_event_kind::pop;
  events[1].time = 2;
  events[1].domain = domain;
  nd::nvtx_events_to_ranges(
      events, t, [](std::uint64_t x) { return x; },
      [&t](std::uint64_t os) {
        if (t.threads.empty()) t.threads.push_back({os, 0});
        return 0u;
      },
      nvscope::registered_nvtx_names());
  if (t.ranges.size() != 1) return {};
  return {std::string(t.strings[t.ranges[0].domain]), std::string(t.strings[t.ranges[0].name])};
}

std::unique_ptr<nvscope::collector> make_collector_there() {
  nvscope::collector_options o;
  o.print_errors = true;
  return std::make_unique<nvscope::collector>(o);
}

} // namespace names_odr
