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
  unsupported.onnx  Relu, Sin, Conv on run-time tensors (refused, listed)
  consts.onnx     opset 13: Constant value_floats / value_float / value_ints
                  feeding Mul, Sub and a Reshape
  x_mlp.npy, x_bert.npy, x_small.npy  the inputs
  resnet.onnx     opset 13: a ResNet-style CNN, dynamic batch "N": conv-bn-relu
                  stem, MaxPool, two basic blocks with residual Add (the second
                  strided, with a 1x1 downsample conv), GlobalAveragePool,
                  Flatten, Gemm; x_resnet.npy [2, 3, 32, 32]
  cnn_*.onnx      opset 13: one CNN operator each (CNN_CASES: Conv groups,
                  depthwise, dilations, strides, pads, auto_pad; pools with
                  ceil_mode and count_include_pad; ConvTranspose; BN), input
                  x_cnn_*.npy
  cnnbad_*.onnx   Conv refusals: channels against groups, a weight that is
                  a graph input, a kernel larger than the padded input
  shapes.onnx     opset 14, x [N, 4, 6]: reshapes from Shape/Gather/Cast/
                  Slice/Concat, Squeeze/Unsqueeze, ConstantOfShape, Range
                  (folded), then Sigmoid, Tanh, HardSwish, Softmax on axis 1,
                  ReduceMean keepdims=0, Concat, Slice by -2, Gather on axis
                  1, Where, Clip at run time; outputs y, y2 (x_shapes1/3.npy)
  ops9.onnx, ops13.onnx, ops14.onnx  each operator of shapes.onnx and the
                  rest (Exp, Sqrt, Erf, HardSigmoid, Pow, ReduceSum, Cast)
                  with broadcasting and odd dims, in the semantics of each
                  opset (x_ops.npy [3, 5, 7])
  bad_gather.onnx, bad_slice.onnx, bad_pow.onnx  refused, naming the node
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
         helper.make_node("Sin", ["r"], ["t"], name="sin"),
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


def rand(rng, *shape, s=1.0):
    return (rng.standard_normal(shape) * s).astype(np.float32)


def bn_params(rng, p, c):
    return [const(p + "_s", 1 + rand(rng, c, s=0.2)), const(p + "_b", rand(rng, c, s=0.1)),
            const(p + "_m", rand(rng, c, s=0.1)),
            const(p + "_v", rng.uniform(0.5, 1.5, c).astype(np.float32))]


def resnet(out):
    rng = np.random.default_rng(5)
    nodes, inits = [], []

    def conv_bn(x, p, cin, cout, k, stride, relu):
        inits.append(const(p + "_w", rand(rng, cout, cin, k, k, s=np.sqrt(2.0 / (cin * k * k)))))
        inits.extend(bn_params(rng, p + "_bn", cout))
        pad = k // 2
        nodes.append(helper.make_node("Conv", [x, p + "_w"], [p + "_c"], name=p,
                                      kernel_shape=[k, k], strides=[stride, stride],
                                      pads=[pad] * 4))
        nodes.append(helper.make_node(
            "BatchNormalization", [p + "_c", p + "_bn_s", p + "_bn_b", p + "_bn_m", p + "_bn_v"],
            [p + "_n"], epsilon=1e-5, name=p + "_bn"))
        if not relu:
            return p + "_n"
        nodes.append(helper.make_node("Relu", [p + "_n"], [p + "_r"], name=p + "_relu"))
        return p + "_r"

    def block(x, p, cin, cout, stride):
        h = conv_bn(x, p + "_a", cin, cout, 3, stride, True)
        h = conv_bn(h, p + "_b", cout, cout, 3, 1, False)
        short = x if stride == 1 and cin == cout else conv_bn(x, p + "_down", cin, cout, 1,
                                                               stride, False)
        nodes.append(helper.make_node("Add", [h, short], [p + "_sum"], name=p + "_add"))
        nodes.append(helper.make_node("Relu", [p + "_sum"], [p + "_out"], name=p + "_relu"))
        return p + "_out"

    h = conv_bn("x", "stem", 3, 8, 3, 1, True)
    nodes.append(helper.make_node("MaxPool", [h], ["pool"], kernel_shape=[3, 3], strides=[2, 2],
                                  pads=[1, 1, 1, 1], name="maxpool"))
    h = block("pool", "block1", 8, 8, 1)
    h = block(h, "block2", 8, 16, 2)
    nodes += [
        helper.make_node("GlobalAveragePool", [h], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], axis=1, name="flatten"),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"], transB=1, name="fc"),
    ]
    inits += [const("fc_w", rand(rng, 10, 16, s=0.3)), const("fc_b", rand(rng, 10, s=0.1))]
    g = helper.make_graph(
        nodes, "resnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])], inits)
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(out, "resnet.onnx"))
    np.save(os.path.join(out, "x_resnet.npy"), rand(rng, 2, 3, 32, 32))


# name: (x dims, op, attributes, weight dims or None, bias, what follows)
CNN_CASES = {
    "conv_pads": ([1, 3, 7, 9], "Conv", dict(pads=[1, 0, 2, 1]), [4, 3, 3, 3], True, None),
    "conv_group2_dil2": ([2, 4, 9, 7], "Conv", dict(group=2, dilations=[2, 2], pads=[2, 1, 2, 1]),
                         [6, 2, 3, 3], False, None),
    "conv_dw_s2_relu6": ([1, 6, 9, 7], "Conv", dict(group=6, strides=[2, 2], pads=[1, 1, 1, 1]),
                         [6, 1, 3, 3], True, "Clip"),
    "conv_dw_mult2_valid": ([1, 3, 7, 9], "Conv", dict(group=3, strides=[2, 1], auto_pad="VALID"),
                            [6, 1, 3, 3], True, None),
    "conv_same_upper_relu": ([1, 3, 7, 9], "Conv", dict(strides=[2, 2], auto_pad="SAME_UPPER"),
                             [5, 3, 4, 4], True, "Relu"),
    "conv_same_lower": ([1, 3, 7, 9], "Conv", dict(strides=[2, 3], auto_pad="SAME_LOWER"),
                        [5, 3, 3, 2], False, None),
    "conv_1x1_bn": ([2, 5, 7, 9], "Conv", {}, [3, 5, 1, 1], True, "BatchNormalization"),
    "maxpool_ceil": ([1, 3, 7, 9], "MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2],
                                                  pads=[1, 0, 0, 1], ceil_mode=1), None, False, None),
    "maxpool_dil2": ([2, 2, 9, 7], "MaxPool", dict(kernel_shape=[2, 3], dilations=[2, 2],
                                                  pads=[1, 1, 1, 1]), None, False, None),
    "maxpool_same": ([1, 3, 7, 9], "MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2],
                                                  auto_pad="SAME_LOWER"), None, False, None),
    "avgpool_ceil_incl": ([1, 3, 7, 9], "AveragePool",
                          dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1,
                               count_include_pad=1), None, False, None),
    "avgpool_ceil_excl": ([1, 3, 7, 9], "AveragePool",
                          dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
                          None, False, None),
    # ceil_mode where the last window would start in the bottom/right pad
    # (dropped): 4x7 -> 2x3.
    "maxpool_ceil_drop": ([1, 2, 4, 7], "MaxPool", dict(kernel_shape=[2, 2], strides=[3, 3],
                                                       pads=[1, 1, 1, 1], ceil_mode=1),
                          None, False, None),
    "avgpool_ceil_drop_incl": ([1, 2, 4, 7], "AveragePool",
                               dict(kernel_shape=[2, 2], strides=[3, 3], pads=[1, 1, 1, 1],
                                    ceil_mode=1, count_include_pad=1), None, False, None),
    "avgpool_asym": ([2, 3, 9, 7], "AveragePool",
                     dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1],
                          count_include_pad=1), None, False, None),
    "avgpool_same": ([1, 3, 7, 9], "AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2],
                                                      auto_pad="SAME_UPPER"), None, False, None),
    "gap": ([2, 5, 7, 9], "GlobalAveragePool", {}, None, False, None),
    "bn": ([2, 5, 7, 9], "BatchNormalization", dict(epsilon=1e-3), None, False, None),
    "convt_s2": ([1, 4, 5, 7], "ConvTranspose", dict(strides=[2, 2], pads=[1, 1, 1, 1],
                                                    output_padding=[1, 1]),
                 [4, 3, 3, 3], True, None),
    "convt_group2_dil2": ([1, 4, 7, 9], "ConvTranspose", dict(group=2, dilations=[2, 2],
                                                             pads=[1, 2, 0, 1]),
                          [4, 2, 3, 3], False, None),
}


def cnn_ops(out):
    rng = np.random.default_rng(7)
    for name, (xd, op, attrs, wd, bias, after) in sorted(CNN_CASES.items()):
        inits, ins = [], ["x"]
        if wd:
            inits.append(const("w", rand(rng, *wd, s=0.3)))
            ins.append("w")
            if bias:
                m = wd[0] if op == "Conv" else wd[1] * attrs.get("group", 1)
                inits.append(const("b", rand(rng, m, s=0.1)))
                ins.append("b")
        if op == "BatchNormalization":
            inits.extend(bn_params(rng, "bn", xd[1]))
            ins += ["bn_s", "bn_b", "bn_m", "bn_v"]
        nodes = [helper.make_node(op, ins, ["h" if after else "y"], name=name, **attrs)]
        if after == "Relu":
            nodes.append(helper.make_node("Relu", ["h"], ["y"], name="relu"))
        elif after == "Clip":
            inits += [const("lo", np.array(0, np.float32)), const("hi", np.array(6, np.float32))]
            nodes.append(helper.make_node("Clip", ["h", "lo", "hi"], ["y"], name="relu6"))
        elif after == "BatchNormalization":
            inits.extend(bn_params(rng, "bn", wd[0]))
            nodes.append(helper.make_node("BatchNormalization", ["h", "bn_s", "bn_b", "bn_m",
                                                                 "bn_v"], ["y"], name="bn"))
        g = helper.make_graph(nodes, name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, xd)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["o0", "o1", "o2", "o3"])],
                              inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
        save(m, os.path.join(out, "cnn_%s.onnx" % name))
        np.save(os.path.join(out, "x_cnn_%s.npy" % name), rand(rng, *xd))

    def bad_conv(name, xd, wd, group=1, weight_input=False):
        w = helper.make_tensor_value_info("w", TensorProto.FLOAT, wd)
        g = helper.make_graph(
            [helper.make_node("Conv", ["x", "w"], ["y"], group=group, name="conv")], name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, xd)] + ([w] if weight_input else []),
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["o0", "o1", "o2", "o3"])],
            [] if weight_input else [const("w", rand(rng, *wd))])
        save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]),
             os.path.join(out, "cnnbad_%s.onnx" % name))

    bad_conv("channels", [1, 4, 7, 9], [6, 3, 3, 3], group=2)
    bad_conv("weight_input", [1, 3, 7, 9], [4, 3, 3, 3], weight_input=True)
    bad_conv("kernel", [1, 3, 4, 4], [2, 3, 5, 7])
def model(out, name, opset, nodes, inputs, outputs, inits=()):
    """Outputs given without dims (None) get those of shape inference."""
    g = helper.make_graph(nodes, name.split(".")[0], inputs, [], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(m).graph.value_info}
    for o in outputs:
        m.graph.output.append(inferred[o.name] if not o.type.tensor_type.HasField("shape")
                              and o.name in inferred else o)
    save(m, os.path.join(out, name))


def fvi(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def i64(name, vals):
    return const(name, np.array(vals, dtype=np.int64))


def f32(name, vals):
    return const(name, np.array(vals, dtype=np.float32))


def shapes(out):
    n = helper.make_node
    nodes = [
        # The shape sub-graph: [N, 2, 12] and [N, 36] from x's shape.
        n("Shape", ["x"], ["xs"], name="shape"),
        n("Gather", ["xs", "zero"], ["n0"], axis=0, name="batch"),
        n("Cast", ["n0"], ["n0f"], to=TensorProto.FLOAT, name="batch_f"),
        n("Cast", ["n0f"], ["n0i"], to=TensorProto.INT64, name="batch_i"),
        n("Squeeze", ["n0i", "zero"], ["ns"], name="batch_scalar"),
        n("Unsqueeze", ["ns", "zero"], ["nu"], name="batch_vec"),
        n("Slice", ["xs", "one_i", "two_i"], ["tail"], name="tail"),
        n("Mul", ["tail", "three_i"], ["half"], name="half"),
        n("Concat", ["nu", "two_v", "half"], ["s3"], axis=0, name="shape3"),
        n("Reshape", ["x", "s3"], ["r3"], name="to3d"),
        n("ConstantOfShape", ["cs_shape"], ["cs"],
          value=helper.make_tensor("v", TensorProto.FLOAT, [1], [0.25]), name="fill"),
        n("Range", ["r0", "r12", "r1"], ["rg"], name="range"),
        n("Cast", ["rg"], ["rgf"], to=TensorProto.FLOAT, name="range_f"),
        n("Div", ["rgf", "twelve"], ["ramp"], name="ramp"),
        # Run time.
        n("Add", ["r3", "cs"], ["r3b"], name="shift"),
        n("Sigmoid", ["r3b"], ["a"], name="sigmoid"),
        n("Tanh", ["r3"], ["b"], name="tanh"),
        n("HardSwish", ["r3"], ["c"], name="hardswish"),
        n("Softmax", ["a"], ["sm"], axis=1, name="softmax1"),
        n("ReduceMean", ["b"], ["y2"], axes=[2], keepdims=0, name="mean"),
        n("Concat", ["sm", "c"], ["cat"], axis=2, name="concat"),
        n("Slice", ["cat", "m1", "big_neg", "two_ax", "m2"], ["sl"], name="reverse_by_2"),
        n("Gather", ["sl", "g_idx"], ["g"], axis=1, name="gather1"),
        n("Mul", ["g", "ramp"], ["gr"], name="ramp_mul"),
        n("Where", ["cond", "g", "gr"], ["w"], name="where"),
        n("Clip", ["w", "lo", "hi"], ["cl"], name="clip"),
        n("Concat", ["nu", "m1"], ["s2"], axis=0, name="shape2"),
        n("Reshape", ["cl", "s2"], ["y"], name="flatten"),
    ]
    inits = [
        i64("zero", [0]), i64("one_i", [1]), i64("three_i", [3]), i64("two_i", [2]),
        i64("two_v", [2]), i64("cs_shape", [1, 1, 12]),
        i64("r0", 0), i64("r12", 12), i64("r1", 1), f32("twelve", 12.0),
        i64("m1", [-1]), i64("big_neg", [-1000]), i64("two_ax", [2]), i64("m2", [-2]),
        i64("g_idx", [1, 0, -1]),
        const("cond", (np.arange(12) % 3 != 0).reshape(1, 1, 12)),
        f32("lo", -0.05), f32("hi", 0.4),
    ]
    model(out, "shapes.onnx", 14, nodes, [fvi("x", ["N", 4, 6])],
          [fvi("y", ["N", 36]), fvi("y2", ["N", 2])], inits)
    rng = np.random.default_rng(7)
    np.save(os.path.join(out, "x_shapes1.npy"), rng.standard_normal((1, 4, 6)).astype(np.float32))
    np.save(os.path.join(out, "x_shapes3.npy"), rng.standard_normal((3, 4, 6)).astype(np.float32))


def ops(out):
    n = helper.make_node
    X = [fvi("x", [3, 5, 7])]
    rng = np.random.default_rng(11)
    # opset 9: attributes (Clip min/max, Slice starts/ends/axes, ReduceSum
    # axes) and Softmax coerced to 2-D at axis.
    nodes = [
        n("Clip", ["x"], ["y_clip"], min=-0.5, max=0.75, name="clip"),
        n("Clip", ["x"], ["y_clip_max"], max=0.1, name="clip_max"),
        n("Softmax", ["x"], ["y_softmax1"], axis=1, name="softmax1"),
        n("Softmax", ["x"], ["y_softmax0"], axis=0, name="softmax0"),
        n("Slice", ["x"], ["y_slice"], starts=[1, -3], ends=[100, -1], axes=[1, 2], name="slice"),
        n("ReduceSum", ["x"], ["y_rsum"], axes=[0, 2], keepdims=1, name="rsum"),
        n("ReduceMean", ["x"], ["y_rmean"], keepdims=0, name="rmean_all"),
    ]
    outs = [fvi(o, None) for o in ["y_clip", "y_clip_max", "y_softmax1", "y_softmax0",
                                   "y_slice", "y_rsum", "y_rmean"]]
    model(out, "ops9.onnx", 9, nodes, X, outs)

    # opset 13: inputs for Clip, Slice, ReduceSum; single-axis Softmax.
    nodes = [
        n("Clip", ["x", "lo", ""], ["y_clip"], name="clip"),
        n("Softmax", ["x"], ["y_softmax1"], axis=1, name="softmax1"),
        n("Softmax", ["x"], ["y_softmax0"], axis=-3, name="softmax0"),
        n("ReduceSum", ["x", "ax1"], ["y_rsum"], keepdims=0, name="rsum"),
        n("ReduceSum", ["x"], ["y_rsum_all"], keepdims=1, name="rsum_all"),
        n("ReduceSum", ["x"], ["y_rsum_noop"], noop_with_empty_axes=1, name="rsum_noop"),
        n("ReduceMean", ["x"], ["y_rmean"], axes=[-1, 0], keepdims=0, name="rmean"),
        n("Slice", ["x", "st", "en", "axs", "stp"], ["y_slice"], name="slice"),
        n("Slice", ["x", "st2", "en2"], ["y_slice2"], name="slice_clamp"),
        n("Gather", ["x", "gi"], ["y_gather1"], axis=1, name="gather1"),
        n("Gather", ["x", "gs"], ["y_gather0"], axis=0, name="gather_scalar"),
        n("Gather", ["x", "gi2"], ["y_gather2"], axis=-1, name="gather2d"),
        n("Sigmoid", ["x"], ["s"], name="sig"),
        n("Concat", ["x", "s", "cpart", "x", "s"], ["y_concat5"], axis=1, name="concat5"),
        n("Concat", ["x", "s"], ["y_concat2"], axis=-1, name="concat2"),
        n("Where", ["wc", "x", "s"], ["y_where"], name="where_const"),
        n("Relu", ["x"], ["rx"], name="relu"),
        n("Cast", ["rx"], ["rb"], to=TensorProto.BOOL, name="to_bool"),
        n("Where", ["rb", "wv", "x"], ["y_where_rt"], name="where_rt"),
        n("Mul", ["x", "k20"], ["x20"], name="x20"),
        n("Cast", ["x20"], ["xi8"], to=TensorProto.INT8, name="to_i8"),
        n("Cast", ["xi8"], ["y_cast_i8"], to=TensorProto.FLOAT, name="i8_to_f"),
        n("Mul", ["rx", "k20"], ["r20"], name="r20"),
        n("Cast", ["r20"], ["ru8"], to=TensorProto.UINT8, name="to_u8"),
        n("Cast", ["ru8"], ["y_cast_u8"], to=TensorProto.FLOAT, name="u8_to_f"),
        n("Mul", ["x", "k1000"], ["x1000"], name="x1000"),
        n("Cast", ["x1000"], ["xi32"], to=TensorProto.INT32, name="to_i32"),
        n("Gather", ["xi32", "gi"], ["gi32"], axis=1, name="gather_i32"),
        n("Cast", ["gi32"], ["y_cast_i32"], to=TensorProto.FLOAT, name="i32_to_f"),
        n("Exp", ["x"], ["y_exp"], name="exp"),
        n("Sqrt", ["s"], ["y_sqrt"], name="sqrt"),
        n("Erf", ["x"], ["y_erf"], name="erf"),
        n("Tanh", ["x"], ["y_tanh"], name="tanh"),
        n("HardSigmoid", ["x"], ["y_hsig"], alpha=0.3, beta=0.4, name="hardsigmoid"),
        n("HardSigmoid", ["x"], ["y_hsig_def"], name="hardsigmoid_default"),
        n("Pow", ["s", "e_scalar"], ["y_pow_scalar"], name="pow_scalar"),
        n("Pow", ["s", "e_vec"], ["y_pow_vec"], name="pow_vec"),
        n("Pow", ["s", "e_int"], ["y_pow_int"], name="pow_int"),
        n("ReduceMean", ["x"], ["xm"], axes=[1], keepdims=1, name="xm"),
        n("Pow", ["s", "xm"], ["y_pow_rt"], name="pow_rt"),
        n("Pow", ["xm", "e_one"], ["y_pow_grow"], name="pow_grow"),
    ]
    inits = [
        f32("lo", -0.25), i64("ax1", [1]),
        i64("st", [-1, 4, 0]), i64("en", [-100, 0, 9]), i64("axs", [2, 1, 0]),
        i64("stp", [-3, -1, 2]),
        i64("st2", [-10, 2]), i64("en2", [2, 2 ** 62]),
        i64("gi", [[4, -1], [0, 2]]), i64("gs", 1), i64("gi2", [6, -7, 3]),
        f32("cpart", rng.standard_normal((3, 2, 7))),
        const("wc", rng.standard_normal((5, 1)) > 0),
        f32("wv", -2.0), f32("k20", 20.0), f32("k1000", 1000.0),
        f32("e_scalar", 2.5), f32("e_vec", rng.uniform(0.5, 3, 7)),
        const("e_int", np.array(3, dtype=np.int64)),
        f32("e_one", [[[[1.5]]]]),
    ]
    names = [nd.output[0] for nd in nodes if nd.output[0].startswith("y_")]
    model(out, "ops13.onnx", 13, nodes, X, [fvi(o, None) for o in names], inits)

    nodes = [n("HardSwish", ["x"], ["y_hswish"], name="hardswish"),
             n("Clip", ["x", "", "hi"], ["y_clip"], name="clip_max")]
    model(out, "ops14.onnx", 14, nodes, X, [fvi("y_hswish", None), fvi("y_clip", None)],
          [f32("hi", 0.3)])
    x = rng.standard_normal((3, 5, 7)).astype(np.float32)
    x[0, 0, :4] = [0.0, -3.0, 3.0, 0.5]  # HardSwish's and Clip's corners
    np.save(os.path.join(out, "x_ops.npy"), x)

    # Refused, naming the node.
    model(out, "bad_gather.onnx", 13, [n("Gather", ["x", "gi"], ["y"], axis=1, name="gather_oob")],
          X, [fvi("y", None)], [i64("gi", [1, 5])])
    model(out, "bad_slice.onnx", 13,
          [n("Slice", ["x", "s", "e", "a", "z"], ["y"], name="slice_step0")], X,
          [fvi("y", [3, 2, 7])],
          [i64("s", [0]), i64("e", [2]), i64("a", [1]), i64("z", [0])])
    model(out, "bad_pow.onnx", 13,
          [n("Sigmoid", ["x"], ["s"], name="sig"),
           n("Slice", ["x", "s0", "e0", "a0"], ["e"], name="cut"),
           n("Pow", ["s", "e"], ["y"], name="pow_bad")], X, [fvi("y", [3, 5, 7])],
          [i64("s0", [0]), i64("e0", [4]), i64("a0", [2])])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    mlp(out)
    bert(out, 14)
    bert(out, 17)
    bad(out)
    consts(out)
    resnet(out)
    cnn_ops(out)
    shapes(out)
    ops(out)
    rng = np.random.default_rng(42)
    np.save(os.path.join(out, "x_mlp.npy"), rng.standard_normal((3, 16)).astype(np.float32))
    np.save(os.path.join(out, "x_bert.npy"), rng.standard_normal((1, S, D)).astype(np.float32))
    np.save(os.path.join(out, "x_small.npy"), rng.standard_normal((2, 3)).astype(np.float32))


if __name__ == "__main__":
    main()
