# SPDX-License-Identifier: MIT
# bash completion for writelab(1): commands, then each command's options.
# Both are read from the binary's own --help, so they follow the binary.
_writelab() {
  local cur prev cmd i
  cur=${COMP_WORDS[COMP_CWORD]}
  prev=${COMP_WORDS[COMP_CWORD - 1]}
  cmd=
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -*) ;;
      *) cmd=${COMP_WORDS[i]}; break ;;
    esac
  done
  if [[ -z $cmd || ($cmd == help && $prev == help) ]]; then
    local commands
    commands=$("$1" --help 2>/dev/null | sed -n '/^Subcommands:/,$s/^  \([a-z][a-z]*\) .*/\1/p')
    [[ $cmd == help ]] || commands+=" help --help --version"
    mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
    return
  fi
  case $prev in  # options that take a path
    --dir | --file | --json | --csv | --input | --journal-dir | --probe-dir | -o | --output)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return
      ;;
  esac
  if [[ $cur == -* ]]; then
    local options
    options=$("$1" "$cmd" --help 2>/dev/null | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
    mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
    return
  fi
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")  # report and compare take files
}
complete -o filenames -F _writelab writelab
