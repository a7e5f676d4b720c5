// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): buffer objects, their memory, kernel and
 * user mappings, DMA mappings and dma-buf export and import: kernel BOs
 * (pages of one NUMA node, or coherent DMA memory on a device context),
 * user-pointer BOs (long-term pinned, charged to RLIMIT_MEMLOCK) and
 * imported dma-bufs.  Documentation/buffers.rst ("Kinds of BO", "Mapping
 * BOs", "Device removal") has the kinds, how each is mapped and why, and
 * their lifetime.
 *
 * Locks: mcp_bo.lock (mcp_bo.h).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpuset.h>
#include <linux/dma-buf.h>
#include <linux/dma-direct.h>
#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/hugetlb_inline.h>
#include <linux/magic.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/sched/mm.h>
#include <linux/sched/user.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmstat.h>
#include <linux/vmalloc.h>

#include "mcp_bo.h"
#include "mcp_internal.h"
#include "mcp_pci.h"

/*
 * The dma-buf symbols' namespace.  Spelled out because MODULE_IMPORT_NS()
 * took a bare word up to 6.12 and takes a string from 6.13.
 */
MODULE_INFO(import_ns, "DMA_BUF");

/* Pages a fault inserts at once: 2 MiB, within the VMA. */
#define MCP_BO_FAULT_AROUND	512

#define MCP_BO_HUGE_ORDER	(PMD_SHIFT - PAGE_SHIFT)

static struct lock_class_key mcp_bo_import_lock_key;

static struct device *mcp_bo_dev(const struct mcp_bo *bo)
{
	return &bo->mdev->pdev->dev;
}

/*
 * Neither an IOMMU nor bounce buffers stand between @dev and memory: every
 * page it is to reach must lie below its DMA limit.
 */
static bool mcp_bo_dev_direct(struct device *dev)
{
	return !device_iommu_mapped(dev) && !mcp_dma_bounces(dev);
}

/* @dev, NULL for none, addresses @size bytes at @page by itself. */
static bool mcp_bo_reachable(struct device *dev, struct page *page,
			     size_t size)
{
	return !dev || !mcp_bo_dev_direct(dev) ||
	       dma_capable(dev, phys_to_dma(dev, page_to_phys(page)), size,
			   true);
}

/*
 * -EIO when a page of @bo lies beyond what its device can address: mapping
 * it would fail (with a warning) or, worse, reach the wrong memory.
 */
static int mcp_bo_check_reach(struct mcp_bo *bo)
{
	unsigned long i;

	for (i = 0; i < bo->npages; i++)
		if (!mcp_bo_reachable(mcp_bo_dev(bo), bo->pages[i], PAGE_SIZE))
			return -EIO;
	return 0;
}

/* Memory zone a direct-mapped device with a narrow DMA mask needs first. */
static gfp_t mcp_bo_dev_zone(struct device *dev)
{
	u64 mask = dma_get_mask(dev);

	if (!mcp_bo_dev_direct(dev) || !dma_addressing_limited(dev))
		return 0;
	if (mask <= DMA_BIT_MASK(24))
		return GFP_DMA;
	if (mask <= DMA_BIT_MASK(32))
		return GFP_DMA32;
	return 0;
}

static struct mcp_bo *mcp_bo_alloc(struct mcp_dev *mdev, u32 kind, u32 flags,
				   u64 length)
{
	struct mcp_bo *bo;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT);
	if (!bo)
		return NULL;

	kref_init(&bo->ref);
	mutex_init(&bo->lock);
	bo->kind = kind;
	bo->flags = flags;
	bo->length = length;
	bo->node = NUMA_NO_NODE;
	bo->dir = DMA_BIDIRECTIONAL;
	bo->npages = length >> PAGE_SHIFT;
	atomic_set(&bo->jobs, 0);
	if (mdev) {
		mcp_dev_get(mdev);
		bo->mdev = mdev;
	}
	mcp_counter_inc(MCP_CTR_BO_OBJECTS);
	return bo;
}

/* Undoes mcp_bo_alloc() for a BO whose memory is gone or never came. */
static void mcp_bo_free(struct mcp_bo *bo)
{
	kvfree(bo->pages);
	if (bo->mdev)
		mcp_dev_put(bo->mdev);
	mutex_destroy(&bo->lock);
	kfree(bo);
	mcp_counter_dec(MCP_CTR_BO_OBJECTS);
}

static int mcp_bo_alloc_page_array(struct mcp_bo *bo)
{
	bo->pages = kvmalloc_array(bo->npages, sizeof(*bo->pages),
				   GFP_KERNEL_ACCOUNT | __GFP_ZERO);
	return bo->pages ? 0 : -ENOMEM;
}

/* NUMA node of all of @bo's pages, or NUMA_NO_NODE when they differ. */
static int mcp_bo_pages_node(const struct mcp_bo *bo)
{
	int node = page_to_nid(bo->pages[0]);
	unsigned long i;

	for (i = 1; i < bo->npages; i++)
		if (page_to_nid(bo->pages[i]) != node)
			return NUMA_NO_NODE;
	return node;
}

/* Streaming DMA mapping of @bo's pages for its device. */
static int mcp_bo_dma_map_pages(struct mcp_bo *bo)
{
	struct sg_table *sgt;
	int ret;

	ret = mcp_bo_check_reach(bo);
	if (ret)
		return ret;
	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return -ENOMEM;
	ret = sg_alloc_table_from_pages_segment(sgt, bo->pages, bo->npages, 0,
						bo->length,
						dma_max_mapping_size(mcp_bo_dev(bo)),
						GFP_KERNEL);
	if (ret)
		goto err_free_sgt;
	ret = dma_map_sgtable(mcp_bo_dev(bo), sgt, bo->dir, 0);
	if (ret)
		goto err_free_table;
	bo->sgt = sgt;
	return 0;

err_free_table:
	sg_free_table(sgt);
err_free_sgt:
	kfree(sgt);
	return ret;
}

static void mcp_bo_dma_unmap_pages(struct mcp_bo *bo)
{
	if (!bo->sgt)
		return;
	dma_unmap_sgtable(mcp_bo_dev(bo), bo->sgt, bo->dir, 0);
	sg_free_table(bo->sgt);
	kfree(bo->sgt);
	bo->sgt = NULL;
}

static void mcp_bo_free_pages(struct page **pages, unsigned long npages)
{
	unsigned long i;

	for (i = 0; i < npages; i++)
		__free_page(pages[i]);
}

/*
 * One piece of a BO on @node that @dev (NULL: none) reaches: from the zone
 * its mask calls for, else, as dma-direct does for a mask between 24 and
 * 32 bits, from ZONE_DMA.
 */
static struct page *mcp_bo_alloc_piece(struct device *dev, int node,
				       gfp_t gfp, unsigned int order)
{
	size_t size = PAGE_SIZE << order;
	struct page *page;

	page = alloc_pages_node(node, gfp, order);
	if (!page || mcp_bo_reachable(dev, page, size))
		return page;
	__free_pages(page, order);
	if (gfp & GFP_DMA)
		return NULL;

	page = alloc_pages_node(node, (gfp & ~GFP_DMA32) | GFP_DMA, order);
	if (!page || mcp_bo_reachable(dev, page, size))
		return page;
	__free_pages(page, order);
	return NULL;
}

/*
 * Admission of kernel BOs.  A request is checked against what can be had
 * before a page is allocated, and refused at once with -ENOMEM when it
 * cannot: allocating page by page first would drain the machine for
 * seconds and leave the OOM killer to pick a victim, which cannot be the
 * caller, whose RSS does not show the buffer.  What can be had is the
 * least of
 *
 *  - the tightest memory.max of the caller's memory cgroup and its
 *    ancestors (a module cannot read a cgroup's file cache in 6.1, so its
 *    room below the limit is left to the charge of __GFP_ACCOUNT, which
 *    with __GFP_NORETRY fails after one reclaim pass, without an OOM kill);
 *  - the free pages above the high watermark of every zone the allocation
 *    may use, on the requested node or on the nodes of the caller's
 *    cpuset, plus half of their file cache, which reclaim gives back;
 *  - si_mem_available(), the kernel's own estimate of MemAvailable;
 *
 * less the pages other callers are allocating right now
 * (mcp_bo_inflight) and 1/32 of it as headroom.  The check is made again
 * every MCP_BO_ADMIT_STEP pages while allocating, so a request that fit
 * at first but no longer does (someone else took the memory) stops early.
 */

/* Pages reserved by kernel BOs being allocated now, not yet allocated. */
static atomic_long_t mcp_bo_inflight = ATOMIC_LONG_INIT(0);

/* Admission is checked again every 2 MiB allocated. */
#define MCP_BO_ADMIT_STEP	(SZ_2M >> PAGE_SHIFT)

/*
 * Pages @node's zones up to @highest can give at once: the free pages
 * above each zone's high watermark, and half of its file cache.
 */
static unsigned long mcp_bo_node_room(int node, enum zone_type highest)
{
	pg_data_t *pgdat = NODE_DATA(node);
	unsigned long room = 0;
	int i;

	for (i = 0; i <= highest; i++) {
		struct zone *zone = &pgdat->node_zones[i];
		unsigned long free, high, file;

		if (!populated_zone(zone))
			continue;
		free = zone_page_state(zone, NR_FREE_PAGES);
		high = high_wmark_pages(zone);
		file = zone_page_state(zone, NR_ZONE_ACTIVE_FILE) +
		       zone_page_state(zone, NR_ZONE_INACTIVE_FILE);
		if (free > high)
			room += free - high;
		room += file / 2;
	}
	return room;
}

/*
 * Pages an allocation with @gfp on @node (NUMA_NO_NODE: the nodes of the
 * caller's cpuset) can have, less 1/32 headroom.
 */
static unsigned long mcp_bo_room(int node, gfp_t gfp)
{
	enum zone_type highest = gfp_zone(gfp);
	unsigned long room = 0;
	long avail;
	nodemask_t mems;
	int nid;

	if (node != NUMA_NO_NODE) {
		room = mcp_bo_node_room(node, highest);
	} else {
		nodes_and(mems, cpuset_current_mems_allowed,
			  node_states[N_MEMORY]);
		for_each_node_mask(nid, mems)
			room += mcp_bo_node_room(nid, highest);
	}
	avail = si_mem_available();
	room = min(room, avail > 0 ? (unsigned long)avail : 0UL);
	return room - room / 32;
}

/*
 * The tightest memory.max, in pages, of the caller's memory cgroup and its
 * ancestors; ULONG_MAX without one.
 */
static unsigned long mcp_bo_memcg_limit(void)
{
	unsigned long limit = ULONG_MAX;
	struct mem_cgroup *memcg, *iter;

	if (mem_cgroup_disabled() || !current->mm)
		return limit;
	memcg = get_mem_cgroup_from_mm(current->mm);
	for (iter = memcg; iter; iter = parent_mem_cgroup(iter))
		limit = min(limit, READ_ONCE(iter->memory.max));
	mem_cgroup_put(memcg);
	return limit;
}

/*
 * @want pages, of which the caller has reserved all in mcp_bo_inflight,
 * still fit beside the other callers' reservations.
 */
static bool mcp_bo_fits(unsigned long want, int node, gfp_t gfp)
{
	long others = atomic_long_read(&mcp_bo_inflight) - (long)want;
	unsigned long room = mcp_bo_room(node, gfp);

	if (others < 0)
		others = 0;
	return room > (unsigned long)others && want <= room - others;
}

/*
 * Reserves @npages for an allocation with @gfp on @node, or refuses them
 * with -ENOMEM.  Reserved first and checked after, so two callers that
 * check at once see each other.  Released with mcp_bo_unreserve() as the
 * pages come, or when the allocation ends.
 */
static int mcp_bo_admit(unsigned long npages, int node, gfp_t gfp)
{
	if (npages > mcp_bo_memcg_limit())
		return -ENOMEM;
	atomic_long_add(npages, &mcp_bo_inflight);
	if (mcp_bo_fits(npages, node, gfp))
		return 0;
	atomic_long_sub(npages, &mcp_bo_inflight);
	return -ENOMEM;
}

static void mcp_bo_unreserve(unsigned long npages)
{
	atomic_long_sub(npages, &mcp_bo_inflight);
}

/*
 * Flags of the pages of a BO on @node only (NUMA_NO_NODE: any, the
 * caller's first), that @dev (NULL: none) reaches.  Charged to the
 * caller's memory cgroup; failing, after one reclaim pass, without a
 * warning and without the OOM killer.  GFP_USER, not GFP_HIGHUSER:
 * highmem does not mix with a zone.
 */
static gfp_t mcp_bo_pages_gfp(struct device *dev, int node)
{
	gfp_t gfp = GFP_USER | __GFP_ZERO | __GFP_ACCOUNT | __GFP_NOWARN |
		    __GFP_NORETRY;

	if (node != NUMA_NO_NODE)
		gfp |= __GFP_THISNODE;
	if (dev)
		gfp |= mcp_bo_dev_zone(dev);
	return gfp;
}

/*
 * Zeroed pages of @gfp (mcp_bo_pages_gfp()) on @node that @dev reaches;
 * order 9 pieces split into 4 KiB pages.  Takes over the caller's
 * admission of all of @bo's pages (mcp_bo_admit()) and releases it.
 */
static int mcp_bo_alloc_pages(struct mcp_bo *bo, struct device *dev,
			      int node, gfp_t gfp, bool huge)
{
	unsigned int order = huge ? MCP_BO_HUGE_ORDER : 0;
	unsigned long i, j, step = 1UL << order;
	unsigned long reserved = bo->npages;
	struct page *page;
	int ret = -ENOMEM;

	for (i = 0; i < bo->npages; i += step) {
		/* Up to 4 GiB of zeroing: a killed caller stops here. */
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_free_pages;
		}
		if (i && !(i % MCP_BO_ADMIT_STEP)) {
			mcp_bo_unreserve(reserved - (bo->npages - i));
			reserved = bo->npages - i;
			if (!mcp_bo_fits(reserved, node, gfp))
				goto err_free_pages;
		}
		page = mcp_bo_alloc_piece(dev, node, gfp, order);
		if (!page)
			goto err_free_pages;
		if (order)
			split_page(page, order);
		for (j = 0; j < step; j++)
			bo->pages[i + j] = page + j;
		cond_resched();
	}
	mcp_bo_unreserve(reserved);
	mcp_counter_add(MCP_CTR_BO_KERNEL_PAGES, bo->npages);
	return 0;

err_free_pages:
	mcp_bo_unreserve(reserved);
	mcp_bo_free_pages(bo->pages, i);
	return ret;
}

/*
 * Charges a coherent BO to the caller's user: dma_alloc_coherent() does
 * not honour __GFP_ACCOUNT, so the memory cgroup never sees it, and it is
 * unswappable like pinned memory.  It counts in user->locked_vm against
 * RLIMIT_MEMLOCK, as io_uring charges its buffers, unless the caller has
 * CAP_IPC_LOCK.  Per user rather than per mm (account_locked_vm()): the
 * last reference of a mapped BO can go in munmap() under the mmap_lock
 * that account_locked_vm() takes.
 */
static int mcp_bo_charge_user(struct mcp_bo *bo)
{
	long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct user_struct *user = current_user();
	long cur, new;

	if (capable(CAP_IPC_LOCK))
		return 0;
	cur = atomic_long_read(&user->locked_vm);
	do {
		new = cur + bo->npages;
		if (new < cur || new > limit)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));
	bo->user = get_uid(user);
	bo->charged = bo->npages;
	return 0;
}

static void mcp_bo_uncharge_user(struct mcp_bo *bo)
{
	if (!bo->user)
		return;
	atomic_long_sub(bo->charged, &bo->user->locked_vm);
	free_uid(bo->user);
	bo->user = NULL;
}

/* The pages backing @bo's coherent memory, as the DMA API tells them. */
static int mcp_bo_coherent_sgtable(struct mcp_bo *bo, struct sg_table *sgt)
{
	return dma_get_sgtable(mcp_bo_dev(bo), sgt, bo->coherent,
			       bo->coherent_dma, bo->length);
}

/*
 * NUMA node of all of @bo's coherent memory, or NUMA_NO_NODE when it
 * spans nodes.  From dma_get_sgtable(), never from the kernel address:
 * that may be a remapping (vmalloc space, an uncached alias) that
 * virt_to_page() does not understand.
 */
static int mcp_bo_coherent_node(struct mcp_bo *bo, int *node)
{
	struct scatterlist *sg;
	struct sg_table sgt;
	unsigned int i;
	int ret;

	ret = mcp_bo_coherent_sgtable(bo, &sgt);
	if (ret)
		return ret;
	*node = page_to_nid(sg_page(sgt.sgl));
	for_each_sgtable_sg(&sgt, sg, i) {
		struct page *last = nth_page(sg_page(sg),
					     (sg->length - 1) >> PAGE_SHIFT);

		if (page_to_nid(sg_page(sg)) != *node ||
		    page_to_nid(last) != *node) {
			*node = NUMA_NO_NODE;
			break;
		}
	}
	sg_free_table(&sgt);
	return 0;
}

/*
 * Coherent memory of the device: a kernel and a bus address, no pages.
 * Admitted as pages are (mcp_bo_admit()), in one piece.
 */
static int mcp_bo_alloc_coherent(struct mcp_bo *bo)
{
	struct device *dev = mcp_bo_dev(bo);
	gfp_t gfp = GFP_KERNEL | mcp_bo_dev_zone(dev);
	int ret;

	ret = mcp_bo_admit(bo->npages, NUMA_NO_NODE, gfp);
	if (ret)
		return ret;
	bo->coherent = dma_alloc_coherent(dev, bo->length, &bo->coherent_dma,
					  GFP_KERNEL | __GFP_NOWARN);
	mcp_bo_unreserve(bo->npages);
	if (!bo->coherent)
		return -ENOMEM;
	mcp_counter_add(MCP_CTR_BO_KERNEL_PAGES, bo->npages);
	return 0;
}

static void mcp_bo_free_coherent(struct mcp_bo *bo)
{
	dma_free_coherent(mcp_bo_dev(bo), bo->length, bo->coherent,
			  bo->coherent_dma);
	bo->coherent = NULL;
}

/**
 * mcp_bo_create_kernel() - a BO of kernel memory
 * @mdev:	the context's device, NULL on the host context
 * @length:	bytes, a multiple of PAGE_SIZE (of 2 MiB with MCP_BO_HUGEPAGE)
 * @flags:	MCP_BO_*, checked by the caller
 * @node:	an online node for the pages; NUMA_NO_NODE: any
 *
 * Pages come with __GFP_ACCOUNT (the memory cgroup); coherent memory,
 * which dma_alloc_coherent() does not charge there, is charged to the
 * caller's user against RLIMIT_MEMLOCK instead (mcp_bo_charge_user()).
 *
 * Return: the BO with one reference, or an ERR_PTR: -ENOMEM at once
 * for a request that cannot be had (mcp_bo_admit()), or when @node
 * has not the memory (or no free 2 MiB pages, or none the device can
 * address), when coherent memory of the device is not on @node and
 * MCP_BO_NODE asked for it, or when coherent memory would exceed
 * RLIMIT_MEMLOCK; dma_get_sgtable()'s error for coherent memory whose
 * pages the DMA API cannot name (it could not be exported either).
 */
struct mcp_bo *mcp_bo_create_kernel(struct mcp_dev *mdev, u64 length,
				    u32 flags, int node)
{
	bool coherent = mdev && (flags & MCP_BO_COHERENT);
	struct device *dev;
	struct mcp_bo *bo;
	gfp_t gfp;
	int ret;

	bo = mcp_bo_alloc(mdev, MCP_BO_KIND_KERNEL, flags, length);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	dev = mdev ? mcp_bo_dev(bo) : NULL;

	if (coherent) {
		ret = mcp_bo_charge_user(bo);
		if (ret)
			goto err_free_bo;
		ret = mcp_bo_alloc_coherent(bo);
		if (ret)
			goto err_uncharge;
		ret = mcp_bo_coherent_node(bo, &bo->node);
		if (ret)
			goto err_free_coherent;
		if ((flags & MCP_BO_NODE) && bo->node != node) {
			ret = -ENOMEM;
			goto err_free_coherent;
		}
		return bo;
	}

	gfp = mcp_bo_pages_gfp(dev, node);
	ret = mcp_bo_admit(bo->npages, node, gfp);
	if (ret)
		goto err_free_bo;
	ret = mcp_bo_alloc_page_array(bo);
	if (ret) {
		mcp_bo_unreserve(bo->npages);
		goto err_free_bo;
	}
	ret = mcp_bo_alloc_pages(bo, dev, node, gfp, flags & MCP_BO_HUGEPAGE);
	if (ret)
		goto err_free_bo;
	bo->node = mcp_bo_pages_node(bo);
	if (mdev) {
		ret = mcp_bo_dma_map_pages(bo);
		if (ret)
			goto err_free_pages;
	}
	return bo;

err_free_pages:
	mcp_bo_free_pages(bo->pages, bo->npages);
	mcp_counter_add(MCP_CTR_BO_KERNEL_PAGES, -(s64)bo->npages);
	goto err_free_bo;
err_free_coherent:
	mcp_bo_free_coherent(bo);
	mcp_counter_add(MCP_CTR_BO_KERNEL_PAGES, -(s64)bo->npages);
err_uncharge:
	mcp_bo_uncharge_user(bo);
err_free_bo:
	mcp_bo_free(bo);
	return ERR_PTR(ret);
}

/*
 * A long-term pin is allowed only of memory no file system writes back,
 * as io_uring allows: anonymous, shmem (tmpfs, memfd, shared anonymous,
 * SysV shm) and hugetlbfs.  shmem_file() and is_file_hugepages() need
 * symbols 6.1 does not export to modules (shmem_mapping(),
 * hugetlbfs_file_operations), so shmem is told by its superblock's magic
 * and hugetlb by VM_HUGETLB.  PFN and I/O mappings are left to GUP, which
 * refuses them with -EFAULT.
 */
static bool mcp_bo_vma_pinnable(struct vm_area_struct *vma)
{
	if (vma->vm_flags & (VM_IO | VM_PFNMAP))
		return true;
	if (vma_is_anonymous(vma) || is_vm_hugetlb_page(vma))
		return true;
	return vma->vm_file &&
	       file_inode(vma->vm_file)->i_sb->s_magic == TMPFS_MAGIC;
}

/* -EFAULT for a hole in [addr, addr + len), -EOPNOTSUPP for a file VMA. */
static int mcp_bo_check_vmas(struct mm_struct *mm, u64 addr, u64 len)
{
	struct vm_area_struct *vma;
	u64 end = addr + len;

	mmap_assert_locked(mm);

	if (end < addr)
		return -EFAULT;
	for (; addr < end; addr = vma->vm_end) {
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr)
			return -EFAULT;
		if (!mcp_bo_vma_pinnable(vma))
			return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * Pins every page of [addr, addr + length) or none, under the mmap_lock
 * held across the VMA check so the check still holds for what is pinned.
 */
static int mcp_bo_pin(struct mcp_bo *bo, u64 addr)
{
	struct mm_struct *mm = current->mm;
	unsigned int gup = FOLL_LONGTERM;
	unsigned long pinned = 0;
	long n;
	int ret;

	if (bo->flags & MCP_BO_USERPTR_WRITE)
		gup |= FOLL_WRITE;

	if (mmap_read_lock_killable(mm))
		return -EINTR;
	ret = mcp_bo_check_vmas(mm, addr, bo->length);
	while (!ret && pinned < bo->npages) {
		n = mcp_pin_user_pages(addr + (pinned << PAGE_SHIFT),
				       min_t(unsigned long,
					     bo->npages - pinned, INT_MAX),
				       gup, bo->pages + pinned);
		if (n <= 0)
			ret = n ? n : -EFAULT;
		else
			pinned += n;
	}
	mmap_read_unlock(mm);
	if (ret) {
		unpin_user_pages(bo->pages, pinned);
		return ret;
	}
	mcp_counter_add(MCP_CTR_BO_PINNED_PAGES, bo->npages);
	return 0;
}

static void mcp_bo_unpin(struct mcp_bo *bo)
{
	unpin_user_pages_dirty_lock(bo->pages, bo->npages,
				    bo->flags & MCP_BO_USERPTR_WRITE);
	mcp_counter_add(MCP_CTR_BO_PINNED_PAGES, -(s64)bo->npages);
}

static void mcp_bo_uncharge(struct mcp_bo *bo)
{
	account_locked_vm(bo->mm, bo->charged, false);
	mmdrop(bo->mm);
	bo->mm = NULL;
}

/**
 * mcp_bo_create_userptr() - a BO of the caller's pinned memory
 * @mdev:	the context's device, NULL on the host context
 * @addr:	page-aligned user address
 * @length:	page-aligned length, checked by the caller
 * @flags:	MCP_BO_USERPTR_*
 *
 * Return: the BO with one reference, or an ERR_PTR: -ENOMEM over
 * RLIMIT_MEMLOCK, -EFAULT for memory that cannot be pinned, -EOPNOTSUPP
 * for a mapping of a file that is not shmem or hugetlbfs
 * (mcp_bo_vma_pinnable()), -EINTR for a fatal signal, -EIO for memory the
 * device cannot address.
 */
struct mcp_bo *mcp_bo_create_userptr(struct mcp_dev *mdev, u64 addr,
				     u64 length, u32 flags)
{
	struct mm_struct *mm = current->mm;
	struct mcp_bo *bo;
	int ret;

	if (!mm)
		return ERR_PTR(-EFAULT);

	bo = mcp_bo_alloc(mdev, MCP_BO_KIND_USERPTR, flags, length);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	if (!(flags & MCP_BO_USERPTR_WRITE))
		bo->dir = DMA_TO_DEVICE;
	ret = mcp_bo_alloc_page_array(bo);
	if (ret)
		goto err_free_bo;

	/* Charged first: the limit must hold before anything is pinned. */
	ret = account_locked_vm(mm, bo->npages, true);
	if (ret)
		goto err_free_bo;
	mmgrab(mm);
	bo->mm = mm;
	bo->charged = bo->npages;

	ret = mcp_bo_pin(bo, addr);
	if (ret)
		goto err_uncharge;
	bo->node = mcp_bo_pages_node(bo);

	if (mdev) {
		ret = mcp_bo_dma_map_pages(bo);
		if (ret)
			goto err_unpin;
	}
	return bo;

err_unpin:
	mcp_bo_unpin(bo);
err_uncharge:
	mcp_bo_uncharge(bo);
err_free_bo:
	mcp_bo_free(bo);
	return ERR_PTR(ret);
}

/**
 * mcp_bo_create_import() - a BO of another driver's (or MCP's) dma-buf
 * @mdev:	the context's device, NULL on the host context
 * @fd:		the dma-buf fd
 *
 * A dma-buf whose file is not open for writing (a PRIME export without
 * DRM_RDWR, say) keeps that mode: the BO is mapped for the device
 * DMA_TO_DEVICE and mcp_bo_writable() says no.
 *
 * Return: the BO with one reference, or an ERR_PTR: -EBADF for a bad fd,
 * -EINVAL for one that is not a dma-buf or has an unusable size, -EIO on
 * a device that cannot address all memory by itself (no IOMMU, no bounce
 * buffers): the exporter's pages could lie beyond its reach.
 */
struct mcp_bo *mcp_bo_create_import(struct mcp_dev *mdev, int fd)
{
	struct dma_buf_attachment *attach;
	struct dma_buf *dmabuf;
	struct sg_table *sgt;
	struct mcp_bo *bo;
	int ret;

	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return ERR_CAST(dmabuf);
	if (!dmabuf->size || dmabuf->size > MCP_BO_MAX_LENGTH ||
	    !PAGE_ALIGNED(dmabuf->size)) {
		ret = -EINVAL;
		goto err_put_dmabuf;
	}

	bo = mcp_bo_alloc(mdev, MCP_BO_KIND_IMPORT, 0, dmabuf->size);
	if (!bo) {
		ret = -ENOMEM;
		goto err_put_dmabuf;
	}
	lockdep_set_class(&bo->lock, &mcp_bo_import_lock_key);
	bo->dmabuf = dmabuf;
	bo->read_only = !(dmabuf->file->f_mode & FMODE_WRITE);
	if (bo->read_only)
		bo->dir = DMA_TO_DEVICE;

	if (mdev) {
		if (mcp_bo_dev_direct(mcp_bo_dev(bo)) &&
		    dma_addressing_limited(mcp_bo_dev(bo))) {
			ret = -EIO;
			goto err_free_bo;
		}
		attach = dma_buf_attach(dmabuf, mcp_bo_dev(bo));
		if (IS_ERR(attach)) {
			ret = PTR_ERR(attach);
			goto err_free_bo;
		}
		sgt = dma_buf_map_attachment_unlocked(attach, bo->dir);
		if (IS_ERR(sgt)) {
			ret = PTR_ERR(sgt);
			goto err_detach;
		}
		bo->attach = attach;
		bo->import_sgt = sgt;
	}
	mcp_counter_inc(MCP_CTR_BO_IMPORTS);
	return bo;

err_detach:
	dma_buf_detach(dmabuf, attach);
err_free_bo:
	mcp_bo_free(bo);
err_put_dmabuf:
	dma_buf_put(dmabuf);
	return ERR_PTR(ret);
}

static void mcp_bo_release(struct kref *ref)
{
	struct mcp_bo *bo = container_of(ref, struct mcp_bo, ref);

	WARN_ON_ONCE(atomic_read(&bo->jobs));

	switch (bo->kind) {
	case MCP_BO_KIND_KERNEL:
		if (bo->vaddr && !bo->coherent)
			vunmap(bo->vaddr);
		if (bo->coherent) {
			mcp_bo_free_coherent(bo);
			mcp_bo_uncharge_user(bo);
		} else {
			mcp_bo_dma_unmap_pages(bo);
			mcp_bo_free_pages(bo->pages, bo->npages);
		}
		mcp_counter_add(MCP_CTR_BO_KERNEL_PAGES, -(s64)bo->npages);
		break;
	case MCP_BO_KIND_USERPTR:
		if (bo->vaddr)
			vunmap(bo->vaddr);
		mcp_bo_dma_unmap_pages(bo);
		mcp_bo_unpin(bo);
		mcp_bo_uncharge(bo);
		break;
	case MCP_BO_KIND_IMPORT:
		if (bo->vaddr)
			dma_buf_vunmap(bo->dmabuf, &bo->map);
		if (bo->attach) {
			dma_buf_unmap_attachment_unlocked(bo->attach,
							  bo->import_sgt,
							  bo->dir);
			dma_buf_detach(bo->dmabuf, bo->attach);
		}
		dma_buf_put(bo->dmabuf);
		mcp_counter_dec(MCP_CTR_BO_IMPORTS);
		break;
	}
	mcp_bo_free(bo);
}

void mcp_bo_get(struct mcp_bo *bo)
{
	kref_get(&bo->ref);
}

void mcp_bo_put(struct mcp_bo *bo)
{
	might_sleep();
	kref_put(&bo->ref, mcp_bo_release);
}

u64 mcp_bo_length(const struct mcp_bo *bo)
{
	return bo->length;
}

/*
 * Kernel BOs are writable; user pointers only if pinned so, imports only
 * if their dma-buf's file is open for writing.
 */
bool mcp_bo_writable(const struct mcp_bo *bo)
{
	switch (bo->kind) {
	case MCP_BO_KIND_USERPTR:
		return bo->flags & MCP_BO_USERPTR_WRITE;
	case MCP_BO_KIND_IMPORT:
		return !bo->read_only;
	default:
		return true;
	}
}

void *mcp_bo_vaddr(struct mcp_bo *bo)
{
	void *vaddr;

	mutex_lock(&bo->lock);
	if (bo->vaddr)
		goto out_unlock;

	if (bo->coherent) {
		bo->vaddr = bo->coherent;
	} else if (bo->dmabuf) {
		/* I/O memory cannot be memcpy()ed: no kernel mapping then. */
		if (!dma_buf_vmap(bo->dmabuf, &bo->map)) {
			if (bo->map.is_iomem)
				dma_buf_vunmap(bo->dmabuf, &bo->map);
			else
				bo->vaddr = bo->map.vaddr;
		}
	} else {
		bo->vaddr = vmap(bo->pages, bo->npages, VM_MAP, PAGE_KERNEL);
	}

out_unlock:
	vaddr = bo->vaddr;
	mutex_unlock(&bo->lock);
	return vaddr;
}

/*
 * Coherent memory: the node recorded from dma_get_sgtable(), never the
 * kernel address's, which may be a remapping; pages: their own; imports:
 * the exporter's kernel mapping, if it is of RAM.
 */
int mcp_bo_node_at(struct mcp_bo *bo, u64 offset)
{
	void *vaddr;

	if (offset >= bo->length)
		return NUMA_NO_NODE;
	if (bo->coherent)
		return bo->node;
	if (bo->pages)
		return page_to_nid(bo->pages[offset >> PAGE_SHIFT]);

	mutex_lock(&bo->lock);
	vaddr = bo->vaddr ? bo->vaddr + offset : NULL;
	mutex_unlock(&bo->lock);
	if (!vaddr)
		return NUMA_NO_NODE;
	if (is_vmalloc_addr(vaddr))
		return page_to_nid(vmalloc_to_page(vaddr));
	if (virt_addr_valid(vaddr))
		return page_to_nid(virt_to_page(vaddr));
	return NUMA_NO_NODE;
}

int mcp_bo_dma_addr(struct mcp_bo *bo, u64 offset, dma_addr_t *addr,
		    u64 *contig)
{
	struct sg_table *sgt = bo->import_sgt ? bo->import_sgt : bo->sgt;
	struct scatterlist *sg;
	unsigned int i;

	if (!bo->mdev)
		return -ENODEV;
	if (offset >= bo->length)
		return -EINVAL;

	if (bo->coherent) {
		*addr = bo->coherent_dma + offset;
		*contig = bo->length - offset;
		return 0;
	}

	for_each_sgtable_dma_sg(sgt, sg, i) {
		u64 len = sg_dma_len(sg);

		if (offset < len) {
			*addr = sg_dma_address(sg) + offset;
			*contig = len - offset;
			return 0;
		}
		offset -= len;
	}
	return -EINVAL;
}

/* A sync in a direction the mapping does not allow is a caller's bug. */
static bool mcp_bo_sync_ok(const struct mcp_bo *bo,
			   enum dma_data_direction dir)
{
	return !WARN_ON_ONCE(bo->dir != DMA_BIDIRECTIONAL && bo->dir != dir);
}

void mcp_bo_sync_for_device(struct mcp_bo *bo, enum dma_data_direction dir)
{
	/* Imports: the exporter synced when it mapped the attachment. */
	if (bo->sgt && mcp_bo_sync_ok(bo, dir))
		dma_sync_sgtable_for_device(mcp_bo_dev(bo), bo->sgt, dir);
}

void mcp_bo_sync_for_cpu(struct mcp_bo *bo, enum dma_data_direction dir)
{
	if (bo->sgt && mcp_bo_sync_ok(bo, dir))
		dma_sync_sgtable_for_cpu(mcp_bo_dev(bo), bo->sgt, dir);
}

void mcp_bo_jobs_inc(struct mcp_bo *bo)
{
	atomic_inc(&bo->jobs);
}

void mcp_bo_jobs_dec(struct mcp_bo *bo)
{
	atomic_dec(&bo->jobs);
}

/* A copy of a mapping (split, fork) holds a reference of its own. */
static void mcp_bo_vm_open(struct vm_area_struct *vma)
{
	mcp_bo_get(vma->vm_private_data);
	mcp_counter_inc(MCP_CTR_BO_MAPPINGS);
}

static void mcp_bo_vm_close(struct vm_area_struct *vma)
{
	mcp_counter_dec(MCP_CTR_BO_MAPPINGS);
	mcp_bo_put(vma->vm_private_data);
}

/* Inserts up to MCP_BO_FAULT_AROUND pages from the faulting one. */
static vm_fault_t mcp_bo_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct mcp_bo *bo = vma->vm_private_data;
	unsigned long idx = vmf->pgoff & MCP_BO_MMAP_PGMASK;
	unsigned long addr = vmf->address & PAGE_MASK;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	unsigned int n;

	for (n = 0; n < MCP_BO_FAULT_AROUND && addr < vma->vm_end;
	     n++, idx++, addr += PAGE_SIZE) {
		if (idx >= bo->npages)
			break;
		ret = vmf_insert_pfn(vma, addr, page_to_pfn(bo->pages[idx]));
		if (ret != VM_FAULT_NOPAGE)
			break;
	}
	/* Only the faulting page must make it; the others are a bonus. */
	return n ? VM_FAULT_NOPAGE : ret;
}

static const struct vm_operations_struct mcp_bo_vm_ops = {
	.open = mcp_bo_vm_open,
	.close = mcp_bo_vm_close,
	.fault = mcp_bo_vm_fault,
};

/* Mapped whole at mmap(): nothing to fault in, a fault is SIGBUS. */
static const struct vm_operations_struct mcp_bo_coherent_vm_ops = {
	.open = mcp_bo_vm_open,
	.close = mcp_bo_vm_close,
};

/*
 * dma_mmap_coherent() maps the whole VMA now, with the page protection
 * the platform needs for coherent memory (uncached where DMA does not
 * snoop), from the page offset it finds in vm_pgoff: the BO's own, for
 * the call only.  The VMA keeps its offset in the BO's window above the
 * BAR regions, which revocation zaps (mcp_dev_revoke_mappings()).  The
 * VMA is linked into the file's address_space only after ->mmap.
 */
static int mcp_bo_mmap_coherent(struct mcp_bo *bo, struct vm_area_struct *vma,
				unsigned long pgoff)
{
	unsigned long window = vma->vm_pgoff;
	int ret;

	vma->vm_pgoff = pgoff;
	ret = dma_mmap_coherent(mcp_bo_dev(bo), vma, bo->coherent,
				bo->coherent_dma, bo->length);
	vma->vm_pgoff = window;
	return ret;
}

/**
 * mcp_bo_mmap() - map a kernel BO into a shared VMA
 * @bo:		the BO; the VMA takes a reference of its own
 * @vma:	its page offset, masked with MCP_BO_MMAP_PGMASK, is the
 *		first page of @bo to map
 *
 * Imported BOs are mapped by their exporter (dma_buf_mmap()); user-pointer
 * BOs are not mapped through MCP at all.  Pages are inserted at fault
 * time; coherent memory is mapped whole now (mcp_bo_mmap_coherent()).
 *
 * Return: 0, or -EINVAL for a private mapping, a range past the BO's end
 * or a BO that has no pages of its own; dma_mmap_coherent()'s error.
 */
int mcp_bo_mmap(struct mcp_bo *bo, struct vm_area_struct *vma)
{
	unsigned long pgoff = vma->vm_pgoff & MCP_BO_MMAP_PGMASK;
	int ret;

	if (bo->kind != MCP_BO_KIND_KERNEL)
		return -EINVAL;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (pgoff >= bo->npages || vma_pages(vma) > bo->npages - pgoff)
		return -EINVAL;

	mcp_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	if (bo->coherent) {
		ret = mcp_bo_mmap_coherent(bo, vma, pgoff);
		if (ret)
			return ret;
		vma->vm_ops = &mcp_bo_coherent_vm_ops;
	} else {
		mcp_vm_flags_set(vma, VM_PFNMAP);
		vma->vm_ops = &mcp_bo_vm_ops;
	}
	vma->vm_private_data = bo;
	mcp_bo_vm_open(vma);
	return 0;
}

/**
 * mcp_bo_mmap_import() - map an imported BO through its exporter
 * @bo:		the imported BO
 * @vma:	a shared VMA; its page offset, masked with MCP_BO_MMAP_PGMASK,
 *		is the first page of the dma-buf to map
 *
 * A read-only import is mapped as its dma-buf's fd would be: a writable
 * mapping is -EACCES and a read-only one cannot be made writable with
 * mprotect().  The VMA then holds the dma-buf's file.
 *
 * Return: 0, -EINVAL for a private mapping, -EACCES, or dma_buf_mmap()'s
 * error.
 */
int mcp_bo_mmap_import(struct mcp_bo *bo, struct vm_area_struct *vma)
{
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (bo->read_only) {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		mcp_vm_flags_clear(vma, VM_MAYWRITE);
	}
	return dma_buf_mmap(bo->dmabuf, vma, vma->vm_pgoff & MCP_BO_MMAP_PGMASK);
}

static struct sg_table *mcp_dmabuf_map(struct dma_buf_attachment *attach,
				       enum dma_data_direction dir)
{
	struct mcp_bo *bo = attach->dmabuf->priv;
	struct sg_table *sgt;
	int ret;

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	if (bo->coherent)
		ret = mcp_bo_coherent_sgtable(bo, sgt);
	else
		ret = sg_alloc_table_from_pages_segment(sgt, bo->pages,
							bo->npages, 0,
							bo->length,
							dma_max_mapping_size(attach->dev),
							GFP_KERNEL);
	if (ret)
		goto err_free_sgt;
	ret = dma_map_sgtable(attach->dev, sgt, dir, 0);
	if (ret)
		goto err_free_table;
	return sgt;

err_free_table:
	sg_free_table(sgt);
err_free_sgt:
	kfree(sgt);
	return ERR_PTR(ret);
}

static void mcp_dmabuf_unmap(struct dma_buf_attachment *attach,
			     struct sg_table *sgt, enum dma_data_direction dir)
{
	dma_unmap_sgtable(attach->dev, sgt, dir, 0);
	sg_free_table(sgt);
	kfree(sgt);
}

static void mcp_dmabuf_release(struct dma_buf *dmabuf)
{
	mcp_counter_dec(MCP_CTR_BO_EXPORTS);
	mcp_bo_put(dmabuf->priv);
}

/* dma_buf_mmap_internal() checked the range and made vm_pgoff BO-relative. */
static int mcp_dmabuf_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	return mcp_bo_mmap(dmabuf->priv, vma);
}

static int mcp_dmabuf_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	void *vaddr = mcp_bo_vaddr(dmabuf->priv);

	if (!vaddr)
		return -ENOMEM;
	iosys_map_set_vaddr(map, vaddr);
	return 0;
}

/* DMA_BUF_IOCTL_SYNC: the BO's own device mapping, if it has one. */
static int mcp_dmabuf_begin_cpu_access(struct dma_buf *dmabuf,
				       enum dma_data_direction dir)
{
	mcp_bo_sync_for_cpu(dmabuf->priv, dir);
	return 0;
}

static int mcp_dmabuf_end_cpu_access(struct dma_buf *dmabuf,
				     enum dma_data_direction dir)
{
	mcp_bo_sync_for_device(dmabuf->priv, dir);
	return 0;
}

/* The kernel mapping lives as long as the BO: nothing to undo. */
static void mcp_dmabuf_vunmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
}

static const struct dma_buf_ops mcp_dmabuf_ops = {
	.map_dma_buf = mcp_dmabuf_map,
	.unmap_dma_buf = mcp_dmabuf_unmap,
	.release = mcp_dmabuf_release,
	.begin_cpu_access = mcp_dmabuf_begin_cpu_access,
	.end_cpu_access = mcp_dmabuf_end_cpu_access,
	.mmap = mcp_dmabuf_mmap,
	.vmap = mcp_dmabuf_vmap,
	.vunmap = mcp_dmabuf_vunmap,
};

/**
 * mcp_bo_export() - a new dma-buf of a kernel BO
 * @bo:		the BO; the dma-buf takes a reference of its own
 *
 * Return: the dma-buf (its file not installed), or an ERR_PTR: -EINVAL
 * for a BO that is not a kernel BO.
 */
struct dma_buf *mcp_bo_export(struct mcp_bo *bo)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct dma_buf *dmabuf;

	if (bo->kind != MCP_BO_KIND_KERNEL)
		return ERR_PTR(-EINVAL);

	info.ops = &mcp_dmabuf_ops;
	info.size = bo->length;
	info.flags = O_RDWR;
	info.priv = bo;
	mcp_bo_get(bo);
	dmabuf = dma_buf_export(&info);
	if (IS_ERR(dmabuf)) {
		mcp_bo_put(bo);
		return dmabuf;
	}
	mcp_counter_inc(MCP_CTR_BO_EXPORTS);
	return dmabuf;
}
