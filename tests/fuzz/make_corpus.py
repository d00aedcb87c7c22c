#!/usr/bin/python3
"""Writes model_loader_fuzzer's seed corpus: a few tiny valid ONNX models covering the
frontend's paths (initializers, Constant nodes, constant folding, optional inputs, attributes
of each kind, opset 18+ without the checker); the other fuzzers' seeds come from
fuzz_seeds.cc. Run with Debian's python3 (it has onnx 1.12):

    /usr/bin/python3 tests/fuzz/make_corpus.py tests/fuzz/corpus/model_loader

The files have no .onnx extension because .gitignore ignores *.onnx.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, inits=(), opset=13, ir_version=8):
    graph = helper.make_graph(nodes, "seed", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="collage-fuzz-seed")
    m.ir_version = ir_version
    return m


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def seeds():
    yield "relu", model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                        [vi("x", [2, 3])], [vi("y", [2, 3])])

    w = numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(2, 1, 2, 2), "w")
    b = helper.make_tensor("b", TensorProto.FLOAT, [2], [0.5, -0.5])  # typed field
    yield "conv_pool", model([
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[2, 2],
                         pads=[0, 0, 1, 1], strides=[1, 1]),
        helper.make_node("LeakyRelu", ["c"], ["l"], name="leaky", alpha=0.1),
        helper.make_node("MaxPool", ["l"], ["y"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
    ], [vi("x", [1, 1, 4, 4])], [vi("y", [1, 2, 2, 2])], [w, b])

    yield "shape_chain", model([
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsqueeze"),
        helper.make_node("Concat", ["n1", "minus_one"], ["shape2"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "shape2"], ["y"], name="reshape"),
    ], [vi("x", [2, 3, 4])], [vi("y", [2, 12])], [
        numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "axes"),
        numpy_helper.from_array(np.array([-1], dtype=np.int64), "minus_one"),
    ])

    yield "constants", model([
        helper.make_node("Constant", [], ["c"], name="c", value=numpy_helper.from_array(
            np.array([1.0, 2.0, 3.0], dtype=np.float32))),
        helper.make_node("Constant", [], ["k"], name="k", value_float=0.5),
        helper.make_node("Mul", ["c", "k"], ["ck"], name="mul"),
        helper.make_node("Add", ["x", "ck"], ["y"], name="add"),
    ], [vi("x", [3])], [vi("y", [3])])

    yield "clip_optional", model([
        helper.make_node("Clip", ["x", "", "hi"], ["y"], name="clip"),
    ], [vi("x", [4])], [vi("y", [4])], [numpy_helper.from_array(np.array(1.0, dtype=np.float32), "hi")])

    yield "dynamic_batch", model([
        helper.make_node("Transpose", ["x"], ["t"], name="transpose", perm=[1, 0]),
        helper.make_node("Softmax", ["t"], ["y"], name="softmax", axis=-1),
    ], [vi("x", ["batch", 3])], [vi("y", [3, "batch"])])

    yield "opset18_reduce", model([
        helper.make_node("ReduceMean", ["x", "axes"], ["y"], name="mean", keepdims=1),
    ], [vi("x", [2, 3])], [vi("y", [2, 1])],
        [numpy_helper.from_array(np.array([1], dtype=np.int64), "axes")], opset=18, ir_version=8)

    yield "int_ops", model([
        helper.make_node("Cast", ["x"], ["xi"], name="cast", to=TensorProto.INT32),
        helper.make_node("Equal", ["xi", "xi"], ["eq"], name="eq"),
        helper.make_node("Where", ["eq", "x", "x"], ["y"], name="where"),
    ], [vi("x", [2, 2])], [vi("y", [2, 2])])

    yield "qdq_conv", model([
        helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], name="dq_w", axis=0),
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q"),
        helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"], name="dq_x"),
        helper.make_node("Conv", ["xf", "wf"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["c", "s", "z"], ["y"], name="q_out"),
    ], [vi("x", [1, 2, 3, 3])], [vi("y", [1, 2, 3, 3], TensorProto.UINT8)], [
        numpy_helper.from_array(np.arange(-9, 27, dtype=np.int8).reshape(2, 2, 3, 3), "w"),
        numpy_helper.from_array(np.array([0.1, 0.2], dtype=np.float32), "ws"),
        numpy_helper.from_array(np.array([0, 0], dtype=np.int8), "wz"),
        numpy_helper.from_array(np.array(0.05, dtype=np.float32), "s"),
        numpy_helper.from_array(np.array(128, dtype=np.uint8), "z")])

    # ONNX Runtime's operator format: a com.microsoft op between two QLinear ones.
    qlinear_add = model([
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"], name="q"),
        helper.make_node("QLinearAdd", ["xq", "s", "z", "xq", "s", "z", "s", "z"], ["sq"],
                         name="add", domain="com.microsoft"),
        helper.make_node("DequantizeLinear", ["sq", "s", "z"], ["y"], name="dq"),
    ], [vi("x", [4])], [vi("y", [4])], [
        numpy_helper.from_array(np.array(0.1, dtype=np.float32), "s"),
        numpy_helper.from_array(np.array(3, dtype=np.uint8), "z")])
    qlinear_add.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    yield "qlinear_add", qlinear_add

    # A sparse initializer whose dims claim far more values than it holds: refused before
    # the checker, which would read past them (mutations reach the checker's other paths).
    sparse = model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                   [vi("x", [2])], [vi("y", [2])])
    short = sparse.graph.sparse_initializer.add()
    short.dims.extend([100000, 100000])
    for part, name, elem in ((short.values, "w", TensorProto.FLOAT),
                             (short.indices, "i", TensorProto.INT64)):
        part.name, part.data_type, part.raw_data = name, elem, b"\0" * 8
        part.dims.append(1000)
    yield "sparse_initializer_short", sparse

    # Control flow and shapes set by data (a staged model): a Loop whose body holds an If on
    # its data and fills a sequence, concatenated after it; a NonZero of a computed value.
    branch_then = helper.make_graph([helper.make_node("Neg", ["v"], ["t"])], "then", [],
                                    [vi("t", [2])])
    branch_else = helper.make_graph([helper.make_node("Abs", ["v"], ["e"])], "else", [],
                                    [vi("e", [2])])
    body = helper.make_graph([
        helper.make_node("ReduceSum", ["v"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["big"]),
        helper.make_node("If", ["big"], ["w"], then_branch=branch_then, else_branch=branch_else),
        helper.make_node("SequenceInsert", ["rows", "w"], ["rows_out"]),
        helper.make_node("Identity", ["c"], ["c_out"]),
    ], "body", [vi("i", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL), vi("v", [2]),
                helper.make_tensor_sequence_value_info("rows", TensorProto.FLOAT, [2])],
        [vi("c_out", [], TensorProto.BOOL), vi("w", [2]),
         helper.make_tensor_sequence_value_info("rows_out", TensorProto.FLOAT, [2])])
    staged = model([
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=TensorProto.FLOAT),
        helper.make_node("Loop", ["trip", "", "x", "empty"], ["v_last", "rows"], body=body),
        helper.make_node("ConcatFromSequence", ["rows"], ["y"], axis=0),
        helper.make_node("Greater", ["y", "zero"], ["positive"]),
        helper.make_node("NonZero", ["positive"], ["where"]),
    ], [vi("x", [2]), vi("trip", [], TensorProto.INT64)],
        [vi("y", ["n"]), vi("where", [1, "k"], TensorProto.INT64)],
        [numpy_helper.from_array(np.array(0, dtype=np.float32), "zero")])
    yield "staged_loop_if_sequence", staged


def main():
    default = os.path.join(os.path.dirname(__file__), "corpus", "model_loader")
    out = sys.argv[1] if len(sys.argv) > 1 else default
    os.makedirs(out, exist_ok=True)
    for name, m in seeds():
        if m.opset_import[0].version <= 17 and not m.graph.sparse_initializer:
            onnx.checker.check_model(m)
        with open(os.path.join(out, name), "wb") as f:
            f.write(m.SerializeToString())
        print(name)


if __name__ == "__main__":
    main()
