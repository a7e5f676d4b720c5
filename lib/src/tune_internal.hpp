// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp internals of tuning: decoding MCP_IOC_TUNE_LIST entries and the
// sentences of failed session calls, kept pure for tests/unit.
#ifndef MCP_SRC_TUNE_INTERNAL_HPP
#define MCP_SRC_TUNE_INTERNAL_HPP

#include <string>
#include <string_view>

#include <mcp/tune.hpp>

#include "internal.hpp"

namespace mcp::detail {

TuneKnob decode_tune_knob(const struct mcp_tune_knob_info &raw);

// The message for @errnum from TUNE_SET/GET/RESET (@op: "set", "get",
// "reset") of @knob with the kernel's answer @v.
std::string tune_error_message(int errnum, std::string_view op, const TuneKnob &knob,
			       const struct mcp_tune_value &v);

} // namespace mcp::detail

#endif // MCP_SRC_TUNE_INTERNAL_HPP
