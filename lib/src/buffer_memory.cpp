// SPDX-License-Identifier: LGPL-2.1-or-later
// The buffer memory of a process (<mcp/memory.hpp>, <mcp/memory.h>): the
// DRM client usage keys mcp.ko writes into the fdinfo of every context fd
// (kmod/mcp_fdinfo.c), summed over the process's contexts.
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <system_error>

#include <dirent.h>
#include <unistd.h>

#include <mcp/memory.hpp>

#include "internal.hpp"

namespace mcp {

namespace {

// "  N KiB" (or "N", bytes; MiB and GiB as DRM allows) in bytes.
std::optional<std::uint64_t> parse_amount(std::string_view v)
{
	std::uint64_t n = 0;

	while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
		v.remove_prefix(1);
	auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
	if (ec != std::errc() || end == v.data())
		return std::nullopt;
	v.remove_prefix(static_cast<std::size_t>(end - v.data()));
	while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
		v.remove_prefix(1);
	if (v.empty())
		return n;
	if (v == "KiB")
		return n << 10;
	if (v == "MiB")
		return n << 20;
	if (v == "GiB")
		return n << 30;
	return std::nullopt;
}

struct DirCloser {
	void operator()(DIR *d) const noexcept { closedir(d); }
};

} // namespace

std::optional<ContextUsage> parse_context_fdinfo(std::string_view text)
{
	ContextUsage u;
	bool mcp = false, id = false;

	while (!text.empty()) {
		std::size_t nl = text.find('\n');
		std::string_view line = text.substr(0, nl);
		text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);

		std::size_t colon = line.find(':');
		if (colon == std::string_view::npos)
			continue;
		std::string_view key = line.substr(0, colon), value = line.substr(colon + 1);
		while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
			value.remove_prefix(1);

		if (key == "drm-driver") {
			mcp = value == "mcp";
		} else if (key == "drm-client-id") {
			auto n = parse_amount(value);
			id = n.has_value();
			u.client_id = n.value_or(0);
		} else if (key == "drm-total-system") {
			u.system_bytes = parse_amount(value).value_or(0);
		} else if (key == "drm-total-userptr") {
			u.userptr_bytes = parse_amount(value).value_or(0);
		}
	}
	if (!mcp || !id)
		return std::nullopt;
	return u;
}

BufferMemory process_buffer_memory(int pid)
{
	if (pid < 0)
		throw Error(EINVAL, "process_buffer_memory: pid " + std::to_string(pid) +
					    " is not a process id");

	const std::string dir = (pid ? "/proc/" + std::to_string(pid) : "/proc/self") + "/fdinfo";
	std::unique_ptr<DIR, DirCloser> d(opendir(dir.c_str()));
	std::set<std::uint64_t> seen;
	BufferMemory total;

	if (!d) {
		const int e = errno;
		if (e == ENOENT)
			throw Error(ESRCH, "no process " + std::to_string(pid));
		if (e == EACCES || e == EPERM)
			throw Error(EACCES, "cannot read the fds of process " + std::to_string(pid) +
						    ": it belongs to another user (run as root)");
		throw Error(e, "cannot read " + dir + ": " + std::strerror(e));
	}
	for (;;) {
		errno = 0;
		const struct dirent *ent = readdir(d.get());
		if (!ent) {
			if (errno)
				throw Error(errno, "cannot read " + dir + ": " + std::strerror(errno));
			break;
		}
		if (ent->d_name[0] == '.')
			continue;
		// An fd closed since readdir() saw it is simply not counted.
		std::ifstream in(dir + "/" + ent->d_name);
		if (!in)
			continue;
		const std::string text((std::istreambuf_iterator<char>(in)),
				       std::istreambuf_iterator<char>());
		const auto u = parse_context_fdinfo(text);
		if (!u || !seen.insert(u->client_id).second)
			continue;
		total.contexts++;
		total.system_bytes += u->system_bytes;
		total.userptr_bytes += u->userptr_bytes;
	}
	return total;
}

} // namespace mcp

int mcp_get_process_buffer_memory(int pid, struct mcp_buffer_memory *out)
{
	if (!out)
		return mcp::detail::c_api_fail(EINVAL, "mcp_get_process_buffer_memory: out is NULL");
	if (out->size != sizeof(*out))
		return mcp::detail::c_api_fail(
			EINVAL, "mcp_get_process_buffer_memory: out->size is not "
				"sizeof(struct mcp_buffer_memory)");
	return mcp::detail::c_api_guard([&] {
		const mcp::BufferMemory m = mcp::process_buffer_memory(pid);

		out->contexts = m.contexts;
		out->system_bytes = m.system_bytes;
		out->userptr_bytes = m.userptr_bytes;
	});
}
