// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::tune_list() and mcp::TuneSession: the tuning registry of
// MCP_IOC_TUNE_LIST and the session fd of MCP_IOC_TUNE_SESSION.
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <sys/ioctl.h>

#include "tune_internal.hpp"

static_assert(MCP_FEATURE_TUNE == MCP_FEAT_TUNE);
static_assert(MCP_KNOB_SCOPE_SYSTEM == MCP_TUNE_SCOPE_SYSTEM &&
	      MCP_KNOB_READ_ONLY == MCP_TUNE_READ_ONLY && MCP_KNOB_U64 == MCP_TUNE_TYPE_U64);

namespace mcp {

const char *to_string(TuneScope scope) noexcept
{
	switch (scope) {
	case TuneScope::cpu:
		return "cpu";
	case TuneScope::core:
		return "core";
	case TuneScope::package:
		return "package";
	case TuneScope::system:
		return "system";
	}
	return "?";
}

const char *to_string(TuneStatus status) noexcept
{
	switch (status) {
	case TuneStatus::supported:
		return "supported";
	case TuneStatus::unsupported:
		return "unsupported";
	case TuneStatus::read_only:
		return "read-only";
	}
	return "?";
}

namespace detail {

TuneKnob decode_tune_knob(const struct mcp_tune_knob_info &raw)
{
	TuneKnob k;

	k.id = raw.id;
	k.name.assign(raw.name, strnlen(raw.name, sizeof(raw.name)));
	k.reason.assign(raw.reason, strnlen(raw.reason, sizeof(raw.reason)));
	k.scope = raw.scope <= MCP_TUNE_SCOPE_SYSTEM ? static_cast<TuneScope>(raw.scope)
						      : TuneScope::system;
	k.type = raw.type == MCP_TUNE_TYPE_BOOL ? TuneType::boolean : TuneType::integer;
	k.status = raw.status <= MCP_TUNE_READ_ONLY ? static_cast<TuneStatus>(raw.status)
						     : TuneStatus::unsupported;
	k.min = raw.min;
	k.max = raw.max;
	if (raw.state & MCP_TUNE_STATE_VALUE) {
		k.value = raw.value;
		k.boot = raw.boot;
	}
	k.held = raw.state & MCP_TUNE_STATE_HELD;
	k.holder_pid = k.held ? static_cast<int>(raw.holder_pid) : 0;
	k.committed = raw.state & MCP_TUNE_STATE_COMMITTED;
	return k;
}

std::string tune_error_message(int errnum, std::string_view op, const TuneKnob &knob,
			       const struct mcp_tune_value &v)
{
	const std::string what = std::string(op) + " " + knob.name;
	const std::string cpu = "CPU " + std::to_string(v.err_cpu);

	switch (errnum) {
	case EBUSY:
		return "cannot " + what + ": " + cpu + " is held by another tuning session (pid " +
		       std::to_string(v.holder_pid) + "): wait for it to end, or stop it";
	case EIO:
		return "cannot " + what + ": the value did not stick on " + cpu + " (wrote " +
		       std::to_string(v.value) + ", read back " + std::to_string(v.readback) +
		       "); the knob is now listed unsupported (a hypervisor may ignore the writes)";
	case ERANGE:
		return "cannot " + what + " to " + std::to_string(v.value) + ": the range is " +
		       std::to_string(knob.min) + ".." + std::to_string(knob.max);
	case EOPNOTSUPP:
		return "cannot " + what + ": " + to_string(knob.status) + " here: " + knob.reason;
	case ENXIO:
		return "cannot " + what + ": " + cpu + " is offline: bring it online first";
	case EINVAL:
		return "cannot " + what + ": CPU " + std::to_string(v.cpu) +
		       " does not exist on this machine";
	case EPERM:
		return "cannot " + what +
		       ": tuning needs CAP_SYS_RAWIO (run as root) and a kernel without lockdown, "
		       "and a session fd works only in the process that opened it";
	default:
		return "cannot " + what + ": " + std::strerror(errnum);
	}
}

} // namespace detail

std::vector<TuneKnob> tune_list(const Device &dev, unsigned cpu)
{
	std::vector<struct mcp_tune_knob_info> raw;
	struct mcp_tune_list arg {};

	for (;;) {
		arg = {};
		arg.size = sizeof(arg);
		arg.cpu = cpu;
		arg.cap = static_cast<std::uint32_t>(raw.size());
		arg.entry_size = sizeof(struct mcp_tune_knob_info);
		arg.entries_ptr = reinterpret_cast<std::uintptr_t>(raw.data());
		if (::ioctl(dev.fd(), MCP_IOC_TUNE_LIST, &arg) == 0)
			break;
		const int err = errno;
		if (err == ENOSPC && arg.count > raw.size()) {
			raw.resize(arg.count);
			continue;
		}
		if (err == ENXIO)
			throw Error(err, "CPU " + std::to_string(cpu) +
					 " is offline: list the knobs on an online CPU (--cpu)");
		if (err == EINVAL)
			throw Error(err, "CPU " + std::to_string(cpu) +
					 " does not exist on this machine");
		if (err == ENOTTY)
			throw Error(err, "the loaded mcp module has no tuning registry "
					 "(MCP_IOC_TUNE_LIST): install a newer mcp module");
		throw Error(err, detail::ioctl_error_message(err, dev.path(), "MCP_IOC_TUNE_LIST"));
	}
	std::vector<TuneKnob> knobs;
	knobs.reserve(arg.count);
	for (std::uint32_t i = 0; i < arg.count && i < raw.size(); i++)
		knobs.push_back(detail::decode_tune_knob(raw[i]));
	return knobs;
}

const TuneKnob &tune_find(const std::vector<TuneKnob> &knobs, std::string_view name)
{
	std::string names;

	for (const auto &k : knobs) {
		if (k.name == name)
			return k;
		names += (names.empty() ? "" : ", ") + k.name;
	}
	throw Error(ENOENT, "no tuning knob '" + std::string(name) + "'; the knobs are: " + names);
}

TuneSession::TuneSession(const Device &dev) : knobs_(tune_list(dev))
{
	struct mcp_tune_session arg {};

	arg.size = sizeof(arg);
	if (::ioctl(dev.fd(), MCP_IOC_TUNE_SESSION, &arg)) {
		const int err = errno;

		if (err == EPERM)
			throw Error(err, "opening a tuning session needs CAP_SYS_RAWIO (run as root) "
					 "and a kernel without lockdown (lockdown forbids MSR writes)");
		throw Error(err, detail::ioctl_error_message(err, dev.path(),
							     "MCP_IOC_TUNE_SESSION"));
	}
	fd_ = UniqueFd(arg.fd);
}

const TuneKnob &TuneSession::knob(std::string_view name) const
{
	return tune_find(knobs_, name);
}

void TuneSession::set(std::string_view name, std::uint64_t value, std::optional<unsigned> cpu)
{
	const TuneKnob &k = knob(name);
	struct mcp_tune_value v {};

	v.size = sizeof(v);
	v.knob = k.id;
	v.value = value;
	if (cpu)
		v.cpu = *cpu;
	else
		v.flags = MCP_TUNE_ALL_CPUS;
	if (::ioctl(fd_.get(), MCP_IOC_TUNE_SET, &v)) {
		const int err = errno;

		v.value = value;
		throw Error(err, detail::tune_error_message(err, "set", k, v));
	}
}

std::uint64_t TuneSession::get(std::string_view name, unsigned cpu)
{
	const TuneKnob &k = knob(name);
	struct mcp_tune_value v {};

	v.size = sizeof(v);
	v.knob = k.id;
	v.cpu = cpu;
	if (::ioctl(fd_.get(), MCP_IOC_TUNE_GET, &v)) {
		const int err = errno;

		throw Error(err, detail::tune_error_message(err, "get", k, v));
	}
	return v.value;
}

unsigned TuneSession::commit()
{
	struct mcp_tune_commit c {};

	c.size = sizeof(c);
	if (::ioctl(fd_.get(), MCP_IOC_TUNE_COMMIT, &c)) {
		const int err = errno;

		throw Error(err, std::string("committing the tuning session failed: ") +
					 std::strerror(err));
	}
	return c.count;
}

void TuneSession::reset(std::optional<std::string_view> name, std::optional<unsigned> cpu)
{
	struct mcp_tune_value v {};
	TuneKnob all;

	v.size = sizeof(v);
	if (name)
		v.knob = knob(*name).id;
	else
		v.flags |= MCP_TUNE_ALL_KNOBS;
	if (cpu)
		v.cpu = *cpu;
	else
		v.flags |= MCP_TUNE_ALL_CPUS;
	if (::ioctl(fd_.get(), MCP_IOC_TUNE_RESET, &v)) {
		const int err = errno;

		all.name = v.knob < knobs_.size() ? knobs_[v.knob].name : "every knob";
		if (v.knob < knobs_.size())
			all = knobs_[v.knob];
		throw Error(err, detail::tune_error_message(err, "reset", all, v));
	}
}

} // namespace mcp
