// SPDX-License-Identifier: GPL-2.0-only
// Output helpers shared by mcpctl's commands.
#include <ostream>

#include <fmt/format.h>

#include "output.hpp"

namespace mcpctl {

void print_error(std::ostream &err, std::string_view message)
{
	err << "mcpctl: " << message << '\n';
	err.flush();
}

void print_json(std::ostream &out, const nlohmann::ordered_json &doc)
{
	out << doc.dump() << '\n';
}

std::string format_ranges(const std::vector<unsigned> &sorted_ids)
{
	std::string s;

	for (std::size_t i = 0; i < sorted_ids.size();) {
		std::size_t j = i;

		while (j + 1 < sorted_ids.size() && sorted_ids[j + 1] == sorted_ids[j] + 1)
			j++;
		if (!s.empty())
			s += ',';
		s += std::to_string(sorted_ids[i]);
		if (j > i)
			s += '-' + std::to_string(sorted_ids[j]);
		i = j + 1;
	}
	return s;
}

std::string format_mb(unsigned long long bytes)
{
	return fmt::format("{} MB", bytes >> 20);
}

} // namespace mcpctl
