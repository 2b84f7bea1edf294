# bash completion for ergon. Subcommands, their actions, options, boards,
# scenarios, instruments and workloads come from the ergon binary itself
# (`ergon __complete ...`), so this file never lists them and never drifts.
_ergon() {
  local cur prev cmd
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD-1]}
  local ergon=${COMP_WORDS[0]}
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "$("$ergon" __complete commands 2>/dev/null) --help --version" -- "$cur"))
    return
  fi
  cmd=${COMP_WORDS[1]}
  local list=""
  case "$prev" in
    --board) list=$("$ergon" __complete boards 2>/dev/null) ;;
    --sim-scenario|--scenario) list=$("$ergon" __complete scenarios 2>/dev/null) ;;
    --instrument) list=$("$ergon" __complete instruments 2>/dev/null) ;;
    --workload) list=$("$ergon" __complete workloads 2>/dev/null) ;;
    --for) list="run profile-power profile-qemu" ;;
    --out|--config|--jls|--stats|--raw|--markers|--facts|--temp-file|--sysfs-root|--out-dir|\
    --db|--shapes|--from-model|--sign|--pubkey|--key|--log)
      COMPREPLY=($(compgen -f -- "$cur")); return ;;
  esac
  if [ -n "$list" ]; then
    COMPREPLY=($(compgen -W "$list" -- "$cur"))
    return
  fi
  # A command with actions (db ingest, kernels run, ...): the action first.
  local acts
  acts=$("$ergon" __complete actions "$cmd" 2>/dev/null | tr '\n' ' ')
  if [ -n "$acts" ] && [[ "$cur" != -* ]]; then
    local w have=""
    for w in "${COMP_WORDS[@]:2:COMP_CWORD-2}"; do
      case " $acts" in *" $w "*) have=1 ;; esac
    done
    if [ -z "$have" ]; then
      COMPREPLY=($(compgen -W "$acts" -- "$cur"))
      return
    fi
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$("$ergon" __complete options "$cmd" 2>/dev/null)" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -f -- "$cur"))
}
complete -F _ergon ergon
