// SPDX-License-Identifier: GPL-2.0-only
// The C malformed-graph table (tests/graph_cases/mcp_graph_cases.h) for
// the C++ unit tests: it is kernel-style C, so the project's C++ warnings
// are off while it is read.
#pragma once

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wold-style-cast"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "../graph_cases/mcp_graph_cases.h"
#pragma GCC diagnostic pop
