#!/usr/bin/env node
// SPDX-License-Identifier: GPL-2.0-only
// The ONNX Runtime side of mcp_ort_bench: one CPU-provider session of
// MODEL (intraOpNumThreads THREADS, sequential execution) on the .npy
// input, then per line "N" on stdin N timed runs, answered with one line
// of N latencies in ns.  ORT is looked up as tests/onnx/ort_run.js does.
//
//   node bench/ort_latency.js MODEL.onnx NAME=FILE.npy THREADS
'use strict';
const path = require('path');
const readline = require('readline');

const peer = path.join(__dirname, '..', 'tests', 'onnx', 'ort_run.js');
const { findOrt, readNpy } = require(peer);

async function main() {
	const [model, spec, threads] = process.argv.slice(2);
	if (!model || !spec || !threads) {
		process.stderr.write('usage: ort_latency.js MODEL.onnx NAME=FILE.npy THREADS\n');
		process.exit(1);
	}
	const ort = findOrt();
	const eq = spec.indexOf('=');
	const [type, data, shape] = readNpy(spec.slice(eq + 1));
	const feeds = { [spec.slice(0, eq)]: new ort.Tensor(type, data, shape) };
	const t0 = process.hrtime.bigint();
	const session = await ort.InferenceSession.create(model, { executionProviders: ['cpu'],
		graphOptimizationLevel: 'all', executionMode: 'sequential',
		intraOpNumThreads: Number(threads), interOpNumThreads: 1 });
	const created = process.hrtime.bigint() - t0;
	await session.run(feeds);
	process.stdout.write('ready ' + created + '\n');
	const rl = readline.createInterface({ input: process.stdin });
	for await (const line of rl) {
		const n = Number(line);
		const ns = [];
		for (let i = 0; i < n; i++) {
			const a = process.hrtime.bigint();
			await session.run(feeds);
			ns.push(process.hrtime.bigint() - a);
		}
		process.stdout.write(ns.join(' ') + '\n');
	}
}

main().catch((e) => {
	process.stderr.write('ort_latency: ' + (e && e.message ? e.message : e) + '\n');
	process.exit(1);
});
