#!/usr/bin/python3
"""Export small BERT encoders written as Hugging Face's BertModel computes them, for ONNX
Runtime's transformer optimizer to fuse (scripts/make_transformer_cases.py).

Usage: /usr/bin/python3 scripts/export_bert_like.py OUT_DIR [--force]

Needs Debian's python3-torch (1.13) and python3-onnx. The modules follow BertModel's forward
(word + token type + position embeddings and LayerNorm; per layer the Q, K and V Linears,
view/permute into heads, scores / sqrt(head_size) plus the extended attention mask
(1 - mask) * -10000, Softmax, the context permuted back, output Linear, residual LayerNorm,
then the feed-forward with GELU and its residual LayerNorm), so that the exporter writes the
graph the optimizer's BERT patterns were made for, at opset 14 as Hugging Face exports it.
Writes OUT_DIR/<name>/model.onnx with inputs input_ids, attention_mask, token_type_ids
(int64, dynamic batch and sequence, traced at 2 x 16); weights are random (torch.manual_seed per model).
  bert_erf_gelu    GELU as erf (torch's exact form)  -> Gelu, then BiasGelu
  bert_tanh_gelu   GELU as the tanh approximation     -> FastGelu
Idempotent: a stamp of this script and torch's version skips models already exported.
"""
import argparse
import hashlib
import math
import os
import shutil

import torch
import torch.nn as nn

BATCH, SEQUENCE = 2, 16
# Batch and sequence dynamic, as Hugging Face exports them: the optimizer's EmbedLayerNormalization
# pattern reads the position ids through the sequence length taken from input_ids' shape.
DYNAMIC_AXES = {name: {0: 'batch', 1: 'sequence'}
                for name in ('input_ids', 'attention_mask', 'token_type_ids', 'last_hidden_state')}


class Config:
    vocab = 100
    hidden = 64
    heads = 4
    layers = 2
    intermediate = 128
    max_positions = 32
    token_types = 2
    epsilon = 1e-12


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab, c.hidden)
        self.position_embeddings = nn.Embedding(c.max_positions, c.hidden)
        self.token_type_embeddings = nn.Embedding(c.token_types, c.hidden)
        self.LayerNorm = nn.LayerNorm(c.hidden, eps=c.epsilon)
        self.register_buffer('position_ids', torch.arange(c.max_positions).expand((1, -1)))

    def forward(self, input_ids, token_type_ids):
        seq_length = input_ids.size(1)
        position_ids = self.position_ids[:, :seq_length]
        embeddings = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        embeddings = embeddings + self.position_embeddings(position_ids)
        return self.LayerNorm(embeddings)


class SelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads = c.heads
        self.head_size = c.hidden // c.heads
        self.query = nn.Linear(c.hidden, c.hidden)
        self.key = nn.Linear(c.hidden, c.hidden)
        self.value = nn.Linear(c.hidden, c.hidden)

    def transpose_for_scores(self, x):
        new_shape = x.size()[:-1] + (self.heads, self.head_size)
        return x.view(new_shape).permute(0, 2, 1, 3)

    def forward(self, hidden, extended_mask):
        q = self.transpose_for_scores(self.query(hidden))
        k = self.transpose_for_scores(self.key(hidden))
        v = self.transpose_for_scores(self.value(hidden))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
        scores = scores + extended_mask
        probs = nn.functional.softmax(scores, dim=-1)
        context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return context.view(context.size()[:-2] + (self.heads * self.head_size,))


class Layer(nn.Module):
    def __init__(self, c, activation):
        super().__init__()
        self.attention = SelfAttention(c)
        self.attention_output = nn.Linear(c.hidden, c.hidden)
        self.attention_norm = nn.LayerNorm(c.hidden, eps=c.epsilon)
        self.intermediate = nn.Linear(c.hidden, c.intermediate)
        self.activation = activation
        self.output = nn.Linear(c.intermediate, c.hidden)
        self.output_norm = nn.LayerNorm(c.hidden, eps=c.epsilon)

    def forward(self, hidden, extended_mask):
        attended = self.attention_norm(self.attention_output(self.attention(hidden, extended_mask)) + hidden)
        return self.output_norm(self.output(self.activation(self.intermediate(attended))) + attended)


class BertLike(nn.Module):
    def __init__(self, activation):
        super().__init__()
        c = Config()
        self.embeddings = Embeddings(c)
        self.layers = nn.ModuleList([Layer(c, activation) for _ in range(c.layers)])

    def forward(self, input_ids, attention_mask, token_type_ids):
        extended = attention_mask[:, None, None, :].to(torch.float32)
        extended = (1.0 - extended) * -10000.0
        hidden = self.embeddings(input_ids, token_type_ids)
        for layer in self.layers:
            hidden = layer(hidden, extended)
        return hidden


MODELS = {
    'bert_erf_gelu': lambda: BertLike(nn.functional.gelu),
    'bert_tanh_gelu': lambda: BertLike(gelu_tanh),
}


def example_inputs():
    generator = torch.Generator().manual_seed(3)
    input_ids = torch.randint(0, Config.vocab, (BATCH, SEQUENCE), generator=generator)
    token_type_ids = torch.randint(0, Config.token_types, (BATCH, SEQUENCE), generator=generator)
    attention_mask = torch.ones(BATCH, SEQUENCE, dtype=torch.int64)
    return input_ids, attention_mask, token_type_ids


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('out_dir')
    parser.add_argument('--force', action='store_true')
    args = parser.parse_args()
    with open(__file__, 'rb') as f:
        stamp = 'script-sha256 {}\ntorch {}\n'.format(hashlib.sha256(f.read()).hexdigest(),
                                                      torch.__version__)
    os.makedirs(args.out_dir, exist_ok=True)
    for name, make in MODELS.items():
        case_dir = os.path.join(args.out_dir, name)
        stamp_path = os.path.join(case_dir, 'stamp.txt')
        if not args.force and os.path.exists(stamp_path) and open(stamp_path).read() == stamp:
            continue
        torch.manual_seed(0)
        model = make().eval()
        tmp = case_dir + '.tmp{}'.format(os.getpid())
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        with torch.no_grad():
            torch.onnx.export(model, example_inputs(), os.path.join(tmp, 'model.onnx'),
                              opset_version=14, do_constant_folding=True,
                              input_names=['input_ids', 'attention_mask', 'token_type_ids'],
                              output_names=['last_hidden_state'], dynamic_axes=DYNAMIC_AXES)
        with open(os.path.join(tmp, 'stamp.txt'), 'w') as f:
            f.write(stamp)
        shutil.rmtree(case_dir, ignore_errors=True)
        os.rename(tmp, case_dir)
        print('exported {}'.format(name))


if __name__ == '__main__':
    main()
