// SPDX-License-Identifier: LGPL-2.1-or-later
// The C API of the tensor pool (<mcp/tensor_pool.h>) over mcp::TensorPool.
#include <cerrno>
#include <new>
#include <optional>

#include <mcp/tensor_pool.h>
#include <mcp/tensor_pool.hpp>

#include "internal.hpp"

struct mcp_pool_server {
	mcp::TensorPoolServer server;
};

struct mcp_pool_client {
	mcp::TensorPoolClient client;
};

namespace {

mcp::Tensor tensor_from_c(const struct mcp_tensor &c)
{
	return {c.id, c.offset, c.size, c.capacity, c.from};
}

void tensor_to_c(const mcp::Tensor &t, struct mcp_tensor &c)
{
	c = {};
	c.id = t.id;
	c.offset = t.offset;
	c.size = t.size;
	c.capacity = t.capacity;
	c.from = t.from;
}

void stat_to_c(const mcp::PoolStat &s, struct mcp_pool_info &c)
{
	c = {};
	c.slot_bytes = s.slot_bytes;
	c.slots = s.slots;
	c.slots_used = s.slots_used;
	c.clients = s.clients;
	c.tensors = s.tensors;
	c.hugepages = s.hugepages;
}

} // namespace

extern "C" {

int mcp_pool_serve(const char *path, const struct mcp_pool_opts *opts, struct mcp_pool_server **out)
{
	if (!path || !out || (opts && (opts->size < sizeof(*opts) || (opts->flags & ~MCP_POOL_OPT_ALL))))
		return mcp::detail::c_api_fail(EINVAL, "mcp_pool_serve: path or out is NULL, or "
						       "opts->size is too small or has unknown flags");
	return mcp::detail::c_api_guard([&] {
		mcp::PoolOptions o;

		if (opts) {
			if (opts->region_bytes)
				o.region_bytes = opts->region_bytes;
			if (opts->slots)
				o.slots = opts->slots;
			if (opts->max_clients)
				o.max_clients = opts->max_clients;
			o.no_hugepages = opts->flags & MCP_POOL_NO_HUGEPAGES;
		}
		*out = new mcp_pool_server{mcp::TensorPool::serve(path, std::move(o))};
	});
}

void mcp_pool_server_stop(struct mcp_pool_server *server)
{
	delete server;
}

int mcp_pool_attach(const char *path, struct mcp_pool_client **out)
{
	if (!path || !out)
		return mcp::detail::c_api_fail(EINVAL, "mcp_pool_attach: path or out is NULL");
	return mcp::detail::c_api_guard([&] { *out = new mcp_pool_client{mcp::TensorPool::attach(path)}; });
}

void mcp_pool_detach(struct mcp_pool_client *client)
{
	delete client;
}

uint32_t mcp_pool_client_id(const struct mcp_pool_client *client)
{
	return client ? client->client.id() : 0;
}

int mcp_pool_alloc(struct mcp_pool_client *client, uint64_t bytes, struct mcp_tensor *out)
{
	if (!client || !out)
		return mcp::detail::c_api_fail(EINVAL, "mcp_pool_alloc: client or out is NULL");
	return mcp::detail::c_api_guard([&] { tensor_to_c(client->client.alloc(bytes), *out); });
}

int mcp_pool_free(struct mcp_pool_client *client, const struct mcp_tensor *tensor)
{
	if (!client || !tensor)
		return mcp::detail::c_api_fail(EINVAL, "mcp_pool_free: client or tensor is NULL");
	return mcp::detail::c_api_guard([&] { client->client.free(tensor_from_c(*tensor)); });
}

void *mcp_pool_data(struct mcp_pool_client *client, const struct mcp_tensor *tensor)
{
	void *data = nullptr;

	if (!client || !tensor) {
		mcp::detail::c_api_fail(EINVAL, "mcp_pool_data: client or tensor is NULL");
		return nullptr;
	}
	mcp::detail::c_api_guard([&] { data = client->client.span(tensor_from_c(*tensor)).data(); });
	return data;
}

int mcp_pool_send(struct mcp_pool_client *client, const struct mcp_tensor *tensor, uint32_t peer)
{
	if (!client || !tensor)
		return mcp::detail::c_api_fail(EINVAL, "mcp_pool_send: client or tensor is NULL");
	return mcp::detail::c_api_guard([&] { client->client.send(tensor_from_c(*tensor), peer); });
}

int mcp_pool_receive(struct mcp_pool_client *client, int timeout_ms, struct mcp_tensor *out)
{
	if (!client || !out || timeout_ms < -1)
		return mcp::detail::c_api_fail(EINVAL, "mcp_pool_receive: client or out is NULL, or "
						       "timeout_ms is below -1");
	std::optional<mcp::Tensor> t;
	int err = mcp::detail::c_api_guard([&] {
		std::optional<std::chrono::milliseconds> timeout;
		if (timeout_ms >= 0)
			timeout = std::chrono::milliseconds(timeout_ms);
		t = client->client.receive(timeout);
	});
	if (err)
		return err;
	if (!t)
		return mcp::detail::c_api_fail(ETIMEDOUT, "mcp_pool_receive: no tensor arrived in time");
	tensor_to_c(*t, *out);
	return 0;
}

int mcp_pool_set_spin(struct mcp_pool_client *client, uint32_t spin_us)
{
	if (!client)
		return mcp::detail::c_api_fail(EINVAL, "mcp_pool_set_spin: client is NULL");
	client->client.set_spin(std::chrono::microseconds(spin_us));
	return 0;
}

int mcp_pool_stat(struct mcp_pool_client *client, struct mcp_pool_info *out)
{
	if (!client || !out)
		return mcp::detail::c_api_fail(EINVAL, "mcp_pool_stat: client or out is NULL");
	return mcp::detail::c_api_guard([&] { stat_to_c(client->client.stat(), *out); });
}

int mcp_pool_query(const char *path, struct mcp_pool_info *out)
{
	if (!path || !out)
		return mcp::detail::c_api_fail(EINVAL, "mcp_pool_query: path or out is NULL");
	return mcp::detail::c_api_guard([&] { stat_to_c(mcp::TensorPool::stat(path), *out); });
}

} // extern "C"
