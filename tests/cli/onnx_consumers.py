#!/usr/bin/python3
"""Checks an ONNX model that `strom export` wrote with two real consumers: ONNX's own checker
(with strict shape inference), and OpenCV's DNN module, which predicts the samples that
`strom predict` predicted and must agree with its classes.

  onnx_consumers.py MODEL --predictions P.csv --idx IMAGES[.gz] --expect-input 1,28,28
  onnx_consumers.py MODEL --predictions P.csv --csv ROWS --label-column 0 --expect-input 4

Exit status: 0 when both consumers accept the model and agree with strom, 1 when they do not,
3 when a consumer is not installed (python3-onnx, python3-opencv: .ci/setup.sh test installs
them), so that a missing consumer fails a test instead of passing it unchecked.
"""

import argparse
import gzip
import struct
import sys

try:
    import numpy as np
    import onnx
    import onnx.checker
    import onnx.shape_inference
    import cv2
except ImportError as e:
    print(f"onnx_consumers: a consumer is missing: {e} (Debian: apt-get install python3-onnx "
          f"python3-opencv; run with Debian's /usr/bin/python3)", file=sys.stderr)
    sys.exit(3)

# Samples OpenCV is given at once: large enough to be quick, small enough for little memory.
BATCH = 1000

# IDX element types (the format's third magic byte) and their numpy types, big-endian.
IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def fail(message):
    print(f"onnx_consumers: {message}", file=sys.stderr)
    sys.exit(1)


def read_idx(path):
    """The samples of an IDX file (plain or gzip), as float32 rows, one a sample."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, kind, rank = struct.unpack(">HBB", data[:4])
    if zero != 0 or kind not in IDX_TYPES:
        fail(f"{path}: not an IDX file (magic {data[:4].hex()})")
    dims = struct.unpack(f">{rank}I", data[4:4 + 4 * rank])
    values = np.frombuffer(data, dtype=IDX_TYPES[kind], offset=4 + 4 * rank)
    return values.astype(np.float32).reshape(dims[0], -1)


def read_csv(path, label_column, header, delimiter):
    rows = np.loadtxt(path, delimiter=delimiter, skiprows=1 if header else 0, dtype=np.float32,
                      ndmin=2)
    return np.delete(rows, label_column, axis=1) if label_column >= 0 else rows


def read_predictions(path):
    """`strom predict --out` rows: index,predicted,p0,...,pK after a header."""
    with open(path) as f:
        header = f.readline().strip().split(",")
        if header[:2] != ["index", "predicted"]:
            fail(f"{path}: not strom predict's output (header {header})")
    table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return table[:, 1].astype(np.int64), table[:, 2:].astype(np.float32)


def dims_of(value):
    return [d.dim_param if d.HasField("dim_param") else d.dim_value
            for d in value.type.tensor_type.shape.dim]


def check_with_onnx(path, expect_input, classes):
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    opset = max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    if opset < 13:
        fail(f"{path}: opset {opset}, expected 13 or later")
    graph = model.graph
    if [i.name for i in graph.input] != ["input"]:
        fail(f"{path}: inputs {[i.name for i in graph.input]}, expected one named 'input'")
    dims = dims_of(graph.input[0])
    if not isinstance(dims[0], str) or not dims[0]:
        fail(f"{path}: the input's batch dimension is {dims[0]}, expected a symbolic one")
    if dims[1:] != expect_input:
        fail(f"{path}: input N x {dims[1:]}, expected N x {expect_input}")
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    out = dims_of(inferred.graph.output[0])
    if out[1:] != [classes]:
        fail(f"{path}: output {graph.output[0].name} is {out}, expected N x {classes}")
    ops = [n.op_type for n in graph.node]
    print(f"onnx {onnx.__version__} checker: ok, opset {opset}, IR {model.ir_version}, "
          f"input {dims}, output {out}, nodes {' '.join(ops)}")
    return dims[1:]


def predict_with_opencv(path, samples, input_dims):
    net = cv2.dnn.readNetFromONNX(path)
    outputs = []
    for begin in range(0, len(samples), BATCH):
        batch = samples[begin:begin + BATCH].reshape([-1] + input_dims)
        net.setInput(np.ascontiguousarray(batch), "input")
        outputs.append(net.forward().reshape(len(batch), -1))
    return np.concatenate(outputs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--predictions", required=True, help="strom predict --out's CSV")
    parser.add_argument("--idx", help="the samples strom predicted, an IDX file")
    parser.add_argument("--csv", help="the samples strom predicted, CSV rows")
    parser.add_argument("--label-column", type=int, default=-1, help="CSV: the label's column")
    parser.add_argument("--header", action="store_true", help="CSV: skip the first line")
    parser.add_argument("--delimiter", default=",")
    parser.add_argument("--expect-input", required=True,
                        help="the input's dimensions after N: C,H,W or F")
    parser.add_argument("--min-agreement", type=float, default=0.999)
    parser.add_argument("--max-difference", type=float, default=1e-3,
                        help="largest |p_opencv - p_strom| of any class probability")
    args = parser.parse_args()

    classes_of_strom, probabilities_of_strom = read_predictions(args.predictions)
    classes = probabilities_of_strom.shape[1]
    expect_input = [int(d) for d in args.expect_input.split(",")]
    input_dims = check_with_onnx(args.model, expect_input, classes)

    if (args.idx is None) == (args.csv is None):
        fail("give the samples as --idx FILE or --csv FILE")
    samples = read_idx(args.idx) if args.idx else read_csv(args.csv, args.label_column,
                                                            args.header, args.delimiter)
    if len(samples) != len(classes_of_strom):
        fail(f"{len(samples)} samples but {len(classes_of_strom)} predictions")

    probabilities = predict_with_opencv(args.model, samples, input_dims)
    if probabilities.shape != probabilities_of_strom.shape:
        fail(f"OpenCV gave {probabilities.shape} probabilities, strom "
             f"{probabilities_of_strom.shape}")
    sums = probabilities.sum(axis=1)
    if not np.allclose(sums, 1.0, atol=1e-4):
        fail(f"OpenCV's outputs are not probabilities: row sums from {sums.min()} to {sums.max()}")
    agree = int((probabilities.argmax(axis=1) == classes_of_strom).sum())
    share = agree / len(samples)
    difference = float(np.abs(probabilities - probabilities_of_strom).max())
    print(f"opencv {cv2.__version__}: {agree}/{len(samples)} classes as strom predict's "
          f"({100 * share:.2f}%), largest probability difference {difference:.2e}")
    if share < args.min_agreement:
        fail(f"agreement {100 * share:.2f}% is below {100 * args.min_agreement:.2f}%")
    if difference > args.max_difference:
        fail(f"a probability differs by {difference:.2e}, more than {args.max_difference:.0e}")


if __name__ == "__main__":
    main()
