// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): the generic netlink family "mcp" and its
 * "events" multicast group.  Documented in Documentation/events.rst.
 *
 * The family has no commands userspace can send; it only multicasts events
 * (MCP_CMD_EVENT_PLACE for now).  It lives in the initial network namespace
 * only (netnsok is off): events carry thread ids of the initial pid
 * namespace, and genlmsg_multicast() sends to init_net.
 *
 * Joining the group needs CAP_NET_ADMIN: events name other users'
 * threads (pid and comm).  On a kernel that cannot restrict a group
 * (mcp_compat.h), events carry neither.
 *
 * Nothing is ever logged per event: every event is counted in one of
 * the debugfs counters events_sent, events_unheard (nobody listened) or
 * events_dropped (out of memory, or a listener's receive buffer was full).
 *
 * Locks: none; genetlink does its own locking.  mcp_netlink_place_event()
 * allocates with GFP_KERNEL and may sleep.
 */

#include <linux/errno.h>
#include <linux/sched.h>
#include <net/genetlink.h>
#include <net/netlink.h>

#include "mcp_internal.h"

/* Index of MCP_GENL_EVENTS_GROUP in mcp_genl_mcgrps[]. */
enum mcp_genl_mcgrp {
	MCP_GENL_MCGRP_EVENTS,
};

/*
 * Events name a thread and its comm, which /proc may hide (hidepid=), so
 * joining the group needs CAP_NET_ADMIN, as for the kernel's other
 * groups that report on other users' processes.
 */
static const struct genl_multicast_group mcp_genl_mcgrps[] = {
	[MCP_GENL_MCGRP_EVENTS] = {
		.name = MCP_GENL_EVENTS_GROUP,
		.flags = MCP_GENL_MCAST_ADMIN,
	},
};

/* The attribute types, as listeners should parse them. */
static const struct nla_policy mcp_genl_policy[MCP_ATTR_MAX + 1] = {
	[MCP_ATTR_PID] = { .type = NLA_U32 },
	[MCP_ATTR_COMM] = { .type = NLA_NUL_STRING, .len = TASK_COMM_LEN - 1 },
	[MCP_ATTR_FROM_NODE] = { .type = NLA_S32 },
	[MCP_ATTR_TO_NODE] = { .type = NLA_S32 },
	[MCP_ATTR_REASON] = { .type = NLA_U32 },
	[MCP_ATTR_ORIGIN] = { .type = NLA_U32 },
	[MCP_ATTR_TIMESTAMP_NS] = { .type = NLA_U64 },
	[MCP_ATTR_PAD] = { .type = NLA_UNSPEC },
};

static struct genl_family mcp_genl_family __ro_after_init = {
	.name = MCP_GENL_NAME,
	.version = MCP_GENL_VERSION,
	.maxattr = MCP_ATTR_MAX,
	.policy = mcp_genl_policy,
	.netnsok = false,
	.module = THIS_MODULE,
	.mcgrps = mcp_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(mcp_genl_mcgrps),
};

/* Payload of one MCP_CMD_EVENT_PLACE message. */
static size_t mcp_place_event_size(void)
{
	return nla_total_size(sizeof(u32)) +		/* PID */
	       nla_total_size(TASK_COMM_LEN) +		/* COMM */
	       nla_total_size(sizeof(s32)) +		/* FROM_NODE */
	       nla_total_size(sizeof(s32)) +		/* TO_NODE */
	       nla_total_size(sizeof(u32)) +		/* REASON */
	       nla_total_size(sizeof(u32)) +		/* ORIGIN */
	       nla_total_size_64bit(sizeof(u64));	/* TIMESTAMP_NS */
}

static int mcp_place_event_fill(struct sk_buff *skb,
				const struct mcp_place_event *ev)
{
	void *hdr;

	hdr = genlmsg_put(skb, 0, 0, &mcp_genl_family, 0, MCP_CMD_EVENT_PLACE);
	if (!hdr)
		return -EMSGSIZE;

	/* Who was placed, only to listeners the group could restrict. */
	if (MCP_GENL_MCAST_ADMIN &&
	    (nla_put_u32(skb, MCP_ATTR_PID, ev->pid) ||
	     nla_put_string(skb, MCP_ATTR_COMM, ev->comm)))
		goto err_cancel;
	if (nla_put_s32(skb, MCP_ATTR_FROM_NODE, ev->from_node) ||
	    nla_put_s32(skb, MCP_ATTR_TO_NODE, ev->to_node) ||
	    nla_put_u32(skb, MCP_ATTR_REASON, ev->reason) ||
	    nla_put_u32(skb, MCP_ATTR_ORIGIN, ev->origin) ||
	    nla_put_u64_64bit(skb, MCP_ATTR_TIMESTAMP_NS, ev->timestamp_ns,
			      MCP_ATTR_PAD))
		goto err_cancel;

	genlmsg_end(skb, hdr);
	return 0;

err_cancel:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/**
 * mcp_netlink_place_event() - multicast one applied placement decision
 * @ev:	the decision
 *
 * Sends an MCP_CMD_EVENT_PLACE message to the "events" group.  Does not
 * allocate when nobody listens.  Failures are counted, not reported: the
 * placement itself has already happened.  May sleep.
 */
void mcp_netlink_place_event(const struct mcp_place_event *ev)
{
	struct sk_buff *skb;
	int ret;

	might_sleep();

	if (!genl_has_listeners(&mcp_genl_family, &init_net,
				MCP_GENL_MCGRP_EVENTS)) {
		mcp_counter_inc(MCP_CTR_EVENTS_UNHEARD);
		return;
	}

	skb = genlmsg_new(mcp_place_event_size(), GFP_KERNEL);
	if (!skb) {
		mcp_counter_inc(MCP_CTR_EVENTS_DROPPED);
		return;
	}

	ret = mcp_place_event_fill(skb, ev);
	if (ret) {
		nlmsg_free(skb);
		mcp_counter_inc(MCP_CTR_EVENTS_DROPPED);
		return;
	}

	/* Consumes skb whatever it returns. */
	ret = genlmsg_multicast(&mcp_genl_family, skb, 0,
				MCP_GENL_MCGRP_EVENTS, GFP_KERNEL);
	if (!ret)
		mcp_counter_inc(MCP_CTR_EVENTS_SENT);
	else if (ret == -ESRCH)
		/* The last listener left after genl_has_listeners(). */
		mcp_counter_inc(MCP_CTR_EVENTS_UNHEARD);
	else
		/* -ENOBUFS: at least one listener's receive buffer was full. */
		mcp_counter_inc(MCP_CTR_EVENTS_DROPPED);
}

int __init mcp_netlink_init(void)
{
	return genl_register_family(&mcp_genl_family);
}

/*
 * Listeners still subscribed are fine: genetlink drops their membership
 * and tells them with CTRL_CMD_DELMCAST_GRP / CTRL_CMD_DELFAMILY.
 */
void mcp_netlink_exit(void)
{
	genl_unregister_family(&mcp_genl_family);
}
