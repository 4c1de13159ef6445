"""Check fortekit's CUDA paths against the CPU on a machine with a GPU.

Runs each device-dependent part twice, on the CPU and with ``device="auto"`` (which
must pick CUDA), over a tiny randomly initialised transformers ``ClapModel`` (the
real class, built by ``tests/plugin_fixtures.py``) and real captions, and compares:

* ``get_backbone(..., device="auto")``: the model and its embeddings live on CUDA;
* Stage 1 (``Refiner.refine_many``): the same refined queries and objective values
  on both devices, one encoder call per depth per batch, and the time per query;
* the audio index: the same top-k on both devices;
* Stage 2 (``train_projection``): the same seed trains to nearly the same losses and
  head on both devices (dropout masks differ between the devices' generators);
* Stage 3 and the metrics on CUDA tensors;
* the whole ``fortekit eval`` run with ``device="auto"``.

Usage (the captions file is any Clotho-format CSV)::

    python scripts/cuda_check.py CAPTIONS.csv --out DIR

It prints one line per check and writes ``cuda_check.json`` to ``--out``; the exit code
is 1 when a check fails. Without CUDA it stops with exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def _timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return value, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("captions", type=Path, help="a Clotho-format caption CSV")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=128, help="Stage 1 queries (default 128)")
    parser.add_argument("--dry-run", action="store_true", help="run on the CPU (device checks then fail)")
    args = parser.parse_args()
    gpu = "cuda" if torch.cuda.is_available() else "cpu"
    if not torch.cuda.is_available() and not args.dry_run:
        print("no CUDA device: nothing to check", file=sys.stderr)
        return 2

    from plugin_fixtures import save_tiny_clap

    from fortekit.plugins import get_backbone, register_backbone
    from fortekit.search.eval.datasets import load_collection
    from fortekit.search.eval.metrics import ranks_from_indices, ranks_of_targets, retrieval_metrics
    from fortekit.search.eval.tasks import retrieval_task
    from fortekit.search.index import AudioIndex
    from fortekit.search.index.item_captions import item_predicates_from_captions
    from fortekit.search.projection import ProjectionConfig
    from fortekit.search.projection.data import ProjectionData
    from fortekit.search.projection.files import load_projection
    from fortekit.search.projection.training import train_projection
    from fortekit.search.rerank import Reranker
    from fortekit.search.stage1.beam import Refiner
    from fortekit.search.stage1.config import RefineConfig

    args.out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp())
    clap_dir = save_tiny_clap(work / "clap")
    name = torch.cuda.get_device_name(0) if gpu == "cuda" else None
    report: dict[str, Any] = {"gpu": name, "torch": torch.__version__, "checks": {}}
    failures: list[str] = []

    def check(name: str, ok: bool, **facts: Any) -> None:
        report["checks"][name] = {"ok": ok, **facts}
        print(f"{'PASS' if ok else 'FAIL'} {name}: {json.dumps(facts, default=str)}", flush=True)
        if not ok:
            failures.append(name)

    # device="auto" reaches CUDA.
    auto = get_backbone("hf-clap", model=str(clap_dir), device="auto")
    cpu = get_backbone("hf-clap", model=str(clap_dir), device="cpu")
    clips = load_collection(args.captions)
    task = retrieval_task(clips[: args.queries], item_captions="single")
    queries = list(task.queries)
    items = [texts[0] for texts in task.item_texts]
    e_auto = auto.encode_text(queries[:8])
    e_cpu = cpu.encode_text(queries[:8])
    check("backbone device auto", str(auto.device).startswith("cuda") and e_auto.is_cuda,
          device=str(auto.device), max_abs_diff=float((e_auto.cpu() - e_cpu).abs().max()))

    # Stage 1, batched, on both devices.
    config = RefineConfig.online()
    results = {}
    for label, backbone in (("cpu", cpu), ("cuda", auto)):
        refiner = Refiner(backbone, "lexical", config=config)
        refiner.refine_many(queries[:4], batch_size=4)  # warm-up: parser, vocabulary, kernels
        refiner.encoder.stats.reset()
        out, seconds = _timed(refiner.refine_many, queries, batch_size=64)
        batches = -(-len(queries) // 64)
        results[label] = (out, seconds, refiner.encoder.stats.calls, batches)
    cpu_out, cpu_s, cpu_calls, batches = results["cpu"]
    cuda_out, cuda_s, cuda_calls, _ = results["cuda"]
    same_text = sum(a.refined_text == b.refined_text for a, b in zip(cpu_out, cuda_out, strict=True))
    pairs = list(zip(cpu_out, cuda_out, strict=True))
    objective_diff = max(abs(a.terms.objective - b.terms.objective) for a, b in pairs)
    qstar_cos = min(
        float(torch.nn.functional.cosine_similarity(a.q_star.cpu().float(), b.q_star.cpu().float(), dim=0))
        for a, b in zip(cpu_out, cuda_out, strict=True)
    )
    on_cuda = all(r.q_star.is_cuda for r in cuda_out) or all(not r.q_star.is_cuda for r in cuda_out)
    check("stage1 cpu vs cuda", same_text >= 0.97 * len(queries) and qstar_cos > 0.999 and on_cuda,
          queries=len(queries), same_refined_text=same_text, max_objective_diff=objective_diff,
          min_qstar_cosine=qstar_cos, ms_per_query_cpu=1000 * cpu_s / len(queries),
          ms_per_query_cuda=1000 * cuda_s / len(queries))
    budget = batches * (config.max_depth + 1)
    check("stage1 encoder calls", cuda_calls <= budget and cpu_calls <= budget,
          calls_cuda=cuda_calls, calls_cpu=cpu_calls, batches=batches, at_most=budget)

    # The index: exact top-k on both devices.
    index = AudioIndex.from_captions([f"i{i}" for i in range(len(items))], items, cpu,
                                   embeddings=cpu.encode_text(items))
    query_embeddings = cpu.encode_text(queries)
    s_cpu, r_cpu = index.search(query_embeddings, k=10, device="cpu")
    s_gpu, r_gpu = index.search(query_embeddings.to(gpu), k=10, device="auto")
    check("index search cpu vs cuda", bool((r_cpu == r_gpu).float().mean() > 0.99),
          same_rows=float((r_cpu == r_gpu).float().mean()), max_score_diff=float((s_cpu - s_gpu).abs().max()),
          result_device=str(s_gpu.device))

    # Stage 2 on CUDA; the head loads on the CPU and agrees.
    q_star = torch.stack([r.q_star.cpu().float() for r in cuda_out])
    audio = cpu.encode_text(items)
    data = ProjectionData(query=q_star, audio=audio)
    reports = {}
    for label, device in (("cpu", "cpu"), ("auto", "auto")):
        reports[label] = train_projection(
            data, config=ProjectionConfig(dim=int(audio.shape[1]), epochs=10, batch_size=16, lr=1e-3),
            out_dir=work / f"projection-{label}", device=device, progress=False,
        )
    losses_cpu = [epoch.loss for epoch in reports["cpu"].history]
    losses_gpu = [epoch.loss for epoch in reports["auto"].history]
    head_cpu = load_projection(work / "projection-cpu", device="cpu")
    head_gpu = load_projection(work / "projection-auto", device=gpu)
    with torch.no_grad():
        projected_cpu = head_cpu(audio)
        projected_gpu = head_gpu(audio.to(gpu)).cpu()
    loss_diff = max(abs(a - b) for a, b in zip(losses_cpu, losses_gpu, strict=True))
    output_diff = float((projected_cpu - projected_gpu).abs().max())
    check("projection trains on cuda like on the cpu",
          # Dropout draws from a different generator on CUDA, so the two runs agree closely,
          # not bit for bit.
          reports["auto"].device.startswith("cuda") and loss_diff < 1e-3 and output_diff < 0.05,
          device=reports["auto"].device, losses_cpu=[round(x, 4) for x in losses_cpu],
          losses_cuda=[round(x, 4) for x in losses_gpu], max_loss_diff=loss_diff,
          max_output_diff=output_diff)

    # Stage 3 and the metrics on CUDA tensors.
    scores_gpu = query_embeddings.to(gpu) @ index.embedding_tensor(gpu).T
    reranker = Reranker(alpha=0.3, top_n=50, mode="polarity")
    query_sets = item_predicates_from_captions(queries)
    item_sets = item_predicates_from_captions(items)
    _, order_gpu = reranker.rerank(scores_gpu, query_sets, item_sets)
    _, order_cpu = reranker.rerank(scores_gpu.cpu(), query_sets, item_sets)
    ranks_gpu = ranks_from_indices(order_gpu, task.targets)
    ranks_cpu = ranks_from_indices(order_cpu, task.targets)
    base = retrieval_metrics(ranks_of_targets(scores_gpu, task.targets))
    check("rerank and metrics on cuda",
          retrieval_metrics(ranks_gpu) == retrieval_metrics(ranks_cpu),
          baseline_r1=base["R@1"], reranked_r1=retrieval_metrics(ranks_gpu)["R@1"])

    # The whole benchmark with device="auto".
    from fortekit.search.eval.evaluate import EvalSettings, run_evaluation

    register_backbone("tiny-clap", lambda device="auto": get_backbone("hf-clap", model=str(clap_dir),
                                                                       device=device), override=True)
    settings = EvalSettings(test=args.captions, out=work / "eval", n_train=max(2, len(clips) // 2),
                            limit_test=args.queries, backbone="tiny-clap", device="auto", epochs=3,
                            anchors=("bank", "none", "proxy", "oracle"), umap=False,
                            sweeps=(("alpha", (0.0, 0.3, 1.0)),))
    result, seconds = _timed(run_evaluation, settings)
    systems = result.metrics["t2a"]["systems"]
    check("fortekit eval on cuda", len(systems) >= 8 and "a2t" in result.metrics,
          seconds=round(seconds, 1), systems=len(systems),
          r1={name: round(row["R@1"], 4) for name, row in systems.items()})
    (args.out / "cuda_check.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
