// SPDX-License-Identifier: MIT
#include "cli/cli.h"

int main(int argc, char** argv) { return writelab::RunCli(argc, argv); }
