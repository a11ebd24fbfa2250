"""Real small models, side by side with PyTorch (run: ``python bench/bench_models.py``).

Each workload is built twice from the same seed, once with minitorch_nn and once with PyTorch,
so both start from identical weights and see identical batches. Timing is CPU time of this
process (``time.process_time``) on one thread (``set_num_threads(1)`` in both libraries; numpy's
BLAS pool through threadpoolctl). Within each repeat the two libraries run one after the other
(alternating which goes first), and the table shows the median of the *paired* ratios
minitorch_nn / torch, so a load change on a busy machine hits both alike.

Workloads (the targets are those of the issue that asked for this benchmark):

========================  ==========================================================================
lenet5-digits             LeNet-5 on scikit-learn's bundled 8x8 digits (1,797 images), each image
                          upsampled 3x (nearest) and padded by 2 to 28x28, the classic LeNet-5
                          input; batch 64, shuffled by ``DataLoader``, Adam; one epoch
char-transformer          ``nn.TransformerEncoderLayer`` x2, d_model 64, 4 heads, seq 64, batch 32,
                          causal mask, AdamW; one step
char-transformer-hand     the same model with hand-written blocks (``masked_fill``, ``softmax``,
                          GELU); one step
lstm-lm                   Embedding -> 2-layer ``nn.LSTM`` (hidden 128) -> Linear; seq 64,
                          batch 32, Adam; one step
mlp-784-16-10             batch 128, SGD; one step
Linear(8,8)               building one ``nn.Linear(8, 8)``
Sequential(1000xLinear)   building ``nn.Sequential`` of 1,000 ``nn.Linear(8, 8)``
dataloader-epoch          one shuffled epoch of ``DataLoader(TensorDataset(x, y), batch_size=64)``
                          over 10,000 samples of 32 features
========================  ==========================================================================

The character models read this repository's README as their text. ``loss diff`` is the largest
difference between the two libraries' losses at the same step, over every step run. Peak memory
(on by default; ``--no-memory`` skips it) is measured per library in a child process (Linux): the
peak resident set size while two units of work run, above the resident size after setup (``mem ratio``).

Requires torch (2.13) and scikit-learn (the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

import minitorch_nn as mt  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover - the benchmark needs torch
    torch = None


# ---------------------------------------------------------------------- data
def digits_28x28():
    """scikit-learn's digits as float32 (N, 1, 28, 28) images in [0, 1], and int64 labels."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = digits.images.astype(np.float32) / 16.0
    images = np.kron(images, np.ones((1, 3, 3), dtype=np.float32))  # 8x8 -> 24x24, nearest
    images = np.pad(images, ((0, 0), (2, 2), (2, 2)))  # -> 28x28
    return images[:, None], digits.target.astype(np.int64)


def char_batches(seq, batch, count):
    """``count`` batches of (input, target) character windows from the README, as int64 arrays."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    vocab = sorted(set(text))
    ids = np.array([vocab.index(c) for c in text], dtype=np.int64)
    rng = np.random.default_rng(0)
    out = []
    for _ in range(count):
        starts = rng.integers(0, len(ids) - seq - 1, size=batch)
        x = np.stack([ids[s : s + seq] for s in starts])
        y = np.stack([ids[s + 1 : s + seq + 1] for s in starts])
        out.append((x, y))
    return len(vocab), out


# ---------------------------------------------------------------------- workloads
# Each builder takes a library and returns a zero-argument callable: one unit of work, returning
# a loss (float), the losses of its steps (list), or None.


def lenet5(lib, data):
    images, labels = data
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10),
    )
    opt = lib.optim.Adam(model.parameters(), lr=1e-3, **_foreach_off(lib))
    loader = lib.utils.data.DataLoader(
        lib.utils.data.TensorDataset(lib.tensor(images), lib.tensor(labels)), batch_size=64, shuffle=True)

    def epoch():
        losses = []
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses

    return epoch


def _char_step(lib, model, batches, opt_cls):
    opt = opt_cls(model.parameters(), lr=1e-3, **_foreach_off(lib))
    batches = [(lib.tensor(x), lib.tensor(y)) for x, y in batches]
    position = [0]

    def step():
        x, y = batches[position[0] % len(batches)]
        position[0] += 1
        opt.zero_grad()
        logits = model(x)
        loss = lib.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss.item()

    return step


def char_transformer(lib, data):
    vocab, batches = data
    nn = lib.nn
    lib.manual_seed(0)

    class CharTransformer(nn.Module):
        def __init__(self, d=64, heads=4, layers=2, seq=64):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(seq, d)
            layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=4 * d, dropout=0.0, batch_first=True,
                                               activation="gelu")
            self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
            self.head = nn.Linear(d, vocab)
            self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(seq))

        def forward(self, idx):
            T = idx.size(1)
            x = self.tok(idx) + self.pos(lib.arange(T))
            return self.head(self.encoder(x, mask=self.mask[:T, :T], is_causal=True))

    return _char_step(lib, CharTransformer(), batches, lib.optim.AdamW)


def char_transformer_hand(lib, data):
    vocab, batches = data
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)

    class Block(nn.Module):
        def __init__(self, d, heads, seq):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.register_buffer("causal", lib.ones(seq, seq).tril())

        def forward(self, x):
            B, T, C = x.shape
            hd = C // self.heads
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q, k, v = (t.reshape(B, T, self.heads, hd).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            att = att.masked_fill(self.causal[:T, :T] == 0, float("-inf"))
            y = F.softmax(att, dim=-1) @ v
            x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))

    class HandTransformer(nn.Module):
        def __init__(self, d=64, heads=4, layers=2, seq=64):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(seq, d)
            self.blocks = nn.Sequential(*[Block(d, heads, seq) for _ in range(layers)])
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(lib.arange(idx.size(1)))
            return self.head(self.ln(self.blocks(x)))

    return _char_step(lib, HandTransformer(), batches, lib.optim.AdamW)


def lstm_lm(lib, data):
    vocab, batches = data
    nn = lib.nn
    lib.manual_seed(0)

    class LSTMLM(nn.Module):
        def __init__(self, hidden=128):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.lstm = nn.LSTM(hidden, hidden, num_layers=2, batch_first=True)
            self.head = nn.Linear(hidden, vocab)

        def forward(self, idx):
            out, _ = self.lstm(self.embed(idx))
            return self.head(out)

    return _char_step(lib, LSTMLM(), batches, lib.optim.Adam)


def mlp(lib, data):
    x, y = data
    lib.manual_seed(0)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 16), nn.ReLU(), nn.Linear(16, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, **_foreach_off(lib))
    X, Y = lib.tensor(x), lib.tensor(y)

    def step():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(X), Y)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def linear_construction(lib, _data):
    def build():
        for _ in range(100):
            lib.nn.Linear(8, 8)

    return build


def sequential_construction(lib, _data):
    def build():
        lib.nn.Sequential(*[lib.nn.Linear(8, 8) for _ in range(1000)])

    return build


def dataloader_epoch(lib, data):
    x, y = data
    lib.manual_seed(0)
    loader = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.tensor(x), lib.tensor(y)),
                                       batch_size=64, shuffle=True)

    def epoch():
        total = 0
        for _, labels in loader:
            total += int(labels[0])
        return float(total)  # the same shuffled order gives the same sum

    return epoch


def _foreach_off(lib):
    # torch's foreach optimizers take a different (multi-tensor) path; compare the plain loop
    return {"foreach": False} if lib.__name__ == "torch" else {}


def _mlp_data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((128, 784)).astype(np.float32), rng.integers(0, 10, 128).astype(np.int64)


def _loader_data():
    rng = np.random.default_rng(1)
    return rng.standard_normal((10_000, 32)).astype(np.float32), rng.integers(0, 10, 10_000).astype(np.int64)


# name: (builder, data maker, unit, target ratio, default repeats)
WORKLOADS = {
    "lenet5-digits": (lenet5, digits_28x28, "epoch", 1.0, 2),
    "char-transformer": (char_transformer, lambda: char_batches(64, 32, 8), "step", 1.0, 5),
    "char-transformer-hand": (char_transformer_hand, lambda: char_batches(64, 32, 8), "step", 1.0, 5),
    "lstm-lm": (lstm_lm, lambda: char_batches(64, 32, 8), "step", 1.2, 3),
    "mlp-784-16-10": (mlp, _mlp_data, "step", 1.0, 30),
    "Linear(8,8)": (linear_construction, lambda: None, "100 builds", 1.5, 10),
    "Sequential(1000xLinear)": (sequential_construction, lambda: None, "build", 1.5, 3),
    "dataloader-epoch": (dataloader_epoch, _loader_data, "epoch", 1.0, 3),
}
TRAINING = ("lenet5-digits", "char-transformer", "char-transformer-hand", "lstm-lm", "mlp-784-16-10")


def _one_thread():
    mt.set_num_threads(1)
    torch.set_num_threads(1)


def run_workload(name, repeats):
    builder, make_data, unit, target, default_repeats = WORKLOADS[name]
    repeats = repeats or default_repeats
    data = make_data()
    libs = {"mt": mt, "torch": torch}
    work = {key: builder(lib, data) for key, lib in libs.items()}
    losses = {key: [work[key]()] for key in libs}  # one warm-up unit each
    times = {key: [] for key in libs}
    for r in range(repeats):
        order = ("mt", "torch") if r % 2 == 0 else ("torch", "mt")
        for key in order:
            start = time.process_time()
            loss = work[key]()
            times[key].append(time.process_time() - start)
            losses[key].append(loss)
    ratios = [a / b for a, b in zip(times["mt"], times["torch"])]
    if losses["mt"][0] is None:
        diff = None
    else:
        flat = {key: [v for unit in values for v in (unit if isinstance(unit, list) else [unit])]
                for key, values in losses.items()}
        diff = max(abs(a - b) for a, b in zip(flat["mt"], flat["torch"]))
    return {
        "name": name, "unit": unit, "target": target, "repeats": repeats,
        "mt_ms": statistics.median(times["mt"]) * 1e3, "torch_ms": statistics.median(times["torch"]) * 1e3,
        "ratio": statistics.median(ratios), "loss_diff": diff,
    }


def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def memory_child(name, lib_name):
    """Print the peak RSS (KiB) above the RSS after setup while ``name`` runs two units with one
    library: the memory the training itself needs (activations, gradients, optimizer state).

    The kernel's peak-RSS mark is reset (``/proc/self/clear_refs``) after the model and data are
    built, so import-time peaks do not count.
    """
    _one_thread()
    builder, make_data, *_ = WORKLOADS[name]
    lib = mt if lib_name == "mt" else torch
    work = builder(lib, make_data())
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = _status_kb("VmRSS")
    work()
    work()
    print(max(_status_kb("VmHWM") - before, 0))


def peak_memory(name):
    out = {}
    for lib_name in ("mt", "torch"):
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--memory-child", name, lib_name],
                              capture_output=True, text=True, cwd=ROOT)
        out[lib_name] = int(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 else None
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="run only these workloads")
    parser.add_argument("--repeats", type=int, default=0, help="timed repeats per workload (default: per workload)")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory child processes")
    parser.add_argument("--memory-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if torch is None:
        print("bench_models needs torch (pip install torch==2.13.0)")
        return 1
    if args.memory_child:
        memory_child(*args.memory_child)
        return 0
    _one_thread()
    names = args.only or list(WORKLOADS)
    print(f"one thread; CPU time; median of paired ratios; torch {torch.__version__}")
    header = (f"{'workload':<26}{'unit':>11}{'minitorch ms':>14}{'torch ms':>11}{'ratio':>8}{'target':>8}"
              f"{'loss diff':>11}{'mem MiB':>9}{'torch MiB':>10}{'mem ratio':>10}")
    print(header)
    print("-" * len(header))
    for name in names:
        row = run_workload(name, args.repeats)
        mem = peak_memory(name) if (name in TRAINING and not args.no_memory) else {}
        diff = "" if row["loss_diff"] is None else f"{row['loss_diff']:.1e}"
        m, t = mem.get("mt"), mem.get("torch")
        mem_cols = (f"{m / 1024:>9.1f}{t / 1024:>10.1f}" + (f"{m / t:>10.2f}" if t else f"{'-':>10}")
                    if m is not None and t is not None else f"{'':>9}{'':>10}{'':>10}")
        print(f"{name:<26}{row['unit']:>11}{row['mt_ms']:>14.1f}{row['torch_ms']:>11.1f}{row['ratio']:>7.2f}x"
              f"{row['target']:>7.1f}x{diff:>11}" + mem_cols, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
