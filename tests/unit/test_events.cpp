// SPDX-License-Identifier: GPL-2.0-only
// Events: parsing MCP_CMD_EVENT_PLACE messages built with libnl as the
// kernel builds them; names, messages and the C API's argument checks.
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include <criterion/criterion.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include <linux/genetlink.h>

#include "internal.hpp"

namespace {

constexpr int fake_family = 0x1c;

struct MsgDeleter {
	void operator()(struct nl_msg *m) const { nlmsg_free(m); }
};
using Msg = std::unique_ptr<struct nl_msg, MsgDeleter>;

struct Fields {
	bool pid = true, comm = true, from = true, to = true, reason = true, origin = true,
	     ts = true, pad = false, extra = false;
	const char *comm_value = "llama-worker";
};

// An MCP_CMD_EVENT_PLACE as kmod/mcp_netlink.c builds it.
Msg place_msg(const Fields &f = {}, int family = fake_family, std::uint8_t cmd = MCP_CMD_EVENT_PLACE)
{
	Msg m(nlmsg_alloc());
	cr_assert(m);
	cr_assert(genlmsg_put(m.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0, cmd,
			      MCP_GENL_VERSION));
	if (f.pid)
		cr_assert_eq(nla_put_u32(m.get(), MCP_ATTR_PID, 4242), 0);
	if (f.comm)
		cr_assert_eq(nla_put_string(m.get(), MCP_ATTR_COMM, f.comm_value), 0);
	if (f.from)
		cr_assert_eq(nla_put_s32(m.get(), MCP_ATTR_FROM_NODE, -1), 0);
	if (f.to)
		cr_assert_eq(nla_put_s32(m.get(), MCP_ATTR_TO_NODE, 1), 0);
	if (f.reason)
		cr_assert_eq(nla_put_u32(m.get(), MCP_ATTR_REASON, MCP_PLACE_REASON_NEAREST), 0);
	if (f.origin)
		cr_assert_eq(nla_put_u32(m.get(), MCP_ATTR_ORIGIN, MCP_PLACE_ORIGIN_REBALANCER), 0);
	if (f.pad) // what nla_put_u64_64bit() adds where unaligned access is slow
		cr_assert_eq(nla_put(m.get(), MCP_ATTR_PAD, 0, nullptr), 0);
	if (f.ts)
		cr_assert_eq(nla_put_u64(m.get(), MCP_ATTR_TIMESTAMP_NS, 123456789012345ULL), 0);
	if (f.extra) // an attribute of a later version
		cr_assert_eq(nla_put_u32(m.get(), MCP_ATTR_MAX + 5, 7), 0);
	return m;
}

mcp::detail::EventParse parse(const Msg &m, int family = fake_family)
{
	struct nlmsghdr *nlh = nlmsg_hdr(m.get());
	return mcp::detail::parse_event_message(nlh, nlh->nlmsg_len, family);
}

int parse_errno(const Msg &m)
{
	try {
		parse(m);
	} catch (const mcp::Error &e) {
		return e.errnum();
	}
	return 0;
}

} // namespace

Test(events_parse, all_attributes)
{
	auto res = parse(place_msg());

	cr_assert(res.event.has_value());
	cr_expect_not(res.family_removed);
	const mcp::PlaceEvent &ev = *res.event;
	cr_expect_eq(ev.pid, 4242);
	cr_expect_eq(ev.comm, "llama-worker");
	cr_expect_eq(ev.from_node, -1);
	cr_expect_eq(ev.to_node, 1);
	cr_expect_eq(ev.reason, (unsigned)MCP_PLACE_REASON_NEAREST);
	cr_expect(ev.origin == mcp::PlaceOrigin::rebalancer);
	cr_expect_eq(ev.timestamp_ns, 123456789012345ULL);
}

Test(events_parse, pad_attribute_and_unknown_attributes_are_skipped)
{
	Fields f;
	f.pad = true;
	f.extra = true;
	auto res = parse(place_msg(f));

	cr_assert(res.event.has_value());
	cr_expect_eq(res.event->timestamp_ns, 123456789012345ULL);
	cr_expect_eq(res.event->pid, 4242);
}

Test(events_parse, optional_attributes_missing)
{
	Fields f;
	f.comm = f.from = f.ts = false;
	auto res = parse(place_msg(f));

	cr_assert(res.event.has_value());
	cr_expect_eq(res.event->comm, "");
	cr_expect_eq(res.event->from_node, -1);
	cr_expect_eq(res.event->timestamp_ns, 0u);
}

Test(events_parse, longest_comm)
{
	Fields f;
	f.comm_value = "fifteen-chars-x";
	auto res = parse(place_msg(f));

	cr_assert(res.event.has_value());
	cr_expect_eq(res.event->comm, "fifteen-chars-x");
}

Test(events_parse, required_attribute_missing_is_eproto)
{
	for (int which = 0; which < 4; which++) {
		Fields f;
		if (which == 0)
			f.pid = false;
		if (which == 1)
			f.to = false;
		if (which == 2)
			f.reason = false;
		if (which == 3)
			f.origin = false;
		cr_expect_eq(parse_errno(place_msg(f)), EPROTO, "attribute %d", which);
	}
}

Test(events_parse, other_family_and_unknown_command_are_ignored)
{
	auto other = parse(place_msg({}, fake_family + 1));
	cr_expect_not(other.event.has_value());
	cr_expect_not(other.family_removed);

	auto later = parse(place_msg({}, fake_family, MCP_CMD_MAX + 1));
	cr_expect_not(later.event.has_value());
}

Test(events_parse, family_removal_from_nlctrl)
{
	Msg m(nlmsg_alloc());
	cr_assert(genlmsg_put(m.get(), NL_AUTO_PORT, NL_AUTO_SEQ, GENL_ID_CTRL, 0, 0,
			      CTRL_CMD_DELFAMILY, 2));
	cr_assert_eq(nla_put_u16(m.get(), CTRL_ATTR_FAMILY_ID, fake_family), 0);
	cr_assert_eq(nla_put_string(m.get(), CTRL_ATTR_FAMILY_NAME, "mcp"), 0);
	auto res = parse(m);
	cr_expect(res.family_removed);
	cr_expect_not(res.event.has_value());

	Msg other(nlmsg_alloc());
	cr_assert(genlmsg_put(other.get(), NL_AUTO_PORT, NL_AUTO_SEQ, GENL_ID_CTRL, 0, 0,
			      CTRL_CMD_DELFAMILY, 2));
	cr_assert_eq(nla_put_string(other.get(), CTRL_ATTR_FAMILY_NAME, "mcpx"), 0);
	cr_expect_not(parse(other).family_removed);
}

Test(events_parse, truncated_message_is_eproto)
{
	Msg m = place_msg();
	struct nlmsghdr *nlh = nlmsg_hdr(m.get());
	bool threw = false;

	try {
		mcp::detail::parse_event_message(nlh, nlh->nlmsg_len - 4, fake_family);
	} catch (const mcp::Error &e) {
		threw = e.errnum() == EPROTO;
	}
	cr_expect(threw);
}

Test(events_parse, corrupt_attribute_length_is_eproto)
{
	Msg m = place_msg();
	struct nlmsghdr *nlh = nlmsg_hdr(m.get());
	auto *first = static_cast<struct nlattr *>(genlmsg_attrdata(
		static_cast<struct genlmsghdr *>(nlmsg_data(nlh)), 0));

	first->nla_len = 2; // PID with a 0-byte payload: policy says u32
	cr_expect_eq(parse_errno(m), EPROTO);
}

Test(events_names, origins)
{
	cr_expect_str_eq(mcp::to_string(mcp::PlaceOrigin::ioctl), "ioctl");
	cr_expect_str_eq(mcp::to_string(mcp::PlaceOrigin::rebalancer), "rebalancer");
	cr_expect_str_eq(mcp::to_string(mcp::PlaceOrigin::unplace), "unplace");
	cr_expect_str_eq(mcp::to_string(static_cast<mcp::PlaceOrigin>(99)), "unknown");
	cr_expect_str_eq(mcp_place_origin_name(MCP_ORIGIN_REBALANCER), "rebalancer");
	cr_expect_str_eq(mcp_feature_name(MCP_FEATURE_EVENTS), "events");
}

Test(events_errors, module_not_loaded_says_what_to_do)
{
	std::string msg = mcp::detail::events_error_message(ENOENT, "x");
	cr_expect(msg.find("not loaded") != std::string::npos, "%s", msg.c_str());
	cr_expect(msg.find("modprobe mcp") != std::string::npos, "%s", msg.c_str());
	msg = mcp::detail::events_error_message(ENODEV, "x");
	cr_expect(msg.find("unloaded") != std::string::npos, "%s", msg.c_str());
}

Test(events_c_api, bad_arguments)
{
	struct mcp_event_place ev = {};

	cr_expect_eq(mcp_events_open(nullptr), -EINVAL);
	cr_expect_eq(mcp_events_fd(nullptr), -EINVAL);
	ev.size = sizeof(ev);
	cr_expect_eq(mcp_events_next(nullptr, 0, &ev), -EINVAL);
	cr_expect_eq(mcp_events_overruns(nullptr), 0u);
	mcp_events_close(nullptr);
}
