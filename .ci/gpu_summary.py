#!/usr/bin/python3
"""The GPU check's verdict (.ci/gpu_check.sh): reads the logs folder it wrote and prints one
JSON object holding every figure and whether each of issue 44's conditions held:
conformance tests passed; both example jobs within 0.5 point of the CPU backend after 2
epochs; fashion_cnn on the GPU at least as fast as PyTorch on the same GPU; threshold
encoding at least half the device-to-device copy rate; 4 workers on one GPU within 0.5 point
of one."""
import json, pathlib, sys

logs = pathlib.Path(sys.argv[1])


def lines(name):
    path = logs / name
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def metrics(name):
    path = logs / f"{name}.json"
    if not path.exists():
        return None
    m = json.loads(path.read_text())
    return {"test_accuracy": m.get("test_accuracy"), "device": m.get("device"),
            "workers": m.get("workers"),
            "train_samples_per_second": m.get("train_samples_per_second")}


steps = {s["step"]: s for s in lines("steps.jsonl")}
runs = {name: metrics(name) for name in
        ["mlp_cuda", "mlp_cpu", "cnn_cuda", "cnn_cpu", "mlp_cuda_4workers"]}
torch = {r["job"]: r for r in lines("pytorch.jsonl")}
encode = lines("encode.jsonl")
checks = {}
tests = {k: s for k, s in steps.items() if k.startswith("test_cuda_")}
skipped = [k for k in tests if "skipped because precondition failed" in
           (logs / f"{k}.log").read_text(errors="replace")]
checks["conformance"] = bool(tests) and not skipped and all(s["exit"] == 0 for s in tests.values())


def points(a, b):
    if not a or not b or a["test_accuracy"] is None or b["test_accuracy"] is None:
        return None
    return round(100 * (a["test_accuracy"] - b["test_accuracy"]), 2)


gaps = {"mlp_gpu_minus_cpu": points(runs["mlp_cuda"], runs["mlp_cpu"]),
        "cnn_gpu_minus_cpu": points(runs["cnn_cuda"], runs["cnn_cpu"]),
        "mlp_4workers_minus_1": points(runs["mlp_cuda_4workers"], runs["mlp_cuda"])}
checks["accuracy_gpu_vs_cpu"] = all(
    g is not None and abs(g) <= 0.5 for k, g in gaps.items() if k != "mlp_4workers_minus_1")
checks["four_workers_one_gpu"] = (gaps["mlp_4workers_minus_1"] is not None
                                  and abs(gaps["mlp_4workers_minus_1"]) <= 0.5)
speed = {}
for job in ("mlp", "cnn"):
    ours = runs[f"{job}_cuda"]
    theirs = torch.get(f"fashion_{job}")
    if ours and theirs and ours["train_samples_per_second"]:
        speed[f"{job}_strom_over_pytorch"] = round(
            ours["train_samples_per_second"] / theirs["train_samples_per_second"], 3)
checks["cnn_at_least_pytorch"] = speed.get("cnn_strom_over_pytorch", 0) >= 1.0
ratios = [e["ratio_to_copy"] for e in encode if e.get("op") == "threshold_scan"]
checks["encoding_half_copy_rate"] = bool(ratios) and min(ratios) >= 0.5
print(json.dumps({"summary": "gpu_check", "runs": runs, "pytorch": torch, "gaps_points": gaps,
                  "speed": speed, "encode": encode, "steps": steps, "skipped_tests": skipped,
                  "checks": checks,
                  "passed": all(checks.values())}, indent=1))
