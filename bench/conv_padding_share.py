#!/usr/bin/env python3
"""How much of a model's convolution arithmetic falls on padding.

`collage bench` and `collage info` count a convolution's multiply-adds at every output position
and kernel tap, padded ones included (the usual convention for GFLOP figures). Kernels that skip
the taps outside the input then run above the "peak" `collage bench` prints. This prints, per
model, the share of its convolutions' nominal multiply-adds whose input position is padding:
each spatial dim's (output position, kernel tap) pairs counted against the input's extent, on
the shapes ONNX's shape inference gives. Convolutions whose shapes it cannot read (dims left
open, auto_pad) are counted as unread, not guessed.

    bench/.venv/bin/python bench/conv_padding_share.py MODEL.onnx [MODEL.onnx ...]
"""
import sys

import numpy as np
import onnx
from onnx import shape_inference


def dims(value):
    return [d.dim_value for d in value.type.tensor_type.shape.dim]


def inside_share(in_len, out_len, kernel, stride, pad_begin, dilation):
    """The share of one dim's (output position, kernel tap) pairs that land inside the input."""
    inside = sum(0 <= o * stride - pad_begin + t * dilation < in_len for o in range(out_len) for t in range(kernel))
    return inside / (out_len * kernel)


def padding_share(path):
    graph = shape_inference.infer_shapes(onnx.load(path)).graph
    shapes = {v.name: dims(v) for v in list(graph.value_info) + list(graph.input) + list(graph.output)}
    weights = {i.name: list(i.dims) for i in graph.initializer}
    nominal = inside = 0.0
    unread = 0
    for node in graph.node:
        if node.op_type != "Conv":
            continue
        # Weights made by a node (ConstantOfShape in some exports) have an inferred shape instead.
        x, y = shapes.get(node.input[0]), shapes.get(node.output[0])
        w = weights.get(node.input[1]) or shapes.get(node.input[1])
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if (not x or not w or not y or min(x[2:] + y[2:] + w[1:], default=0) <= 0
                or attrs.get("auto_pad", b"NOTSET") != b"NOTSET"):
            unread += 1
            continue
        kernel = w[2:]
        rank = len(kernel)
        strides = attrs.get("strides", [1] * rank)
        pads = attrs.get("pads", [0] * 2 * rank)
        dilations = attrs.get("dilations", [1] * rank)
        macs = float(np.prod(y[1:])) * w[1] * float(np.prod(kernel))
        share = 1.0
        for d in range(rank):
            share *= inside_share(x[2 + d], y[2 + d], kernel[d], strides[d], pads[d], dilations[d])
        nominal += macs
        inside += macs * share
    return (1 - inside / nominal if nominal else None), unread


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for path in sys.argv[1:]:
        share, unread = padding_share(path)
        if share is None:
            print(f"{path}: no convolution whose shapes could be read ({unread} unread)")
            continue
        print(f"{path}: {100 * share:.1f}% of the convolutions' nominal multiply-adds fall on padding"
              + (f" ({unread} convolutions' shapes unread)" if unread else ""))


if __name__ == "__main__":
    main()
