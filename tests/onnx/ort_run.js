#!/usr/bin/env node
// SPDX-License-Identifier: GPL-2.0-only
// The reference: runs an ONNX model with ONNX Runtime's CPU provider
// (npm onnxruntime-node) on .npy inputs and writes each output as
// OUTDIR/NAME.npy (f32, C order).
//
//   node tests/onnx/ort_run.js MODEL.onnx OUTDIR NAME=FILE.npy...
//
// The package is looked up in $MCP_ORT_NODE_DIR, else in
// build/onnxruntime-node/node_modules next to this script's checkout
// (scripts/install-deps.sh installs it there).  Exit 2 when it is absent
// (tests skip then), 1 on any other error.
'use strict';
const fs = require('fs');
const path = require('path');

function findOrt() {
	const dirs = [];
	if (process.env.MCP_ORT_NODE_DIR)
		dirs.push(process.env.MCP_ORT_NODE_DIR);
	dirs.push(path.join(__dirname, '..', '..', 'build', 'onnxruntime-node', 'node_modules'));
	for (const d of dirs) {
		try {
			return require(require.resolve('onnxruntime-node', { paths: [d] }));
		} catch (e) {
			// next
		}
	}
	process.stderr.write('ort_run: onnxruntime-node not found in ' + dirs.join(', ') + '\n');
	process.exit(2);
}

const dtypes = { '<f4': ['float32', Float32Array], '<i8': ['int64', BigInt64Array],
	'|i1': ['int8', Int8Array], '<i4': ['int32', Int32Array] };

function readNpy(file) {
	const b = fs.readFileSync(file);
	if (b.toString('latin1', 0, 6) !== '\x93NUMPY')
		throw new Error(file + ': not a .npy file');
	const major = b[6];
	const hlen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
	const start = major === 1 ? 10 : 12;
	const header = b.toString('latin1', start, start + hlen);
	const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
	if (/'fortran_order':\s*True/.test(header))
		throw new Error(file + ': Fortran order is not supported');
	const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',')
		.map((s) => s.trim()).filter((s) => s.length).map(Number);
	const t = dtypes[descr];
	if (!t)
		throw new Error(file + ': dtype ' + descr + ' is not supported');
	const data = b.subarray(start + hlen);
	const copy = new Uint8Array(data.length);
	copy.set(data);
	return [t[0], new t[1](copy.buffer), shape];
}

function writeNpy(file, tensor) {
	if (tensor.type !== 'float32')
		throw new Error('output type ' + tensor.type + ' is not written');
	const shape = tensor.dims.length === 1 ? '(' + tensor.dims[0] + ',)' : '(' + tensor.dims.join(', ') + ')';
	let header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ', }';
	const total = 10 + header.length + 1;
	header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
	const h = Buffer.alloc(10);
	h.write('\x93NUMPY', 0, 'latin1');
	h[6] = 1;
	h[7] = 0;
	h.writeUInt16LE(header.length, 8);
	const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
	fs.writeFileSync(file, Buffer.concat([h, Buffer.from(header, 'latin1'), data]));
}

async function main() {
	const [model, outdir, ...specs] = process.argv.slice(2);
	if (!model || !outdir) {
		process.stderr.write('usage: ort_run.js MODEL.onnx OUTDIR NAME=FILE.npy...\n');
		process.exit(1);
	}
	const ort = findOrt();
	const feeds = {};
	for (const s of specs) {
		const eq = s.indexOf('=');
		const [type, data, shape] = readNpy(s.slice(eq + 1));
		feeds[s.slice(0, eq)] = new ort.Tensor(type, data, shape);
	}
	const session = await ort.InferenceSession.create(model, { executionProviders: ['cpu'],
		graphOptimizationLevel: 'all' });
	const out = await session.run(feeds);
	fs.mkdirSync(outdir, { recursive: true });
	for (const name of session.outputNames)
		writeNpy(path.join(outdir, name + '.npy'), out[name]);
}

module.exports = { findOrt, readNpy };

if (require.main === module) {
	main().catch((e) => {
		process.stderr.write('ort_run: ' + (e && e.message ? e.message : e) + '\n');
		process.exit(1);
	});
}
