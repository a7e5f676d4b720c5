#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes the ONNX test models of tests/unit/test_onnx.cpp and their
seeded inputs (.npy) into OUTDIR.  Fixed seeds, nothing downloaded; needs
Debian's python3-onnx (1.12, opset <= 17) and python3-numpy.  Run with
/usr/bin/python3.

  mlp.onnx        opset 13: Gemm (transB) + Relu, MatMul + Add, Gemm,
                  Softmax; dynamic batch "N"
  bert14.onnx     opset 14: one BERT-style encoder layer, LayerNorm
                  decomposed (ReduceMean, Sub, Pow, Sqrt, Div, Mul, Add),
                  Erf-GELU, one reshape computed by a Shape sub-graph
  bert17.onnx     opset 17: the same layer with LayerNormalization
  opset18.onnx    a Relu in opset 18 (refused: too new)
  unsupported.onnx  Relu, Tanh, Conv on run-time tensors (refused, listed)
  consts.onnx     opset 13: Constant value_floats / value_float / value_ints
                  feeding Mul, Sub and a Reshape
  x_mlp.npy, x_bert.npy, x_small.npy  the inputs
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

S, D, H = 8, 32, 4
DH = D // H
FF = 64


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def save(model, path):
    onnx.checker.check_model(model)
    onnx.save(model, path)


def mlp(out):
    rng = np.random.default_rng(1)
    w1 = rng.standard_normal((32, 16)).astype(np.float32) * 0.3
    b1 = rng.standard_normal(32).astype(np.float32) * 0.1
    w2 = rng.standard_normal((32, 24)).astype(np.float32) * 0.3
    b2 = rng.standard_normal(24).astype(np.float32) * 0.1
    w3 = rng.standard_normal((24, 10)).astype(np.float32) * 0.3
    b3 = rng.standard_normal((1, 10)).astype(np.float32) * 0.1
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], transB=1, name="fc1"),
        helper.make_node("Relu", ["h1"], ["r1"], name="relu1"),
        helper.make_node("MatMul", ["r1", "w2"], ["m2"], name="fc2"),
        helper.make_node("Add", ["m2", "b2"], ["h2"], name="fc2_bias"),
        helper.make_node("Relu", ["h2"], ["r2"], name="relu2"),
        helper.make_node("Gemm", ["r2", "w3", "b3"], ["h3"], alpha=0.5, beta=2.0, name="fc3"),
        helper.make_node("Softmax", ["h3"], ["y"], axis=-1, name="softmax"),
    ]
    g = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
        [const("w1", w1), const("b1", b1), const("w2", w2), const("b2", b2),
         const("w3", w3), const("b3", b3)])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(out, "mlp.onnx"))


def layer_norm(nodes, x, p, g, b, fused):
    if fused:
        nodes.append(helper.make_node("LayerNormalization", [x, g, b], [p + "out"],
                                      axis=-1, epsilon=1e-5, name=p + "ln"))
        return p + "out"
    nodes += [
        helper.make_node("ReduceMean", [x], [p + "mean"], axes=[-1], name=p + "mean"),
        helper.make_node("Sub", [x, p + "mean"], [p + "d"], name=p + "sub"),
        helper.make_node("Pow", [p + "d", "two"], [p + "d2"], name=p + "pow"),
        helper.make_node("ReduceMean", [p + "d2"], [p + "var"], axes=[-1], name=p + "var"),
        helper.make_node("Add", [p + "var", "eps"], [p + "ve"], name=p + "addeps"),
        helper.make_node("Sqrt", [p + "ve"], [p + "sd"], name=p + "sqrt"),
        helper.make_node("Div", [p + "d", p + "sd"], [p + "n"], name=p + "div"),
        helper.make_node("Mul", [p + "n", g], [p + "s"], name=p + "gamma"),
        helper.make_node("Add", [p + "s", b], [p + "out"], name=p + "beta"),
    ]
    return p + "out"


def bert(out, opset):
    rng = np.random.default_rng(2)

    def w(*shape, s=0.2):
        return (rng.standard_normal(shape) * s).astype(np.float32)

    inits = [const(n, a) for n, a in [
        ("wq", w(D, D)), ("bq", w(D, s=0.05)), ("wk", w(D, D)), ("bk", w(D, s=0.05)),
        ("wv", w(D, D)), ("bv", w(D, s=0.05)), ("wo", w(D, D)), ("bo", w(D, s=0.05)),
        ("w1", w(D, FF)), ("b1", w(FF, s=0.05)), ("w2", w(FF, D)), ("b2", w(D, s=0.05)),
        ("g1", 1 + w(D, s=0.1)), ("be1", w(D, s=0.1)),
        ("g2", 1 + w(D, s=0.1)), ("be2", w(D, s=0.1)),
        ("heads", np.array([S, H, DH], dtype=np.int64)),
        ("merged", np.array([1, S, D], dtype=np.int64)),
        ("zero", np.array([0], dtype=np.int64)),
        ("scale", np.array(np.sqrt(DH), dtype=np.float32)),
        ("two", np.array(2.0, dtype=np.float32)),
        ("eps", np.array(1e-5, dtype=np.float32)),
        ("sqrt2", np.array(np.sqrt(2.0), dtype=np.float32)),
        ("one", np.array(1.0, dtype=np.float32)),
        ("half", np.array(0.5, dtype=np.float32)),
    ]]
    nodes = []
    for p in "qkv":
        nodes += [
            helper.make_node("MatMul", ["x", "w" + p], [p + "m"], name=p + "_proj"),
            helper.make_node("Add", [p + "m", "b" + p], [p + "b"], name=p + "_bias"),
        ]
    # Q's head shape from a Shape sub-graph (folded at import): batch of x
    # concatenated with [S, H, DH].
    nodes += [
        helper.make_node("Shape", ["x"], ["xs"], name="shape"),
        helper.make_node("Gather", ["xs", "zero"], ["batch"], axis=0, name="batch"),
        helper.make_node("Concat", ["batch", "heads"], ["qshape"], axis=0, name="qshape"),
        helper.make_node("Reshape", ["qb", "qshape"], ["qh"], name="q_heads"),
        helper.make_node("Reshape", ["kb", "kvshape"], ["kh"], name="k_heads"),
        helper.make_node("Reshape", ["vb", "kvshape"], ["vh"], name="v_heads"),
        helper.make_node("Transpose", ["qh"], ["qt"], perm=[0, 2, 1, 3], name="q_t"),
        helper.make_node("Transpose", ["kh"], ["kt"], perm=[0, 2, 3, 1], name="k_t"),
        helper.make_node("Transpose", ["vh"], ["vt"], perm=[0, 2, 1, 3], name="v_t"),
        helper.make_node("MatMul", ["qt", "kt"], ["sc"], name="scores"),
        helper.make_node("Div", ["sc", "scale"], ["scs"], name="scale"),
        helper.make_node("Softmax", ["scs"], ["pr"], axis=-1, name="softmax"),
        helper.make_node("MatMul", ["pr", "vt"], ["ctx"], name="context"),
        helper.make_node("Transpose", ["ctx"], ["ctxt"], perm=[0, 2, 1, 3], name="ctx_t"),
        helper.make_node("Reshape", ["ctxt", "merged"], ["ctxm"], name="merge"),
        helper.make_node("MatMul", ["ctxm", "wo"], ["om"], name="o_proj"),
        helper.make_node("Add", ["om", "bo"], ["ob"], name="o_bias"),
        helper.make_node("Add", ["ob", "x"], ["res1"], name="residual1"),
    ]
    inits.append(const("kvshape", np.array([1, S, H, DH], dtype=np.int64)))
    ln1 = layer_norm(nodes, "res1", "ln1_", "g1", "be1", opset >= 17)
    nodes += [
        helper.make_node("MatMul", [ln1, "w1"], ["f1"], name="ff1"),
        helper.make_node("Add", ["f1", "b1"], ["f1b"], name="ff1_bias"),
        helper.make_node("Div", ["f1b", "sqrt2"], ["gd"], name="gelu_div"),
        helper.make_node("Erf", ["gd"], ["ge"], name="gelu_erf"),
        helper.make_node("Add", ["ge", "one"], ["ga"], name="gelu_add"),
        helper.make_node("Mul", ["f1b", "ga"], ["gm"], name="gelu_mul"),
        helper.make_node("Mul", ["gm", "half"], ["gelu"], name="gelu_half"),
        helper.make_node("MatMul", ["gelu", "w2"], ["f2"], name="ff2"),
        helper.make_node("Add", ["f2", "b2"], ["f2b"], name="ff2_bias"),
        helper.make_node("Add", ["f2b", ln1], ["res2"], name="residual2"),
    ]
    y = layer_norm(nodes, "res2", "ln2_", "g2", "be2", opset >= 17)
    nodes.append(helper.make_node("Identity", [y], ["y"], name="out"))
    g = helper.make_graph(
        nodes, "bert%d" % opset,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", S, D])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", S, D])], inits)
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]),
         os.path.join(out, "bert%d.onnx" % opset))


def bad(out):
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "opset18",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.opset_import[0].version = 18  # newer than python3-onnx 1.12 knows
    onnx.save(m, os.path.join(out, "opset18.onnx"))

    rng = np.random.default_rng(3)
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"], name="relu"),
         helper.make_node("Tanh", ["r"], ["t"], name="tanh"),
         helper.make_node("Conv", ["t", "w"], ["y"], name="conv")], "unsupported",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 3, 3])],
        [const("w", rng.standard_normal((3, 2, 3, 3)).astype(np.float32))])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(out, "unsupported.onnx"))


def consts(out):
    nodes = [
        helper.make_node("Constant", [], ["scale"], value_floats=[1.0, -2.0, 0.5], name="c_scale"),
        helper.make_node("Constant", [], ["shift"], value_float=0.25, name="c_shift"),
        helper.make_node("Constant", [], ["shape"], value_ints=[3, 2], name="c_shape"),
        helper.make_node("Mul", ["x", "scale"], ["m"], name="mul"),
        helper.make_node("Sub", ["shift", "m"], ["s"], name="sub"),
        helper.make_node("Reshape", ["s", "shape"], ["y"], name="reshape"),
    ]
    g = helper.make_graph(
        nodes, "consts",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(out, "consts.onnx"))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    mlp(out)
    bert(out, 14)
    bert(out, 17)
    bad(out)
    consts(out)
    rng = np.random.default_rng(42)
    np.save(os.path.join(out, "x_mlp.npy"), rng.standard_normal((3, 16)).astype(np.float32))
    np.save(os.path.join(out, "x_bert.npy"), rng.standard_normal((1, S, D)).astype(np.float32))
    np.save(os.path.join(out, "x_small.npy"), rng.standard_normal((2, 3)).astype(np.float32))


if __name__ == "__main__":
    main()
