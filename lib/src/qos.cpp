// SPDX-License-Identifier: LGPL-2.1-or-later
// QoS classes and CPU slices: cgroup v2 groups under <mount>/mcp.slice with
// cpu.max, cpu.weight, memory.min/memory.low and cpuset.cpus/cpuset.mems.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.hpp"

namespace mcp {

const char *to_string(QosClass cls) noexcept
{
	switch (cls) {
	case QosClass::guaranteed:
		return "guaranteed";
	case QosClass::burstable:
		return "burstable";
	case QosClass::best_effort:
		return "best-effort";
	}
	return "unknown";
}

std::optional<QosClass> parse_qos_class(std::string_view name) noexcept
{
	std::string n;

	for (char c : name)
		n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
	if (n == "guaranteed")
		return QosClass::guaranteed;
	if (n == "burstable")
		return QosClass::burstable;
	if (n == "best-effort" || n == "besteffort" || n == "best_effort")
		return QosClass::best_effort;
	return std::nullopt;
}

namespace detail {

unsigned qos_memory_node(unsigned node, const std::vector<unsigned> &with_memory,
			 const std::vector<unsigned> &online, const std::vector<unsigned> &distances)
{
	unsigned best = node, best_dist = std::numeric_limits<unsigned>::max();

	if (with_memory.empty() ||
	    std::find(with_memory.begin(), with_memory.end(), node) != with_memory.end())
		return node;
	// Ascending ids (sysfs lists them so) and a strict '<': ties go to the lowest.
	for (std::size_t i = 0; i < online.size() && i < distances.size(); i++) {
		if (std::find(with_memory.begin(), with_memory.end(), online[i]) == with_memory.end())
			continue;
		if (distances[i] < best_dist) {
			best = online[i];
			best_dist = distances[i];
		}
	}
	return best;
}

std::string cpu_max_for(double cpus)
{
	if (!std::isfinite(cpus) || cpus <= 0)
		throw Error(EINVAL, "a CPU slice must be a positive number of vCores (at least 0.125)");
	// 1e-9: 0.125 typed by a user is exactly representable, 0.12 is not
	if (cpus + 1e-9 < qos_min_cpus)
		throw Error(EINVAL, "a CPU slice of " + (std::ostringstream() << cpus).str() +
					    " vCore is finer than the smallest slice, 0.125 vCore "
					    "(cpu.max \"12500 100000\"): ask for 0.125 or more");
	const auto quota = static_cast<std::uint64_t>(
		std::llround(cpus * static_cast<double>(qos_cpu_period_us)));
	return std::to_string(quota) + " " + std::to_string(qos_cpu_period_us);
}

unsigned cpu_weight_for(QosClass cls)
{
	switch (cls) {
	case QosClass::guaranteed:
		return 800;
	case QosClass::burstable:
		return 400;
	case QosClass::best_effort:
		break;
	}
	return 0;
}

std::optional<QosClass> infer_qos_class(std::optional<std::uint64_t> weight,
					std::optional<std::uint64_t> memory_min,
					std::optional<std::uint64_t> memory_low)
{
	if (!weight)
		return std::nullopt;
	if (*weight == 800 && memory_min.value_or(0) > 0)
		return QosClass::guaranteed;
	if (*weight == 400 && memory_low.value_or(0) > 0)
		return QosClass::burstable;
	if (memory_min.value_or(0) == 0 && memory_low.value_or(0) == 0)
		return QosClass::best_effort;
	return std::nullopt;
}

} // namespace detail

namespace {

namespace fs = std::filesystem;

// Writes @value to the cgroup file @path; returns 0 or an errno.  O_CREAT
// lets tests use a plain directory; cgroupfs files already exist.
int write_file(const std::string &path, const std::string &value)
{
	int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return errno;
	ssize_t n = ::write(fd, value.data(), value.size());
	int err = n < 0 ? errno : (static_cast<std::size_t>(n) != value.size() ? EIO : 0);
	if (::close(fd) != 0 && !err)
		err = errno;
	return err;
}

std::optional<std::string> read_file(const std::string &path)
{
	std::ifstream f(path);

	if (!f)
		return std::nullopt;
	std::stringstream s;
	s << f.rdbuf();
	std::string v = s.str();
	while (!v.empty() && (v.back() == '\n' || v.back() == ' '))
		v.pop_back();
	return v;
}

// qos_memory_node() from /sys/devices/system/node: a memoryless node's
// CPUs take the nearest memory (with its own id in cpuset.mems, cgroup v2
// would give the group its parent's nodes: no confinement at all).
unsigned sysfs_memory_node(unsigned node)
{
	const std::string sys = "/sys/devices/system/node/";
	std::optional<std::string> mem = read_file(sys + "has_memory");
	std::optional<std::string> online = read_file(sys + "online");
	std::optional<std::string> dist = read_file(sys + "node" + std::to_string(node) + "/distance");
	std::vector<unsigned> distances;

	if (!mem || !online || !dist)
		return node;
	std::istringstream in(*dist);
	for (unsigned d; in >> d;)
		distances.push_back(d);
	try {
		return detail::qos_memory_node(node, detail::parse_id_list(*mem),
					       detail::parse_id_list(*online), distances);
	} catch (const Error &) {
		return node; // unreadable lists: the kernel's answer will say
	}
}

std::optional<std::uint64_t> read_u64(const std::string &path)
{
	std::optional<std::string> v = read_file(path);

	if (!v || v->empty() || !std::isdigit(static_cast<unsigned char>((*v)[0])))
		return std::nullopt;
	return std::stoull(*v);
}

void check_cgroup2(const std::string &mount)
{
	struct stat st;

	if (::stat((mount + "/cgroup.controllers").c_str(), &st) != 0)
		throw Error(ENOENT, "cgroup v2 is not mounted at " + mount +
					    ": mount it with 'mount -t cgroup2 none " + mount +
					    "' (QoS groups need the unified hierarchy)");
}

// Enables @controllers for the children of cgroup @dir.
void enable_controllers(const std::string &dir, const std::vector<std::string> &controllers)
{
	std::optional<std::string> available = read_file(dir + "/cgroup.controllers");
	std::optional<std::string> enabled = read_file(dir + "/cgroup.subtree_control");
	std::istringstream avail_words(available.value_or(""));
	std::vector<std::string> avail;
	std::string w, todo;

	while (avail_words >> w)
		avail.push_back(w);
	for (const std::string &c : controllers) {
		if (std::find(avail.begin(), avail.end(), c) == avail.end())
			throw Error(EOPNOTSUPP, "the " + c + " controller is not available in " + dir +
							" (cgroup.controllers): it is not built into the kernel "
							"or not delegated to this cgroup");
		std::istringstream en(enabled.value_or(""));
		bool on = false;
		while (en >> w)
			on = on || w == c;
		if (!on)
			todo += (todo.empty() ? "+" : " +") + c;
	}
	if (todo.empty())
		return;
	int err = write_file(dir + "/cgroup.subtree_control", todo);
	if (err == EACCES || err == EPERM)
		throw Error(err, "not allowed to enable '" + todo + "' in " + dir +
					 "/cgroup.subtree_control: run as root or delegate the cgroup to this user");
	if (err == EBUSY)
		throw Error(err, "cannot enable '" + todo + "' in " + dir +
					 "/cgroup.subtree_control: the cgroup has processes of its own "
					 "(cgroup v2's no-internal-process rule); move them to a child group");
	if (err)
		throw Error(err, "cannot enable '" + todo + "' in " + dir +
					 "/cgroup.subtree_control: " + std::strerror(err));
}

void make_dir(const std::string &dir)
{
	if (::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST)
		return;
	int err = errno;
	if (err == EACCES || err == EPERM || err == EROFS)
		throw Error(err, "not allowed to create cgroup " + dir +
					 ": run as root or delegate the cgroup to this user");
	throw Error(err, "cannot create cgroup " + dir + ": " + std::strerror(err));
}

void write_setting(const std::string &dir, const char *file, const std::string &value)
{
	int err = write_file(dir + "/" + file, value);

	if (err)
		throw Error(err, "cannot write '" + value + "' to " + dir + "/" + file + ": " +
					 std::strerror(err));
}

std::string join_ids(const std::vector<unsigned> &ids)
{
	std::string s;

	for (unsigned id : ids)
		s += (s.empty() ? "" : ",") + std::to_string(id);
	return s;
}

} // namespace

QosGroup::QosGroup(std::string name, std::string cgroup_mount)
	: name_(std::move(name)), mount_(std::move(cgroup_mount))
{
	const bool bad_char = std::any_of(name_.begin(), name_.end(), [](char c) {
		return c == '/' || std::isspace(static_cast<unsigned char>(c));
	});
	if (name_.empty() || name_ == "." || name_ == ".." || bad_char)
		throw Error(EINVAL, "'" + name_ + "' is not a valid QoS group name: "
					  "use letters, digits, '-', '_' or '.', without '/' or spaces");
}

std::string QosGroup::path() const
{
	return mount_ + "/" + slice + "/" + name_;
}

bool QosGroup::exists() const
{
	struct stat st;

	return ::stat(path().c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void QosGroup::create(const QosSpec &spec)
{
	std::vector<std::string> controllers;
	std::string cpu_max;
	std::vector<unsigned> node_cpus = spec.node_cpus;
	std::optional<unsigned> mems_node = spec.node;

	if (spec.cpus)
		cpu_max = detail::cpu_max_for(*spec.cpus); // validate before touching anything
	if (spec.memory_min && spec.cls != QosClass::guaranteed)
		throw Error(EINVAL, "memory.min belongs to the guaranteed class; "
				    "use --class guaranteed or --memory-low with burstable");
	if (spec.memory_low && spec.cls != QosClass::burstable)
		throw Error(EINVAL, "memory.low belongs to the burstable class; "
				    "use --class burstable or --memory-min with guaranteed");
	if (spec.node && node_cpus.empty()) {
		const std::string list = "/sys/devices/system/node/node" +
					 std::to_string(*spec.node) + "/cpulist";
		std::optional<std::string> text = read_file(list);
		if (!text)
			throw Error(EINVAL, "node " + std::to_string(*spec.node) +
						    " does not exist (no " + list + ")");
		node_cpus = detail::parse_id_list(*text);
		if (node_cpus.empty())
			throw Error(EINVAL, "node " + std::to_string(*spec.node) + " has no CPUs");
		mems_node = sysfs_memory_node(*spec.node);
	}

	check_cgroup2(mount_);
	if (spec.cpus || spec.cls != QosClass::best_effort)
		controllers.push_back("cpu");
	if (spec.cls != QosClass::best_effort)
		controllers.push_back("memory");
	if (spec.node)
		controllers.push_back("cpuset");

	const std::string slice_dir = mount_ + "/" + slice;
	enable_controllers(mount_, controllers);
	make_dir(slice_dir);
	enable_controllers(slice_dir, controllers);
	make_dir(path());

	const std::string dir = path();
	if (std::find(controllers.begin(), controllers.end(), "cpu") != controllers.end()) {
		write_setting(dir, "cpu.max",
			      spec.cpus ? cpu_max : "max " + std::to_string(qos_cpu_period_us));
		write_setting(dir, "cpu.weight",
			      std::to_string(spec.cls == QosClass::best_effort
						     ? 100U
						     : detail::cpu_weight_for(spec.cls)));
	}
	if (spec.cls == QosClass::guaranteed) {
		write_setting(dir, "memory.min",
			      std::to_string(spec.memory_min.value_or(qos_guaranteed_memory_min)));
		write_setting(dir, "memory.low", "0");
	} else if (spec.cls == QosClass::burstable) {
		write_setting(dir, "memory.min", "0");
		write_setting(dir, "memory.low",
			      std::to_string(spec.memory_low.value_or(qos_burstable_memory_low)));
	}
	if (spec.node) {
		write_setting(dir, "cpuset.cpus", join_ids(node_cpus));
		write_setting(dir, "cpuset.mems", std::to_string(*mems_node));
	}
}

void QosGroup::attach(int pid)
{
	check_cgroup2(mount_);
	if (!exists())
		throw Error(ENOENT, "no QoS group '" + name_ + "' (" + path() +
					    "): create it with 'mcpctl qos create " + name_ + " --class CLASS'");
	int err = write_file(path() + "/cgroup.procs", std::to_string(pid));
	const std::string who = pid == 0 ? std::string("this process") : "pid " + std::to_string(pid);
	switch (err) {
	case 0:
		return;
	case ESRCH:
		throw Error(err, "cannot move " + who + " into QoS group '" + name_ +
					 "': no such process");
	case EACCES:
	case EPERM:
		throw Error(err, "not allowed to move " + who + " into QoS group '" + name_ +
					 "': needs write access to cgroup.procs of both groups and their "
					 "common ancestor (run as root or delegate)");
	default:
		throw Error(err, "cannot move " + who + " into QoS group '" + name_ + "': " +
					 std::strerror(err));
	}
}

QosInfo QosGroup::info() const
{
	check_cgroup2(mount_);
	if (!exists())
		throw Error(ENOENT, "no QoS group '" + name_ + "' (" + path() + ")");

	const std::string dir = path();
	QosInfo i;
	i.name = name_;
	i.path = dir;
	i.cpu_max = read_file(dir + "/cpu.max").value_or("");
	i.cpu_weight = read_u64(dir + "/cpu.weight");
	i.memory_min = read_u64(dir + "/memory.min");
	i.memory_low = read_u64(dir + "/memory.low");
	i.cpuset_cpus = read_file(dir + "/cpuset.cpus").value_or("");
	i.cpuset_mems = read_file(dir + "/cpuset.mems").value_or("");
	i.cls = detail::infer_qos_class(i.cpu_weight, i.memory_min, i.memory_low);
	std::istringstream procs(read_file(dir + "/cgroup.procs").value_or(""));
	int pid;
	while (procs >> pid)
		i.pids.push_back(pid);
	return i;
}

void QosGroup::remove()
{
	check_cgroup2(mount_);
	if (::rmdir(path().c_str()) == 0)
		return;
	int err = errno;
	if (err == ENOENT)
		throw Error(err, "no QoS group '" + name_ + "' (" + path() + ")");
	if (err == EBUSY)
		throw Error(err, "QoS group '" + name_ +
					 "' still has processes: stop them or move them out first");
	if (err == EACCES || err == EPERM)
		throw Error(err, "not allowed to remove QoS group '" + name_ +
					 "': run as root or delegate the cgroup to this user");
	throw Error(err, "cannot remove QoS group '" + name_ + "': " + std::strerror(err));
}

std::vector<std::string> QosGroup::list(const std::string &cgroup_mount)
{
	std::vector<std::string> names;
	std::error_code ec;

	check_cgroup2(cgroup_mount);
	for (const auto &e : fs::directory_iterator(cgroup_mount + "/" + slice, ec))
		if (e.is_directory())
			names.push_back(e.path().filename().string());
	std::sort(names.begin(), names.end());
	return names;
}

} // namespace mcp
