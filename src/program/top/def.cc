// SPDX-License-Identifier: MIT
// `writelab top`, defined: its results' figures for the report, no picture
// of an original post (it reproduces none; docs/top.md).
#include "program/top/def.h"

namespace writelab {

const ProgramDef kTopDef = {
    .report = {.name = kTopName, .figures = kTopFigures},
    .reproduces = kTopReproduces,
    .add_command = AddTopCommand,
};

}  // namespace writelab
