// SPDX-License-Identifier: LGPL-2.1-or-later
// mcp::EventListener: a libnl generic netlink socket subscribed to the
// "events" group of the "mcp" family, and the C API around it.  Parsing of
// a message is a pure function (parse_event_message) for tests/unit.
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include <linux/genetlink.h>

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "internal.hpp"

namespace mcp {

const char *to_string(PlaceOrigin origin) noexcept
{
	switch (origin) {
	case PlaceOrigin::ioctl:
		return "ioctl";
	case PlaceOrigin::rebalancer:
		return "rebalancer";
	case PlaceOrigin::unplace:
		return "unplace";
	}
	return "unknown";
}

namespace detail {

std::string events_error_message(int errnum, std::string_view what)
{
	switch (errnum) {
	case ENOENT:
		return "the mcp kernel module is not loaded (no generic netlink family '" MCP_GENL_NAME
		       "'): run 'sudo modprobe mcp'";
	case EPROTONOSUPPORT:
		return "this kernel has no generic netlink support (CONFIG_NETLINK)";
	case EACCES:
	case EPERM:
		return "joining the mcp '" MCP_GENL_EVENTS_GROUP
		       "' multicast group needs CAP_NET_ADMIN (events name other users' threads): "
		       "run as root";
	case ENODEV:
		return "the mcp kernel module was unloaded: reload it with 'sudo modprobe mcp' and listen again";
	default:
		return std::string(what) + " failed: " + std::strerror(errnum);
	}
}

namespace {

// Attribute types as the kernel sends them (kmod/mcp_netlink.c).
struct nla_policy *event_policy()
{
	static struct nla_policy policy[MCP_ATTR_MAX + 1] = {};
	static const bool init = [] {
		policy[MCP_ATTR_PID].type = NLA_U32;
		policy[MCP_ATTR_COMM].type = NLA_STRING;
		policy[MCP_ATTR_FROM_NODE].type = NLA_U32;
		policy[MCP_ATTR_TO_NODE].type = NLA_U32;
		policy[MCP_ATTR_REASON].type = NLA_U32;
		policy[MCP_ATTR_ORIGIN].type = NLA_U32;
		policy[MCP_ATTR_TIMESTAMP_NS].type = NLA_U64;
		return true;
	}();
	(void)init;
	return policy;
}

// True when @nlh is nlctrl's CTRL_CMD_DELFAMILY for @family.
bool is_family_removal(const struct nlmsghdr *nlh, std::string_view family)
{
	struct nlattr *tb[CTRL_ATTR_MAX + 1] = {};
	auto *gnlh = static_cast<struct genlmsghdr *>(nlmsg_data(nlh));

	if (nlh->nlmsg_type != GENL_ID_CTRL || gnlh->cmd != CTRL_CMD_DELFAMILY)
		return false;
	if (genlmsg_parse(const_cast<struct nlmsghdr *>(nlh), 0, tb, CTRL_ATTR_MAX, nullptr) < 0 ||
	    !tb[CTRL_ATTR_FAMILY_NAME])
		return false;
	return family == nla_get_string(tb[CTRL_ATTR_FAMILY_NAME]);
}

} // namespace

EventParse parse_event_message(const struct nlmsghdr *nlh, std::size_t len, int family_id)
{
	EventParse res;
	struct nlattr *tb[MCP_ATTR_MAX + 1] = {};
	auto *msg = const_cast<struct nlmsghdr *>(nlh);

	if (len < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > len)
		throw Error(EPROTO, "malformed netlink message from the mcp module");
	if (nlh->nlmsg_type == NLMSG_ERROR || nlh->nlmsg_type == NLMSG_NOOP ||
	    nlh->nlmsg_type == NLMSG_DONE)
		return res;
	if (!genlmsg_valid_hdr(msg, 0))
		return res;
	if (is_family_removal(nlh, MCP_GENL_NAME)) {
		res.family_removed = true;
		return res;
	}
	if (nlh->nlmsg_type != family_id)
		return res;

	auto *gnlh = static_cast<struct genlmsghdr *>(nlmsg_data(nlh));
	if (gnlh->cmd != MCP_CMD_EVENT_PLACE)
		return res; // a command of a later version: ignored

	if (genlmsg_parse(msg, 0, tb, MCP_ATTR_MAX, event_policy()) < 0)
		throw Error(EPROTO, "malformed MCP_CMD_EVENT_PLACE message from the mcp module");
	for (int attr : {MCP_ATTR_PID, MCP_ATTR_TO_NODE, MCP_ATTR_REASON, MCP_ATTR_ORIGIN})
		if (!tb[attr])
			throw Error(EPROTO, "MCP_CMD_EVENT_PLACE message without attribute " +
					    std::to_string(attr) + " from the mcp module");

	PlaceEvent ev;
	ev.pid = static_cast<int>(nla_get_u32(tb[MCP_ATTR_PID]));
	if (tb[MCP_ATTR_COMM]) {
		const char *comm = static_cast<const char *>(nla_data(tb[MCP_ATTR_COMM]));
		std::size_t n = static_cast<std::size_t>(nla_len(tb[MCP_ATTR_COMM]));

		ev.comm.assign(comm, strnlen(comm, n));
	}
	ev.from_node = tb[MCP_ATTR_FROM_NODE]
			       ? static_cast<int>(nla_get_u32(tb[MCP_ATTR_FROM_NODE]))
			       : -1;
	ev.to_node = static_cast<int>(nla_get_u32(tb[MCP_ATTR_TO_NODE]));
	ev.reason = nla_get_u32(tb[MCP_ATTR_REASON]);
	ev.origin = static_cast<PlaceOrigin>(nla_get_u32(tb[MCP_ATTR_ORIGIN]));
	if (tb[MCP_ATTR_TIMESTAMP_NS])
		ev.timestamp_ns = nla_get_u64(tb[MCP_ATTR_TIMESTAMP_NS]);
	res.event = std::move(ev);
	return res;
}

} // namespace detail

// ---- EventListener --------------------------------------------------------

struct EventListener::Impl {
	struct nl_sock *sock = nullptr;
	int family_id = -1;
	int group_id = -1;
	std::uint64_t overruns = 0;
	std::deque<PlaceEvent> pending;
	std::vector<unsigned char> buf = std::vector<unsigned char>(65536);

	~Impl()
	{
		if (sock)
			nl_socket_free(sock); // closes the socket
	}
};

namespace {

[[noreturn]] void throw_nl(int nlerr, std::string_view what)
{
	// libnl errors are positive NLE_* codes; map the ones users meet.
	int errnum;

	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_OBJ_NOTFOUND:
		errnum = ENOENT;
		break;
	case NLE_NOMEM:
		errnum = ENOMEM;
		break;
	case NLE_PERM:
		errnum = EPERM;
		break;
	case NLE_NOACCESS:
		errnum = EACCES;
		break;
	case NLE_PROTO_MISMATCH:
	case NLE_OPNOTSUPP:
		errnum = EPROTONOSUPPORT;
		break;
	default:
		errnum = EIO;
		break;
	}
	if (errnum == EIO)
		throw Error(EIO, std::string(what) + " failed: " + nl_geterror(nlerr));
	throw Error(errnum, detail::events_error_message(errnum, what));
}

} // namespace

EventListener::EventListener(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
EventListener::EventListener() noexcept = default;
EventListener::EventListener(EventListener &&) noexcept = default;
EventListener &EventListener::operator=(EventListener &&) noexcept = default;
EventListener::~EventListener() = default;

EventListener EventListener::open()
{
	auto impl = std::make_unique<Impl>();
	int ret;

	impl->sock = nl_socket_alloc();
	if (!impl->sock)
		throw Error(ENOMEM, "out of memory allocating a netlink socket");
	nl_socket_disable_seq_check(impl->sock);
	nl_socket_disable_auto_ack(impl->sock);

	ret = genl_connect(impl->sock);
	if (ret < 0)
		throw_nl(ret, "connecting a generic netlink socket");

	impl->family_id = genl_ctrl_resolve(impl->sock, MCP_GENL_NAME);
	if (impl->family_id < 0)
		throw Error(ENOENT, detail::events_error_message(ENOENT, ""));
	impl->group_id = genl_ctrl_resolve_grp(impl->sock, MCP_GENL_NAME, MCP_GENL_EVENTS_GROUP);
	if (impl->group_id < 0)
		throw Error(EPROTO, "the mcp kernel module has no '" MCP_GENL_EVENTS_GROUP
				    "' multicast group: libmcp and the module do not match");

	// nlctrl's "notify" group tells us when the module goes away.
	int notify = genl_ctrl_resolve_grp(impl->sock, "nlctrl", "notify");

	ret = nl_socket_add_membership(impl->sock, impl->group_id);
	if (ret < 0)
		throw_nl(ret, "joining the mcp '" MCP_GENL_EVENTS_GROUP "' multicast group");
	if (notify >= 0)
		(void)nl_socket_add_membership(impl->sock, notify);

	ret = nl_socket_set_nonblocking(impl->sock);
	if (ret < 0)
		throw_nl(ret, "making the netlink socket non-blocking");
	return EventListener(std::move(impl));
}

int EventListener::fd() const noexcept
{
	return impl_ ? nl_socket_get_fd(impl_->sock) : -1;
}

int EventListener::family_id() const noexcept
{
	return impl_ ? impl_->family_id : -1;
}

int EventListener::group_id() const noexcept
{
	return impl_ ? impl_->group_id : -1;
}

std::uint64_t EventListener::overruns() const noexcept
{
	return impl_ ? impl_->overruns : 0;
}

bool EventListener::receive_one()
{
	const int fd = nl_socket_get_fd(impl_->sock);
	struct iovec iov = {impl_->buf.data(), impl_->buf.size()};
	struct msghdr mh = {};

	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;

	ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return false;
		if (errno == ENOBUFS) {
			// The kernel dropped messages: our receive buffer was full.
			impl_->overruns++;
			return true;
		}
		throw Error(errno, detail::events_error_message(errno, "receiving mcp events"));
	}
	if (mh.msg_flags & MSG_TRUNC)
		throw Error(EMSGSIZE, "an mcp event did not fit the receive buffer");

	auto len = static_cast<std::size_t>(n);
	auto *nlh = reinterpret_cast<struct nlmsghdr *>(impl_->buf.data());
	int remaining = static_cast<int>(len);

	for (; nlmsg_ok(nlh, remaining); nlh = nlmsg_next(nlh, &remaining)) {
		detail::EventParse res =
			detail::parse_event_message(nlh, static_cast<std::size_t>(remaining),
						    impl_->family_id);
		if (res.family_removed)
			throw Error(ENODEV, detail::events_error_message(ENODEV, ""));
		if (res.event)
			impl_->pending.push_back(std::move(*res.event));
	}
	return true;
}

std::optional<PlaceEvent> EventListener::next(std::chrono::milliseconds timeout)
{
	if (!impl_)
		throw Error(EBADF, "EventListener::next() on a listener that is not open");

	using clock = std::chrono::steady_clock;
	const bool forever = timeout.count() < 0;
	const auto deadline = clock::now() + (forever ? std::chrono::milliseconds(0) : timeout);

	for (;;) {
		if (!impl_->pending.empty()) {
			PlaceEvent ev = std::move(impl_->pending.front());

			impl_->pending.pop_front();
			return ev;
		}
		if (receive_one())
			continue;

		int wait_ms = -1;
		if (!forever) {
			auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
				deadline - clock::now());
			if (left.count() <= 0)
				return std::nullopt;
			wait_ms = static_cast<int>(std::min<std::int64_t>(left.count(), 1 << 30));
		}
		struct pollfd pfd = {nl_socket_get_fd(impl_->sock), POLLIN, 0};
		int ret = poll(&pfd, 1, wait_ms);
		if (ret < 0 && errno != EINTR)
			throw Error(errno, detail::events_error_message(errno, "waiting for mcp events"));
		if (ret < 0)
			return std::nullopt; // interrupted by a signal: let the caller look
	}
}

} // namespace mcp

// ---- C API ----------------------------------------------------------------

struct mcp_events {
	mcp::EventListener listener;
};

namespace {

int events_fail(const char *fn, int errnum, const char *msg) noexcept
{
	return mcp::detail::c_api_fail(errnum, msg ? msg : fn);
}

} // namespace

extern "C" {

int mcp_events_open(struct mcp_events **out)
{
	if (!out)
		return events_fail("mcp_events_open", EINVAL, "mcp_events_open: out is NULL");
	try {
		auto handle = std::make_unique<mcp_events>();
		handle->listener = mcp::EventListener::open();
		*out = handle.release();
		return 0;
	} catch (const mcp::Error &e) {
		return events_fail("mcp_events_open", e.errnum(), e.what());
	} catch (const std::bad_alloc &) {
		return events_fail("mcp_events_open", ENOMEM, "out of memory");
	} catch (...) {
		return events_fail("mcp_events_open", EIO, "unexpected internal error in libmcp");
	}
}

int mcp_events_fd(const struct mcp_events *events)
{
	if (!events)
		return events_fail("mcp_events_fd", EINVAL, "mcp_events_fd: events is NULL");
	return events->listener.fd();
}

int mcp_events_next(struct mcp_events *events, int timeout_ms, struct mcp_event_place *out)
{
	if (!events || !out || out->size < sizeof(struct mcp_event_place))
		return events_fail("mcp_events_next", EINVAL,
				   "mcp_events_next: events or out is NULL, or out->size is too small");
	try {
		auto ev = events->listener.next(std::chrono::milliseconds(timeout_ms));
		if (!ev)
			return 0;

		const uint32_t size = out->size;
		std::memset(out, 0, sizeof(*out));
		out->size = size;
		out->pid = ev->pid;
		out->from_node = ev->from_node;
		out->to_node = ev->to_node;
		out->reason = ev->reason;
		out->origin = static_cast<uint32_t>(ev->origin);
		out->timestamp_ns = ev->timestamp_ns;
		std::size_t n = std::min(ev->comm.size(), sizeof(out->comm) - 1);
		std::memcpy(out->comm, ev->comm.data(), n);
		return 1;
	} catch (const mcp::Error &e) {
		return events_fail("mcp_events_next", e.errnum(), e.what());
	} catch (const std::bad_alloc &) {
		return events_fail("mcp_events_next", ENOMEM, "out of memory");
	} catch (...) {
		return events_fail("mcp_events_next", EIO, "unexpected internal error in libmcp");
	}
}

uint64_t mcp_events_overruns(const struct mcp_events *events)
{
	return events ? events->listener.overruns() : 0;
}

void mcp_events_close(struct mcp_events *events)
{
	std::unique_ptr<mcp_events> owned(events);
}

const char *mcp_place_origin_name(uint32_t origin)
{
	return mcp::to_string(static_cast<mcp::PlaceOrigin>(origin));
}

} // extern "C"
