// SPDX-License-Identifier: GPL-2.0
/*
 * MCP (Model Control Protocol): the hardware tuning registry and its
 * sessions (Documentation/tuning.rst).
 *
 * The registry is a fixed array of knobs filled in at load by their
 * providers (mcp_tune_prefetch.c, mcp_tune_dma.c).  Each writable knob
 * has one struct mcp_tune_cell per possible CPU: the value found when the
 * module first saw the CPU (boot), a committed value, and the session
 * that holds it with the value to give back.  A session allocates nothing
 * per change: what it holds is marked in the cells, so its memory is
 * bounded however much it sets.
 *
 * - TUNE_SET checks that no other session holds any target cell, then
 *   writes and reads back each CPU of the knob's scope; a failure writes
 *   back what the call changed, so a failed SET changes nothing.  A value
 *   that does not read back marks the knob unsupported with the reason.
 * - Closing the session (the last reference to its file: also when the
 *   process dies) writes back the saved values of every cell it holds;
 *   an offline CPU gets them when it comes online.
 * - TUNE_COMMIT turns held cells into committed ones: kept after close,
 *   re-applied by the CPU hotplug callback, replaced by the boot value on
 *   TUNE_RESET and at module unload.
 * - A session fd pins the module (.owner), so rmmod never races one.
 *
 * Locks: cpus_read_lock() (CPU hotplug) before mcp_tune_lock, which
 * protects every cell, every knob's status and reason, and each
 * session's count.  The hotplug callback runs with the hotplug lock held
 * for writing and takes mcp_tune_lock only.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/nospec.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/topology.h>
#include <linux/uaccess.h>

#include "mcp_internal.h"
#include "mcp_tune.h"

/* Largest entry_size MCP_IOC_TUNE_LIST accepts (a future entry). */
#define MCP_TUNE_ENTRY_SIZE_MAX	1024

/**
 * struct mcp_tuner - the state behind one session fd
 * @pid:	the creating process (thread group); only it may use the fd
 * @held:	cells this session holds
 */
struct mcp_tuner {
	struct pid *pid;
	unsigned int held;
};

static DEFINE_MUTEX(mcp_tune_lock);
static struct mcp_tune_knob mcp_tune_knobs[MCP_TUNE_NR_KNOBS];
static int mcp_tune_hp_state = -1;

static bool mcp_tune_writable(const struct mcp_tune_knob *knob)
{
	return knob->cells && knob->status == MCP_TUNE_SUPPORTED;
}

/* Writes must be as privileged as /dev/cpu/N/msr writes. */
static int mcp_tune_may_write(void)
{
	if (!capable(CAP_SYS_RAWIO))
		return -EPERM;
	return security_locked_down(LOCKDOWN_MSR);
}

/* A knob made unsupported by what the hardware did; kept until unload. */
static void mcp_tune_disable_locked(struct mcp_tune_knob *knob,
				    unsigned int cpu, u64 val, u64 readback)
{
	lockdep_assert_held(&mcp_tune_lock);

	/* The first mismatch is the one worth reporting. */
	if (knob->status != MCP_TUNE_SUPPORTED)
		return;
	knob->status = MCP_TUNE_UNSUPPORTED;
	snprintf(knob->reason, sizeof(knob->reason),
		 "read-back differs on CPU %u: wrote %llu, read %llu (writes ignored, e.g. by a hypervisor)",
		 cpu, val, readback);
	pr_warn("%s: %s\n", knob->name, knob->reason);
}

/**
 * mcp_tune_write_locked() - write a value and verify it by reading back
 * @knob:	a writable knob
 * @cpu:	an online CPU
 * @val:	the value
 * @readback:	out: what was read after the write
 *
 * Return: 0, -EIO when the value read back differs (the knob is then
 * unsupported), or the error of the MSR access.
 */
static int mcp_tune_write_locked(struct mcp_tune_knob *knob, unsigned int cpu,
				 u64 val, u64 *readback)
{
	int ret;

	lockdep_assert_held(&mcp_tune_lock);

	ret = knob->write(knob, cpu, val);
	if (ret)
		return ret;
	ret = knob->read(knob, cpu, readback);
	if (ret)
		return ret;
	if (*readback != val) {
		mcp_tune_disable_locked(knob, cpu, val, *readback);
		return -EIO;
	}
	return 0;
}

/* Best effort: a value going back that does not stick is only logged. */
static void mcp_tune_restore_locked(struct mcp_tune_knob *knob,
				    unsigned int cpu, u64 val)
{
	u64 readback;
	int ret;

	lockdep_assert_held(&mcp_tune_lock);

	ret = mcp_tune_write_locked(knob, cpu, val, &readback);
	if (ret)
		pr_warn("%s: cannot restore %llu on CPU %u: %d\n",
			knob->name, val, cpu, ret);
}

/* The CPUs one write to @knob on @cpu affects, online ones only. */
static void mcp_tune_scope_cpus(const struct mcp_tune_knob *knob,
				unsigned int cpu, struct cpumask *mask)
{
	switch (knob->scope) {
	case MCP_TUNE_SCOPE_CORE:
		cpumask_and(mask, topology_sibling_cpumask(cpu),
			    cpu_online_mask);
		break;
	case MCP_TUNE_SCOPE_PACKAGE:
		cpumask_and(mask, topology_core_cpumask(cpu), cpu_online_mask);
		break;
	case MCP_TUNE_SCOPE_SYSTEM:
		cpumask_copy(mask, cpu_online_mask);
		break;
	default:
		cpumask_clear(mask);
		break;
	}
	/* The CPU itself even where the topology masks are not set up. */
	cpumask_set_cpu(cpu, mask);
}

/* -EINVAL for an id past nr_cpu_ids, -ENXIO for an offline CPU. */
static int mcp_tune_check_cpu(u32 *cpu)
{
	if (*cpu >= nr_cpu_ids)
		return -EINVAL;
	*cpu = array_index_nospec(*cpu, nr_cpu_ids);
	return cpu_online(*cpu) ? 0 : -ENXIO;
}

static struct mcp_tune_knob *mcp_tune_knob_get(u32 id)
{
	if (id >= MCP_TUNE_NR_KNOBS)
		return NULL;
	return &mcp_tune_knobs[array_index_nospec(id, MCP_TUNE_NR_KNOBS)];
}

/* The targets of a SET or RESET: @v->cpu's scope, or every online CPU. */
static int mcp_tune_targets(const struct mcp_tune_knob *knob,
			    struct mcp_tune_value *v, struct cpumask *mask)
{
	int ret;

	if (v->flags & MCP_TUNE_ALL_CPUS) {
		cpumask_copy(mask, cpu_online_mask);
		return 0;
	}
	ret = mcp_tune_check_cpu(&v->cpu);
	if (ret) {
		v->err_cpu = v->cpu;
		return ret;
	}
	mcp_tune_scope_cpus(knob, v->cpu, mask);
	return 0;
}

/* -EBUSY, with the holder's pid, when another session holds a target. */
static int mcp_tune_check_busy_locked(const struct mcp_tune_knob *knob,
				      const struct mcp_tuner *s,
				      const struct cpumask *mask,
				      struct mcp_tune_value *v)
{
	unsigned int cpu;

	lockdep_assert_held(&mcp_tune_lock);

	for_each_cpu(cpu, mask) {
		const struct mcp_tune_cell *cell = &knob->cells[cpu];

		if (cell->holder && cell->holder != s) {
			v->holder_pid = pid_vnr(cell->holder->pid);
			v->err_cpu = cpu;
			return -EBUSY;
		}
	}
	return 0;
}

static int mcp_tune_set_locked(struct mcp_tuner *s,
			       struct mcp_tune_knob *knob,
			       const struct cpumask *mask,
			       struct mcp_tune_value *v)
{
	unsigned int cpu, done;
	int ret;

	lockdep_assert_held(&mcp_tune_lock);

	ret = mcp_tune_check_busy_locked(knob, s, mask, v);
	if (ret)
		return ret;

	for_each_cpu(cpu, mask) {
		struct mcp_tune_cell *cell = &knob->cells[cpu];

		ret = knob->read(knob, cpu, &cell->undo);
		if (ret)
			goto err_undo;
		ret = mcp_tune_write_locked(knob, cpu, v->value, &v->readback);
		if (ret) {
			/* Part of the write may have landed. */
			mcp_tune_restore_locked(knob, cpu, cell->undo);
			goto err_undo;
		}
	}

	for_each_cpu(cpu, mask) {
		struct mcp_tune_cell *cell = &knob->cells[cpu];

		if (cell->holder != s) {
			cell->saved = cell->undo;
			cell->holder = s;
			s->held++;
		}
		cell->held = v->value;
		cell->restore_pending = false;
	}
	return 0;

err_undo:
	v->err_cpu = cpu;
	for_each_cpu(done, mask) {
		if (done == cpu)
			break;
		mcp_tune_restore_locked(knob, done, knob->cells[done].undo);
	}
	return ret;
}

static int mcp_tune_reset_knob_locked(struct mcp_tuner *s,
				      struct mcp_tune_knob *knob,
				      const struct cpumask *mask,
				      struct mcp_tune_value *v)
{
	unsigned int cpu;
	u64 readback;
	int ret, first = 0;

	lockdep_assert_held(&mcp_tune_lock);

	ret = mcp_tune_check_busy_locked(knob, s, mask, v);
	if (ret)
		return ret;

	for_each_cpu(cpu, mask) {
		struct mcp_tune_cell *cell = &knob->cells[cpu];

		if (cell->holder == s) {
			cell->holder = NULL;
			s->held--;
		}
		cell->committed_valid = false;
		cell->restore_pending = false;
		if (!cell->boot_valid)
			continue;
		ret = mcp_tune_write_locked(knob, cpu, cell->boot, &readback);
		if (ret && !first) {
			first = ret;
			v->err_cpu = cpu;
			v->readback = readback;
		}
	}
	return first;
}

/**
 * mcp_tune_end_holds_locked() - release every cell a session holds
 * @s:		the session
 * @commit:	make the held values committed; else give the saved ones
 *		back (an offline CPU gets them when it comes online)
 *
 * Return: the number of cells released.
 */
static unsigned int mcp_tune_end_holds_locked(struct mcp_tuner *s, bool commit)
{
	unsigned int i, cpu, n = 0;

	lockdep_assert_held(&mcp_tune_lock);

	for (i = 0; i < MCP_TUNE_NR_KNOBS && s->held; i++) {
		struct mcp_tune_knob *knob = &mcp_tune_knobs[i];

		if (!knob->cells)
			continue;
		for_each_possible_cpu(cpu) {
			struct mcp_tune_cell *cell = &knob->cells[cpu];

			if (cell->holder != s)
				continue;
			cell->holder = NULL;
			s->held--;
			n++;
			if (commit) {
				cell->committed = cell->held;
				cell->committed_valid = true;
			} else if (cpu_online(cpu)) {
				mcp_tune_restore_locked(knob, cpu, cell->saved);
			} else {
				cell->restore_pending = true;
			}
		}
	}
	WARN_ON_ONCE(s->held);
	return n;
}

/* Every cell the session holds gets its saved value back. */
static void mcp_tune_rollback(struct mcp_tuner *s)
{
	cpus_read_lock();
	mutex_lock(&mcp_tune_lock);
	mcp_tune_end_holds_locked(s, false);
	mutex_unlock(&mcp_tune_lock);
	cpus_read_unlock();
}

/* Session fd ioctls */

static struct mcp_tuner *mcp_tune_session_of(struct file *file)
{
	struct mcp_tuner *s = file->private_data;

	/* Not transferable: another process opens a session of its own. */
	return task_tgid(current) == s->pid ? s : NULL;
}

/*
 * What SET and RESET share once the flags are checked: the caller's
 * privilege, the knob, and a mask for the target CPUs.
 */
static int mcp_tune_write_begin(const struct mcp_tune_value *v,
				struct mcp_tune_knob **knob,
				cpumask_var_t *mask)
{
	int ret;

	ret = mcp_tune_may_write();
	if (ret)
		return ret;
	*knob = mcp_tune_knob_get(v->knob);
	if (!*knob)
		return -ENOENT;
	if (!zalloc_cpumask_var(mask, GFP_KERNEL_ACCOUNT))
		return -ENOMEM;
	return 0;
}

static int mcp_ioctl_tune_set(struct file *file, void *karg)
{
	struct mcp_tuner *s = mcp_tune_session_of(file);
	struct mcp_tune_value *v = karg;
	struct mcp_tune_knob *knob;
	cpumask_var_t mask;
	int ret;

	if (!s)
		return -EPERM;
	if (v->flags & ~MCP_TUNE_ALL_CPUS || v->readback || v->holder_pid ||
	    v->err_cpu)
		return -EINVAL;
	ret = mcp_tune_write_begin(v, &knob, &mask);
	if (ret)
		return ret;

	cpus_read_lock();
	mutex_lock(&mcp_tune_lock);
	if (!mcp_tune_writable(knob)) {
		ret = -EOPNOTSUPP;
		goto out_unlock;
	}
	if (v->value < knob->min || v->value > knob->max) {
		ret = -ERANGE;
		goto out_unlock;
	}
	ret = mcp_tune_targets(knob, v, mask);
	if (!ret)
		ret = mcp_tune_set_locked(s, knob, mask, v);
out_unlock:
	mutex_unlock(&mcp_tune_lock);
	cpus_read_unlock();
	free_cpumask_var(mask);
	return ret;
}

static int mcp_ioctl_tune_get(struct file *file, void *karg)
{
	struct mcp_tune_value *v = karg;
	struct mcp_tune_knob *knob;
	int ret;

	if (!mcp_tune_session_of(file))
		return -EPERM;
	if (v->flags || v->value || v->readback || v->holder_pid || v->err_cpu)
		return -EINVAL;
	knob = mcp_tune_knob_get(v->knob);
	if (!knob)
		return -ENOENT;

	cpus_read_lock();
	mutex_lock(&mcp_tune_lock);
	if (knob->status == MCP_TUNE_UNSUPPORTED) {
		ret = -EOPNOTSUPP;
		goto out_unlock;
	}
	ret = mcp_tune_check_cpu(&v->cpu);
	if (ret)
		v->err_cpu = v->cpu;
	else
		ret = knob->read(knob, v->cpu, &v->value);
out_unlock:
	mutex_unlock(&mcp_tune_lock);
	cpus_read_unlock();
	return ret;
}

static int mcp_ioctl_tune_commit(struct file *file, void *karg)
{
	struct mcp_tuner *s = mcp_tune_session_of(file);
	struct mcp_tune_commit *c = karg;

	if (!s)
		return -EPERM;
	if (c->flags || c->count || c->reserved)
		return -EINVAL;

	mutex_lock(&mcp_tune_lock);
	c->count = mcp_tune_end_holds_locked(s, true);
	mutex_unlock(&mcp_tune_lock);
	return 0;
}

static int mcp_ioctl_tune_reset(struct file *file, void *karg)
{
	struct mcp_tuner *s = mcp_tune_session_of(file);
	struct mcp_tune_value *v = karg;
	struct mcp_tune_knob *knob;
	cpumask_var_t mask;
	unsigned int i;
	int ret;

	if (!s)
		return -EPERM;
	if (v->flags & ~(MCP_TUNE_ALL_CPUS | MCP_TUNE_ALL_KNOBS) ||
	    v->value || v->readback || v->holder_pid || v->err_cpu ||
	    (v->flags & MCP_TUNE_ALL_KNOBS && v->knob))
		return -EINVAL;
	ret = mcp_tune_write_begin(v, &knob, &mask);
	if (ret)
		return ret;

	cpus_read_lock();
	mutex_lock(&mcp_tune_lock);
	if (!(v->flags & MCP_TUNE_ALL_KNOBS)) {
		ret = -EOPNOTSUPP;
		if (knob->cells)
			ret = mcp_tune_targets(knob, v, mask);
		if (!ret)
			ret = mcp_tune_reset_knob_locked(s, knob, mask, v);
		goto out_unlock;
	}
	for (i = 0; i < MCP_TUNE_NR_KNOBS; i++) {
		knob = &mcp_tune_knobs[i];
		if (!knob->cells)
			continue;
		ret = mcp_tune_targets(knob, v, mask);
		if (!ret)
			ret = mcp_tune_reset_knob_locked(s, knob, mask, v);
		if (ret) {
			v->knob = i;
			break;
		}
	}
out_unlock:
	mutex_unlock(&mcp_tune_lock);
	cpus_read_unlock();
	free_cpumask_var(mask);
	return ret;
}

static const struct mcp_ioctl_desc mcp_tune_set_desc = {
	.ksize = sizeof(struct mcp_tune_value),
	.size_ver0 = MCP_TUNE_VALUE_SIZE_VER0,
	.handler = mcp_ioctl_tune_set,
	.copy_out_on_error = true,
};

static const struct mcp_ioctl_desc mcp_tune_get_desc = {
	.ksize = sizeof(struct mcp_tune_value),
	.size_ver0 = MCP_TUNE_VALUE_SIZE_VER0,
	.handler = mcp_ioctl_tune_get,
	.copy_out_on_error = true,
};

static const struct mcp_ioctl_desc mcp_tune_commit_desc = {
	.ksize = sizeof(struct mcp_tune_commit),
	.size_ver0 = MCP_TUNE_COMMIT_SIZE_VER0,
	.handler = mcp_ioctl_tune_commit,
};

static const struct mcp_ioctl_desc mcp_tune_reset_desc = {
	.ksize = sizeof(struct mcp_tune_value),
	.size_ver0 = MCP_TUNE_VALUE_SIZE_VER0,
	.handler = mcp_ioctl_tune_reset,
	.copy_out_on_error = true,
};

static long mcp_tune_session_ioctl(struct file *file, unsigned int cmd,
				   unsigned long arg)
{
	const struct mcp_ioctl_desc *desc;
	long ret;

	mcp_counter_inc(MCP_CTR_IOCTLS);
	switch (cmd) {
	case MCP_IOC_TUNE_SET:
		desc = &mcp_tune_set_desc;
		break;
	case MCP_IOC_TUNE_GET:
		desc = &mcp_tune_get_desc;
		break;
	case MCP_IOC_TUNE_COMMIT:
		desc = &mcp_tune_commit_desc;
		break;
	case MCP_IOC_TUNE_RESET:
		desc = &mcp_tune_reset_desc;
		break;
	default:
		desc = NULL;
		break;
	}
	ret = desc ? mcp_ioctl_call(file, cmd, desc, (void __user *)arg) :
		     -ENOTTY;
	if (ret < 0)
		mcp_counter_inc(MCP_CTR_IOCTL_ERRORS);
	return ret;
}

static int mcp_tune_session_release(struct inode *inode, struct file *file)
{
	struct mcp_tuner *s = file->private_data;

	mcp_tune_rollback(s);
	put_pid(s->pid);
	kfree(s);
	mcp_counter_dec(MCP_CTR_TUNE_SESSIONS);
	return 0;
}

/* .owner: rmmod is refused while a session fd exists. */
static const struct file_operations mcp_tune_session_fops = {
	.owner = THIS_MODULE,
	.release = mcp_tune_session_release,
	.unlocked_ioctl = mcp_tune_session_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

/* /dev/mcp ioctls */

/**
 * mcp_ioctl_tune_session() - MCP_IOC_TUNE_SESSION: a new session fd
 * @file:	the /dev/mcp file
 * @karg:	struct mcp_tune_session_karg
 *
 * The fd is reserved here and installed by the publish step once the
 * caller has its number.
 *
 * Return: 0, -EINVAL for bad flags, -EPERM without CAP_SYS_RAWIO or
 * under lockdown, -ENOMEM, -EMFILE.
 */
int mcp_ioctl_tune_session(struct file *file, void *karg)
{
	struct mcp_tune_session_karg *open = karg;
	struct mcp_tuner *s;
	struct file *sfile;
	int fd, ret;

	if (open->arg.flags || open->arg.fd || open->arg.reserved)
		return -EINVAL;
	ret = mcp_tune_may_write();
	if (ret)
		return ret;

	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s)
		return -ENOMEM;
	s->pid = get_pid(task_tgid(current));

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto err_free_session;
	}
	sfile = anon_inode_getfile("[mcp_tune]", &mcp_tune_session_fops, s,
				   O_RDWR);
	if (IS_ERR(sfile)) {
		ret = PTR_ERR(sfile);
		goto err_put_fd;
	}
	mcp_counter_inc(MCP_CTR_TUNE_SESSIONS);
	open->arg.fd = fd;
	open->file = sfile;
	return 0;

err_put_fd:
	put_unused_fd(fd);
err_free_session:
	put_pid(s->pid);
	kfree(s);
	return ret;
}

void mcp_ioctl_tune_session_publish(void *karg, bool copied)
{
	struct mcp_tune_session_karg *open = karg;

	if (copied) {
		fd_install(open->arg.fd, open->file);
	} else {
		/* The release drops the session: it holds nothing yet. */
		fput(open->file);
		put_unused_fd(open->arg.fd);
	}
}

/* One list entry; @cpu is online and the hotplug lock is held. */
static void mcp_tune_describe_locked(unsigned int id, unsigned int cpu,
				     bool locked_down,
				     struct mcp_tune_knob_info *e)
{
	struct mcp_tune_knob *knob = &mcp_tune_knobs[id];
	const struct mcp_tune_cell *cell = NULL;
	u64 val;

	lockdep_assert_held(&mcp_tune_lock);

	e->id = id;
	e->scope = knob->scope;
	e->type = knob->type;
	e->status = knob->status;
	e->min = knob->min;
	e->max = knob->max;
	strscpy(e->name, knob->name, sizeof(e->name));
	strscpy(e->reason, knob->reason, sizeof(e->reason));
	if (knob->status == MCP_TUNE_SUPPORTED && locked_down) {
		e->status = MCP_TUNE_READ_ONLY;
		strscpy(e->reason, "kernel lockdown forbids MSR writes",
			sizeof(e->reason));
	}
	/* A knob refused at a write still has a value to show. */
	if (knob->status == MCP_TUNE_UNSUPPORTED && !knob->cells)
		return;

	if (knob->cells)
		cell = &knob->cells[cpu];
	if (knob->read(knob, cpu, &val))
		return;
	e->value = val;
	if (cell && cell->boot_valid)
		e->boot = cell->boot;
	else if (knob->boot_value)
		e->boot = knob->boot_value(knob);
	else
		e->boot = val;
	e->state = MCP_TUNE_STATE_VALUE;
	if (cell && cell->holder) {
		e->state |= MCP_TUNE_STATE_HELD;
		e->holder_pid = pid_vnr(cell->holder->pid);
	}
	if (cell && cell->committed_valid)
		e->state |= MCP_TUNE_STATE_COMMITTED;
}

/**
 * mcp_ioctl_tune_list() - MCP_IOC_TUNE_LIST: every knob, as seen on a CPU
 * @file:	the /dev/mcp file
 * @karg:	struct mcp_tune_list
 *
 * Return: 0, -ENOSPC (with @count) when @cap is too small, -EINVAL for
 * bad flags, entry size or CPU id, -ENXIO for an offline CPU, -EFAULT.
 */
int mcp_ioctl_tune_list(struct file *file, void *karg)
{
	struct mcp_tune_list *list = karg;
	struct mcp_tune_knob_info *entries;
	u8 __user *uptr = u64_to_user_ptr(list->entries_ptr);
	size_t esize = list->entry_size;
	bool locked_down;
	unsigned int i;
	int ret;

	if (list->flags)
		return -EINVAL;
	if (esize < MCP_TUNE_KNOB_INFO_SIZE_VER0 ||
	    esize > MCP_TUNE_ENTRY_SIZE_MAX)
		return -EINVAL;
	list->count = MCP_TUNE_NR_KNOBS;
	if (list->cap < MCP_TUNE_NR_KNOBS)
		return -ENOSPC;

	entries = kcalloc(MCP_TUNE_NR_KNOBS, sizeof(*entries),
			  GFP_KERNEL_ACCOUNT);
	if (!entries)
		return -ENOMEM;
	/* Asked once per list: each call may log a lockdown notice. */
	locked_down = security_locked_down(LOCKDOWN_MSR) != 0;

	cpus_read_lock();
	mutex_lock(&mcp_tune_lock);
	ret = mcp_tune_check_cpu(&list->cpu);
	if (!ret)
		for (i = 0; i < MCP_TUNE_NR_KNOBS; i++)
			mcp_tune_describe_locked(i, list->cpu, locked_down,
						 &entries[i]);
	mutex_unlock(&mcp_tune_lock);
	cpus_read_unlock();
	if (ret)
		goto out_free;

	for (i = 0; i < MCP_TUNE_NR_KNOBS; i++, uptr += esize) {
		size_t n = min(esize, sizeof(entries[i]));

		if (copy_to_user(uptr, &entries[i], n) ||
		    clear_user(uptr + n, esize - n)) {
			ret = -EFAULT;
			break;
		}
	}
out_free:
	kfree(entries);
	return ret;
}

/* CPU hotplug and load */

/*
 * A CPU coming online: its boot values are read the first time, then it
 * gets what applies to it: the holder's value, the committed one, or the
 * value a rollback could not write while it was offline.
 */
static int mcp_tune_cpu_online(unsigned int cpu)
{
	unsigned int i;

	mutex_lock(&mcp_tune_lock);
	for (i = 0; i < MCP_TUNE_NR_KNOBS; i++) {
		struct mcp_tune_knob *knob = &mcp_tune_knobs[i];
		struct mcp_tune_cell *cell;
		u64 val;

		if (!knob->cells)
			continue;
		cell = &knob->cells[cpu];
		if (!cell->boot_valid && !knob->read(knob, cpu, &cell->boot))
			cell->boot_valid = true;
		if (cell->holder)
			val = cell->held;
		else if (cell->committed_valid)
			val = cell->committed;
		else if (cell->restore_pending)
			val = cell->saved;
		else
			continue;
		cell->restore_pending = false;
		mcp_tune_restore_locked(knob, cpu, val);
		mcp_counter_inc(MCP_CTR_TUNE_ONLINE_APPLIED);
	}
	mutex_unlock(&mcp_tune_lock);
	return 0;
}

/*
 * A supported knob is flipped and flipped back on one CPU at load: a
 * register that reads back what was not written (a hypervisor that drops
 * MSR writes) makes the knob unsupported before any session relies on it.
 */
static void mcp_tune_probe_locked(struct mcp_tune_knob *knob, unsigned int cpu)
{
	u64 val, readback;
	int ret;

	lockdep_assert_held(&mcp_tune_lock);

	ret = knob->read(knob, cpu, &val);
	if (ret) {
		knob->status = MCP_TUNE_UNSUPPORTED;
		snprintf(knob->reason, sizeof(knob->reason),
			 "reading MSR 0x%x faults on CPU %u (%d)",
			 knob->reg, cpu, ret);
		return;
	}
	ret = mcp_tune_write_locked(knob, cpu, !val, &readback);
	if (ret == -EIO) {
		/* Status and reason are set; the write may have landed. */
		knob->write(knob, cpu, val);
		return;
	}
	if (ret) {
		knob->status = MCP_TUNE_UNSUPPORTED;
		snprintf(knob->reason, sizeof(knob->reason),
			 "writing MSR 0x%x faults on CPU %u (%d)",
			 knob->reg, cpu, ret);
		return;
	}
	mcp_tune_restore_locked(knob, cpu, val);
}

static void mcp_tune_free_cells(void)
{
	unsigned int i;

	for (i = 0; i < MCP_TUNE_NR_KNOBS; i++) {
		kvfree(mcp_tune_knobs[i].cells);
		mcp_tune_knobs[i].cells = NULL;
	}
}

/**
 * mcp_tune_init() - build the registry and start following CPU hotplug
 *
 * Return: 0 or a negative errno.
 */
int mcp_tune_init(void)
{
	unsigned int i, cpu;
	int ret;

	mcp_tune_prefetch_init(&mcp_tune_knobs[0]);
	mcp_tune_dma_init(&mcp_tune_knobs[MCP_TUNE_NR_PREFETCH]);

	for (i = 0; i < MCP_TUNE_NR_KNOBS; i++) {
		struct mcp_tune_knob *knob = &mcp_tune_knobs[i];

		if (!knob->write || knob->status != MCP_TUNE_SUPPORTED)
			continue;
		knob->cells = kvcalloc(nr_cpu_ids, sizeof(*knob->cells),
				       GFP_KERNEL);
		if (!knob->cells) {
			ret = -ENOMEM;
			goto err_free_cells;
		}
	}

	cpus_read_lock();
	mutex_lock(&mcp_tune_lock);
	cpu = cpumask_first(cpu_online_mask);
	for (i = 0; i < MCP_TUNE_NR_KNOBS; i++)
		if (mcp_tune_writable(&mcp_tune_knobs[i]))
			mcp_tune_probe_locked(&mcp_tune_knobs[i], cpu);
	mutex_unlock(&mcp_tune_lock);
	cpus_read_unlock();

	/* Reads every online CPU's boot values. */
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "mcp/tune:online",
				mcp_tune_cpu_online, NULL);
	if (ret < 0)
		goto err_free_cells;
	mcp_tune_hp_state = ret;
	return 0;

err_free_cells:
	mcp_tune_free_cells();
	return ret;
}

/**
 * mcp_tune_exit() - put every committed value back to its boot value
 *
 * No session exists: each one holds a module reference.
 */
void mcp_tune_exit(void)
{
	unsigned int i, cpu;

	cpuhp_remove_state_nocalls(mcp_tune_hp_state);

	cpus_read_lock();
	mutex_lock(&mcp_tune_lock);
	for (i = 0; i < MCP_TUNE_NR_KNOBS; i++) {
		struct mcp_tune_knob *knob = &mcp_tune_knobs[i];

		if (!knob->cells)
			continue;
		for_each_online_cpu(cpu) {
			struct mcp_tune_cell *cell = &knob->cells[cpu];

			if (cell->committed_valid && cell->boot_valid)
				mcp_tune_restore_locked(knob, cpu, cell->boot);
		}
	}
	mutex_unlock(&mcp_tune_lock);
	cpus_read_unlock();
	mcp_tune_free_cells();
}
