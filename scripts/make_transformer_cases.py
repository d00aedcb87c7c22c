#!/usr/bin/env python3
"""Conformance cases for the com.microsoft ops of ONNX Runtime's transformer optimizer, with
ONNX Runtime's outputs as the expected ones.

Usage: BUILD/quantenv/bin/python scripts/make_transformer_cases.py OUT_DIR
           --collage BUILD/collage --bert-like DIR [--force]

Writes two sets of cases, each OUT_DIR/<set>/<case>/{model.onnx, test_data_set_0/*.pb,
tolerance.txt, shapes.txt}:
  ops/     one node each, seeded random inputs: Gelu, BiasGelu, FastGelu with and without bias,
           QuickGelu, SkipLayerNormalization (every optional input and output, skip of shape
           (B,S,H), (1,S,H) and (S,H)), SkipSimplifiedLayerNormalization, EmbedLayerNormalization
           (segments, mask, position ids of both shapes, embedding_sum), Attention (no mask,
           lengths, ends and starts, raw 2-D and 3-D masks, unidirectional, qkv_hidden_sizes,
           scale, mask_filter_value, no bias), and an fp16 initializer cast to float;
  models/  whole BERT encoders fused by onnxruntime.transformers.optimizer.optimize_model
           (model_type bert): the built-in zoo's bert_base (`collage zoo export`), and the
           Hugging Face-style encoders of scripts/export_bert_like.py with their attention mask
           as 1-D lengths (the optimizer's default for BERT) and as the raw 2-D mask. Each fused
           model must hold the fused ops listed in MODELS (the script fails naming those
           missing), and ONNX Runtime's outputs on the fused model must match its outputs on the
           model before fusion (within 1e-4 of their largest value) before they are written as
           the expected ones.
Idempotent: a stamp of this script, the library versions and the inputs skips the work.
"""
import argparse
import collections
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.transformers.fusion_options import FusionOptions
from onnxruntime.transformers.optimizer import optimize_model

MS = 'com.microsoft'
ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
             np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int64): TensorProto.INT64}


class OpCase:
    """One node: its graph inputs (fed), initializers, outputs ('' for an unused one)."""

    def __init__(self, name, op, inputs, outputs=('y',), constants=(), order=None, attrs=None,
                 domain=MS, atol=None, extra_nodes=()):
        self.name, self.op, self.domain = name, op, domain
        self.inputs = list(inputs)        # [(name, array)]
        self.constants = list(constants)  # [(name, array)]
        self.order = order or [n for n, _ in self.inputs + self.constants]
        self.outputs = list(outputs)
        self.attrs = attrs or {}
        self.atol = atol                  # per-output absolute tolerance, with its reason
        self.extra_nodes = list(extra_nodes)

    def model(self):
        node = helper.make_node(self.op, self.order, self.outputs, domain=self.domain, **self.attrs)
        graph = helper.make_graph(
            self.extra_nodes + [node], self.name,
            [helper.make_tensor_value_info(n, ONNX_TYPE[a.dtype], a.shape) for n, a in self.inputs],
            [helper.make_empty_tensor_value_info(n) for n in self.outputs if n],
            [numpy_helper.from_array(a, n) for n, a in self.constants])
        return helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17),
                                                       helper.make_opsetid(MS, 1)])


def op_cases():
    rng = np.random.default_rng(7)

    def f32(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    b, s, h, heads = 2, 5, 8, 2
    out = [
        OpCase('gelu', 'Gelu', [('x', f32(b, s, h, scale=3))]),
        OpCase('quick_gelu', 'QuickGelu', [('x', f32(b, s, h, scale=3))]),
        OpCase('quick_gelu_alpha', 'QuickGelu', [('x', f32(b, s, h, scale=3))], attrs={'alpha': 1.5}),
        OpCase('bias_gelu', 'BiasGelu', [('x', f32(b, s, h, scale=3))], constants=[('bias', f32(h))]),
        OpCase('fast_gelu', 'FastGelu', [('x', f32(b, s, h, scale=3))]),
        OpCase('fast_gelu_bias', 'FastGelu', [('x', f32(b, s, h, scale=3))], constants=[('bias', f32(h))]),
    ]
    # SkipLayerNormalization: every optional input and output, and the skip shapes it takes.
    x, gamma, beta, bias = f32(b, s, h, scale=2), f32(h), f32(h), f32(h)
    out += [
        OpCase('skip_layer_norm_all_outputs', 'SkipLayerNormalization',
               [('x', x), ('skip', f32(b, s, h))], ('y', 'mean', 'inv_std_var', 'sum'),
               constants=[('gamma', gamma), ('beta', beta), ('bias', bias)], attrs={'epsilon': 1e-5}),
        OpCase('skip_layer_norm_no_beta_no_bias', 'SkipLayerNormalization',
               [('x', x), ('skip', f32(b, s, h))], constants=[('gamma', gamma)]),
        OpCase('skip_layer_norm_skip_1sh', 'SkipLayerNormalization',
               [('x', x), ('skip', f32(1, s, h))], ('y', '', '', 'sum'),
               constants=[('gamma', gamma), ('beta', beta)]),
        OpCase('skip_layer_norm_skip_sh_bias', 'SkipLayerNormalization',
               [('x', x), ('skip', f32(s, h))], constants=[('gamma', gamma), ('bias', bias)],
               order=['x', 'skip', 'gamma', '', 'bias']),
        OpCase('skip_simplified_layer_norm', 'SkipSimplifiedLayerNormalization',
               [('x', x), ('skip', f32(b, s, h))], ('y', '', 'inv_std_var', 'sum'),
               constants=[('gamma', gamma), ('bias', bias)], attrs={'epsilon': 1e-6}),
    ]
    # EmbedLayerNormalization: ids int32 (the optimizer casts the model's int64 ids).
    vocab, positions, types = 11, 9, 3
    ids = rng.integers(0, vocab, (b, s)).astype(np.int32)
    segments = rng.integers(0, types, (b, s)).astype(np.int32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 2, 1, 1, 0]], np.int32)  # a 2 is not counted
    tables = [('word', f32(vocab, h)), ('position', f32(positions, h)), ('segment', f32(types, h)),
              ('gamma', f32(h)), ('beta', f32(h))]
    no_segment = [t for t in tables if t[0] != 'segment']
    out += [
        OpCase('embed_layer_norm_all', 'EmbedLayerNormalization',
               [('ids', ids), ('segments', segments), ('mask', mask)], ('y', 'mask_index', 'sum'),
               constants=tables,
               order=['ids', 'segments', 'word', 'position', 'segment', 'gamma', 'beta', 'mask']),
        OpCase('embed_layer_norm_no_segment_no_mask', 'EmbedLayerNormalization', [('ids', ids)],
               ('y', 'mask_index'), constants=no_segment,
               order=['ids', '', 'word', 'position', '', 'gamma', 'beta'], attrs={'epsilon': 1e-5}),
        OpCase('embed_layer_norm_position_ids', 'EmbedLayerNormalization',
               [('ids', ids), ('positions', rng.integers(0, positions, (b, s)).astype(np.int32))],
               ('y', '', 'sum'), constants=no_segment,
               order=['ids', '', 'word', 'position', '', 'gamma', 'beta', '', 'positions']),
        OpCase('embed_layer_norm_position_ids_1s', 'EmbedLayerNormalization',
               [('ids', ids), ('positions', np.array([[4, 3, 2, 1, 0]], np.int32))], ('y', 'mask_index'),
               constants=no_segment,
               order=['ids', '', 'word', 'position', '', 'gamma', 'beta', '', 'positions']),
    ]
    # Attention: packed weights (H, 3H) and bias (3H), masks in each form ONNX Runtime takes.
    xa, w, wb = f32(b, s, h), f32(h, 3 * h, scale=0.5), f32(3 * h)

    def attention(name, mask=None, attrs=None, weights=w, bias=wb, atol=None):
        inputs = [('x', xa)] + ([('mask', mask)] if mask is not None else [])
        constants = [('w', weights)] + ([('bias', bias)] if bias is not None else [])
        order = ['x', 'w', 'bias' if bias is not None else ''] + (['mask'] if mask is not None else [])
        return OpCase(name, 'Attention', inputs, constants=constants, order=order,
                      attrs=dict({'num_heads': heads}, **(attrs or {})), atol=atol)

    raw = np.array([[1, 1, 0, 1, 1], [1, 1, 1, 2, 0]], np.int32)
    # A row whose every key is masked: the scores are all -10000 + a small value, added in
    # float32 where one rounding step is 1e-3, so the two kernels' last-bit differences in the
    # products come out as up to ~1e-3 in its softmax.
    all_masked = 'y atol=2e-3'
    out += [
        attention('attention_no_mask'),
        attention('attention_no_bias', bias=None),
        attention('attention_lengths', np.array([3, 5], np.int32)),
        attention('attention_lengths_zero_and_past_end', np.array([0, 9], np.int32), atol=all_masked),
        attention('attention_ends_and_starts', np.array([4, 5, 1, 2], np.int32)),
        attention('attention_raw_2d', raw),
        attention('attention_raw_3d', rng.integers(0, 2, (b, s, s)).astype(np.int32) | np.eye(s, dtype=np.int32)),
        attention('attention_unidirectional', attrs={'unidirectional': 1}),
        attention('attention_unidirectional_raw_2d', raw, attrs={'unidirectional': 1}),
        attention('attention_scale_and_filter', raw, attrs={'scale': 0.25, 'mask_filter_value': -50.0}),
        attention('attention_qkv_hidden_sizes', np.array([4, 2], np.int32),
                  attrs={'qkv_hidden_sizes': [8, 8, 4]}, weights=f32(h, 20, scale=0.5), bias=f32(20)),
    ]
    # An fp16 initializer cast to float before a float op (what float16-converted weights give).
    w16 = f32(h, 4).astype(np.float16)
    out.append(OpCase('fp16_initializer_cast_to_float', 'MatMul', [('x', f32(b, s, h))],
                      constants=[('w16', w16)], order=['x', 'w_float'], domain='',
                      extra_nodes=[helper.make_node('Cast', ['w16'], ['w_float'], to=TensorProto.FLOAT)]))
    return out


# The fused models: (name, source, optimize_model arguments, raw mask, fused ops required).
BERT_LIKE_FUSIONS = {'EmbedLayerNormalization': 1, 'Attention': 2, 'SkipLayerNormalization': 4}
MODELS = [
    ('zoo_bert_base', 'zoo', dict(num_heads=12, hidden_size=768), False,
     {'Attention': 12, 'SkipLayerNormalization': 24, 'BiasGelu': 12}),
    ('bert_erf_gelu_mask_index', 'bert_erf_gelu', dict(num_heads=4, hidden_size=64), False,
     dict(BERT_LIKE_FUSIONS, BiasGelu=2)),
    ('bert_erf_gelu_raw_mask', 'bert_erf_gelu', dict(num_heads=4, hidden_size=64), True,
     dict(BERT_LIKE_FUSIONS, BiasGelu=2)),
    ('bert_tanh_gelu_mask_index', 'bert_tanh_gelu', dict(num_heads=4, hidden_size=64), False,
     dict(BERT_LIKE_FUSIONS, FastGelu=2)),
]


def model_inputs(model, rng):
    """Inputs for a BERT graph: ids below the word table's rows, token types 0/1, and an
    attention mask padded on the right (the 1-D mask index assumes it), batch 2 x 16 where
    the model leaves the shape open."""
    feeds, shapes = {}, {}
    for value in model.graph.input:
        dims = [d.dim_value if d.dim_value > 0 else (2 if i == 0 else 16)
                for i, d in enumerate(value.type.tensor_type.shape.dim)]
        if any(d.dim_value <= 0 for d in value.type.tensor_type.shape.dim):
            shapes[value.name] = dims
        name = value.name
        if 'mask' in name:
            a = np.ones(dims, np.int64)
            a[-1, dims[1] * 2 // 3:] = 0
        elif 'type' in name:
            a = rng.integers(0, 2, dims)
        else:
            a = rng.integers(0, 100, dims)
        # The optimizer may have turned an int64 input into int32 (it casts masks and ids).
        feeds[name] = a.astype(helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type))
    return feeds, shapes


def cast_feeds(feeds, model):
    """The same inputs in the dtypes `model` declares."""
    return {v.name: feeds[v.name].astype(helper.tensor_dtype_to_np_dtype(v.type.tensor_type.elem_type))
            for v in model.graph.input}


def fused_op_counts(model):
    return collections.Counter(n.op_type for n in model.graph.node if n.domain == MS)


def run_ort(path, feeds):
    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
    names = [o.name for o in session.get_outputs()]
    return names, session.run(names, feeds)


def write_tensor(array, name, path):
    with open(path, 'wb') as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(array), name).SerializeToString())


def write_case(case_dir, model, input_items, output_items, shapes=None, tolerance_lines=()):
    """model (a ModelProto or a path) with its test_data_set_0, into case_dir atomically."""
    tmp = tempfile.mkdtemp(prefix=os.path.basename(case_dir) + '.tmp.', dir=os.path.dirname(case_dir))
    try:
        if isinstance(model, str):
            shutil.copy(model, os.path.join(tmp, 'model.onnx'))
        else:
            onnx.save(model, os.path.join(tmp, 'model.onnx'))
        data = os.path.join(tmp, 'test_data_set_0')
        os.makedirs(data)
        for i, (name, array) in enumerate(input_items):
            write_tensor(array, name, os.path.join(data, f'input_{i}.pb'))
        for i, (name, array) in enumerate(output_items):
            write_tensor(np.asarray(array), name, os.path.join(data, f'output_{i}.pb'))
        if shapes:
            with open(os.path.join(tmp, 'shapes.txt'), 'w') as f:
                f.write('# input shapes of test_data_set_0 (the model has dynamic axes)\n')
                for name, dims in shapes.items():
                    f.write('{}={}\n'.format(name, 'x'.join(map(str, dims))))
        if tolerance_lines:
            with open(os.path.join(tmp, 'tolerance.txt'), 'w') as f:
                f.write(''.join(line + '\n' for line in tolerance_lines))
        os.rename(tmp, case_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def make_op_case(case, case_dir):
    model = case.model()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'model.onnx')
        onnx.save(model, path)
        session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
        outputs = session.run([n for n in case.outputs if n], dict(case.inputs))
    # The outputs' types, now known, go into the model (the ONNX checker wants them).
    del model.graph.output[:]
    produced = [n for n in case.outputs if n]
    for name, array in zip(produced, outputs):
        model.graph.output.append(helper.make_tensor_value_info(name, ONNX_TYPE[array.dtype], array.shape))
    lines = [case.atol] if case.atol else []
    write_case(case_dir, model, case.inputs, list(zip(produced, outputs)), tolerance_lines=lines)


def make_model_case(name, source, kwargs, raw_mask, required, args, case_dir):
    with tempfile.TemporaryDirectory() as tmp:
        if source == 'zoo':
            original = args.zoo_model
        else:
            original = os.path.join(args.bert_like, source, 'model.onnx')
        options = FusionOptions('bert')
        if raw_mask:
            options.use_raw_attention_mask(True)
        # opt_level 0: only the transformer fusions, none of ONNX Runtime's own graph rewrites.
        fused = optimize_model(original, model_type='bert', optimization_options=options,
                               opt_level=0, **kwargs)
        fused_path = os.path.join(tmp, 'model.onnx')
        fused.save_model_to_file(fused_path)
        counts = fused_op_counts(onnx.load(fused_path))
        missing = {op: n for op, n in required.items() if counts.get(op, 0) != n}
        if missing:
            sys.exit(f'make_transformer_cases.py: {name}: the optimizer fused {dict(counts)}, '
                     f'expected {required}')
        feeds, shapes = model_inputs(onnx.load(fused_path), np.random.default_rng(11))
        names, expected = run_ort(fused_path, feeds)
        _, unfused = run_ort(original, cast_feeds(feeds, onnx.load(original)))
        for out_name, a, u in zip(names, expected, unfused):
            error = float(np.abs(a - u).max() / max(np.abs(u).max(), 1e-30))
            if error > 1e-4:
                sys.exit(f'make_transformer_cases.py: {name}: ONNX Runtime gives {out_name} '
                         f'{error:.2g} apart on the fused and the original model')
        ordered = [v.name for v in onnx.load(fused_path).graph.input]
        write_case(case_dir, fused_path, [(n, feeds[n]) for n in ordered],
                   list(zip(names, expected)), shapes=shapes)
        fused_list = ', '.join(f'{op} {n}' for op, n in sorted(counts.items()))
        print(f'{name}: fused {fused_list}')


def export_zoo_bert(collage, path):
    subprocess.run([collage, 'zoo', 'export', 'bert_base', '-o', path], check=True,
                   stdout=subprocess.DEVNULL)


def stamp_text(args, zoo_model):
    """This script, the libraries and every source model (the zoo's as this build exports it,
    not the binary: a rebuild that leaves the model alone keeps the cases)."""
    digest = hashlib.sha256()
    with open(__file__, 'rb') as f:
        digest.update(f.read())
    sources = [os.path.join(args.bert_like, m, 'model.onnx')
               for m in sorted({m[1] for m in MODELS} - {'zoo'})]
    for path in sources + [zoo_model]:
        with open(path, 'rb') as f:
            digest.update(f.read())
    return (f'{digest.hexdigest()} onnxruntime {ort.__version__} onnx {onnx.__version__} '
            f'numpy {np.__version__}\n')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('out_dir')
    parser.add_argument('--collage', required=True, help='the collage binary (zoo export)')
    parser.add_argument('--bert-like', required=True, help='scripts/export_bert_like.py output')
    parser.add_argument('--force', action='store_true')
    args = parser.parse_args()
    zoo_dir = tempfile.TemporaryDirectory()
    args.zoo_model = os.path.join(zoo_dir.name, 'bert_base.onnx')
    export_zoo_bert(args.collage, args.zoo_model)
    stamp = stamp_text(args, args.zoo_model)
    stamp_path = os.path.join(args.out_dir, '.stamp')
    if not args.force and os.path.exists(stamp_path) and open(stamp_path).read() == stamp:
        return
    if os.path.exists(args.out_dir):
        shutil.rmtree(args.out_dir)
    for subset in ('ops', 'models'):
        os.makedirs(os.path.join(args.out_dir, subset))
    cases = op_cases()
    for case in cases:
        try:
            make_op_case(case, os.path.join(args.out_dir, 'ops', case.name))
        except Exception as e:  # noqa: BLE001 - name the case that failed
            sys.exit(f'make_transformer_cases.py: {case.name}: {e}')
    for name, source, kwargs, raw_mask, required in MODELS:
        make_model_case(name, source, kwargs, raw_mask, required, args,
                        os.path.join(args.out_dir, 'models', name))
    with open(stamp_path, 'w') as f:
        f.write(stamp)
    print(f'made {len(cases)} op cases and {len(MODELS)} fused models in {args.out_dir}')


if __name__ == '__main__':
    main()
