#!/usr/bin/python3
"""Export models with PyTorch's ONNX exporter as conformance cases for collage_conformance.

Usage: /usr/bin/python3 scripts/export_torch_models.py OUT_DIR [--set models|control_flow]
           [--only a,b] [--force] [--list]

Needs Debian's python3-torch (1.13) and python3-torchvision (0.14), python3-onnx, numpy.
Writes, per model, the layout of the ONNX backend tests:
  OUT_DIR/<name>/model.onnx
  OUT_DIR/<name>/test_data_set_0/input_N.pb, output_N.pb   (onnx.numpy_helper TensorProtos)
  OUT_DIR/<name>/shapes.txt   (models exported with a dynamic axis: the input shapes of the test
                               data, "name=2x3x224x224", for SessionOptions::input_shapes)
The control_flow set (--set control_flow) exercises control flow and shapes set by data:
torchvision's SSDlite 320 detector, a small anchor detector with torchvision's
post-processing (score threshold, top-k, class-wise NonMaxSuppression inside an If), and
recurrent cells scripted with TorchScript (a Loop over the time steps holding an If on the
hidden state; a Loop filling a list, a sequence, concatenated after it).
Weights are random (torch.manual_seed per model); BatchNorm running statistics and affine
parameters are randomised too, so that inference-mode BatchNorm is not an identity (SSDlite
takes them from random images instead, see SsdLite). For a model with a sorted scores output,
the input is drawn so that the kept scores are apart (draw_input). Models run
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
from torchvision.ops import batched_nms, clip_boxes_to_image, remove_small_boxes


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

class TinyDetector(nn.Module):
    """A one-level anchor detector: a small conv backbone, per-anchor class scores and box
    deltas, then torchvision's post-processing (score threshold, top-k, class-wise NMS), whose
    output count is set by the data. Returns boxes, scores and labels."""
    def __init__(self, classes=4, anchors=3):
        super().__init__()
        self.classes, self.anchors = classes, anchors
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(32, 32, 3, stride=2, padding=1), nn.ReLU())
        self.cls = nn.Conv2d(32, anchors * classes, 3, padding=1)
        self.reg = nn.Conv2d(32, anchors * 4, 3, padding=1)
        with torch.no_grad():  # spread the scores, so that no two of the kept ones nearly tie
            self.cls.weight.mul_(10)
        self.coder = torchvision.models.detection._utils.BoxCoder((10., 10., 5., 5.))

    def forward(self, x):
        f = self.backbone(x)
        _, _, h, w = f.shape
        scores = torch.sigmoid(self.cls(f)).permute(0, 2, 3, 1).reshape(-1, self.classes)
        deltas = self.reg(f).permute(0, 2, 3, 1).reshape(-1, 4)
        stride = x.shape[-1] // w
        ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing='ij')
        centers = torch.stack([xs, ys], -1).reshape(-1, 1, 2).float() * stride + stride / 2
        sizes = torch.tensor([16., 32., 64.]).reshape(1, -1, 1)
        anchors = torch.cat([centers - sizes / 2, centers + sizes / 2], -1).reshape(-1, 4)
        boxes = clip_boxes_to_image(self.coder.decode_single(deltas, anchors), x.shape[-2:])
        boxes = boxes.unsqueeze(1).expand(-1, self.classes, 4).reshape(-1, 4)
        labels = torch.arange(self.classes).expand(scores.shape[0], -1).reshape(-1)
        scores = scores.reshape(-1)
        keep = torch.where(scores > 0.3)[0]
        boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
        keep = remove_small_boxes(boxes, 1.0)
        boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
        top = scores.topk(min(200, scores.shape[0]))[1]
        boxes, scores, labels = boxes[top], scores[top], labels[top]
        keep = batched_nms(boxes, scores, labels, 0.5)[:20]
        return boxes[keep], scores[keep], labels[keep]


class RecurrentLoop(nn.Module):
    """A recurrent cell over a sequence of any length, scripted (torch.jit.script) so that the
    exporter writes a Loop; its body holds an If on the hidden state."""
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(16, 32)
        self.rec = nn.Linear(32, 32)
        self.out = nn.Linear(32, 16)

    def forward(self, x):
        h = torch.zeros(1, 32)
        acc = torch.zeros(1, 16)
        for t in range(x.shape[0]):
            h = torch.tanh(self.inp(x[t:t + 1]) + self.rec(h))
            if bool(h.sum() > 0):
                acc = acc + self.out(h)
            else:
                acc = acc - self.out(h)
        return acc


class RecurrentList(nn.Module):
    """The recurrent cell's hidden states gathered in a Python list and concatenated after the
    loop (scripted: a Loop carrying a sequence, SequenceInsert, ConcatFromSequence)."""
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(16, 32)
        self.rec = nn.Linear(32, 32)

    def forward(self, x):
        h = torch.zeros(1, 32)
        states = []
        for t in range(x.shape[0]):
            h = torch.tanh(self.inp(x[t:t + 1]) + self.rec(h))
            states.append(h)
        return torch.cat(states, 0)


class SsdLite(nn.Module):
    """torchvision's SSDlite 320 (MobileNetV3-Large backbone) with its own post-processing
    (per-class score threshold, top-k, batched NonMaxSuppression), taking one image batch as a
    tensor and returning the first image's boxes, scores and labels.

    Random weights make a degenerate detector: activations vanish through the backbone, every
    anchor gets the same logits, and the scores tie to the last bit, so which boxes NMS keeps
    is arbitrary. So the BatchNorm statistics are taken from data (the backbone run in training
    mode over random images) and the classifier's last convolutions are drawn so that the
    scores spread over (0, 1) instead of saturating."""
    def __init__(self, classes=5):
        super().__init__()
        det = torchvision.models.detection
        self.model = det.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                       num_classes=classes)
        # Fewer detections kept than torchvision's 300, so that an input whose kept scores are
        # all apart can be drawn (see draw_input).
        self.model.detections_per_img = 20
        generator = torch.Generator().manual_seed(3)
        with torch.no_grad():
            for m in self.model.modules():
                if isinstance(m, nn.modules.batchnorm._BatchNorm):
                    m.reset_running_stats()
                    m.momentum = None  # a plain average over the calibration batches
            self.model.backbone.train()
            for _ in range(4):
                self.model.backbone(torch.rand(2, 3, 320, 320, generator=generator))
            self.model.backbone.eval()
            for m in self.model.head.classification_head.modules():
                if isinstance(m, nn.Conv2d) and m.kernel_size == (1, 1) and m.out_channels % classes == 0:
                    m.weight.normal_(0, 0.01, generator=generator)

    def forward(self, x):
        detections = self.model(list(x.unbind(0)))[0]
        return detections['boxes'], detections['scores'], detections['labels']


class Spec:
    def __init__(self, name, opset, make, input_shape, dynamic_batch=False, outputs=('output',),
                 script=False, dynamic_axes=None, randomise_batchnorm=True, scores_output=None):
        self.name = name
        self.opset = opset
        self.make = make
        self.input_shape = input_shape      # shape of the test data
        self.dynamic_batch = dynamic_batch  # export axis 0 of input and output as dynamic
        self.outputs = outputs              # the model's output names, in order
        self.script = script                # export the TorchScript of the model
        self.dynamic_axes = dynamic_axes    # other dynamic axes, as torch.onnx.export takes them
        self.randomise_batchnorm = randomise_batchnorm  # False: the model sets its own statistics
        self.scores_output = scores_output  # index of an output sorted by score (a detector's)


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
# Exported apart (--set control_flow): the quantizer and the comparisons take the set above.
CONTROL_FLOW_SPECS = [
    Spec('tiny_detector', 13, lambda: TinyDetector(), (1, 3, 128, 128),
         outputs=('boxes', 'scores', 'labels'), scores_output=1),
    Spec('ssdlite320', 13, lambda: SsdLite(), (1, 3, 320, 320),
         outputs=('boxes', 'scores', 'labels'), randomise_batchnorm=False, scores_output=1),
    Spec('recurrent_loop', 14, lambda: RecurrentLoop(), (7, 16), script=True,
         dynamic_axes={'input': {0: 'steps'}}),
    Spec('recurrent_list', 14, lambda: RecurrentList(), (5, 16), script=True,
         dynamic_axes={'input': {0: 'steps'}, 'output': {0: 'steps'}}),
]
SETS = {'models': SPECS, 'control_flow': CONTROL_FLOW_SPECS}


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


def scores_nearly_tie(scores, relative=1e-4):
    ordered = np.sort(scores.reshape(-1))
    return ordered.size > 1 and bool((np.diff(ordered) <= relative * np.abs(ordered[1:])).any())


def draw_input(spec, model):
    """A random input and the model's outputs on it. For a model with a sorted scores output,
    an input whose scores (nearly) tie has no single right answer — PyTorch's sort is not
    stable, ONNX's TopK puts the lower index first, and a last-bit difference reorders them —
    so inputs are drawn until the scores are apart."""
    for seed in range(2, 50):
        x = torch.randn(*spec.input_shape, generator=torch.Generator().manual_seed(seed))
        with torch.no_grad():
            expected = model(x)
        if spec.scores_output is None or not scores_nearly_tie(expected[spec.scores_output].numpy()):
            return x, expected
    raise RuntimeError('{}: the scores tie on every input drawn'.format(spec.name))


def export_one(spec, case_dir):
    torch.manual_seed(0)
    model = spec.make()
    if spec.randomise_batchnorm:
        randomise_batchnorm(model, torch.Generator().manual_seed(1))
    model.eval()
    if spec.script:
        model = torch.jit.script(model)
    x, expected = draw_input(spec, model)
    expected = (expected,) if isinstance(expected, torch.Tensor) else tuple(expected)
    if len(expected) != len(spec.outputs) or not all(isinstance(e, torch.Tensor) for e in expected):
        raise RuntimeError('{}: the model returned {}, not {} tensors'.format(
            spec.name, [type(e) for e in expected], len(spec.outputs)))

    tmp = case_dir + '.tmp{}'.format(os.getpid())
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, 'test_data_set_0'))
    dynamic_axes = {'input': {0: 'batch'}, 'output': {0: 'batch'}} if spec.dynamic_batch else None
    dynamic_axes = spec.dynamic_axes or dynamic_axes
    with torch.no_grad():
        torch.onnx.export(model, (x,), os.path.join(tmp, 'model.onnx'), opset_version=spec.opset,
                          input_names=['input'], output_names=list(spec.outputs),
                          dynamic_axes=dynamic_axes, do_constant_folding=True)
    write_tensor(x.numpy(), 'input', os.path.join(tmp, 'test_data_set_0', 'input_0.pb'))
    for i, (name, value) in enumerate(zip(spec.outputs, expected)):
        write_tensor(value.numpy(), name, os.path.join(tmp, 'test_data_set_0', 'output_{}.pb'.format(i)))
    if dynamic_axes:
        with open(os.path.join(tmp, 'shapes.txt'), 'w') as f:
            f.write('# input shapes of test_data_set_0 (the model has a dynamic axis)\n')
            f.write('input={}\n'.format('x'.join(str(d) for d in spec.input_shape)))
    shutil.rmtree(case_dir, ignore_errors=True)
    os.rename(tmp, case_dir)
    e = expected[0].numpy()
    return 'output {} max|y| {:.3g} std {:.3g}'.format('x'.join(map(str, e.shape)),
                                                       float(np.abs(e).max()), float(e.std()))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('out_dir')
    parser.add_argument('--only', default='', help='comma-separated model names')
    parser.add_argument('--force', action='store_true', help='export even if up to date')
    parser.add_argument('--list', action='store_true', help='print the models and opsets')
    parser.add_argument('--set', choices=sorted(SETS), default='models',
                        help='which models: the CNNs, transformers and RNNs (models), or those '
                             'with control flow and data-set shapes (control_flow)')
    args = parser.parse_args()
    specs = SETS[args.set]

    if args.list:
        for s in specs:
            print('{:22s} opset {}  input {}{}'.format(s.name, s.opset, 'x'.join(map(str, s.input_shape)),
                                                       '  (dynamic batch)' if s.dynamic_batch else ''))
        return 0
    only = [n for n in args.only.split(',') if n]
    unknown = [n for n in only if n not in {s.name for s in specs}]
    if unknown:
        print('unknown model(s): {}'.format(', '.join(unknown)), file=sys.stderr)
        return 2

    with open(os.path.abspath(__file__), 'rb') as f:
        stamp = stamp_text(f.read())
    os.makedirs(args.out_dir, exist_ok=True)
    start = time.time()
    for spec in specs:
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
