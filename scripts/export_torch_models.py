#!/usr/bin/python3
"""Export models with PyTorch's ONNX exporter as conformance cases for collage_conformance.

Usage: /usr/bin/python3 scripts/export_torch_models.py OUT_DIR [--only a,b] [--force] [--list]

Needs Debian's python3-torch (1.13) and python3-torchvision (0.14), python3-onnx, numpy.
Writes, per model, the layout of the ONNX backend tests:
  OUT_DIR/<name>/model.onnx
  OUT_DIR/<name>/test_data_set_0/input_N.pb, output_N.pb   (onnx.numpy_helper TensorProtos)
  OUT_DIR/<name>/shapes.txt   (models exported with a dynamic batch axis: the input shapes of
                               the test data, "name=2x3x224x224", for SessionOptions::input_shapes)
Weights are random (torch.manual_seed per model); BatchNorm running statistics and affine
parameters are randomised too, so that inference-mode BatchNorm is not an identity. Models run
in eval mode; the expected outputs are PyTorch's own (float32, CPU).

Idempotent: a model whose folder carries a stamp of this script's contents, torch and
torchvision versions is not exported again (use --force to redo). Each model is written to a
temporary folder and renamed into place, so an interrupted run leaves no half case behind.
"""
import argparse
import hashlib
import os
import shutil
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torchvision
from onnx import numpy_helper


# --- models that are not in torchvision ----------------------------------------------------

class DcganGenerator(nn.Module):
    """The DCGAN generator (Radford et al.; PyTorch's examples/dcgan): z → 3x64x64 image."""

    def __init__(self, nz=100, ngf=64, nc=3):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 8), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 8, ngf * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False), nn.Tanh())

    def forward(self, z):
        return self.main(z)


class TransformerEncoderModel(nn.Module):
    """nn.TransformerEncoder: d_model 256, 4 heads, 2 layers, batch_first, GELU feed-forward."""

    def __init__(self, d_model=256, nhead=4, num_layers=2, dim_feedforward=1024):
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.0,
                                           activation='gelu', batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)

    def forward(self, x):
        # A fixed causal mask: exercises the masked-softmax path and keeps PyTorch off its
        # fused inference kernel (which the exporter cannot trace).
        seq = x.shape[1]
        mask = torch.triu(torch.full((seq, seq), float('-inf')), diagonal=1)
        return self.encoder(x, mask=mask)


class LstmModel(nn.Module):
    """A 2-layer LSTM over a batch-first sequence and a linear head on every step."""

    def __init__(self, input_size=64, hidden_size=128, num_layers=2, classes=10):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
        self.head = nn.Linear(hidden_size, classes)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y)


# --- the list -------------------------------------------------------------------------------

class Spec:
    def __init__(self, name, opset, make, input_shape, dynamic_batch=False):
        self.name = name
        self.opset = opset
        self.make = make
        self.input_shape = input_shape      # shape of the test data
        self.dynamic_batch = dynamic_batch  # export axis 0 of input and output as dynamic


tv = torchvision.models
SPECS = [
    Spec('resnet18', 13, lambda: tv.resnet18(), (1, 3, 224, 224), dynamic_batch=True),
    Spec('resnet50', 17, lambda: tv.resnet50(), (1, 3, 224, 224)),
    Spec('mobilenet_v2', 14, lambda: tv.mobilenet_v2(), (1, 3, 224, 224), dynamic_batch=True),
    Spec('squeezenet1_1', 15, lambda: tv.squeezenet1_1(), (1, 3, 224, 224)),
    Spec('densenet121', 13, lambda: tv.densenet121(), (1, 3, 224, 224)),
    Spec('googlenet', 14, lambda: tv.googlenet(aux_logits=False, init_weights=True), (1, 3, 224, 224)),
    Spec('shufflenet_v2_x1_0', 15, lambda: tv.shufflenet_v2_x1_0(), (1, 3, 224, 224), dynamic_batch=True),
    Spec('efficientnet_b0', 17, lambda: tv.efficientnet_b0(), (1, 3, 224, 224)),
    Spec('dcgan_generator', 14, lambda: DcganGenerator(), (2, 100, 1, 1), dynamic_batch=True),
    Spec('transformer_encoder', 17, lambda: TransformerEncoderModel(), (1, 32, 256)),
    Spec('lstm', 14, lambda: LstmModel(), (2, 32, 64), dynamic_batch=True),
]


def randomise_batchnorm(model, generator):
    """Random running statistics and affine parameters, so eval-mode BatchNorm does real work
    (fresh ones are mean 0, var 1, weight 1, bias 0: an identity)."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                c = m.num_features
                m.running_mean.copy_(torch.randn(c, generator=generator) * 0.1)
                m.running_var.copy_(torch.rand(c, generator=generator) + 0.5)
                m.weight.copy_(torch.rand(c, generator=generator) + 0.5)
                m.bias.copy_(torch.randn(c, generator=generator) * 0.1)


def stamp_text(script_bytes):
    return 'script-sha256 {}\ntorch {}\ntorchvision {}\n'.format(
        hashlib.sha256(script_bytes).hexdigest(), torch.__version__, torchvision.__version__)


def write_tensor(array, name, path):
    with open(path, 'wb') as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(array), name).SerializeToString())


def export_one(spec, case_dir):
    torch.manual_seed(0)
    model = spec.make()
    randomise_batchnorm(model, torch.Generator().manual_seed(1))
    model.eval()
    x = torch.randn(*spec.input_shape, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        expected = model(x)
    if not isinstance(expected, torch.Tensor):
        raise RuntimeError('{}: the model returned {}, not one tensor'.format(spec.name, type(expected)))

    tmp = case_dir + '.tmp{}'.format(os.getpid())
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, 'test_data_set_0'))
    dynamic_axes = {'input': {0: 'batch'}, 'output': {0: 'batch'}} if spec.dynamic_batch else None
    with torch.no_grad():
        torch.onnx.export(model, (x,), os.path.join(tmp, 'model.onnx'), opset_version=spec.opset,
                          input_names=['input'], output_names=['output'],
                          dynamic_axes=dynamic_axes, do_constant_folding=True)
    write_tensor(x.numpy(), 'input', os.path.join(tmp, 'test_data_set_0', 'input_0.pb'))
    write_tensor(expected.numpy(), 'output', os.path.join(tmp, 'test_data_set_0', 'output_0.pb'))
    if spec.dynamic_batch:
        with open(os.path.join(tmp, 'shapes.txt'), 'w') as f:
            f.write('# input shapes of test_data_set_0 (the model has a dynamic batch axis)\n')
            f.write('input={}\n'.format('x'.join(str(d) for d in spec.input_shape)))
    shutil.rmtree(case_dir, ignore_errors=True)
    os.rename(tmp, case_dir)
    e = expected.numpy()
    return 'output {} max|y| {:.3g} std {:.3g}'.format('x'.join(map(str, e.shape)),
                                                       float(np.abs(e).max()), float(e.std()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('out_dir')
    parser.add_argument('--only', default='', help='comma-separated model names')
    parser.add_argument('--force', action='store_true', help='export even if up to date')
    parser.add_argument('--list', action='store_true', help='print the models and opsets')
    args = parser.parse_args()

    if args.list:
        for s in SPECS:
            print('{:22s} opset {}  input {}{}'.format(s.name, s.opset, 'x'.join(map(str, s.input_shape)),
                                                       '  (dynamic batch)' if s.dynamic_batch else ''))
        return 0
    only = [n for n in args.only.split(',') if n]
    unknown = [n for n in only if n not in {s.name for s in SPECS}]
    if unknown:
        print('unknown model(s): {}'.format(', '.join(unknown)), file=sys.stderr)
        return 2

    with open(os.path.abspath(__file__), 'rb') as f:
        stamp = stamp_text(f.read())
    os.makedirs(args.out_dir, exist_ok=True)
    start = time.time()
    for spec in SPECS:
        if only and spec.name not in only:
            continue
        case_dir = os.path.join(args.out_dir, spec.name)
        stamp_path = os.path.join(case_dir, '.stamp')
        if not args.force and os.path.exists(stamp_path) and open(stamp_path).read() == stamp:
            continue
        t0 = time.time()
        summary = export_one(spec, case_dir)
        with open(stamp_path, 'w') as f:
            f.write(stamp)
        print('exported {:22s} opset {} in {:5.1f} s: {}'.format(spec.name, spec.opset,
                                                               time.time() - t0, summary), flush=True)
    print('export_torch_models: done in {:.1f} s'.format(time.time() - start))
    return 0


if __name__ == '__main__':
    sys.exit(main())
