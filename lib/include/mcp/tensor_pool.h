/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libmcp: the C API of the tensor pool, over mcp::TensorPool of
 * <mcp/tensor_pool.hpp>.  Included by <mcp/mcp.h>; same conventions (0 or
 * a negative errno, mcp_strerror_last() for the sentence).
 * Documentation/tensor-pool.rst has the long form.
 */
#ifndef MCP_TENSOR_POOL_H
#define MCP_TENSOR_POOL_H

#include <stddef.h>
#include <stdint.h>

#ifndef MCP_EXPORT
#if defined(__GNUC__)
#define MCP_EXPORT __attribute__((visibility("default")))
#else
#define MCP_EXPORT
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* mcp_pool_opts.flags */
#define MCP_POOL_NO_HUGEPAGES	(1U << 0)	/* never try huge pages */
#define MCP_POOL_OPT_ALL	0x1U

/* A running pool server (its own thread).  Opaque. */
struct mcp_pool_server;

/* One process's attachment to a pool.  Opaque; one thread at a time. */
struct mcp_pool_client;

/**
 * struct mcp_pool_opts - how mcp_pool_serve() builds the pool
 * @size:		sizeof(struct mcp_pool_opts)
 * @flags:		MCP_POOL_*
 * @region_bytes:	0 = 256 MiB
 * @slots:		0 = 128
 * @max_clients:	clients attached at once; 0 = 64
 */
struct mcp_pool_opts {
	uint32_t size;
	uint32_t flags;
	uint64_t region_bytes;
	uint32_t slots;
	uint32_t max_clients;
};

/**
 * struct mcp_tensor - one tensor of a pool
 * @id:		the pool's name for it
 * @offset:	where it starts in the region
 * @size:	the bytes asked for
 * @capacity:	the bytes of its slots
 * @from:	the client that handed it over; 0 when allocated here
 */
struct mcp_tensor {
	uint64_t id;
	uint64_t offset;
	uint64_t size;
	uint64_t capacity;
	uint32_t from;
	uint32_t reserved;
};

/* What a pool holds (mcp_pool_stat(), mcp_pool_query()). */
struct mcp_pool_info {
	uint64_t slot_bytes;
	uint32_t slots;
	uint32_t slots_used;
	uint32_t clients;
	uint32_t tensors;
	uint32_t hugepages;	/* 1: the region is in 2 MiB huge pages */
	uint32_t reserved;
};

/**
 * mcp_pool_serve() - create a pool and serve it at @path from a new thread
 * @path:	a socket file, or "@name" in the abstract namespace
 * @opts:	NULL for the defaults
 * @out:	on success, the server; stop it with mcp_pool_server_stop()
 *
 * Without reserved huge pages the pool uses normal pages and a warning
 * naming /proc/sys/vm/nr_hugepages is printed once on stderr.
 *
 * Return: 0, or -EADDRINUSE (something listens at @path), -EINVAL (bad
 * options), or another negative errno.
 */
MCP_EXPORT int mcp_pool_serve(const char *path, const struct mcp_pool_opts *opts,
			      struct mcp_pool_server **out);

/* mcp_pool_server_stop() - stop serving, disconnect all, free (NULL is fine). */
MCP_EXPORT void mcp_pool_server_stop(struct mcp_pool_server *server);

/**
 * mcp_pool_attach() - attach to the pool at @path and map its region
 * @path:	as for mcp_pool_serve()
 * @out:	on success, the client; release it with mcp_pool_detach()
 *
 * Return: 0, or -ENOENT / -ECONNREFUSED (no server at @path), -EPROTO
 * (another protocol version), -EUSERS (the pool has its maximum of
 * clients), or another negative errno.
 */
MCP_EXPORT int mcp_pool_attach(const char *path, struct mcp_pool_client **out);

/* mcp_pool_detach() - detach; the server frees this client's tensors. */
MCP_EXPORT void mcp_pool_detach(struct mcp_pool_client *client);

/* mcp_pool_client_id() - the id peers pass to mcp_pool_send(). */
MCP_EXPORT uint32_t mcp_pool_client_id(const struct mcp_pool_client *client);

/**
 * mcp_pool_alloc() - allocate a tensor of @bytes
 * Return: 0, or -ENOSPC (pool full), -E2BIG (larger than the pool),
 * -EINVAL (0 bytes or NULL).
 */
MCP_EXPORT int mcp_pool_alloc(struct mcp_pool_client *client, uint64_t bytes,
			      struct mcp_tensor *out);

/**
 * mcp_pool_free() - free a tensor this client owns
 * Return: 0, or -ENOENT (no such tensor: double free), -EPERM (another
 * client's).
 */
MCP_EXPORT int mcp_pool_free(struct mcp_pool_client *client, const struct mcp_tensor *tensor);

/**
 * mcp_pool_data() - the tensor's bytes in this process's mapping
 * Return: a pointer to @tensor->size bytes, or NULL when @tensor does not
 * lie inside the region (mcp_strerror_last() says why).
 */
MCP_EXPORT void *mcp_pool_data(struct mcp_pool_client *client, const struct mcp_tensor *tensor);

/**
 * mcp_pool_send() - hand @tensor to client @peer; it is then @peer's
 *
 * An enqueue in the pool's shared memory and, if @peer sleeps, a futex
 * wake-up; the server is not involved.
 *
 * Return: 0, or -ESRCH (no such client), -ENOENT, -EPERM, -EAGAIN (the
 * peer's queue is full: it does not receive).
 */
MCP_EXPORT int mcp_pool_send(struct mcp_pool_client *client, const struct mcp_tensor *tensor,
			     uint32_t peer);

/**
 * mcp_pool_receive() - the next tensor handed to this client
 * @timeout_ms:	-1 waits forever
 *
 * Polls the queue for the client's spin time (mcp_pool_set_spin()), then
 * sleeps on a futex.
 *
 * Return: 0, or -ETIMEDOUT, -ECONNRESET (the server went away), or another
 * negative errno.
 */
MCP_EXPORT int mcp_pool_receive(struct mcp_pool_client *client, int timeout_ms,
				struct mcp_tensor *out);

/**
 * mcp_pool_set_spin() - how long mcp_pool_receive() polls before it sleeps
 * @spin_us:	microseconds; 0 (the default) sleeps at once
 * Return: 0, or -EINVAL (NULL).
 */
MCP_EXPORT int mcp_pool_set_spin(struct mcp_pool_client *client, uint32_t spin_us);

/* mcp_pool_stat() - the pool's state, through @client. */
MCP_EXPORT int mcp_pool_stat(struct mcp_pool_client *client, struct mcp_pool_info *out);

/* mcp_pool_query() - the state of the pool at @path, without attaching. */
MCP_EXPORT int mcp_pool_query(const char *path, struct mcp_pool_info *out);

#ifdef __cplusplus
}
#endif

#endif /* MCP_TENSOR_POOL_H */
