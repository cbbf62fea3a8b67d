#!/usr/bin/env python3
"""Writes the CSV data of the sharing job set (label first, no header), seeded, so the files
in this folder can be made again: python3 bench/sharing_jobs/make_data.py."""
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def write(name, rows):
    with open(os.path.join(HERE, name), "w") as out:
        for label, features in rows:
            out.write(",".join([str(label)] + [f"{v:.4f}" for v in features]) + "\n")


def blobs(rng, count, classes, features, spread):
    centres = [[rng.gauss(0, 1.0) for _ in range(features)] for _ in range(classes)]
    rows = []
    for _ in range(count):
        label = rng.randrange(classes)
        rows.append((label, [c + rng.gauss(0, spread) for c in centres[label]]))
    return rows


def spiral(rng, count, arms, noise):
    rows = []
    for _ in range(count):
        arm = rng.randrange(arms)
        t = rng.random()
        angle = 2 * math.pi * arm / arms + 3.0 * t + rng.gauss(0, noise)
        rows.append((arm, [t * math.cos(angle), t * math.sin(angle)]))
    return rows


def rings(rng, count, classes, noise):
    """Concentric rings in 3-D: a class is a radius band; the third feature is noise."""
    rows = []
    for _ in range(count):
        label = rng.randrange(classes)
        radius = 1.0 + label + rng.gauss(0, noise)
        angle = rng.random() * 2 * math.pi
        rows.append((label, [radius * math.cos(angle), radius * math.sin(angle),
                             rng.gauss(0, 1.0)]))
    return rows


def tabular(rng, count, classes, informative, noise_features):
    """Classes from a random linear-plus-quadratic score over some features, the rest noise."""
    weights = [[rng.gauss(0, 1) for _ in range(informative)] for _ in range(classes)]
    rows = []
    for _ in range(count):
        x = [rng.gauss(0, 1) for _ in range(informative)]
        scores = [sum(w * v for w, v in zip(ws, x)) + 0.5 * x[k % informative] ** 2
                  for k, ws in enumerate(weights)]
        label = max(range(classes), key=lambda k: scores[k] + rng.gauss(0, 0.3))
        rows.append((label, x + [rng.gauss(0, 1) for _ in range(noise_features)]))
    return rows


def split(name, rows, test_count):
    write(f"{name}_train.csv", rows[test_count:])
    write(f"{name}_test.csv", rows[:test_count])


def main():
    split("blobs", blobs(random.Random(1), 2000, 3, 4, 1.1), 500)
    split("spiral", spiral(random.Random(2), 4000, 5, 0.15), 1000)
    split("rings", rings(random.Random(3), 3000, 4, 0.25), 600)
    split("tabular", tabular(random.Random(4), 4500, 6, 10, 6), 900)


if __name__ == "__main__":
    main()
