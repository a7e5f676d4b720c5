// SPDX-License-Identifier: GPL-2.0-only
// Output helpers shared by mcpctl's commands.
#ifndef MCPCTL_OUTPUT_HPP
#define MCPCTL_OUTPUT_HPP

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace mcpctl {

// "mcpctl: <message>" on one line.
void print_error(std::ostream &err, std::string_view message);

// One JSON document on one line.
void print_json(std::ostream &out, const nlohmann::ordered_json &doc);

// Sorted ids as numactl prints node sets: "0-2,5".
std::string format_ranges(const std::vector<unsigned> &sorted_ids);

// Bytes as numactl prints memory: whole MiB, "1006 MB".
std::string format_mb(unsigned long long bytes);

} // namespace mcpctl

#endif // MCPCTL_OUTPUT_HPP
