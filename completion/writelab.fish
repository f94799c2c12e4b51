# SPDX-License-Identifier: MIT
# fish completion for writelab(1): the same candidates as bash's (commands,
# subcommands, options, the values an option lists such as --strategy,
# directories for --dir), computed by completion/writelab.bash through bash,
# so that one script follows the binary's --help for all three shells.
# Enable it with
#   source completion/writelab.fish
# (installed, fish loads it from its vendor_completions.d by itself).
set -l here (status dirname)
for script in $here/writelab.bash $here/../../bash-completion/completions/writelab \
        /usr/share/bash-completion/completions/writelab
    if test -f $script
        set -g __writelab_bash $script
        break
    end
end

function __writelab_candidates
    bash -c 'source "$1"; shift; _writelab_candidates "$@"' _ $__writelab_bash \
        (commandline -opc) (commandline -ct)
end

complete -c writelab -f -a '(__writelab_candidates)'
