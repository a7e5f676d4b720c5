// SPDX-License-Identifier: LGPL-2.1-or-later
// libmcp: hardware tuning knobs and sessions (C++).  Included by
// <mcp/mcp.hpp>; errors are mcp::Error as everywhere in libmcp.
// Documentation/tuning.rst has how the registry and rollback work.
#ifndef MCP_TUNE_HPP
#define MCP_TUNE_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <mcp/dma.hpp>
#include <mcp/tune.h>

namespace mcp {

class Device;

namespace feature {
inline constexpr std::uint64_t tune = MCP_FEATURE_TUNE;
} // namespace feature

enum class TuneScope { cpu, core, package, system };
enum class TuneType { boolean, integer };
enum class TuneStatus { supported, unsupported, read_only };

MCP_EXPORT const char *to_string(TuneScope scope) noexcept;
MCP_EXPORT const char *to_string(TuneStatus status) noexcept;

// One knob of MCP_IOC_TUNE_LIST, as seen on one CPU.
struct TuneKnob {
	std::uint32_t id = 0;
	std::string name;		// "prefetch.l2_stream"
	TuneScope scope = TuneScope::cpu;
	TuneType type = TuneType::boolean;
	TuneStatus status = TuneStatus::unsupported;
	std::string reason;		// why not supported, or what it is
	std::uint64_t min = 0;
	std::uint64_t max = 0;
	std::optional<std::uint64_t> value;	// none when it cannot be read
	std::optional<std::uint64_t> boot;	// the value at module load
	bool held = false;		// a session changed it
	int holder_pid = 0;		// that session's creator (0: not visible)
	bool committed = false;		// a committed value applies
};

// Every knob, with values read on @cpu.  Needs only access to /dev/mcp.
// Throws mcp::Error: ENOTTY (module without tuning), ENXIO (@cpu offline),
// EINVAL (@cpu out of range).
MCP_EXPORT std::vector<TuneKnob> tune_list(const Device &dev, unsigned cpu = 0);

// The knob called @name in @knobs; throws mcp::Error(ENOENT), naming the
// knobs there are, when none is.
MCP_EXPORT const TuneKnob &tune_find(const std::vector<TuneKnob> &knobs, std::string_view name);

// A tuning session: every value it sets is rolled back when it is
// destroyed (or the process dies) unless commit() made it permanent.
// Needs CAP_SYS_RAWIO and no kernel lockdown.  Move-only; the fd is for
// this process only (the kernel refuses it in any other).
class MCP_EXPORT TuneSession {
public:
	// Throws mcp::Error: EPERM (privilege or lockdown), ENOTTY.
	explicit TuneSession(const Device &dev);

	// Sets @name to @value on @cpu's scope, or on every online CPU
	// without @cpu; each write is read back.  Throws mcp::Error with
	// a sentence: ENOENT, ERANGE, EOPNOTSUPP (with the knob's reason),
	// EBUSY (naming the holder's pid), EIO (the read-back), ENXIO.
	void set(std::string_view name, std::uint64_t value,
		 std::optional<unsigned> cpu = std::nullopt);
	// The value read from hardware on @cpu.
	std::uint64_t get(std::string_view name, unsigned cpu = 0);
	// Makes everything this session set permanent; the number of
	// (knob, CPU) values committed.
	unsigned commit();
	// Puts boot values back and drops committed ones: one knob or all,
	// on @cpu's scope or every online CPU.
	void reset(std::optional<std::string_view> name = std::nullopt,
		   std::optional<unsigned> cpu = std::nullopt);

	int fd() const noexcept { return fd_.get(); }

private:
	const TuneKnob &knob(std::string_view name) const;

	UniqueFd fd_;
	std::vector<TuneKnob> knobs_;
};

} // namespace mcp

#endif // MCP_TUNE_HPP
