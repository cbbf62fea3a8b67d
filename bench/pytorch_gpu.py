#!/usr/bin/python3
"""PyTorch on the GPU for the GPU check (.ci/gpu_check.sh): the networks of
examples/fashion_mlp.job and examples/fashion_cnn.job with their batch size (64), updater
(Adam, learning rate 1e-3, decayed by 0.8 each epoch) and epochs, trained on Fashion-MNIST
held on the GPU (PyTorch's fastest input path: no loader, one index per batch). Prints one
JSON object per network: training samples per second (the epochs' training time only, after a
warm-up epoch fragment) and the test accuracy."""
import argparse, gzip, json, os, time

import numpy as np
import torch
from torch import nn


def read_idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def networks():
    """The example jobs' layers in PyTorch (he init for hidden layers, xavier for the output,
    zero biases, as strom initialises them)."""
    mlp = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256),
                        nn.ReLU(), nn.Linear(256, 10))
    cnn = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.3),
                        nn.Linear(128, 10))
    for net in (mlp, cnn):
        weighted = [m for m in net if isinstance(m, (nn.Linear, nn.Conv2d))]
        for m in weighted[:-1]:
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            nn.init.zeros_(m.bias)
        nn.init.xavier_normal_(weighted[-1].weight)
        nn.init.zeros_(weighted[-1].bias)
    return {"fashion_mlp": mlp, "fashion_cnn": cnn}


def load(data_dir, device, prefix):
    images = read_idx(f"{data_dir}/{prefix}-images-idx3-ubyte.gz", 16).reshape(-1, 1, 28, 28)
    labels = read_idx(f"{data_dir}/{prefix}-labels-idx1-ubyte.gz", 8)
    x = torch.from_numpy(images.astype(np.float32) / 255.0).to(device)
    y = torch.from_numpy(labels.astype(np.int64)).to(device)
    return x, y


def train(name, net, train_set, test_set, epochs, batch, device):
    x_all, y_all = train_set
    net = net.to(device)
    optimiser = torch.optim.Adam(net.parameters(), lr=1e-3)
    schedule = torch.optim.lr_scheduler.ExponentialLR(optimiser, gamma=0.8)
    loss_fn = nn.CrossEntropyLoss()
    steps = (len(y_all) + batch - 1) // batch
    seconds = 0.0
    samples = 0
    for epoch in range(epochs):
        net.train()
        order = torch.randperm(len(y_all), device=device)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for i in range(steps):
            idx = order[i * batch:(i + 1) * batch]
            optimiser.zero_grad(set_to_none=True)
            loss = loss_fn(net(x_all[idx]), y_all[idx])
            loss.backward()
            optimiser.step()
        torch.cuda.synchronize()
        seconds += time.perf_counter() - start
        samples += len(y_all)
        schedule.step()
    net.eval()
    with torch.no_grad():
        x_test, y_test = test_set
        correct = sum(int((net(x_test[i:i + 1000]).argmax(1) == y_test[i:i + 1000]).sum())
                      for i in range(0, len(y_test), 1000))
    return {"bench": "gpu_training", "impl": "pytorch", "job": name, "device": "cuda",
            "gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "epochs": epochs,
            "batch": batch, "train_seconds": round(seconds, 3),
            "train_samples_per_second": round(samples / seconds, 1),
            "test_accuracy": round(correct / len(y_test), 4)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    device = torch.device("cuda")
    torch.manual_seed(42)
    train_set = load(args.data, device, "train")
    test_set = load(args.data, device, "t10k")
    for name, net in networks().items():
        print(json.dumps(train(name, net, train_set, test_set, args.epochs, args.batch_size,
                               device)), flush=True)


if __name__ == "__main__":
    main()
