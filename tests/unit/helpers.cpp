// SPDX-License-Identifier: GPL-2.0-only
// Shared helpers of the unit tests: running a program and capturing it.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.hpp"

namespace test {

RunResult run(const std::vector<std::string> &argv, const std::vector<std::string> &env)
{
	int out_pipe[2], err_pipe[2];

	if (pipe2(out_pipe, O_CLOEXEC) || pipe2(err_pipe, O_CLOEXEC))
		throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));

	pid_t pid = fork();
	if (pid < 0)
		throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
	if (pid == 0) {
		std::vector<char *> args;

		dup2(out_pipe[1], STDOUT_FILENO);
		dup2(err_pipe[1], STDERR_FILENO);
		for (const std::string &kv : env)
			putenv(const_cast<char *>(kv.c_str()));
		for (const std::string &a : argv)
			args.push_back(const_cast<char *>(a.c_str()));
		args.push_back(nullptr);
		execv(args[0], args.data());
		_exit(127);
	}
	close(out_pipe[1]);
	close(err_pipe[1]);

	RunResult r;
	struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
	std::string *bufs[2] = {&r.out, &r.err};
	int open_fds = 2;

	while (open_fds > 0) {
		if (poll(fds, 2, 10000) <= 0)
			break; // a hung child fails the test below
		for (int i = 0; i < 2; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			char buf[4096];
			ssize_t n = read(fds[i].fd, buf, sizeof(buf));
			if (n > 0) {
				bufs[i]->append(buf, static_cast<std::size_t>(n));
			} else {
				close(fds[i].fd);
				fds[i].fd = -1;
				open_fds--;
			}
		}
	}
	for (auto &fd : fds)
		if (fd.fd >= 0)
			close(fd.fd);

	int status = 0;
	waitpid(pid, &status, 0);
	if (WIFEXITED(status))
		r.exit_code = WEXITSTATUS(status);
	return r;
}

bool have_ort(std::string &why)
{
	RunResult r = run({"/usr/bin/env", "node", "-e",
			   "require(require.resolve('onnxruntime-node', {paths: ['" +
				   std::string(MCP_ORT_NODE_DIR) + "']}))"});
	if (r.exit_code != 0)
		why = "node or onnxruntime-node (" + std::string(MCP_ORT_NODE_DIR) +
		      ") is absent: " + r.err.substr(0, 200);
	return r.exit_code == 0;
}

} // namespace test
