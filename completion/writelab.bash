# SPDX-License-Identifier: MIT
# bash completion for writelab(1): commands, a command's own subcommands
# (history list, trend, check...), then each one's options and the values an
# option lists in its help (--strategy, --sync...). All are read from the
# binary's own --help, so they follow the binary. Enable it with
#   source completion/writelab.bash
# (installed, bash-completion loads it by itself). zsh and fish use it too,
# through bash (completion/_writelab, completion/writelab.fish).
_writelab_subcommands() {  # the names under "Subcommands:" in a --help
  sed -n '/^Subcommands:/,$s/^  \([a-z][a-z]*\) .*/\1/p'
}
_writelab_values() {  # the choices option $1's help lists, one "  name: summary" a line
  awk -v opt="$1" '
    on && /^  -/ { exit }
    on && match($0, /^   +[a-z][a-z0-9.=-]*: /) { v = substr($0, RSTART, RLENGTH); gsub(/[ :]/, "", v); print v }
    { n = split($1, names, ","); for (i = 1; i <= n; i++) if (names[i] == opt) on = 1 }'
}
_writelab() {
  local cur prev cmd sub i
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD - 1]}
  cmd=
  sub=
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -*) ;;
      *)
        if [[ -z $cmd ]]; then
          cmd=${COMP_WORDS[i]}
        elif [[ -z $sub && $cmd != help ]]; then
          sub=${COMP_WORDS[i]}
          break
        fi
        ;;
    esac
  done
  if [[ -z $cmd || ($cmd == help && $prev == help) ]]; then
    local commands
    commands=$("$1" --help 2>/dev/null | _writelab_subcommands)
    [[ $cmd == help ]] || commands+=" help --help --version"
    mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
    return
  fi
  case $prev in  # options that take a directory, or a path
    --dir | --journal-dir | --probe-dir)
      mapfile -t COMPREPLY < <(compgen -d -- "$cur")
      return
      ;;
    --file | --json | --csv | --input | -o | --output | --history | --html)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return
      ;;
  esac
  # A command with subcommands of its own (history): those first.
  local subcommands
  subcommands=$("$1" "$cmd" --help 2>/dev/null | _writelab_subcommands)
  if [[ $prev == --* ]]; then  # an option's value, where its help lists them
    local values help_words=("$cmd")
    [[ -n $subcommands && -n $sub ]] && help_words+=("$sub")
    values=$("$1" "${help_words[@]}" --help 2>/dev/null | _writelab_values "$prev")
    if [[ -n $values ]]; then
      mapfile -t COMPREPLY < <(compgen -W "$values" -- "${cur##*,}")
      [[ $cur == *,* ]] && COMPREPLY=("${COMPREPLY[@]/#/${cur%,*},}")  # a list: the last item
      return
    fi
  fi
  if [[ -n $subcommands && -z $sub && $cur != -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$subcommands" -- "$cur")
    return
  fi
  if [[ $cur == -* ]]; then
    local options
    if [[ -n $subcommands && -n $sub ]]; then
      options=$("$1" "$cmd" "$sub" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
    else
      options=$("$1" "$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
    fi
    mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
    return
  fi
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")  # report, compare and history import take files
}
# For zsh and fish (completion/_writelab, completion/writelab.fish), which
# run it through bash: the candidates for the words given (the binary first,
# the word being completed last, "" for a new one), a line each.
_writelab_candidates() {
  local COMP_WORDS=("$@") COMP_CWORD=$(($# - 1)) COMPREPLY=()
  _writelab "$1"
  ((${#COMPREPLY[@]} == 0)) || printf '%s\n' "${COMPREPLY[@]}"
}
complete -o filenames -F _writelab writelab
