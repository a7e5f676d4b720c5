// SPDX-License-Identifier: LGPL-2.1-or-later
// The control area of mcp::TensorPool (Documentation/tensor-pool.rst,
// "Shared memory"): the memory after the tensor slots in the pool's memfd,
// where clients hand tensors to each other without the server.  It holds
// a descriptor per slot (the tensor that starts there and an ownership
// word) and a table of clients, each with a bounded multi-producer
// single-consumer queue of tensor ids and a futex word.
//
// Every process attached can write every byte of it, so nothing here
// trusts what it reads: indices are masked or bounds-checked before use
// and a value that does not check out is dropped (counted as corrupt).
// Not installed.
#ifndef MCP_SRC_TENSOR_POOL_SHM_HPP
#define MCP_SRC_TENSOR_POOL_SHM_HPP

#include <atomic>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <ctime>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace mcp::detail::pool {

inline constexpr std::uint32_t shm_magic = 0x5150434d;	// "MCPQ"
inline constexpr std::uint32_t shm_version = 1;
inline constexpr std::uint32_t default_max_clients = 64;
inline constexpr std::uint32_t max_max_clients = 4096;
inline constexpr std::uint32_t max_queue_depth = 4096;

// Sizes and offsets (bytes from the start of the control area).
inline constexpr std::size_t header_bytes = 64;
inline constexpr std::size_t desc_bytes = 32;
inline constexpr std::size_t client_head_bytes = 192;	// three cache lines
inline constexpr std::size_t entry_bytes = 32;

// Queue entry word: tag (the queue position, 32 bits) << 32 | claim.
// claim 0: free for that position; else the producer's client id, with
// entry_commit once the payload is written.
inline constexpr std::uint32_t entry_commit = 0x80000000U;
// Client ids stay below this so that entry_commit is free.
inline constexpr std::uint32_t max_client_id = 0x7fffffffU;

// A pool's layout; both ends compute it from (slots, max_clients).
struct ShmLayout {
	std::uint32_t slots = 0;
	std::uint32_t max_clients = 0;
	std::uint32_t depth = 0;	// entries per queue, a power of two
	std::size_t desc_offset = header_bytes;
	std::size_t clients_offset = 0;
	std::size_t client_stride = 0;
	std::size_t bytes = 0;		// the control area, before rounding

	static ShmLayout of(std::uint32_t slots, std::uint32_t max_clients) noexcept
	{
		ShmLayout l;
		const std::uint32_t want = slots > 8 ? slots * 2 : 16;

		l.slots = slots;
		l.max_clients = max_clients;
		l.depth = want >= max_queue_depth ? max_queue_depth : std::bit_ceil(want);
		l.clients_offset = (header_bytes + std::size_t{slots} * desc_bytes + 63) & ~std::size_t{63};
		l.client_stride = client_head_bytes + std::size_t{l.depth} * entry_bytes;
		l.bytes = l.clients_offset + std::size_t{max_clients} * l.client_stride;
		return l;
	}
};

// The header, written once by the server; clients do not rely on it (the
// hello reply tells them the layout), it names the area for a debugger.
struct ShmHeader {
	std::uint32_t magic;
	std::uint32_t version;
	std::uint32_t slots;
	std::uint32_t max_clients;
	std::uint32_t depth;
	std::uint32_t reserved0;
	std::uint64_t slot_bytes;
	std::uint64_t desc_offset;
	std::uint64_t clients_offset;
	std::uint64_t client_stride;
	std::uint64_t reserved1;
};
static_assert(sizeof(ShmHeader) == header_bytes);

// Per slot; meaningful at a tensor's first slot.  id, size and nslots are
// written by the server before it publishes own (release); own moves
// between clients with compare-and-swap.
struct SlotDesc {
	std::uint64_t id;	// 0: no tensor starts here
	std::uint64_t size;
	std::uint32_t nslots;
	std::uint32_t reserved;
	std::uint64_t own;	// owner << 32 | in-flight receiver; 0 free
};
static_assert(sizeof(SlotDesc) == desc_bytes);

constexpr std::uint64_t own_word(std::uint32_t owner, std::uint32_t to) noexcept
{
	return std::uint64_t{owner} << 32 | to;
}
constexpr std::uint32_t own_owner(std::uint64_t w) noexcept
{
	return static_cast<std::uint32_t>(w >> 32);
}
constexpr std::uint32_t own_to(std::uint64_t w) noexcept
{
	return static_cast<std::uint32_t>(w);
}

// One queue entry.
struct QueueEntry {
	std::uint64_t word;	// tag << 32 | claim (see entry_commit)
	std::uint64_t tensor;	// the tensor's id
	std::uint32_t slot;	// its first slot
	std::uint32_t reserved0;
	std::uint64_t reserved1;
};
static_assert(sizeof(QueueEntry) == entry_bytes);

// A client's record.  id is written by the server (0: unused); tail by
// producers; head and sleeping by the receiver (sleeping also by a
// producer that wakes it).  Entries follow.
struct ClientHead {
	std::uint32_t id;
	std::uint32_t reserved0[15];
	std::uint64_t tail;		// next position to claim
	std::uint64_t reserved1[7];
	std::uint64_t head;		// next position to consume
	std::uint32_t sleeping;		// the futex word: 1 while it waits
	std::uint32_t reserved2[13];
};
static_assert(sizeof(ClientHead) == client_head_bytes);

template <typename T> std::atomic_ref<T> atomic(T &v) noexcept
{
	return std::atomic_ref<T>(v);
}

// The control area as one process maps it.
struct Shm {
	std::byte *base = nullptr;	// the control area
	ShmLayout layout;

	ShmHeader &header() const noexcept { return *reinterpret_cast<ShmHeader *>(base); }
	// @slot < layout.slots (the callers check).
	SlotDesc &desc(std::uint32_t slot) const noexcept
	{
		return reinterpret_cast<SlotDesc *>(base + layout.desc_offset)[slot];
	}
	// @index < layout.max_clients (the callers check).
	ClientHead &client(std::uint32_t index) const noexcept
	{
		return *reinterpret_cast<ClientHead *>(base + layout.clients_offset +
						       index * layout.client_stride);
	}
	QueueEntry &entry(std::uint32_t index, std::uint64_t pos) const noexcept
	{
		auto *first = reinterpret_cast<QueueEntry *>(reinterpret_cast<std::byte *>(&client(index)) +
							     client_head_bytes);
		return first[pos & (layout.depth - 1)];
	}

	// The table index of client @id, or -1.  @hint is tried first.
	int find_client(std::uint32_t id, int hint = -1) const noexcept
	{
		if (id == 0)
			return -1;
		if (hint >= 0 && static_cast<std::uint32_t>(hint) < layout.max_clients &&
		    atomic(client(static_cast<std::uint32_t>(hint)).id).load(std::memory_order_acquire) == id)
			return hint;
		for (std::uint32_t i = 0; i < layout.max_clients; i++)
			if (atomic(client(i).id).load(std::memory_order_acquire) == id)
				return static_cast<int>(i);
		return -1;
	}

	// Empties queue @index for a new client (the server, before it
	// publishes the client's id).
	void reset_queue(std::uint32_t index) const noexcept
	{
		ClientHead &c = client(index);

		atomic(c.tail).store(0, std::memory_order_relaxed);
		atomic(c.head).store(0, std::memory_order_relaxed);
		atomic(c.sleeping).store(0, std::memory_order_relaxed);
		for (std::uint64_t p = 0; p < layout.depth; p++) {
			QueueEntry &e = entry(index, p);
			e.tensor = 0;
			e.slot = 0;
			atomic(e.word).store(p << 32, std::memory_order_release);
		}
	}
};

// The tag of queue position @pos.
constexpr std::uint32_t tag_of(std::uint64_t pos) noexcept
{
	return static_cast<std::uint32_t>(pos);
}

// Claims the next entry of queue @index for producer @me: its position,
// or -EAGAIN when the queue is full (or so scribbled over that no entry
// can be claimed in a bounded number of tries).
inline std::int64_t queue_claim(const Shm &shm, std::uint32_t index, std::uint32_t me) noexcept
{
	ClientHead &c = shm.client(index);

	for (int tries = 0; tries < 1024; tries++) {
		std::uint64_t t = atomic(c.tail).load(std::memory_order_acquire);
		QueueEntry &e = shm.entry(index, t);
		std::uint64_t w = atomic(e.word).load(std::memory_order_acquire);
		const std::uint32_t tag = static_cast<std::uint32_t>(w >> 32);
		const std::uint32_t claim = static_cast<std::uint32_t>(w);

		if (tag == tag_of(t) && claim == 0) {
			if (atomic(e.word).compare_exchange_strong(w, std::uint64_t{tag} << 32 | me,
								  std::memory_order_acq_rel)) {
				atomic(c.tail).compare_exchange_strong(t, t + 1, std::memory_order_acq_rel);
				return static_cast<std::int64_t>(t & INT64_MAX);
			}
		} else if (tag == tag_of(t)) {
			// Claimed, tail not moved yet (its producer may be dead): help.
			atomic(c.tail).compare_exchange_strong(t, t + 1, std::memory_order_acq_rel);
		} else if (static_cast<std::int32_t>(tag - tag_of(t)) < 0) {
			return -EAGAIN; // still the previous lap's: full
		}
	}
	return -EAGAIN;
}

// Writes the payload of claimed position @pos and publishes it.
inline void queue_commit(const Shm &shm, std::uint32_t index, std::uint64_t pos, std::uint32_t me,
			 std::uint64_t tensor, std::uint32_t slot) noexcept
{
	QueueEntry &e = shm.entry(index, pos);

	e.tensor = tensor;
	e.slot = slot;
	atomic(e.word).store(std::uint64_t{tag_of(pos)} << 32 | me | entry_commit,
			     std::memory_order_release);
}

inline long futex(std::uint32_t *word, int op, std::uint32_t val, const timespec *timeout) noexcept
{
	return ::syscall(SYS_futex, word, op, val, timeout, nullptr, 0);
}

// Wakes the receiver of queue @index if it sleeps.  After a commit.
inline void queue_wake(const Shm &shm, std::uint32_t index) noexcept
{
	std::uint32_t &sleeping = shm.client(index).sleeping;

	std::atomic_thread_fence(std::memory_order_seq_cst);
	if (atomic(sleeping).load(std::memory_order_relaxed) != 0) {
		atomic(sleeping).store(0, std::memory_order_relaxed);
		futex(&sleeping, FUTEX_WAKE, 1, nullptr);
	}
}

} // namespace mcp::detail::pool

#endif // MCP_SRC_TENSOR_POOL_SHM_HPP
