#!/usr/bin/env bash
# GPU machine: the provenance's clocks_locked read from the real libnvidia-ml.so.1
# (collect/detail/nvml_clocks.hpp) against what nvidia-smi says of the same GPUs. Reads only:
# the clocks are left as they are. Builds a small probe with g++ (no CUDA toolkit needed), asks
# it for every GPU's UUID, prints its answer and nvidia-smi's application clocks and clocks
# event reasons. Exit 0 when the probe gave a known answer (0 or 1) that agrees with
# nvidia-smi (pinned: application clocks differ from their defaults, or the reason
# "Applications Clocks Setting" is Active), 1 otherwise.
#   bash bench/run/clocks_check.sh
set -o pipefail
R=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
cat > "$T/probe.cpp" <<'CPP'
#include <nvscope/collect/detail/nvml_clocks.hpp>
#include <cstdio>
int main(int argc, char** argv) {
  std::vector<std::string> uuids(argv + 1, argv + argc);
  std::printf("%d\n", nvscope::detail::nvml_clocks_locked(uuids));
}
CPP
g++ -std=c++17 -O1 -Wall -Wextra -Werror -I"$R/include" "$T/probe.cpp" -o "$T/probe" -ldl || exit 1
mapfile -t UUIDS < <(nvidia-smi --query-gpu=uuid --format=csv,noheader | tr -d ' ')
GOT=$("$T/probe" "${UUIDS[@]}")
echo "probe: clocks_locked=$GOT for ${UUIDS[*]}"
WANT=0
for u in "${UUIDS[@]}"; do
  Q=$(nvidia-smi -i "$u" -q -d CLOCK)
  app=$(echo "$Q" | awk '/^    Applications Clocks/{f=1;next} f&&/SM/{print $3; exit}')
  def=$(echo "$Q" | awk '/^    Default Applications Clocks/{f=1;next} f&&/SM/{print $3; exit}')
  reason=$(echo "$Q" | grep -m1 "Applications Clocks Setting" | awk -F: '{gsub(/ /,"",$2); print $2}')
  echo "nvidia-smi $u: application SM clock ${app:-?} MHz, default ${def:-?} MHz, reason Applications Clocks Setting: ${reason:-?}"
  { [ -n "$app" ] && [ -n "$def" ] && [ "$app" != "$def" ]; } && WANT=1
  [ "$reason" = Active ] && WANT=1
done
echo "nvidia-smi: pinned=$WANT"
rm -rf "$T"
[ "$GOT" = "$WANT" ]
