# SPDX-License-Identifier: MIT
# Writes OUTPUT, the writelab(1) man page, with help2man from the binary's own
# help: `writelab --help` and `--version` for the synopsis, the description and
# the exit codes, then one subsection per command from `writelab CMD --help`,
# so the page cannot drift from the options the binary takes.
# Run as: cmake -DWRITELAB=... -DHELP2MAN=... -DOUTPUT=... -P man_page.cmake
execute_process(COMMAND "${WRITELAB}" --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "man_page: ${WRITELAB} --help failed (${rc})")
endif()
# The commands: the first word of each line under "Subcommands:".
string(REGEX REPLACE ".*\nSubcommands:\n" "" listing "${top}")
string(REGEX MATCHALL "(^|\n)  [a-z]+" commands "${listing}")
set(include "[COMMANDS]\n")
# One subsection from `writelab WORDS --help`: the command's (or its own
# subcommand's) options.
function(append_help words title)
  execute_process(COMMAND "${WRITELAB}" ${words} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "man_page: ${WRITELAB} ${words} --help failed (${rc})")
  endif()
  set(help_text "${help}" PARENT_SCOPE)
  # roff: a backslash is written \e; a line starting with . or ' is escaped.
  string(REPLACE "\\" "\\e" help "${help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
  set(include "${include}.SS ${title}\n.nf\n${help}.fi\n" PARENT_SCOPE)
endfunction()
foreach(command IN LISTS commands)
  string(STRIP "${command}" command)
  append_help("${command}" "${command}")
  # A command with subcommands of its own (history): each of them too.
  if(help_text MATCHES "\nSubcommands:\n")
    string(REGEX REPLACE ".*\nSubcommands:\n" "" own "${help_text}")
    string(REGEX MATCHALL "(^|\n)  [a-z]+" subs "${own}")
    foreach(sub IN LISTS subs)
      string(STRIP "${sub}" sub)
      append_help("${command};${sub}" "${command} ${sub}")
    endforeach()
  endif()
endforeach()
# Examples, one per everyday task, each with what it does (no semicolons:
# they would split the list).
set(examples
  "writelab survey --dir /mnt/scratch -o survey.html" "Every experiment, short, on the file system of /mnt/scratch: one results file, an offline report and recommendations from the numbers measured (it says first how much it writes, where)."
  "writelab stream --dir /mnt/scratch --rounds 5 --json stream.json" "Streaming-write strategies side by side, five rotated rounds, sized past the writeback threshold by default."
  "writelab fsync --dir /mnt/scratch --background none,stream" "The latency of fsync alone and beside a streaming writer."
  "sudo writelab fsync --testbed ext4:data=journal --explain" "The same on an ext4 test bed writelab makes and removes, each call's time split by what its thread waited for."
  "sudo writelab explain -- sqlite3 app.db 'INSERT ...'" "Where an unmodified program's write and sync calls spent their time, and who made them wait."
  "writelab run --strategy window-drop --compare -- cp big.img /backup/" "A program's streaming writes with writelab's strategy against plain, three rounds each."
  "sudo writelab top --duration 30s" "Every process's dirtying, throttling and sync latency, live, and who stalls whom."
  "writelab compare before.json after.json --fail-on-regression 10" "Two result files side by side with a significance test, exiting 3 on a regression past 10%."
  "writelab history check --fail-on-regression 10" "The newest run against the previous one and against its series' change points.")
set(ex "[EXAMPLES]\n")
list(LENGTH examples n)
math(EXPR last "${n} - 2")  # the last pair's first item
foreach(i RANGE 0 ${last} 2)
  math(EXPR j "${i} + 1")
  list(GET examples ${i} command)
  list(GET examples ${j} what)
  string(REPLACE "-" "\\-" command "${command}")
  string(APPEND ex ".TP\n.B ${command}\n${what}\n")
endforeach()
string(APPEND include "${ex}")
string(APPEND include "[FILES]\n.TP\n/run/writelab\nThe undo journals that `writelab cleanup' replays.\n"
  "[SEE ALSO]\nThe documentation of each experiment, the result schema and the library: "
  "the docs/ folder of the source, installed in /usr/share/doc/writelab.\n")
file(WRITE "${OUTPUT}.include" "${include}")
execute_process(
  COMMAND "${HELP2MAN}" --no-info --no-discard-stderr --section=1
          "--name=Linux write-path experiments, old way and modern way side by side"
          "--include=${OUTPUT}.include" "--output=${OUTPUT}" "${WRITELAB}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "man_page: help2man failed (${rc})")
endif()
