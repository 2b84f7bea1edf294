#!/usr/bin/env bash
# Shell completion covers every subcommand, every action (db ingest|list|
# show|trend|export, kernels report|run, ...) and every option (issue 13).
# The expected sets are read here from the sources, not from the binary:
# the options are the "--word" literals that src/cli/cmd_NAME.c hands to
# its option parser (cli_str, cli_flag, cli_num, ...), the actions the
# `actions[]` table the command dispatches on. Both the bash and the zsh
# script are driven (zsh with compadd/_files stubbed, so no terminal).
source "$(dirname "$0")/run_lib.sh"
E=$ERGON_BIN
SRC=${ERGON_SOURCE_DIR:?}
PATH=$(dirname "$E"):$PATH
export PATH
bash_complete() { # bash_complete WORD...: the candidates for the last word
  bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); _ergon; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$SRC/completions/ergon.bash" "$@"
}
zsh_complete() { # zsh_complete WORD...: the same through completions/_ergon
  zsh -f -c 'compadd() { [[ $1 == -a ]] && print -l -- "${(@P)2}"; }; _files() { print FILES; }
    _describe() { print -l -- "${(@P)2}"; }; source "$1" >/dev/null 2>&1; shift
    words=("$@"); CURRENT=$#; PREFIX=${words[-1]}; _ergon' _ "$SRC/completions/_ergon" "$@"
}
has() { printf '%s\n' "$1" | grep -qxF -- "$2"; }
command -v zsh >/dev/null || bad "zsh is not installed (scripts/bootstrap.sh): its completion cannot be checked"

n_cmd=0 n_opt=0 n_act=0
cmds_b=$(bash_complete ergon "")
cmds_z=$(zsh_complete ergon "")
has "$(bash_complete ergon ver)" verify && has "$(zsh_complete ergon ver)" verify &&
  ok "'ergon ver' completes to verify" || bad "no prefix completion of subcommands"
for f in "$SRC"/src/cli/cmd_*.c; do
  c=$(basename "$f" .c); c=${c#cmd_}; c=${c//_/-}
  has "$cmds_b" "$c" && has "$cmds_z" "$c" && n_cmd=$((n_cmd + 1)) || { bad "$c ($f): not completed"; continue; }
  # Its actions, from the table in its source.
  acts=$(sed -n 's/^static const char \*const actions\[\] = {\(.*\)};/\1/p' "$f" | grep -o '"[a-z0-9-]*"' | tr -d '"')
  pre=()
  [ "$c" = db ] && pre=(--db "$TMP/x.db")
  for a in $acts; do
    b=$(bash_complete ergon "$c" "${pre[@]}" "")
    z=$(zsh_complete ergon "$c" "${pre[@]}" "")
    has "$b" "$a" && has "$z" "$a" && n_act=$((n_act + 1)) || bad "$c: action $a not completed (bash: $(echo $b), zsh: $(echo $z))"
  done
  first=$(printf '%s\n' $acts | head -1)
  if [ -n "$first" ]; then
    b=$(bash_complete ergon "$c" "$first" "")
    has "$b" "$first" && bad "$c $first: the action is offered again" || ok "$c $first: no action offered twice"
  fi
  # Its options, from the parser calls in its source.
  opts=$(grep -oE 'cli_[a-z_]+\(&?[a-z]+, "--[a-z0-9-]+"' "$f" | grep -oE '"--[a-z0-9-]+"' | tr -d '"' | sort -u)
  # One completion of "--" per shell gives every option (prefix matching
  # is checked by the spelled-out cases at the end).
  b=$(bash_complete ergon "$c" $first "--")
  z=$(zsh_complete ergon "$c" $first "--")
  for o in $opts; do
    has "$b" "$o" && has "$z" "$o" && n_opt=$((n_opt + 1)) || bad "$c: option $o not completed"
  done
done
[ "$n_cmd" -ge 20 ] && ok "$n_cmd subcommands completed" || bad "only $n_cmd subcommands"
[ "$n_act" -ge 14 ] && ok "$n_act actions completed" || bad "only $n_act actions"
[ "$n_opt" -ge 100 ] && ok "$n_opt options completed" || bad "only $n_opt options"
# The ones the issue names, spelled out.
has "$(bash_complete ergon db "")" trend && ok "ergon db <TAB> offers trend" || bad "db trend"
has "$(bash_complete ergon kernels "")" run && ok "ergon kernels <TAB> offers run" || bad "kernels run"
has "$(bash_complete ergon kernels run --from)" --from-model && ok "kernels run --from<TAB>" || bad "kernels --from-model"
has "$(bash_complete ergon db trend --dev)" --device && ok "db trend --dev<TAB>" || bad "db --device"
finish
