"""GNN benchmark: export of a 2,000-patient graph, one training epoch over its pairs, warm `compare`, peak RSS.

Targets: export < 60 s, one epoch < 30 s on CPU, compare for one patient < 1 s warm.
Runs against a dedicated local Neo4j (CXRKG_HOME=.cxrkg/gnn-bench, Bolt port 7713 unless set) that it
starts, fills (synthetic cohort with region embeddings, ingested with the loader) and stops; pass
``--keep`` to reuse an already filled server. Prints figures; asserts nothing.

    .venv/bin/python benchmarks/gnn_benchmark.py [--patients 2000] [--device cpu|cuda] [--keep]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_env import REPO, use_dedicated_server  # noqa: E402


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--patients", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--keep", action="store_true", help="reuse the server's graph if it already has patients")
    return ap.parse_args()


def fill_graph(store, cohort: Path, args: argparse.Namespace) -> None:
    """Write the synthetic cohort to ``cohort`` and ingest it into an emptied graph, unless ``--keep`` and
    the graph has patients (the cohort is still written: its embeddings file is needed)."""
    from graph.ingest import discover, load_files, plan_ingest
    from graph.synth import write_cohort
    from graph.vocabulary import vocabulary

    n = store.read("MATCH (p:Patient) RETURN count(p) AS n")[0]["n"]
    if args.keep and n:
        write_cohort(cohort, patients=args.patients, seed=args.seed, embeddings=True)
        return
    t = time.perf_counter()
    write_cohort(cohort, patients=args.patients, seed=args.seed, embeddings=True)
    store.clear()
    v = vocabulary()
    store.ensure_schema(v)
    files = discover([cohort])
    plan = plan_ingest(files, {}, v.version)
    patients = set()
    for start in range(0, len(plan.load), 1000):
        r = load_files(store, plan.load[start:start + 1000], v, plan.changed, plan.metadata, None)
        patients |= r.patients
    store.link_patients(patients)
    print(f"setup: {args.patients} patients synthesised and ingested in {time.perf_counter() - t:.1f} s")


def bench_export(store, work: Path, emb: Path) -> None:
    from gnn.export import export_snapshot

    t = time.perf_counter()
    manifest = export_snapshot(store, work / "snapshot", embeddings=emb)
    export_s = time.perf_counter() - t
    print(f"export  {manifest.patients} patients: {export_s:.1f} s (target < 60 s); rows "
          + ", ".join(f"{k} {v:,}" for k, v in manifest.rows.items()))


def bench_training(work: Path, device: str):
    """Build the dataset from the snapshot and train two epochs of the tuned config; returns (data, result)."""
    from gnn.dataset import load_dataset
    from gnn.training import TrainConfig, train_model

    t = time.perf_counter()
    _, data = load_dataset(work / "snapshot")
    print(f"dataset {len(data.samples):,} study pairs, {len(data.pairs):,} pairs "
          f"({len(data.labelled()):,} labelled) built in {time.perf_counter() - t:.1f} s")
    cfg = TrainConfig.from_file(REPO / "gnn" / "configs" / "gnn.yaml", epochs=2, patience=5)
    result = train_model(data, cfg, device=device)
    secs = [h["seconds"] for h in result.history]
    print(f"epoch   {len(data.sample_indices('train')):,} training study pairs: "
          f"{min(secs):.1f} s best of {len(secs)} on {result.device} (target < 30 s)")
    return data, result


def bench_compare(store, work: Path, data, result, emb: Path) -> None:
    """Three rounds of `compare` over the 10 patients with most studies; the first round is the cold one."""
    from gnn.compare import compare
    from gnn.training import load_checkpoint, save_checkpoint

    save_checkpoint(work / "model.pt", result, data)
    model = load_checkpoint(work / "model.pt")
    counts = data.pairs.groupby("patient_id")["study_id"].nunique().sort_values()
    patients = list(counts.index[-10:])
    if not data.embedding_dim:
        compare(store, patients[0], checkpoint=model, embeddings=None)
    times = []
    for pid in patients * 3:
        t = time.perf_counter()
        compare(store, pid, checkpoint=model, embeddings=emb if data.embedding_dim else None)
        times.append(time.perf_counter() - t)
    warm = times[len(patients):]
    print(f"compare warm, {len(warm)} runs over {len(patients)} patients: p50 {1000 * statistics.median(warm):.0f} ms, "
          f"max {1000 * max(warm):.0f} ms (target < 1 s)")


def main() -> None:
    args = arguments()
    use_dedicated_server("gnn-bench", 7713, 7483)

    from graph.runtime.server import LocalNeo4jServer
    from graph.settings import local_server_settings
    from graph.store import shared_store

    server = LocalNeo4jServer(local_server_settings())
    started = not server.status().running
    server.start()
    try:
        store = shared_store()
        work = Path(tempfile.mkdtemp(prefix="cxrkg-gnn-bench-"))
        emb = work / "cohort" / "region_embeddings.parquet"
        fill_graph(store, work / "cohort", args)
        bench_export(store, work, emb)
        data, result = bench_training(work, args.device)
        bench_compare(store, work, data, result, emb)
        print(f"peak RSS {rss_mb():.0f} MB")
    finally:
        if started:
            server.stop()


if __name__ == "__main__":
    main()
