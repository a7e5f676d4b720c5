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
    rng = np.random.default_rng(42)
    np.save(os.path.join(out, "x_mlp.npy"), rng.standard_normal((3, 16)).astype(np.float32))
    np.save(os.path.join(out, "x_bert.npy"), rng.standard_normal((1, S, D)).astype(np.float32))
    np.save(os.path.join(out, "x_small.npy"), rng.standard_normal((2, 3)).astype(np.float32))


if __name__ == "__main__":
    main()
