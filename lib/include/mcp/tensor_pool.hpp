// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp: mcp::TensorPool, a pool of tensor buffers that several processes
// share.  A server creates one memory region (huge pages when reserved),
// listens on a Unix socket and passes the region's memfd to every client
// that attaches; clients allocate tensors in it, hand them to each other
// by id and read them in place.  Included by <mcp/mcp.hpp>.
//
// Errors throw mcp::Error.  Documentation/tensor-pool.rst has the long
// form, the protocol and the error list.
#ifndef MCP_TENSOR_POOL_HPP
#define MCP_TENSOR_POOL_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <mcp/mcp.hpp>

namespace mcp {

// How TensorPool::serve() builds the pool.
struct PoolOptions {
	std::uint64_t region_bytes = 256ULL << 20;	// slots * slot bytes
	std::uint32_t slots = 128;			// 2 MiB slots by default
	// Clients attached at once (each has a queue in the control area).
	std::uint32_t max_clients = 64;
	// Never try huge pages (tests of the fallback; hosts where hugetlb
	// memory is reserved for something else).
	bool no_hugepages = false;
	// Receives the warning when huge pages are not used.  Empty: printed
	// once per process on stderr.
	std::function<void(const std::string &)> warn;
};

// A tensor: @size bytes at @offset of the region, in whole slots.
struct Tensor {
	std::uint64_t id = 0;
	std::uint64_t offset = 0;
	std::uint64_t size = 0;		// the bytes asked for
	std::uint64_t capacity = 0;	// the slots it holds, in bytes
	std::uint32_t from = 0;		// the client that handed it over; 0 if allocated
};

// What a pool holds at one moment.
struct PoolStat {
	std::uint64_t slot_bytes = 0;
	std::uint32_t slots = 0;
	std::uint32_t slots_used = 0;
	std::uint32_t clients = 0;	// attached clients
	std::uint32_t tensors = 0;
	bool hugepages = false;

	std::uint64_t region_bytes() const noexcept { return slot_bytes * slots; }
	std::uint32_t slots_free() const noexcept { return slots - slots_used; }
};

// A running pool server: owns the region, the socket and the thread that
// serves it.  Destruction stops the thread, disconnects every client and
// removes the socket file.  Move-only.
class MCP_EXPORT TensorPoolServer {
public:
	TensorPoolServer(TensorPoolServer &&) noexcept;
	TensorPoolServer &operator=(TensorPoolServer &&) noexcept;
	~TensorPoolServer();

	const std::string &path() const noexcept;
	bool hugepages() const noexcept;
	// Why huge pages are not used; empty when they are.
	const std::string &warning() const noexcept;
	PoolStat stat() const;

	struct Impl;

private:
	explicit TensorPoolServer(std::unique_ptr<Impl> impl) noexcept;
	std::unique_ptr<Impl> impl_;
	friend struct TensorPool;
};

// One process's attachment to a pool: the socket and the region mapped
// read-write.  send() and receive() go through the region's control area,
// not the server.  Not thread-safe (one thread at a time).  Move-only;
// destruction detaches, and the server frees the tensors it still owns.
class MCP_EXPORT TensorPoolClient {
public:
	TensorPoolClient(TensorPoolClient &&) noexcept;
	TensorPoolClient &operator=(TensorPoolClient &&) noexcept;
	~TensorPoolClient();

	// The id the server gave this client; peers send() to it.
	std::uint32_t id() const noexcept;
	const std::string &path() const noexcept;
	bool hugepages() const noexcept;
	std::uint64_t slot_bytes() const noexcept;
	// The mapped region (e.g. for MCP_IOC_BO_USERPTR) and its memfd.
	std::span<std::byte> region() const noexcept;
	int memfd() const noexcept;

	// A tensor of @bytes.  Throws mcp::Error: ENOSPC (pool full), E2BIG
	// (larger than the pool), EINVAL (0 bytes).
	Tensor alloc(std::uint64_t bytes);
	// Throws mcp::Error: ENOENT (no such tensor: double free), EPERM (it
	// belongs to another client).
	void free(const Tensor &t);
	// The tensor's bytes, in place.  Throws mcp::Error(ERANGE) when @t
	// does not lie inside the region.
	std::span<std::byte> span(const Tensor &t) const;
	// Hands @t to client @peer, which receive()s it; @t is then @peer's.
	// Throws mcp::Error: ESRCH (no such peer), ENOENT, EPERM, EAGAIN
	// (the peer's queue is full).
	void send(const Tensor &t, std::uint32_t peer);
	// The next tensor handed to this client, waiting at most @timeout
	// (none: forever); nullopt when the time ran out.  It spins for
	// spin() before it sleeps on the futex.  Throws ECONNRESET when the
	// server went away.
	std::optional<Tensor> receive(std::optional<std::chrono::milliseconds> timeout = {});
	// How long receive() polls the queue before it sleeps (default 0:
	// sleep at once).  Spinning trades a core for the wake-up latency.
	void set_spin(std::chrono::microseconds spin) noexcept;
	std::chrono::microseconds spin() const noexcept;
	PoolStat stat();

	struct Impl;

private:
	explicit TensorPoolClient(std::unique_ptr<Impl> impl) noexcept;
	std::unique_ptr<Impl> impl_;
	friend struct TensorPool;
};

// Entry points.  @path is a socket file, or "@name" for a name in the
// abstract namespace.
struct MCP_EXPORT TensorPool {
	// The version of the wire protocol (Documentation/tensor-pool.rst).
	static constexpr std::uint32_t protocol_version = 2;

	// Creates the region, binds @path and serves it from a new thread.
	// Throws mcp::Error: EADDRINUSE (a pool is served at @path already),
	// EINVAL (bad options), or the errno of the failed call.
	static TensorPoolServer serve(std::string_view path, PoolOptions options = {});
	// Attaches to the pool at @path.  Throws mcp::Error: ENOENT or
	// ECONNREFUSED (no server at @path), EPROTO (another protocol version),
	// EUSERS (PoolOptions::max_clients are attached).
	static TensorPoolClient attach(std::string_view path);
	// The pool's state without attaching (not counted as a client).
	static PoolStat stat(std::string_view path);
};

} // namespace mcp

#endif // MCP_TENSOR_POOL_HPP
