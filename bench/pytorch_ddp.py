#!/usr/bin/python3
"""PyTorch twin of bench_parallel's two-worker run: the fashion_mlp model (784-512-256-10,
batch 64 per process, Adam 1e-3) trained with DistributedDataParallel over gloo by 2
processes of one thread each, every process on its half of Fashion-MNIST. Prints one JSON
object with the samples/s of all processes together. Needs Debian's python3-torch."""
import argparse, gzip, json, os, time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel

FASHION = "/usr/share/datasets/fashion-mnist"
WARMUP_BATCHES = 20  # as in bench_training.cpp


def read_idx(path, offset):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def worker(rank, world, args, port, results):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(42)  # same initial model in every process (DDP also broadcasts it)
    images = read_idx(f"{FASHION}/train-images-idx3-ubyte.gz", 16).reshape(-1, 784)
    labels = read_idx(f"{FASHION}/train-labels-idx1-ubyte.gz", 8)
    share = slice(rank * len(labels) // world, (rank + 1) * len(labels) // world)
    x_all = torch.from_numpy(images[share].astype(np.float32) / 255.0)
    y_all = torch.from_numpy(labels[share].astype(np.int64))
    model = DistributedDataParallel(nn.Sequential(
        nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10)))
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    order = torch.randperm(len(y_all))
    batches = min(args.batches, len(y_all) // args.batch_size - WARMUP_BATCHES)
    samples = 0
    for i in range(WARMUP_BATCHES + batches):
        idx = order[i * args.batch_size:(i + 1) * args.batch_size]
        if i == WARMUP_BATCHES:
            dist.barrier()
            start = time.perf_counter()
        optimiser.zero_grad(set_to_none=True)
        loss = loss_fn(model(x_all[idx]), y_all[idx])
        loss.backward()
        optimiser.step()
        if i >= WARMUP_BATCHES:
            samples += len(idx)
    dist.barrier()
    seconds = time.perf_counter() - start
    results[rank] = (samples, seconds)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=300, help="timed steps per process")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--port", type=int, default=29517)
    args = parser.parse_args()
    with mp.Manager() as manager:
        results = manager.dict()
        mp.spawn(worker, args=(args.processes, args, args.port, results), nprocs=args.processes)
        samples = sum(s for s, _ in results.values())
        seconds = max(t for _, t in results.values())
    print(json.dumps({"bench": "parallel", "impl": "pytorch_ddp", "job": "fashion_mlp",
                      "processes": args.processes, "threads_per_process": 1,
                      "batch": args.batch_size, "batches": args.batches,
                      "seconds": round(seconds, 4),
                      "samples_per_second": round(samples / seconds, 1)}), flush=True)


if __name__ == "__main__":
    main()
