#!/usr/bin/env python3
"""Quantize float32 ONNX models with ONNX Runtime's own quantizer, as conformance cases whose
expected outputs are ONNX Runtime's outputs on the quantized model.

Usage: BUILD/quantenv/bin/python scripts/quantize_models.py SRC_DIR OUT_DIR
           [--only a,b] [--methods static_qdq,...] [--force] [--list]
       BUILD/quantenv/bin/python scripts/quantize_models.py --model IN.onnx --inputs IN.npz
           --method METHOD --output OUT.onnx      (one model, for the benchmarks)

Needs the quantizer's environment (scripts/install_quantizer.sh: onnxruntime, onnx, numpy from
the package index). SRC_DIR holds float32 cases in the layout export_torch_models.py writes
(model.onnx, test_data_set_0/input_N.pb, optionally shapes.txt). For each model and method:

  static_qdq   quantize_static, QDQ format: QuantizeLinear/DequantizeLinear around the ops,
               int8 activations, int8 weights per output channel
  static_qop   quantize_static, operator format: QLinearConv, QLinearMatMul and the
               com.microsoft QLinear* ops, uint8 activations, int8 weights per channel
  dynamic      quantize_dynamic: int8 weights, activations quantized at run time
               (DynamicQuantizeLinear, MatMulInteger)
Weights are quantized to 7 bits (reduce_range), where ONNX Runtime computes exactly (below).

it writes OUT_DIR/<model>_<method>/:
  model.onnx
  test_data_set_0/input_N.pb   the source case's inputs
  test_data_set_0/output_N.pb  ONNX Runtime's outputs on the quantized model (its CPU
                               provider, default graph optimizations: what its users get)
  shapes.txt                   copied from the source case, when it has one

Each model first goes through quant_pre_process (the quantizer's documented preparation: shape
inference, ONNX Runtime's graph optimizations). Static quantization is calibrated on 4 seeded random inputs of the test data's shapes.
Idempotent: a case carrying a stamp of this script, onnxruntime's and onnx's versions and its
source model's hash is not made again (--force redoes it); each case is written to a
temporary folder and renamed into place.
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
from onnx import numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                      quantize_dynamic, quantize_static)
from onnxruntime.quantization.shape_inference import quant_pre_process

METHODS = ['static_qdq', 'static_qop', 'dynamic']
CALIBRATION_SETS = 4
# Models static quantization breaks: the Transformer encoder's causal mask holds -inf, which
# the quantizer quantizes with an infinite scale; the int8 model's outputs are then 44% off
# the float model's in ONNX Runtime itself, and depend on how each runtime rounds NaN.
STATIC_BROKEN = {'transformer_encoder'}


def read_inputs(case_dir):
    """The source case's inputs: [(name, array)], in file order."""
    data_dir = os.path.join(case_dir, 'test_data_set_0')
    inputs = []
    n = 0
    while os.path.exists(os.path.join(data_dir, f'input_{n}.pb')):
        tensor = onnx.TensorProto()
        with open(os.path.join(data_dir, f'input_{n}.pb'), 'rb') as f:
            tensor.ParseFromString(f.read())
        inputs.append((tensor.name, numpy_helper.to_array(tensor)))
        n += 1
    return inputs


class RandomReader(CalibrationDataReader):
    """Seeded random inputs of the test data's shapes and dtypes."""

    def __init__(self, inputs, seed):
        rng = np.random.default_rng(seed)
        self.sets = [{name: rng.standard_normal(a.shape).astype(a.dtype) for name, a in inputs}
                     for _ in range(CALIBRATION_SETS)]

    def get_next(self):
        return self.sets.pop() if self.sets else None


def quantize(method, src, dst, inputs):
    # reduce_range: 7-bit weights. ONNX Runtime's 8-bit products add pairs of uint8 x int8
    # products into int16 and saturate there (x86's vpmaddubsw), so with full-range weights its
    # results are not the spec's; with 7-bit weights no pair overflows and they are exact.
    if method == 'static_qdq':
        quantize_static(src, dst, RandomReader(inputs, 1), quant_format=QuantFormat.QDQ,
                        activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                        per_channel=True, reduce_range=True)
    elif method == 'static_qop':
        quantize_static(src, dst, RandomReader(inputs, 1), quant_format=QuantFormat.QOperator,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        per_channel=True, reduce_range=True)
    elif method == 'dynamic':
        # MatMul only: ONNX Runtime's CPU provider runs ConvInteger on uint8 weights alone, and
        # quantizes LSTMs into a com.microsoft op of its own.
        quantize_dynamic(src, dst, weight_type=QuantType.QInt8, op_types_to_quantize=['MatMul'],
                         reduce_range=True)
    else:
        raise ValueError(method)


def stamp_text(script_bytes, source_bytes):
    digest = hashlib.sha256(script_bytes + source_bytes).hexdigest()
    return f'{digest} onnxruntime {ort.__version__} onnx {onnx.__version__}\n'


def write_tensor(array, name, path):
    with open(path, 'wb') as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def make_case(model_name, method, src_dir, case_dir, stamp):
    inputs = read_inputs(src_dir)
    parent = os.path.dirname(case_dir)
    tmp = tempfile.mkdtemp(prefix=os.path.basename(case_dir) + '.tmp.', dir=parent)
    try:
        model_path = os.path.join(tmp, 'model.onnx')
        # The quantizer's documented first step: shape inference and ONNX Runtime's graph
        # optimizations (constants folded, so that every weight and bias is an initializer).
        prepared = os.path.join(tmp, 'prepared.onnx')
        quant_pre_process(os.path.join(src_dir, 'model.onnx'), prepared)
        quantize(method, prepared, model_path, inputs)
        os.remove(prepared)
        session = ort.InferenceSession(model_path, providers=['CPUExecutionProvider'])
        feeds = dict(inputs)
        names = [o.name for o in session.get_outputs()]
        outputs = session.run(names, feeds)
        data = os.path.join(tmp, 'test_data_set_0')
        os.makedirs(data)
        for i, (name, array) in enumerate(inputs):
            write_tensor(array, name, os.path.join(data, f'input_{i}.pb'))
        for i, (name, array) in enumerate(zip(names, outputs)):
            write_tensor(array, name, os.path.join(data, f'output_{i}.pb'))
        if os.path.exists(os.path.join(src_dir, 'shapes.txt')):
            shutil.copy(os.path.join(src_dir, 'shapes.txt'), tmp)
        with open(os.path.join(tmp, '.stamp'), 'w') as f:
            f.write(stamp)
        if os.path.exists(case_dir):
            shutil.rmtree(case_dir)
        os.rename(tmp, case_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def quantize_one(model, inputs_npz, method, output):
    """One model, calibrated on random inputs of the shapes and dtypes in INPUTS.npz."""
    inputs = list(np.load(inputs_npz).items())
    with tempfile.TemporaryDirectory() as tmp:
        prepared = os.path.join(tmp, 'prepared.onnx')
        quant_pre_process(model, prepared)
        quantize(method, prepared, output, inputs)


def main():
    if '--model' in sys.argv:
        one = argparse.ArgumentParser(description='quantize one model')
        one.add_argument('--model', required=True)
        one.add_argument('--inputs', required=True, help='.npz of inputs (their shapes calibrate)')
        one.add_argument('--method', required=True, choices=METHODS)
        one.add_argument('--output', required=True)
        a = one.parse_args()
        quantize_one(a.model, a.inputs, a.method, a.output)
        return
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('src_dir')
    parser.add_argument('out_dir')
    parser.add_argument('--only', help='comma-separated source model names')
    parser.add_argument('--methods', default=','.join(METHODS))
    parser.add_argument('--force', action='store_true')
    parser.add_argument('--list', action='store_true', help='print the cases and exit')
    args = parser.parse_args()

    models = sorted(d for d in os.listdir(args.src_dir)
                    if os.path.isfile(os.path.join(args.src_dir, d, 'model.onnx')))
    if args.only:
        wanted = args.only.split(',')
        missing = [m for m in wanted if m not in models]
        if missing:
            sys.exit(f'quantize_models.py: no source case {", ".join(missing)} in {args.src_dir}')
        models = wanted
    methods = args.methods.split(',')
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        sys.exit(f'quantize_models.py: unknown method {", ".join(unknown)} ({", ".join(METHODS)})')
    if args.list:
        for m in models:
            for method in methods:
                if not (method.startswith('static') and m in STATIC_BROKEN):
                    print(f'{m}_{method}')
        return
    os.makedirs(args.out_dir, exist_ok=True)
    with open(__file__, 'rb') as f:
        script = f.read()
    for model_name in models:
        src = os.path.join(args.src_dir, model_name)
        with open(os.path.join(src, 'model.onnx'), 'rb') as f:
            stamp = stamp_text(script, f.read())
        for method in methods:
            if method.startswith('static') and model_name in STATIC_BROKEN:
                continue
            case_dir = os.path.join(args.out_dir, f'{model_name}_{method}')
            stamp_path = os.path.join(case_dir, '.stamp')
            if not args.force and os.path.exists(stamp_path) and open(stamp_path).read() == stamp:
                continue
            print(f'quantizing {model_name} ({method})', flush=True)
            make_case(model_name, method, src, case_dir, stamp)


if __name__ == '__main__':
    main()
