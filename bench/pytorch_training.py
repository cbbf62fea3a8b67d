#!/usr/bin/python3
"""PyTorch twin of bench_training: the same models, batch size, optimiser and thread count
on the same Fashion-MNIST data, timed the same way (warm-up, then N full training steps).
Prints one JSON object per model. Needs Debian's python3-torch."""
import argparse, gzip, json, time

import numpy as np
import torch
from torch import nn

FASHION = "/usr/share/datasets/fashion-mnist"
WARMUP_BATCHES = 20  # as in bench_training.cpp


def read_idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def models():
    mlp = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256),
                        nn.ReLU(), nn.Linear(256, 10))
    cnn = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.3),
                        nn.Linear(128, 10))
    return {"fashion_mlp": mlp, "fashion_cnn": cnn}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(42)
    images = read_idx(f"{FASHION}/train-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
    labels = read_idx(f"{FASHION}/train-labels-idx1-ubyte.gz", 8)
    x_all = torch.from_numpy(images.astype(np.float32) / 255.0)
    y_all = torch.from_numpy(labels.astype(np.int64))
    order = torch.randperm(len(y_all))
    for name, model in models().items():
        optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
        loss_fn = nn.CrossEntropyLoss()
        model.train()
        samples = 0
        for i in range(WARMUP_BATCHES + args.batches):
            idx = order[i * args.batch_size:(i + 1) * args.batch_size]
            x, y = x_all[idx], y_all[idx]
            if i == WARMUP_BATCHES:
                start = time.perf_counter()
            optimiser.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            optimiser.step()
            if i >= WARMUP_BATCHES:
                samples += len(y)
        seconds = time.perf_counter() - start
        print(json.dumps({"bench": "training", "impl": "pytorch", "job": name, "workers": 1,
                          "threads": args.threads, "batch": args.batch_size,
                          "batches": args.batches, "seconds": round(seconds, 4),
                          "samples_per_second": round(samples / seconds, 1)}), flush=True)


if __name__ == "__main__":
    main()
