// SPDX-License-Identifier: GPL-2.0-only
// Decoding MCP_IOC_GET_TOPOLOGY's arrays into mcp::Topology, and the
// size-query/ENOSPC/retry loop, on synthetic data (no kernel needed).
#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <criterion/criterion.h>

#include "helpers.hpp"
#include "internal.hpp"

using mcp::detail::decode_topology;
using std::uint32_t;
using std::uint64_t;

namespace {

// The arrays the kernel would fill, built from per-node CPU lists.
struct Raw {
	std::vector<mcp_node_info> nodes;
	std::vector<uint64_t> masks;
	std::vector<uint32_t> distances;
	uint32_t words = 1;

	Raw(std::vector<std::pair<uint32_t, std::vector<unsigned>>> spec,
	    std::vector<uint32_t> dist, uint32_t cpu_words)
		: distances(std::move(dist)), words(cpu_words)
	{
		masks.assign(spec.size() * words, 0);
		for (std::size_t i = 0; i < spec.size(); i++) {
			nodes.push_back({spec[i].first,
					 static_cast<uint32_t>(spec[i].second.size()),
					 (i + 1) * 1000 * test::MiB, (i + 1) * 100 * test::MiB});
			for (unsigned cpu : spec[i].second)
				masks[i * words + cpu / 64] |= uint64_t{1} << (cpu % 64);
		}
	}

	mcp::Topology decode(uint32_t online = 0, uint32_t ids = 0) const
	{
		return decode_topology(nodes, masks, words, distances, online, ids);
	}
};

// Runs @fn and returns the errno of the mcp::Error it throws (0: none).
template <typename Fn>
int thrown_errno(Fn &&fn)
{
	try {
		fn();
	} catch (const mcp::Error &e) {
		return e.errnum();
	}
	return 0;
}

} // namespace

Test(topology_decode, one_node)
{
	Raw raw({{0, {0, 1, 2, 3}}}, {10}, 1);
	mcp::Topology t = raw.decode(4, 4);

	cr_assert_eq(t.nodes().size(), 1u);
	cr_expect_eq(t.nodes()[0].id, 0u);
	cr_expect(t.nodes()[0].cpus == (std::vector<unsigned>{0, 1, 2, 3}));
	cr_expect_eq(t.nodes()[0].mem_total_bytes, 1000 * test::MiB);
	cr_expect_eq(t.nodes()[0].mem_free_bytes, 100 * test::MiB);
	cr_expect_eq(t.distance(0, 0), 10u);
	cr_expect_eq(t.cpus_online(), 4u);
	cr_expect_eq(t.nr_cpu_ids(), 4u);
}

Test(topology_decode, two_nodes)
{
	Raw raw({{0, {0, 1}}, {1, {2, 3}}}, {10, 21, 21, 10}, 1);
	mcp::Topology t = raw.decode(4, 4);

	cr_assert_eq(t.nodes().size(), 2u);
	cr_expect(t.nodes()[0].cpus == (std::vector<unsigned>{0, 1}));
	cr_expect(t.nodes()[1].cpus == (std::vector<unsigned>{2, 3}));
	cr_expect_eq(t.nodes()[1].mem_total_bytes, 2000 * test::MiB);
	cr_expect_eq(t.distance(0, 1), 21u);
	cr_expect_eq(t.distance(1, 0), 21u);
	cr_expect_eq(t.distance(1, 1), 10u);
}

Test(topology_decode, four_nodes_asymmetric_distances)
{
	// Row-major, deliberately asymmetric: d(a,b) != d(b,a).
	std::vector<uint32_t> d = {
		10, 16, 22, 28,
		28, 10, 16, 22,
		22, 28, 10, 16,
		16, 22, 28, 10,
	};
	Raw raw({{0, {0}}, {1, {1}}, {2, {2}}, {3, {3}}}, d, 1);
	mcp::Topology t = raw.decode(4, 4);

	cr_assert_eq(t.nodes().size(), 4u);
	for (unsigned a = 0; a < 4; a++)
		for (unsigned b = 0; b < 4; b++)
			cr_expect_eq(t.distance(a, b), d[a * 4 + b], "d(%u,%u)", a, b);
	cr_expect_eq(t.distance(0, 1), 16u);
	cr_expect_eq(t.distance(1, 0), 28u);
}

Test(topology_decode, node_id_holes)
{
	Raw raw({{0, {0, 1}}, {2, {2, 3}}}, {10, 21, 21, 10}, 1);
	mcp::Topology t = raw.decode(4, 4);

	cr_assert_eq(t.nodes().size(), 2u);
	cr_expect_eq(t.nodes()[1].id, 2u);
	cr_expect_eq(t.distance(0, 2), 21u);
	cr_expect_eq(t.distance(2, 2), 10u);
	cr_expect_null(t.find(1));
	cr_assert_not_null(t.find(2));
	cr_expect(t.find(2)->cpus == (std::vector<unsigned>{2, 3}));
	cr_expect_eq(thrown_errno([&] { (void)t.distance(0, 1); }), EINVAL);
}

Test(topology_decode, cpus_beyond_64_up_to_4095)
{
	// 4096 CPU ids: 64 words per node row.
	std::vector<unsigned> a = {0, 63, 64, 127, 128, 1000, 4095};
	std::vector<unsigned> b = {65, 2047, 2048, 4094};
	Raw raw({{0, a}, {1, b}}, {10, 20, 20, 10}, 64);
	mcp::Topology t = raw.decode(11, 4096);

	cr_expect(t.nodes()[0].cpus == a);
	cr_expect(t.nodes()[1].cpus == b);
	cr_expect_eq(t.nr_cpu_ids(), 4096u);
}

Test(topology_decode, row_stride_is_cpu_words)
{
	// Two words per row: node 1's first CPU is in word 2 of the array.
	Raw raw({{0, {1}}, {1, {64 + 5}}}, {10, 21, 21, 10}, 2);
	cr_expect_eq(raw.masks.size(), 4u);
	cr_expect_eq(raw.masks[3], uint64_t{1} << 5);
	mcp::Topology t = raw.decode();
	cr_expect(t.nodes()[0].cpus == (std::vector<unsigned>{1}));
	cr_expect(t.nodes()[1].cpus == (std::vector<unsigned>{69}));
}

Test(topology_decode, zero_nodes)
{
	mcp::Topology t = decode_topology({}, {}, 0, {}, 0, 0);
	cr_expect(t.nodes().empty());
}

Test(topology_decode, truncated_arrays_are_eproto)
{
	Raw raw({{0, {0}}, {1, {1}}}, {10, 21, 21, 10}, 1);
	std::vector<uint32_t> short_dist = {10, 21, 21};
	std::vector<uint64_t> short_masks = {1};

	cr_expect_eq(thrown_errno([&] {
		decode_topology(raw.nodes, raw.masks, 1, short_dist, 2, 2);
	}), EPROTO);
	cr_expect_eq(thrown_errno([&] {
		decode_topology(raw.nodes, short_masks, 1, raw.distances, 2, 2);
	}), EPROTO);
}

Test(topology_decode, duplicate_node_is_eproto)
{
	Raw raw({{1, {0}}, {1, {1}}}, {10, 21, 21, 10}, 1);
	cr_expect_eq(thrown_errno([&] { raw.decode(); }), EPROTO);
}

Test(topology, constructor_sorts_nodes_and_permutes_matrix)
{
	// Node 2 first: d(2,0) = 30, d(0,2) = 40.
	mcp::Topology t({test::node(2, {2}, 0, 0), test::node(0, {0}, 0, 0)},
			{10, 30, 40, 11}, 2, 3);

	cr_expect_eq(t.nodes()[0].id, 0u);
	cr_expect_eq(t.nodes()[1].id, 2u);
	cr_expect_eq(t.distance(2, 0), 30u);
	cr_expect_eq(t.distance(0, 2), 40u);
	cr_expect_eq(t.distance(0, 0), 11u);
	cr_expect_eq(t.distance_at(0, 1), 40u);
}

Test(topology, constructor_rejects_bad_matrix)
{
	cr_expect_eq(thrown_errno([] {
		mcp::Topology({test::node(0, {0}, 0, 0)}, {10, 20}, 1, 1);
	}), EINVAL);
}

// ---- the retry loop, against a fake kernel ---------------------------------

namespace {

// A fake MCP_IOC_GET_TOPOLOGY that follows the uapi contract for the
// topology @raw; @grow_after calls, a third node "comes online".
struct FakeKernel {
	Raw raw;
	int calls = 0;
	int grow_after = -1;

	int operator()(mcp_topology &t)
	{
		calls++;
		if (t.size != sizeof(t) || t.flags || t.reserved ||
		    t.node_info_size != sizeof(mcp_node_info))
			return -EINVAL;
		if (calls == grow_after) {
			raw = Raw({{0, {0}}, {1, {1}}, {4, {130}}},
				  {10, 21, 31, 21, 10, 31, 31, 31, 10}, 3);
		}
		auto n = static_cast<uint32_t>(raw.nodes.size());
		t.nr_nodes = n;
		t.nr_cpu_words = raw.words;
		t.nr_cpus_online = n;
		t.nr_cpu_ids = raw.words * 64;
		if (t.nodes_cap < n || t.cpumask_words < raw.words)
			return -ENOSPC;
		auto *nodes = reinterpret_cast<mcp_node_info *>(t.nodes_ptr);
		auto *masks = reinterpret_cast<uint64_t *>(t.cpumasks_ptr);
		auto *dist = reinterpret_cast<uint32_t *>(t.distances_ptr);
		std::copy(raw.nodes.begin(), raw.nodes.end(), nodes);
		std::copy(raw.masks.begin(), raw.masks.end(), masks);
		std::copy(raw.distances.begin(), raw.distances.end(), dist);
		return 0;
	}
};

} // namespace

Test(topology_fetch, asks_sizes_then_reads)
{
	FakeKernel k{Raw({{0, {0, 1}}, {1, {2, 3}}}, {10, 21, 21, 10}, 1)};
	mcp::Topology t = mcp::detail::fetch_topology(std::ref(k), "/dev/mcp");

	cr_expect_eq(k.calls, 2);
	cr_assert_eq(t.nodes().size(), 2u);
	cr_expect(t.nodes()[1].cpus == (std::vector<unsigned>{2, 3}));
	cr_expect_eq(t.distance(0, 1), 21u);
}

Test(topology_fetch, retries_when_a_node_comes_online)
{
	FakeKernel k{Raw({{0, {0}}, {1, {1}}}, {10, 21, 21, 10}, 1)};
	k.grow_after = 2; // the second call sees three nodes and 3 words
	mcp::Topology t = mcp::detail::fetch_topology(std::ref(k), "/dev/mcp");

	cr_expect_eq(k.calls, 3);
	cr_assert_eq(t.nodes().size(), 3u);
	cr_expect_eq(t.nodes()[2].id, 4u);
	cr_expect(t.nodes()[2].cpus == (std::vector<unsigned>{130}));
	cr_expect_eq(t.distance(4, 0), 31u);
}

Test(topology_fetch, endless_enospc_is_bounded)
{
	int calls = 0;
	auto growing = [&](mcp_topology &t) {
		calls++;
		t.nr_nodes = t.nodes_cap + 1; // never enough
		t.nr_cpu_words = 1;
		return -ENOSPC;
	};
	cr_expect_eq(thrown_errno([&] {
		mcp::detail::fetch_topology(growing, "/dev/mcp", 5);
	}), EAGAIN);
	cr_expect_eq(calls, 5);
}

Test(topology_fetch, kernel_errors_pass_through)
{
	auto efault = [](mcp_topology &) { return -EFAULT; };
	auto bogus = [](mcp_topology &t) { t.nr_nodes = 0; t.nr_cpu_words = 0; return -ENOSPC; };

	cr_expect_eq(thrown_errno([&] { mcp::detail::fetch_topology(efault, "/dev/mcp"); }), EFAULT);
	cr_expect_eq(thrown_errno([&] { mcp::detail::fetch_topology(bogus, "/dev/mcp"); }), EPROTO);
}

// ---- where a buffer's memory can come from ---------------------------------

namespace {

// The memless VM: node 0 CPU 0 + 1 GiB, node 1 CPUs 1-3 + 1 GiB, node 2
// CPUs 4-5 without memory; distances 0-1 31, 0-2 24, 1-2 17.
mcp::Topology memless_topology()
{
	return mcp::Topology({test::node(0, {0}, 1024 * test::MiB, 900 * test::MiB),
			      test::node(1, {1, 2, 3}, 1024 * test::MiB, 900 * test::MiB),
			      test::node(2, {4, 5}, 0, 0)},
			     {10, 31, 24, 31, 10, 17, 24, 17, 10}, 6, 6);
}

// The message of the mcp::Error @fn throws, "" for none.
template <typename Fn>
std::string thrown_message(Fn &&fn)
{
	try {
		fn();
	} catch (const mcp::Error &e) {
		return e.what();
	}
	return "";
}

} // namespace

Test(topology_memory, nearest_memory_node)
{
	mcp::Topology t = memless_topology();

	cr_expect_eq(mcp::detail::nearest_memory_node(t, 0), std::optional<unsigned>(0));
	cr_expect_eq(mcp::detail::nearest_memory_node(t, 1), std::optional<unsigned>(1));
	cr_expect_eq(mcp::detail::nearest_memory_node(t, 2), std::optional<unsigned>(1));
	cr_expect_eq(mcp::detail::nearest_memory_node(t, 3), std::nullopt);
}

// Equal distances: the lowest id, as the module's mcp_mem_node() takes.
Test(topology_memory, nearest_memory_node_ties_take_the_lowest_id)
{
	mcp::Topology t({test::node(1, {0}, test::MiB, 0), test::node(3, {1}, 0, 0),
			 test::node(5, {2}, test::MiB, 0)},
			{10, 20, 20, 20, 10, 20, 20, 20, 10}, 3, 3);

	cr_expect_eq(mcp::detail::nearest_memory_node(t, 3), std::optional<unsigned>(1));
}

Test(topology_memory, no_node_has_memory)
{
	mcp::Topology t({test::node(0, {0}, 0, 0)}, {10}, 1, 1);
	std::string msg = thrown_message([&] { mcp::detail::require_memory_node(t, 0, "x"); });

	cr_expect_eq(mcp::detail::nearest_memory_node(t, 0), std::nullopt);
	cr_expect_str_eq(msg.c_str(), "x: node 0 has no memory, and no node has");
}

Test(topology_memory, require_memory_node_messages)
{
	mcp::Topology t = memless_topology();
	std::string memless = thrown_message([&] {
		mcp::detail::require_memory_node(t, 2, "creating a buffer");
	});
	std::string offline = thrown_message([&] { mcp::detail::require_memory_node(t, 64, "x"); });

	cr_expect_eq(thrown_errno([&] { mcp::detail::require_memory_node(t, 1, "x"); }), 0);
	cr_expect_eq(thrown_errno([&] { mcp::detail::require_memory_node(t, 2, "x"); }), EINVAL);
	cr_expect_str_eq(memless.c_str(),
			 "creating a buffer: node 2 has no memory; nearest with memory: 1 "
			 "(distance 17)");
	cr_expect_str_eq(offline.c_str(),
			 "x: node 64 is not an online NUMA node; buffers can go on node 0, 1 "
			 "('mcpctl info' lists them)");
	cr_expect_eq(thrown_errno([&] { mcp::detail::require_memory_node(t, -3, "x"); }), EINVAL);
}
