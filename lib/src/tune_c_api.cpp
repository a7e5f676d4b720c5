// SPDX-License-Identifier: LGPL-2.1-or-later
// The C API of tuning (<mcp/tune.h>) over mcp::tune_list() and
// mcp::TuneSession.
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>

#include "tune_internal.hpp"

struct mcp_tuner {
	mcp::TuneSession session;
};

using mcp::detail::c_api_fail;
using mcp::detail::c_api_guard;

static void knob_to_c(const mcp::TuneKnob &k, struct mcp_knob &c)
{
	c = {};
	c.id = k.id;
	c.scope = static_cast<std::uint32_t>(k.scope);
	c.type = k.type == mcp::TuneType::boolean ? MCP_KNOB_BOOL : MCP_KNOB_U64;
	c.status = static_cast<std::uint32_t>(k.status);
	c.min = k.min;
	c.max = k.max;
	c.has_value = k.value.has_value();
	c.value = k.value.value_or(0);
	c.boot = k.boot.value_or(0);
	c.held = k.held;
	c.holder_pid = k.holder_pid;
	c.committed = k.committed;
	std::strncpy(c.name, k.name.c_str(), sizeof(c.name) - 1);
	std::strncpy(c.reason, k.reason.c_str(), sizeof(c.reason) - 1);
}

int mcp_tune_list(struct mcp_device *dev, unsigned cpu, struct mcp_knob *out, size_t cap,
		  size_t *count)
{
	if (!dev || !count || (cap && !out))
		return c_api_fail(EINVAL, "mcp_tune_list: dev or count is NULL, or out with cap");
	return c_api_guard([&] {
		const auto knobs = mcp::tune_list(mcp::detail::c_api_device(dev), cpu);

		*count = knobs.size();
		if (cap < knobs.size())
			return c_api_fail(ENOSPC, "mcp_tune_list: cap is smaller than *count");
		for (size_t i = 0; i < knobs.size(); i++)
			knob_to_c(knobs[i], out[i]);
		return 0;
	});
}

int mcp_tuner_open(struct mcp_device *dev, struct mcp_tuner **out)
{
	if (!dev || !out)
		return c_api_fail(EINVAL, "mcp_tuner_open: dev or out is NULL");
	return c_api_guard([&] {
		*out = new mcp_tuner{mcp::TuneSession(mcp::detail::c_api_device(dev))};
	});
}

void mcp_tuner_close(struct mcp_tuner *tuner)
{
	std::unique_ptr<mcp_tuner> owned(tuner);
}

int mcp_tuner_set(struct mcp_tuner *tuner, const char *knob, uint64_t value, int cpu)
{
	if (!tuner || !knob)
		return c_api_fail(EINVAL, "mcp_tuner_set: tuner or knob is NULL");
	return c_api_guard([&] {
		tuner->session.set(knob, value,
				   cpu < 0 ? std::nullopt : std::optional<unsigned>(cpu));
	});
}

int mcp_tuner_get(struct mcp_tuner *tuner, const char *knob, unsigned cpu, uint64_t *value)
{
	if (!tuner || !knob || !value)
		return c_api_fail(EINVAL, "mcp_tuner_get: tuner, knob or value is NULL");
	return c_api_guard([&] { *value = tuner->session.get(knob, cpu); });
}

int mcp_tuner_commit(struct mcp_tuner *tuner, unsigned *count)
{
	if (!tuner)
		return c_api_fail(EINVAL, "mcp_tuner_commit: tuner is NULL");
	return c_api_guard([&] {
		const unsigned n = tuner->session.commit();

		if (count)
			*count = n;
	});
}

int mcp_tuner_reset(struct mcp_tuner *tuner, const char *knob, int cpu)
{
	if (!tuner)
		return c_api_fail(EINVAL, "mcp_tuner_reset: tuner is NULL");
	return c_api_guard([&] {
		tuner->session.reset(knob ? std::optional<std::string_view>(knob) : std::nullopt,
				     cpu < 0 ? std::nullopt : std::optional<unsigned>(cpu));
	});
}
