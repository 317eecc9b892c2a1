#!/bin/bash
# The bash completion of nvscope (written by the build from the option table: nvscope docs
# bash), driven as bash drives it: COMP_WORDS split at '=' and ',' kept, then _nvscope.
#   completion_test.sh <completion script>
set -u
source "$1" || { echo "cannot source $1"; exit 1; }
fail=0
expect() { # expect "<what is typed, words>" "<cword>" "<completions wanted, sorted>"
  read -r -a COMP_WORDS <<< "$1"
  COMP_CWORD=$2
  [[ $COMP_CWORD -ge ${#COMP_WORDS[@]} ]] && COMP_WORDS+=("")
  COMPREPLY=()
  _nvscope
  local got
  got=$(printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ')
  if [[ "$got" != "$3 " ]]; then echo "typed '$1': got '$got', want '$3 '"; fail=1; fi
}
expect "nvscope r" 1 "run"
expect "nvscope run --outputs" 2 "--outputs="
expect "nvscope run --outputs = csv,f" 4 "csv,flame csv,folded"
expect "nvscope run --summary = " 4 "full none short"
expect "nvscope run --capture-range = cuda" 4 "cudaProfilerApi"
expect "nvscope run --kinds = ker" 4 "kernels"
expect "nvscope run --buffer-c" 2 "--buffer-count="
[[ $fail == 0 ]] && echo "completion ok"
exit $fail
