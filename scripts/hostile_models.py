"""Small ONNX models and an independent numpy evaluator for scripts/hostile_inputs.py.

The evaluator is deliberately naive (Python loops, exact Python integers for shape
arithmetic) so that it shares nothing with collage's kernels: where it can compute a model's
outputs, an exit 0 from collage with different outputs is a silent wrong answer.  It raises
Invalid for a model ONNX says is malformed, TooBig for a valid model whose output cannot fit
in the campaign's memory limit, and Unsupported for anything it does not implement (the
campaign then accepts collage's answer unchecked and counts it as such).

Standard library + numpy + onnx only (Debian's python3-onnx, python3-numpy).
"""

import math

import numpy as np
import onnx.numpy_helper as nh
from onnx import TensorProto, helper

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
OPSET = 13

# An output of more elements than this cannot be held under the 4 GiB address-space limit
# (float32): collage must refuse it.  Up to CHECKED_ELEMENTS the evaluator computes the answer.
MUST_REFUSE_ELEMENTS = 2**30
CHECKED_ELEMENTS = 1 << 20


class Invalid(Exception):
    """The model is malformed by ONNX's rules: collage must refuse it."""


class TooBig(Exception):
    """The model is valid but its result cannot fit in memory: collage must refuse it."""


class Unsupported(Exception):
    """The evaluator does not know this op or mode: collage's answer goes unchecked."""


class Unchecked(Exception):
    """Valid and within memory, but too large to evaluate here in reasonable time."""


# --------------------------------------------------------------------------------------------
# Model building


def i64(name, values):
    return nh.from_array(np.array(values, dtype=np.int64), name)


def f32(name, values):
    return nh.from_array(np.array(values, dtype=np.float32), name)


def value_info(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


def make_model(nodes, inputs, outputs, initializers, opset=OPSET, name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="hostile_inputs")
    model.ir_version = 8  # onnx 1.12's make_model picks 8; pinned so the bytes never move
    return model


def symbolic(rank, prefix="o"):
    """An output shape of the right rank whose dims collage and ONNX infer themselves."""
    return [f"{prefix}{i}" for i in range(rank)]


def base_models():
    """The seed models of the 'models' family: name -> (ModelProto, {input: shape})."""
    rng = np.random.default_rng(1234)
    r = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    F = TensorProto.FLOAT
    models = {}

    models["conv"] = make_model(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv0", pads=[1, 1, 1, 1],
                          strides=[1, 1], kernel_shape=[3, 3]),
         helper.make_node("Relu", ["c"], ["y"], name="relu0")],
        [value_info("x", F, [1, 2, 5, 5])], [value_info("y", F, [1, 3, 5, 5])],
        [nh.from_array(r(3, 2, 3, 3), "w"), nh.from_array(r(3), "b")])

    models["gemm"] = make_model(
        [helper.make_node("Gemm", ["x", "w", "c"], ["y"], name="gemm0", alpha=0.5, beta=2.0,
                          transB=1)],
        [value_info("x", F, [2, 4])], [value_info("y", F, [2, 3])],
        [nh.from_array(r(3, 4), "w"), nh.from_array(r(3), "c")])

    models["addrelu"] = make_model(
        [helper.make_node("Add", ["x", "w1"], ["a"], name="add0"),
         helper.make_node("Relu", ["a"], ["b"], name="relu0"),
         helper.make_node("Mul", ["b", "w2"], ["c"], name="mul0"),
         helper.make_node("Relu", ["c"], ["y"], name="relu1")],
        [value_info("x", F, [1, 3, 4, 4])], [value_info("y", F, [1, 3, 4, 4])],
        [nh.from_array(r(4), "w1"), nh.from_array(r(3, 1, 1), "w2")])

    models["reshape"] = make_model(
        [helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape0")],
        [value_info("x", F, [2, 3, 4])], [value_info("y", F, [4, 6])], [i64("s", [4, -1])])

    models["range"] = make_model(
        [helper.make_node("Range", ["s", "l", "d"], ["r"], name="range0"),
         helper.make_node("Cast", ["r"], ["rf"], name="cast0", to=F),
         helper.make_node("Add", ["x", "rf"], ["y"], name="add0")],
        [value_info("x", F, [5])], [value_info("y", F, [5])],
        [i64("s", 2), i64("l", 12), i64("d", 2)])

    models["pad"] = make_model(
        [helper.make_node("Pad", ["x", "p", "v"], ["y"], name="pad0", mode="constant")],
        [value_info("x", F, [1, 1, 3, 3])], [value_info("y", F, [1, 1, 5, 6])],
        [i64("p", [0, 0, 1, 2, 0, 0, 1, 1]), f32("v", 0.5)])

    models["slice"] = make_model(
        [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"], name="slice0")],
        [value_info("x", F, [4, 6])], [value_info("y", F, [2, 3])],
        [i64("st", [1, 0]), i64("en", [3, 6]), i64("ax", [0, 1]), i64("sp", [1, 2])])

    models["resize"] = make_model(
        [helper.make_node("Resize", ["x", "roi", "sc"], ["y"], name="resize0", mode="nearest")],
        [value_info("x", F, [1, 1, 2, 3])], [value_info("y", F, [1, 1, 4, 6])],
        [f32("roi", []), f32("sc", [1, 1, 2, 2])])

    models["tile"] = make_model(
        [helper.make_node("Tile", ["x", "rp"], ["y"], name="tile0")],
        [value_info("x", F, [2, 3])], [value_info("y", F, [4, 3])], [i64("rp", [2, 1])])

    models["expand"] = make_model(
        [helper.make_node("Expand", ["x", "sh"], ["y"], name="expand0")],
        [value_info("x", F, [3, 1])], [value_info("y", F, [2, 3, 4])], [i64("sh", [2, 3, 4])])
    return models


def single_node(op, data_shape, constants, attrs=None, out_rank=None, name=None,
                data_type=TensorProto.FLOAT, extra_inputs_before=(), opset=OPSET):
    """One node `op(x, *constants)` with a runtime float input x, its other inputs constant
    initializers (which is what shape-determining inputs must be in collage).  constants is a
    list of (name, TensorProto) or (name, None) for an omitted optional input ("")."""
    name = name or f"{op.lower()}_node"
    inits, names = [], ["x"]
    for cname, tensor in constants:
        if tensor is None:
            names.append("")
        else:
            tensor.name = cname
            inits.append(tensor)
            names.append(cname)
    rank = len(data_shape) if out_rank is None else out_rank
    node = helper.make_node(op, names, ["y"], name=name, **(attrs or {}))
    return make_model([node], [value_info("x", data_type, list(data_shape))],
                      [value_info("y", TensorProto.FLOAT if data_type == TensorProto.FLOAT
                                  else data_type, symbolic(rank))], inits, opset=opset)


# --------------------------------------------------------------------------------------------
# The numpy evaluator


def _count(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _guard(shape):
    """Valid result shapes only: refuse what cannot fit, skip what is too slow to check."""
    if any(d < 0 for d in shape):
        raise Invalid(f"negative dimension in {shape}")
    n = _count(shape)
    if n > MUST_REFUSE_ELEMENTS:
        raise TooBig(f"{n} elements")
    if n > CHECKED_ELEMENTS:
        raise Unchecked(f"{n} elements")


def _attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def _norm_axis(axis, rank):
    if not -rank <= axis < rank:
        raise Invalid(f"axis {axis} out of range for rank {rank}")
    return axis % rank


def _broadcast_shape(a, b):
    try:
        return np.broadcast_shapes(a, b)
    except ValueError as e:
        raise Invalid(str(e))


def _conv(node, x, w, b):
    if x.ndim != 4 or w.ndim != 4:
        raise Unsupported("Conv other than 2-D")
    n, c, h, wd = x.shape
    group = _attr(node, "group", 1)
    if group <= 0 or c % group or w.shape[0] % group or w.shape[1] * group != c:
        raise Invalid("bad group / channel counts")
    kshape = list(_attr(node, "kernel_shape", w.shape[2:]))
    if kshape != list(w.shape[2:]):
        raise Invalid("kernel_shape disagrees with the weights")
    strides = list(_attr(node, "strides", [1, 1]))
    dil = list(_attr(node, "dilations", [1, 1]))
    pads = list(_attr(node, "pads", [0, 0, 0, 0]))
    if _attr(node, "auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise Unsupported("auto_pad")
    if len(strides) != 2 or len(dil) != 2 or len(pads) != 4:
        raise Invalid("attribute length")
    if min(strides) <= 0 or min(dil) <= 0 or min(pads) < 0:
        raise Invalid("non-positive stride/dilation or negative pad")
    out_hw = []
    for i, size in enumerate((h, wd)):
        eff = dil[i] * (kshape[i] - 1) + 1
        span = size + pads[i] + pads[i + 2] - eff
        if span < 0:
            raise Invalid("kernel larger than the padded input")
        out_hw.append(span // strides[i] + 1)
    oc = w.shape[0]
    _guard([n, oc] + out_hw)
    if _count([n, oc] + out_hw) * c * kshape[0] * kshape[1] > 5e7:
        raise Unchecked("too much work")
    xp = np.zeros((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]), np.float64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    y = np.zeros((n, oc, out_hw[0], out_hw[1]), np.float64)
    cg, og = c // group, oc // group
    for o in range(oc):
        g = o // og
        for i in range(out_hw[0]):
            for j in range(out_hw[1]):
                hs, ws = i * strides[0], j * strides[1]
                patch = xp[:, g * cg:(g + 1) * cg,
                           hs:hs + dil[0] * (kshape[0] - 1) + 1:dil[0],
                           ws:ws + dil[1] * (kshape[1] - 1) + 1:dil[1]]
                y[:, o, i, j] = (patch * w[o]).sum(axis=(1, 2, 3))
    if b is not None:
        y += b.reshape(1, oc, 1, 1)
    return y.astype(np.float32)


def _pool(node, x):
    """MaxPool / AveragePool, 2-D, ceil_mode 0, count_include_pad 0."""
    if x.ndim != 4:
        raise Unsupported("pooling other than 2-D")
    if _attr(node, "ceil_mode", 0) or _attr(node, "count_include_pad", 0):
        raise Unsupported("ceil_mode / count_include_pad")
    if _attr(node, "auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise Unsupported("auto_pad")
    k = _attr(node, "kernel_shape")
    if k is None or len(k) != 2:
        raise Invalid("kernel_shape")
    k = list(k)
    strides = list(_attr(node, "strides", [1, 1]))
    dil = list(_attr(node, "dilations", [1, 1]))
    pads = list(_attr(node, "pads", [0, 0, 0, 0]))
    if len(strides) != 2 or len(pads) != 4 or len(dil) != 2:
        raise Invalid("attribute length")
    if min(k) <= 0 or min(strides) <= 0 or min(dil) <= 0 or min(pads) < 0:
        raise Invalid("non-positive kernel/stride/dilation or negative pad")
    if any(pads[i] >= k[i] or pads[i + 2] >= k[i] for i in range(2)):
        raise Invalid("pad not smaller than the kernel")
    n, c, h, w = x.shape
    out_hw = []
    for i, size in enumerate((h, w)):
        span = size + pads[i] + pads[i + 2] - (dil[i] * (k[i] - 1) + 1)
        if span < 0:
            raise Invalid("kernel larger than the padded input")
        out_hw.append(span // strides[i] + 1)
    _guard([n, c] + out_hw)
    if _count([n, c] + out_hw) * k[0] * k[1] > 5e7:
        raise Unchecked("too much work")
    is_max = node.op_type == "MaxPool"
    xp = np.full((n, c, h + pads[0] + pads[2], w + pads[1] + pads[3]), np.nan, np.float64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + w] = x
    y = np.zeros((n, c, out_hw[0], out_hw[1]), np.float64)
    for i in range(out_hw[0]):
        for j in range(out_hw[1]):
            hs, ws = i * strides[0], j * strides[1]
            win = xp[:, :, hs:hs + dil[0] * (k[0] - 1) + 1:dil[0],
                     ws:ws + dil[1] * (k[1] - 1) + 1:dil[1]]
            y[:, :, i, j] = np.nanmax(win, axis=(2, 3)) if is_max else np.nanmean(win, axis=(2, 3))
    return y.astype(np.float32)


def _reshape(node, x, shape):
    shape = [int(v) for v in shape.reshape(-1)]
    allowzero = _attr(node, "allowzero", 0)
    out, infer = [], None
    for i, d in enumerate(shape):
        if d == -1:
            if infer is not None:
                raise Invalid("two -1 in the shape")
            infer = i
            out.append(1)
        elif d == 0 and not allowzero:
            if i >= x.ndim:
                raise Invalid("0 beyond the input's rank")
            out.append(x.shape[i])
        elif d < 0:
            raise Invalid(f"dim {d}")
        else:
            out.append(d)
    known = _count(out)
    if infer is not None:
        if known == 0 or x.size % known:
            raise Invalid("cannot infer the -1")
        out[infer] = x.size // known
    if _count(out) != x.size:
        raise Invalid(f"shape {out} has {_count(out)} elements, the input {x.size}")
    return x.reshape(out)


def _range(start, limit, delta):
    s, l, d = (v.reshape(()).item() for v in (start, limit, delta))
    if d == 0:
        raise Invalid("delta 0")
    if isinstance(s, int) and isinstance(l, int) and isinstance(d, int):
        n = max(-((l - s) // -d), 0)  # exact ceil((l - s) / d), Python integers
    else:
        q = (l - s) / d if math.isfinite(d) else (l - s) * 0.0  # an infinite step: one jump
        if not math.isfinite(s) or not math.isfinite(l) or not math.isfinite(q):
            raise Invalid("non-finite Range bound")
        n = max(math.ceil(q), 0)
    if n > INT64_MAX:
        raise Invalid(f"{n} elements overflow int64")
    _guard([n])
    return np.array([s + i * d for i in range(n)], dtype=start.dtype)


def _pad(node, x, pads, value):
    if _attr(node, "mode", b"constant") not in (b"constant", "constant"):
        raise Unsupported("Pad mode")
    pads = [int(p) for p in pads.reshape(-1)]
    r = x.ndim
    if len(pads) != 2 * r:
        raise Invalid("pads length")
    out_shape = [x.shape[i] + pads[i] + pads[i + r] for i in range(r)]
    _guard(out_shape)
    # Negative pads crop: slice first, then pad what is positive.
    crop = tuple(slice(max(-pads[i], 0), x.shape[i] - max(-pads[i + r], 0)) for i in range(r))
    cropped = x[crop]
    widths = [(max(pads[i], 0), max(pads[i + r], 0)) for i in range(r)]
    v = 0.0 if value is None else float(value.reshape(()))
    return np.pad(cropped, widths, constant_values=v).astype(x.dtype)


def _slice(x, starts, ends, axes, steps):
    starts = [int(v) for v in starts.reshape(-1)]
    ends = [int(v) for v in ends.reshape(-1)]
    axes = list(range(len(starts))) if axes is None else [int(v) for v in axes.reshape(-1)]
    steps = [1] * len(starts) if steps is None else [int(v) for v in steps.reshape(-1)]
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise Invalid("starts/ends/axes/steps lengths differ")
    axes = [_norm_axis(a, x.ndim) for a in axes]
    if len(set(axes)) != len(axes):
        raise Invalid("repeated axis")
    out = x
    for a, s, e, st in zip(axes, starts, ends, steps):
        dim = x.shape[a]
        if st == 0:
            raise Invalid("step 0")
        s = s + dim if s < 0 else s
        e = e + dim if e < 0 else e
        if st > 0:
            s, e = min(max(s, 0), dim), min(max(e, 0), dim)
        else:
            s, e = min(max(s, 0), dim - 1), min(max(e, -1), dim - 1)
        idx = list(range(s, e, st))
        out = np.take(out, np.array(idx, dtype=np.int64), axis=a)
    return out


def _resize(node, x, roi, scales, sizes):
    if _attr(node, "mode", b"nearest") not in (b"nearest", "nearest"):
        raise Unsupported("Resize mode")
    ctm = _attr(node, "coordinate_transformation_mode", b"half_pixel")
    nm = _attr(node, "nearest_mode", b"round_prefer_floor")
    ctm = ctm.decode() if isinstance(ctm, bytes) else ctm
    nm = nm.decode() if isinstance(nm, bytes) else nm
    if ctm not in ("half_pixel", "asymmetric") or nm not in ("round_prefer_floor", "floor"):
        raise Unsupported("Resize coordinate or rounding mode")
    if sizes is not None and sizes.size:
        if scales is not None and scales.size:
            raise Invalid("both scales and sizes")
        out = [int(v) for v in sizes.reshape(-1)]
        if len(out) != x.ndim:
            raise Invalid("sizes length")
        sc = [o / i if i else 0.0 for o, i in zip(out, x.shape)]
    else:
        sc = [float(v) for v in scales.reshape(-1)]
        if len(sc) != x.ndim:
            raise Invalid("scales length")
        if not all(math.isfinite(s) and s > 0 for s in sc):
            raise Invalid(f"scales {sc}")
        out = [int(math.floor(d * s)) for d, s in zip(x.shape, sc)]
    _guard(out)
    idx = []
    for d, (n_in, n_out, s) in enumerate(zip(x.shape, out, sc)):
        if s <= 0:
            raise Invalid("scale not positive")
        row = []
        for i in range(n_out):
            o = (i + 0.5) / s - 0.5 if ctm == "half_pixel" else i / s
            if nm == "floor":
                k = math.floor(o)
            else:
                k = math.ceil(o - 0.5)  # round half down (prefer floor)
            row.append(min(max(k, 0), n_in - 1))
        idx.append(np.array(row, dtype=np.int64))
    return x[np.ix_(*idx)]


def _tile(x, repeats):
    reps = [int(v) for v in repeats.reshape(-1)]
    if len(reps) != x.ndim or any(r < 0 for r in reps):
        raise Invalid("repeats")
    _guard([d * r for d, r in zip(x.shape, reps)])
    return np.tile(x, reps)


def _expand(x, shape):
    shape = [int(v) for v in shape.reshape(-1)]
    if any(d < 0 for d in shape):
        raise Invalid("negative dim")
    out = _broadcast_shape(x.shape, tuple(shape))
    _guard(list(out))
    return np.broadcast_to(x, out).copy()


def _gather(node, data, idx):
    axis = _norm_axis(_attr(node, "axis", 0), data.ndim)
    dim = data.shape[axis]
    flat = idx.reshape(-1)
    if np.any((flat < -dim) | (flat >= dim)):
        raise Invalid("index out of range")
    return np.take(data, np.where(idx < 0, idx + dim, idx), axis=axis)


def _transpose(node, x):
    perm = _attr(node, "perm", None)
    perm = list(range(x.ndim))[::-1] if perm is None else list(perm)
    if sorted(perm) != list(range(x.ndim)):
        raise Invalid(f"perm {perm}")
    return np.transpose(x, perm)


def _concat(node, a, b):
    axis = _norm_axis(_attr(node, "axis", 0), a.ndim)
    if a.ndim != b.ndim or any(a.shape[i] != b.shape[i] for i in range(a.ndim) if i != axis):
        raise Invalid("Concat shapes")
    return np.concatenate([a, b], axis=axis)


def _softmax(node, x):
    axis = _norm_axis(_attr(node, "axis", -1), x.ndim)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _flatten(node, x):
    axis = _attr(node, "axis", 1)
    if not -x.ndim <= axis <= x.ndim:
        raise Invalid("Flatten axis")
    axis %= x.ndim + 1 if axis < 0 else x.ndim + 1
    return x.reshape(_count(x.shape[:axis]), _count(x.shape[axis:]))


def _elementwise(op, a, b):
    _broadcast_shape(a.shape, b.shape)
    return {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}[op](a, b)


def evaluate(model, feeds):
    """Outputs of `model` for `feeds` ({name: array}), computed with numpy.  Raises Invalid,
    TooBig, Unchecked or Unsupported as described at the top of this file."""
    g = model.graph
    if not g.node or not g.output:
        raise Invalid("empty graph or no outputs")
    opset = {o.domain: o.version for o in model.opset_import}
    if set(opset) - {"", "ai.onnx"} or any(n.domain not in ("", "ai.onnx") for n in g.node):
        raise Unsupported("another domain")
    if not 11 <= opset.get("", opset.get("ai.onnx", 0)) <= 17:
        raise Unsupported("opset")
    env = {}
    for t in g.initializer:
        if t.data_location == TensorProto.EXTERNAL:
            raise Unsupported("external data")
        try:
            env[t.name] = nh.to_array(t)
        except Exception as e:  # noqa: BLE001 - a damaged initializer
            raise Invalid(f"initializer {t.name}: {e}")
    for vi in g.input:
        if vi.name in env:
            continue
        if vi.name not in feeds:
            raise Unsupported(f"no value for input {vi.name}")
        env[vi.name] = feeds[vi.name]
    seen_outputs = set()
    for node in g.node:  # ONNX requires topological order: a cycle shows as a missing input
        ins = []
        for name in node.input:
            if name == "":
                ins.append(None)
            elif name not in env:
                raise Invalid(f"input {name} of {node.name} is not defined before it")
            else:
                ins.append(env[name])
        for o in node.output:
            if o in seen_outputs or o in env:
                raise Invalid(f"{o} defined twice")
            seen_outputs.add(o)
        env.update(zip(node.output, _run_node(node, ins)))
    out = {}
    for vi in g.output:
        if vi.name not in env:
            raise Invalid(f"output {vi.name} is never computed")
        out[vi.name] = np.asarray(env[vi.name])
    return out


def _run_node(node, ins):
    op = node.op_type
    arg = lambda i: ins[i] if i < len(ins) else None  # noqa: E731
    if op in ("Add", "Sub", "Mul"):
        return [_elementwise(op, ins[0], ins[1])]
    if op == "Relu":
        return [np.maximum(ins[0], 0).astype(ins[0].dtype)]
    if op == "Identity":
        return [ins[0]]
    if op == "Cast":
        to = _attr(node, "to")
        if to != TensorProto.FLOAT:
            raise Unsupported("Cast target")
        return [ins[0].astype(np.float32)]
    if op == "Conv":
        return [_conv(node, ins[0], ins[1], arg(2))]
    if op in ("MaxPool", "AveragePool"):
        if len(node.output) > 1:
            raise Unsupported("MaxPool indices")
        return [_pool(node, ins[0])]
    if op == "Gemm":
        a, b, c = ins[0], ins[1], arg(2)
        if a.ndim != 2 or b.ndim != 2:
            raise Invalid("Gemm ranks")
        a = a.T if _attr(node, "transA", 0) else a
        b = b.T if _attr(node, "transB", 0) else b
        if a.shape[1] != b.shape[0]:
            raise Invalid("Gemm inner dims")
        y = _attr(node, "alpha", 1.0) * (a.astype(np.float64) @ b)
        if c is not None:
            _broadcast_shape(c.shape, y.shape)
            y = y + _attr(node, "beta", 1.0) * c
        return [y.astype(np.float32)]
    if op == "Reshape":
        return [_reshape(node, ins[0], ins[1])]
    if op == "Range":
        return [_range(ins[0], ins[1], ins[2])]
    if op == "Pad":
        return [_pad(node, ins[0], ins[1], arg(2))]
    if op == "Slice":
        return [_slice(ins[0], ins[1], ins[2], arg(3), arg(4))]
    if op == "Resize":
        return [_resize(node, ins[0], arg(1), arg(2), arg(3))]
    if op == "Tile":
        return [_tile(ins[0], ins[1])]
    if op == "Expand":
        return [_expand(ins[0], ins[1])]
    if op == "Gather":
        return [_gather(node, ins[0], ins[1])]
    if op == "Transpose":
        return [_transpose(node, ins[0])]
    if op == "Concat" and len(ins) == 2:
        return [_concat(node, ins[0], ins[1])]
    if op == "Softmax":
        return [_softmax(node, ins[0])]
    if op == "Flatten":
        return [_flatten(node, ins[0])]
    raise Unsupported(op)


def model_inputs(model):
    """{name: shape} of the runtime inputs, when every one is float32 with small static dims;
    None otherwise (the campaign then lets collage invent them with --random-inputs)."""
    inits = {t.name for t in model.graph.initializer}
    out = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        if tt.elem_type != TensorProto.FLOAT or not tt.HasField("shape"):
            return None
        dims = []
        for d in tt.shape.dim:
            if not d.HasField("dim_value") or not 1 <= d.dim_value <= 64:
                return None
            dims.append(d.dim_value)
        if _count(dims) > 4096:
            return None
        out[vi.name] = dims
    return out


def onnx_checker_accepts(model):
    """Whether ONNX's own checker with shape inference passes the model.  In a child process:
    onnx 1.12's shape inference itself dies (SIGFPE) on some of these models (a Conv with
    stride 0), and then the answer is no."""
    import subprocess
    import sys
    code = ("import sys, onnx; m = onnx.load_from_string(sys.stdin.buffer.read()); "
            "onnx.checker.check_model(m, full_check=True)")
    try:
        r = subprocess.run([sys.executable, "-c", code], input=model.SerializeToString(),
                           capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        return False
    return r.returncode == 0
