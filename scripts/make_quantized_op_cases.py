#!/usr/bin/env python3
"""Single-op conformance cases for the quantized ops the ONNX node tests (opset <= 17) leave
out, with ONNX Runtime's outputs as the expected ones.

Usage: BUILD/quantenv/bin/python scripts/make_quantized_op_cases.py OUT_DIR [--force]

Covers QuantizeLinear / DequantizeLinear of opset 21 (blocked, 16-bit, int32 input, negative
axes), MatMulInteger with per-row and per-column zero points, ConvInteger with padding and
strides, and
the com.microsoft ops of ONNX Runtime's quantizer (QLinearAdd, QLinearMul, QLinearSigmoid,
QLinearLeakyRelu, QLinearSoftmax, QLinearConcat, QLinearWhere, QLinearAveragePool and
QLinearGlobalAveragePool in both layouts, QGemm with quantized and float outputs). Inputs are
seeded random data. What ONNX Runtime refuses but the spec defines (MatMulInteger with a zero
point per row of A) is computed with numpy instead. The ONNX ops must match exactly; the com.microsoft ops, which ONNX Runtime
computes with lookup tables and fixed-point arithmetic, within one step of their integer
output (tolerance.txt "steps=1"). Writes OUT_DIR/<case>/{model.onnx, test_data_set_0/*.pb,
tolerance.txt}; idempotent (a stamp of this script and the library versions).
"""
import argparse
import hashlib
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

MS = 'com.microsoft'
ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.uint8): TensorProto.UINT8,
             np.dtype(np.int8): TensorProto.INT8, np.dtype(np.int16): TensorProto.INT16,
             np.dtype(np.uint16): TensorProto.UINT16, np.dtype(np.int32): TensorProto.INT32,
             np.dtype(np.bool_): TensorProto.BOOL}


class Case:
    """One op: its node, graph inputs (fed) and initializers (constants), opset, steps."""

    def __init__(self, name, op, inputs, constants, outputs, attrs=None, domain='', opset=21,
                 steps=0):
        self.name, self.op, self.domain, self.opset, self.steps = name, op, domain, opset, steps
        self.inputs = inputs          # [(name, array)] fed at run time
        self.constants = constants    # [(name, array)] initializers; None for an absent input
        self.outputs = outputs        # output names
        self.attrs = attrs or {}

    def model(self):
        names = [n for n, _ in self.inputs] + [n if a is not None else '' for n, a in self.constants]
        order = self.input_order if hasattr(self, 'input_order') else names
        node = helper.make_node(self.op, order, self.outputs, domain=self.domain, **self.attrs)
        graph_inputs = [helper.make_tensor_value_info(n, ONNX_TYPE[a.dtype], a.shape)
                        for n, a in self.inputs]
        initializers = [numpy_helper.from_array(a, n) for n, a in self.constants if a is not None]
        graph_outputs = [helper.make_empty_tensor_value_info(n) for n in self.outputs]
        graph = helper.make_graph([node], self.name, graph_inputs, graph_outputs, initializers)
        imports = [helper.make_opsetid('', self.opset)]
        if self.domain:
            imports.append(helper.make_opsetid(self.domain, 1))
        return helper.make_model(graph, opset_imports=imports, ir_version=10)


def rng_for(name):
    return np.random.default_rng(int(hashlib.sha256(name.encode()).hexdigest()[:8], 16))


def q(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def scalar(v, dtype=np.float32):
    return np.array(v, dtype=dtype)


def cases():
    out = []

    def add(name, op, inputs, constants, outputs=('y',), order=None, expected=None, **kw):
        c = Case(name, op, inputs, constants, list(outputs), **kw)
        c.expected = expected
        if order is not None:
            c.input_order = order
        out.append(c)

    # ---- ONNX ops at opset 21 ---------------------------------------------------------------
    r = rng_for('q_blocked')
    add('quantizelinear_blocked_int8', 'QuantizeLinear',
        [('x', r.standard_normal((2, 6, 3)).astype(np.float32) * 4)],
        [('s', (r.random((2, 3, 3)) + 0.05).astype(np.float32)), ('z', q(r, (2, 3, 3), np.int8))],
        attrs={'axis': 1, 'block_size': 2})
    r = rng_for('q_int16')
    add('quantizelinear_int16_axis_negative', 'QuantizeLinear',
        [('x', r.standard_normal((3, 4)).astype(np.float32) * 1000)],
        [('s', (r.random(4) + 0.01).astype(np.float32)), ('z', q(r, 4, np.int16))],
        attrs={'axis': -1})
    r = rng_for('q_uint16')
    add('quantizelinear_uint16', 'QuantizeLinear',
        [('x', r.standard_normal((5, 7)).astype(np.float32) * 300)],
        [('s', scalar(0.05)), ('z', scalar(30000, np.uint16))])
    r = rng_for('q_ties')
    add('quantizelinear_rounds_half_to_even', 'QuantizeLinear',
        [('x', np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, 127.5, -128.5, 300, -300],
                        np.float32))],
        [('s', scalar(1.0)), ('z', scalar(0, np.int8))])
    r = rng_for('dq_blocked')
    add('dequantizelinear_blocked_uint8', 'DequantizeLinear',
        [('x', q(r, (4, 5), np.uint8))],
        [('s', (r.random((2, 5)) + 0.01).astype(np.float32)), ('z', q(r, (2, 5), np.uint8))],
        attrs={'axis': 0, 'block_size': 3})
    r = rng_for('dq_int16')
    add('dequantizelinear_int16_axis', 'DequantizeLinear',
        [('x', q(r, (2, 3, 4), np.int16))],
        [('s', (r.random(3) + 0.01).astype(np.float32)), ('z', q(r, 3, np.int16))],
        attrs={'axis': 1})
    r = rng_for('dq_int32')
    add('dequantizelinear_int32', 'DequantizeLinear',
        [('x', r.integers(-2**30, 2**30, size=(6,)).astype(np.int32))],
        [('s', scalar(0.001))])

    # ---- integer products with per-row / per-column / per-channel zero points ---------------
    r = rng_for('mmi')
    add('matmulinteger_per_column', 'MatMulInteger',
        [('a', q(r, (3, 4), np.uint8)), ('b', q(r, (4, 5), np.int8))],
        [('az', scalar(3, np.uint8)), ('bz', q(r, 5, np.int8))], opset=13)
    # Per row of A: the spec allows it, ONNX Runtime refuses it; numpy computes it exactly.
    r = rng_for('mmi_rows')
    a, b, az, bz = q(r, (3, 4), np.uint8), q(r, (4, 5), np.int8), q(r, 3, np.uint8), q(r, 5, np.int8)
    add('matmulinteger_per_row_and_column', 'MatMulInteger', [('a', a), ('b', b)],
        [('az', az), ('bz', bz)], opset=13,
        expected=lambda a=a, b=b, az=az, bz=bz: [
            ((a.astype(np.int32) - az.astype(np.int32)[:, None]) @
             (b.astype(np.int32) - bz.astype(np.int32))).astype(np.int32)])
    r = rng_for('mmi3d')
    add('matmulinteger_batched', 'MatMulInteger',
        [('a', q(r, (2, 3, 8), np.uint8)), ('b', q(r, (8, 4), np.uint8))],
        [('az', scalar(7, np.uint8)), ('bz', scalar(130, np.uint8))], opset=13)
    r = rng_for('convint')
    add('convinteger_strided_padded', 'ConvInteger',
        [('x', q(r, (1, 3, 6, 6), np.uint8))],
        [('w', q(r, (4, 3, 3, 3), np.uint8)), ('xz', scalar(10, np.uint8)),
         ('wz', scalar(140, np.uint8))],
        order=['x', 'w', 'xz', 'wz'], attrs={'pads': [1, 1, 1, 1], 'strides': [2, 1]}, opset=13)

    # ---- com.microsoft ------------------------------------------------------------------------
    def qparams(r, prefix, dtype):
        return [(prefix + '_s', scalar(0.02 + r.random() * 0.05)),
                (prefix + '_z', scalar(int(r.integers(-20, 20)) + (128 if dtype == np.uint8 else 0),
                                       dtype))]

    for dtype in (np.uint8, np.int8):
        t = np.dtype(dtype).name
        for op in ('QLinearAdd', 'QLinearMul'):
            r = rng_for(op + t)
            a, b = q(r, (2, 3, 4), dtype), q(r, (3, 1), dtype)
            cons = qparams(r, 'a', dtype) + qparams(r, 'b', dtype) + qparams(r, 'c', dtype)
            add(f'{op.lower()}_broadcast_{t}', op, [('a', a), ('b', b)], cons,
                order=['a', 'a_s', 'a_z', 'b', 'b_s', 'b_z', 'c_s', 'c_z'], domain=MS, steps=1)
        for op, attrs in (('QLinearSigmoid', {}), ('QLinearLeakyRelu', {'alpha': 0.13})):
            r = rng_for(op + t)
            cons = qparams(r, 'x', dtype) + qparams(r, 'y', dtype)
            add(f'{op.lower()}_{t}', op, [('x', q(r, (2, 50), dtype))], cons,
                order=['x', 'x_s', 'x_z', 'y_s', 'y_z'], attrs=attrs, domain=MS, steps=1)
        r = rng_for('softmax' + t)
        cons = qparams(r, 'x', dtype) + [('y_s', scalar(1 / 256.0)),
                                         ('y_z', scalar(0 if dtype == np.uint8 else -128, dtype))]
        add(f'qlinearsoftmax_{t}', 'QLinearSoftmax', [('x', q(r, (3, 10), dtype))], cons,
            order=['x', 'x_s', 'x_z', 'y_s', 'y_z'], attrs={'axis': -1, 'opset': 13}, domain=MS,
            steps=1)
        r = rng_for('concat' + t)
        xs = [q(r, (1, c, 3), dtype) for c in (2, 1, 3)]
        cons = qparams(r, 'y', dtype)
        order = ['y_s', 'y_z']
        for i in range(3):
            cons += qparams(r, f'x{i}', dtype)
            order += [f'x{i}', f'x{i}_s', f'x{i}_z']
        add(f'qlinearconcat_{t}', 'QLinearConcat', [(f'x{i}', x) for i, x in enumerate(xs)], cons,
            order=order, attrs={'axis': 1}, domain=MS, steps=1)
        for channels_last in (0, 1):
            r = rng_for(f'avgpool{t}{channels_last}')
            shape = (1, 5, 6, 3) if channels_last else (1, 3, 5, 6)
            cons = qparams(r, 'x', dtype) + qparams(r, 'y', dtype)
            add(f'qlinearaveragepool_{t}_channels_last_{channels_last}', 'QLinearAveragePool',
                [('x', q(r, shape, dtype))], cons, order=['x', 'x_s', 'x_z', 'y_s', 'y_z'],
                attrs={'kernel_shape': [3, 2], 'strides': [2, 2], 'pads': [1, 0, 1, 1],
                       'count_include_pad': 0, 'channels_last': channels_last},
                domain=MS, steps=1)
            add(f'qlinearglobalaveragepool_{t}_channels_last_{channels_last}',
                'QLinearGlobalAveragePool', [('x', q(r, shape, dtype))], cons,
                order=['x', 'x_s', 'x_z', 'y_s', 'y_z'], attrs={'channels_last': channels_last},
                domain=MS, steps=1)
    r = rng_for('where')
    cons = qparams(r, 'x', np.uint8) + qparams(r, 'v', np.uint8) + qparams(r, 'z', np.uint8)
    add('qlinearwhere_uint8', 'QLinearWhere',
        [('c', r.random((2, 4)) > 0.5), ('x', q(r, (2, 4), np.uint8)), ('v', q(r, (1, 4), np.uint8))],
        cons, order=['c', 'x', 'x_s', 'x_z', 'v', 'v_s', 'v_z', 'z_s', 'z_z'], domain=MS, steps=1)
    for requantized in (True, False):
        r = rng_for(f'qgemm{requantized}')
        # 7-bit B: ONNX Runtime adds pairs of uint8 x int8 products in int16 and saturates
        # there (scripts/quantize_models.py); with 7-bit values it computes exactly.
        a, b = q(r, (3, 8), np.uint8), r.integers(-64, 64, size=(5, 8)).astype(np.int8)
        cons = [('a_s', scalar(0.03)), ('a_z', scalar(120, np.uint8)),
                ('b_s', (r.random(5) * 0.02 + 0.01).astype(np.float32)),
                ('b_z', np.zeros(5, np.int8)),
                ('c', r.integers(-5000, 5000, size=(5,)).astype(np.int32))]
        order = ['a', 'a_s', 'a_z', 'b', 'b_s', 'b_z', 'c']
        if requantized:
            cons += [('y_s', scalar(0.5)), ('y_z', scalar(100, np.uint8))]
            order += ['y_s', 'y_z']
        add(f'qgemm_{"quantized" if requantized else "float"}_output', 'QGemm',
            [('a', a), ('b', b)], cons, order=order, attrs={'transB': 1, 'alpha': 0.75},
            domain=MS, steps=1 if requantized else 0)
    return out


def stamp_text(script_bytes):
    digest = hashlib.sha256(script_bytes).hexdigest()
    return f'{digest} onnxruntime {ort.__version__} onnx {onnx.__version__} numpy {np.__version__}\n'


def write_tensor(array, name, path):
    with open(path, 'wb') as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def make_case(case, case_dir):
    parent = os.path.dirname(case_dir)
    tmp = tempfile.mkdtemp(prefix=case.name + '.tmp.', dir=parent)
    try:
        model = case.model()
        path = os.path.join(tmp, 'model.onnx')
        onnx.save(model, path)
        if case.expected is not None:
            outputs = case.expected()
        else:
            session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
            outputs = session.run(case.outputs, dict(case.inputs))
        # The outputs' types, now known, go into the model (the ONNX checker wants them).
        del model.graph.output[:]
        for name, array in zip(case.outputs, outputs):
            array = np.asarray(array)
            model.graph.output.append(
                helper.make_tensor_value_info(name, ONNX_TYPE[array.dtype], array.shape))
        onnx.save(model, path)
        data = os.path.join(tmp, 'test_data_set_0')
        os.makedirs(data)
        for i, (name, array) in enumerate(case.inputs):
            write_tensor(array, name, os.path.join(data, f'input_{i}.pb'))
        for i, (name, array) in enumerate(zip(case.outputs, outputs)):
            write_tensor(np.asarray(array), name, os.path.join(data, f'output_{i}.pb'))
        with open(os.path.join(tmp, 'tolerance.txt'), 'w') as f:
            if case.steps:
                f.write('# ONNX Runtime computes this op with tables and fixed-point arithmetic\n')
                for name in case.outputs:
                    f.write(f'{name} steps={case.steps}\n')
        os.rename(tmp, case_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('out_dir')
    parser.add_argument('--force', action='store_true')
    args = parser.parse_args()
    with open(__file__, 'rb') as f:
        stamp = stamp_text(f.read())
    stamp_path = os.path.join(args.out_dir, '.stamp')
    if not args.force and os.path.exists(stamp_path) and open(stamp_path).read() == stamp:
        return
    if os.path.exists(args.out_dir):
        shutil.rmtree(args.out_dir)
    os.makedirs(args.out_dir)
    for case in cases():
        try:
            make_case(case, os.path.join(args.out_dir, case.name))
        except Exception as e:  # noqa: BLE001 - name the case that failed
            sys.exit(f'make_quantized_op_cases.py: {case.name}: {e}')
    with open(stamp_path, 'w') as f:
        f.write(stamp)
    print(f'made {len(cases())} quantized op cases in {args.out_dir}')


if __name__ == '__main__':
    main()
