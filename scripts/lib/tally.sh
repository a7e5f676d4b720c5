# Shared by the check scripts: run a named check, log its output, count it.
# Source it, set TALLY_LOG_DIR, call tally_run NAME CMD..., then tally_summary.

tally_passed=0
tally_failed=0
tally_skipped=0

# tally_run NAME CMD...: runs CMD with output to $TALLY_LOG_DIR/NAME.log.
tally_run() {
	local name=$1
	shift
	local log=$TALLY_LOG_DIR/$name.log
	if "$@" >"$log" 2>&1; then
		tally_passed=$((tally_passed + 1))
		echo "ok - $name"
	else
		tally_failed=$((tally_failed + 1))
		echo "not ok - $name (log: ${log#"$PWD"/})"
		tail -n 25 "$log" | sed 's/^/    /'
	fi
}

# tally_add PASSED FAILED: adds the counts of a sub-runner.
tally_add() {
	tally_passed=$((tally_passed + $1))
	tally_failed=$((tally_failed + $2))
}

# tally_summary LABEL: prints "LABEL: N passed, N failed[, N skipped]"
# (no label: bare).
tally_summary() {
	local line="$tally_passed passed, $tally_failed failed"
	[ "$tally_skipped" -eq 0 ] || line+=", $tally_skipped skipped"
	if [ -n "${1:-}" ]; then
		echo "$1: $line"
	else
		echo "$line"
	fi
	[ "$tally_failed" -eq 0 ]
}
