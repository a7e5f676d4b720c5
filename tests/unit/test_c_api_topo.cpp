// SPDX-License-Identifier: GPL-2.0-only
// The C API's topology accessors over a synthetic snapshot.
#include <cerrno>
#include <cstring>
#include <memory>

#include <criterion/criterion.h>

#include "helpers.hpp"
#include "internal.hpp"

namespace {

struct TopoFree {
	void operator()(mcp_topo *t) const noexcept { mcp_topo_free(t); }
};
using TopoPtr = std::unique_ptr<mcp_topo, TopoFree>;

TopoPtr holes()
{
	return TopoPtr(mcp::detail::make_c_topology(mcp::Topology(
		{test::node(0, {0, 1}, 4 * test::MiB, test::MiB),
		 test::node(2, {2, 3, 130}, 8 * test::MiB, 2 * test::MiB)},
		{10, 21, 31, 10}, 5, 192)));
}

} // namespace

Test(c_api_topo, counts_ids_and_memory)
{
	TopoPtr t = holes();
	unsigned id = 99;
	uint64_t total = 0, free_bytes = 0;

	cr_expect_eq(mcp_topo_nr_nodes(t.get()), 2u);
	cr_expect_eq(mcp_topo_cpus_online(t.get()), 5u);
	cr_expect_eq(mcp_topo_nr_cpu_ids(t.get()), 192u);
	cr_expect_eq(mcp_topo_node_id(t.get(), 1, &id), 0);
	cr_expect_eq(id, 2u);
	cr_expect_eq(mcp_topo_node_id(t.get(), 2, &id), -EINVAL);
	cr_expect_eq(mcp_topo_node_memory(t.get(), 1, &total, &free_bytes), 0);
	cr_expect_eq(total, 8 * test::MiB);
	cr_expect_eq(free_bytes, 2 * test::MiB);
	cr_expect_eq(mcp_topo_node_memory(t.get(), 0, nullptr, nullptr), 0);
}

Test(c_api_topo, node_cpus_sizing_protocol)
{
	TopoPtr t = holes();
	size_t n = 0;
	unsigned cpus[3] = {};

	cr_expect_eq(mcp_topo_node_cpus(t.get(), 1, nullptr, 0, &n), -ENOSPC);
	cr_expect_eq(n, 3u);
	cr_expect_eq(mcp_topo_node_cpus(t.get(), 1, cpus, 2, &n), -ENOSPC);
	cr_expect_eq(cpus[0], 0u, "nothing written on -ENOSPC");
	cr_expect_eq(mcp_topo_node_cpus(t.get(), 1, cpus, 3, &n), 0);
	cr_expect_eq(cpus[0], 2u);
	cr_expect_eq(cpus[1], 3u);
	cr_expect_eq(cpus[2], 130u);
}

Test(c_api_topo, distance_by_node_id)
{
	TopoPtr t = holes();
	unsigned d = 0;

	cr_expect_eq(mcp_topo_distance(t.get(), 0, 2, &d), 0);
	cr_expect_eq(d, 21u);
	cr_expect_eq(mcp_topo_distance(t.get(), 2, 0, &d), 0);
	cr_expect_eq(d, 31u);
	cr_expect_eq(mcp_topo_distance(t.get(), 0, 1, &d), -EINVAL);
	cr_expect(std::strstr(mcp_strerror_last(), "no online NUMA node 1") != nullptr,
		  "%s", mcp_strerror_last());
}
