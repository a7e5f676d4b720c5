// SPDX-License-Identifier: GPL-2.0-only
// main() for a Criterion binary run as a test-VM selftest: the VM runner
// reads TAP on stdout, so the report goes there whatever the arguments;
// one test at a time (CRITERION_JOBS or --jobs to change it), as a
// differential test wants its workload alone on the VM's CPUs; and
// kselftest's "-t NAME" (run-vm.py --test NAME) runs the tests named
// NAME in any suite, as it does for the kselftest binaries.
#include <string>
#include <vector>

#include <criterion/criterion.h>
#include <criterion/options.h>
// output.h has no extern "C" of its own.
extern "C" {
#include <criterion/output.h>
}

int main(int argc, char *argv[])
{
	std::vector<char *> args;
	std::string pattern;

	for (int i = 0; i < argc; i++) {
		if (i + 1 < argc && std::string(argv[i]) == "-t")
			pattern = std::string("*/") + argv[++i];
		else
			args.push_back(argv[i]);
	}
	struct criterion_test_set *tests = criterion_initialize();
	int result = 0;

	criterion_options.jobs = 1;
	if (!pattern.empty())
		criterion_options.pattern = pattern.c_str();
	criterion_add_output("tap", "-");
	if (criterion_handle_args(static_cast<int>(args.size()), args.data(), true))
		result = !criterion_run_all_tests(tests);
	criterion_finalize(tests);
	return result;
}
