// SPDX-License-Identifier: GPL-2.0-only
// Tuning on the host: decoding MCP_IOC_TUNE_LIST entries, the sentences
// of failed session calls, mcpctl tune's KNOB=VALUE parsing and output.
#include <cerrno>
#include <cstring>
#include <string>

#include <criterion/criterion.h>

#include "commands.hpp"
#include "tune_internal.hpp"

static struct mcp_tune_knob_info raw_knob()
{
	struct mcp_tune_knob_info r {};

	r.id = 2;
	r.scope = MCP_TUNE_SCOPE_CORE;
	r.type = MCP_TUNE_TYPE_BOOL;
	r.status = MCP_TUNE_SUPPORTED;
	r.max = 1;
	r.value = 0;
	r.boot = 1;
	r.state = MCP_TUNE_STATE_VALUE | MCP_TUNE_STATE_HELD;
	r.holder_pid = 812;
	std::strcpy(r.name, "prefetch.l1_stream");
	std::strcpy(r.reason, "Intel MSR_MISC_FEATURE_CONTROL: MSR 0x1a4 bit 2 disables it");
	return r;
}

Test(tune, decode_knob)
{
	struct mcp_tune_knob_info r = raw_knob();
	mcp::TuneKnob k = mcp::detail::decode_tune_knob(r);

	cr_expect_eq(k.id, 2u);
	cr_expect_eq(k.name, "prefetch.l1_stream");
	cr_expect(k.scope == mcp::TuneScope::core);
	cr_expect(k.status == mcp::TuneStatus::supported);
	cr_expect(k.value && *k.value == 0);
	cr_expect(k.boot && *k.boot == 1);
	cr_expect(k.held);
	cr_expect_eq(k.holder_pid, 812);
	cr_expect(!k.committed);

	/* Without a value, none is made up; names need no NUL at the end. */
	r.state = 0;
	std::memset(r.name, 'x', sizeof(r.name));
	k = mcp::detail::decode_tune_knob(r);
	cr_expect(!k.value && !k.boot && !k.held);
	cr_expect_eq(k.holder_pid, 0);
	cr_expect_eq(k.name.size(), sizeof(r.name));
	/* An unknown status from a newer module is not "supported". */
	r.status = 7;
	cr_expect(mcp::detail::decode_tune_knob(r).status == mcp::TuneStatus::unsupported);
}

Test(tune, error_messages)
{
	mcp::TuneKnob k = mcp::detail::decode_tune_knob(raw_knob());
	struct mcp_tune_value v {};

	v.err_cpu = 3;
	v.holder_pid = 812;
	v.value = 0;
	v.readback = 1;
	cr_expect_eq(mcp::detail::tune_error_message(EBUSY, "set", k, v),
		     "cannot set prefetch.l1_stream: CPU 3 is held by another tuning session "
		     "(pid 812): wait for it to end, or stop it");
	cr_expect(mcp::detail::tune_error_message(EIO, "set", k, v)
			  .find("did not stick on CPU 3 (wrote 0, read back 1)") != std::string::npos);
	v.value = 2;
	cr_expect_eq(mcp::detail::tune_error_message(ERANGE, "set", k, v),
		     "cannot set prefetch.l1_stream to 2: the range is 0..1");
	cr_expect(mcp::detail::tune_error_message(ENXIO, "get", k, v).find("CPU 3 is offline") !=
		  std::string::npos);
	k.status = mcp::TuneStatus::read_only;
	k.reason = "written through /sys/class/misc/mcp/dma/wc_depth";
	cr_expect(mcp::detail::tune_error_message(EOPNOTSUPP, "set", k, v)
			  .find("read-only here: written through") != std::string::npos);
}

Test(tune, find_names_the_knobs)
{
	std::vector<mcp::TuneKnob> knobs{mcp::detail::decode_tune_knob(raw_knob())};

	cr_expect_eq(mcp::tune_find(knobs, "prefetch.l1_stream").id, 2u);
	try {
		mcp::tune_find(knobs, "bogus");
		cr_assert_fail("no throw");
	} catch (const mcp::Error &e) {
		cr_expect_eq(e.errnum(), ENOENT);
		cr_expect(std::string(e.what()).find("the knobs are: prefetch.l1_stream") !=
			  std::string::npos);
	}
}

Test(tune, mcpctl_assignments)
{
	auto a = mcpctl::parse_tune_assignments({"prefetch.l2_stream=0", "dma.wc_depth=0x10"});

	cr_assert_eq(a.size(), 2u);
	cr_expect_eq(a[0].first, "prefetch.l2_stream");
	cr_expect_eq(a[0].second, 0u);
	cr_expect_eq(a[1].second, 16u);
	for (const char *bad : {"x", "=1", "x=", "x=-1", "x=1y", "x=abc"}) {
		try {
			mcpctl::parse_tune_assignments({bad});
			cr_expect_fail("%s accepted", bad);
		} catch (const mcp::Error &e) {
			cr_expect_eq(e.errnum(), EINVAL, "%s", bad);
		}
	}
}

Test(tune, mcpctl_output)
{
	mcp::TuneKnob k = mcp::detail::decode_tune_knob(raw_knob());
	std::string text = mcpctl::format_tune_text({k}, 0);
	nlohmann::ordered_json j = mcpctl::tune_knob_json(k);

	cr_expect(text.find("prefetch.l1_stream") != std::string::npos);
	cr_expect(text.find("held:812") != std::string::npos);
	cr_expect(text.find("(values on CPU 0)") != std::string::npos);
	cr_expect_eq(j["scope"], "core");
	cr_expect_eq(j["value"], 0);
	cr_expect_eq(j["holder_pid"], 812);
	k.value.reset();
	k.held = false;
	j = mcpctl::tune_knob_json(k);
	cr_expect(j["value"].is_null());
	cr_expect(j["holder_pid"].is_null());
}
