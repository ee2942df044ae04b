"""Feature-extraction throughput (images/s) of a small conv net through scorebench.models.

Uses CUDA when present (``--device auto``), else the CPU, and prints one JSON line per
setting (float32, and float16 autocast on CUDA). Synthetic 3 x 64 x 64 images; a warm-up
batch is excluded from the timing. Finishes well under 2 minutes.

Run:  python benchmarks/gpu_check.py [--device auto|cpu|cuda] [--images 20000] [--batch-size 512]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def build_net():
    import torch

    torch.manual_seed(0)

    def block(cin, cout):
        return torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                                   torch.nn.BatchNorm2d(cout), torch.nn.ReLU(inplace=True),
                                   torch.nn.MaxPool2d(2))

    return torch.nn.Sequential(block(3, 32), block(32, 64), block(64, 128), block(128, 256),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--images", type=int, default=None, help="default: 20000 on CUDA, 256 on CPU")
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--budget-s", type=float, default=90.0, help="stop adding settings after this")
    args = parser.parse_args()

    import torch

    from scorebench.models import load_extractor, resolve_device, run_model

    device = resolve_device(args.device)
    n = args.images or (20_000 if device.type == "cuda" else 256)
    images = np.random.default_rng(0).uniform(0, 255, size=(n, 3, 64, 64)).astype(np.float32)
    extractor = load_extractor(build_net())
    started = time.perf_counter()
    for amp in ((False, True) if device.type == "cuda" else (False,)):
        if time.perf_counter() - started > args.budget_s:
            break
        run_model(extractor, images[: args.batch_size], device=device, batch_size=args.batch_size, amp=amp)
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        feats = run_model(extractor, images, device=device, batch_size=args.batch_size, amp=amp)
        if device.type == "cuda":
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - t0
        print(json.dumps({
            "device": str(device), "name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
            "amp": amp, "images": n, "batch_size": args.batch_size, "image_shape": [3, 64, 64],
            "feature_dim": int(feats.shape[1]), "seconds": round(elapsed, 3),
            "images_per_s": round(n / elapsed, 1), "includes": "host->device copy, float64 result",
            "extractor": extractor.fingerprint, "torch": torch.__version__,
        }))


if __name__ == "__main__":
    main()
