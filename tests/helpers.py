"""Small builders for hand-made inputs in the released formats (synthetic values only)."""

from __future__ import annotations

import json
from pathlib import Path


def scene_graph(image_id: str, patient_id: int, study_id: int, when: str | None, regions: dict[str, list[list[str]]],
                relationships: list[dict] | None = None, severity: dict[str, list[list[str]]] | None = None) -> dict:
    """A Chest ImaGenome scene graph with one phrase list per region: {bbox: [[labels of phrase 0], ...]}."""
    attributes = []
    for bbox, phrases in regions.items():
        attributes.append({
            bbox: True, "bbox_name": bbox, "synsets": [], "name": bbox.title(),
            "attributes": phrases, "attributes_ids": [[] for _ in phrases],
            "phrases": [f"sentence {i} about {bbox}." for i in range(len(phrases))],
            "phrase_IDs": [f"{study_id}|{i}" for i in range(len(phrases))],
            "sections": ["finalreport"] * len(phrases),
            "comparison_cues": [[] for _ in phrases], "temporal_cues": [[] for _ in phrases],
            "severity_cues": (severity or {}).get(bbox, [[] for _ in phrases]),
            "texture_cues": [[] for _ in phrases], "object_id": f"{image_id}_{bbox}",
        })
    return {"image_id": image_id, "viewpoint": "PA", "patient_id": patient_id, "study_id": study_id,
            "gender": "F", "age_decile": "60-70", "reason_for_exam": "synthetic",
            "StudyOrder": None, "StudyDateTime": when, "objects": [], "attributes": attributes,
            "relationships": relationships or []}


def comparison(image_id: str, prior_image_id: str, bbox: str, label: str, finding: str, k: int = 1) -> dict:
    return {"relationship_id": f"REL_{k:06d}", "predicate": f"['{label.title()}']", "synsets": [],
            "relationship_names": [f"comparison|yes|{label}"], "relationship_contexts": [1.0],
            "phrase": f"The {finding} has {label}.", "attributes": [f"anatomicalfinding|yes|{finding}"],
            "bbox_name": bbox, "subject_id": f"{image_id}_{bbox}", "object_id": f"{prior_image_id}_{bbox}"}


def objects(image_id: str, boxes: dict[str, tuple[int, int, int, int]], scale: int = 10) -> list[dict]:
    """Scene-graph ``objects[]`` entries, one per {bbox_name: (x1, y1, x2, y2) in the 224 frame}; the
    original-frame box is the 224 box times ``scale``."""
    out = []
    for name, (x1, y1, x2, y2) in boxes.items():
        ox1, oy1, ox2, oy2 = (c * scale for c in (x1, y1, x2, y2))
        out.append({"object_id": f"{image_id}_{name}", "x1": x1, "y1": y1, "x2": x2, "y2": y2,
                    "width": x2 - x1, "height": y2 - y1, "bbox_name": name, "synsets": [], "name": name.title(),
                    "original_x1": ox1, "original_y1": oy1, "original_x2": ox2, "original_y2": oy2,
                    "original_width": ox2 - ox1, "original_height": oy2 - oy1})
    return out


def write_scene_graph(folder: Path, graph: dict) -> Path:
    path = folder / f"{graph['image_id']}_SceneGraph.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(graph))
    return path


def radgraph_doc(text: str, entities: list[tuple[str, str, int, list[tuple[str, int]]]]) -> dict:
    """entities: (tokens, label, start_ix, [(relation, target entity number)]) numbered from 1."""
    out = {}
    for n, (tokens, label, start, rels) in enumerate(entities, start=1):
        out[str(n)] = {"tokens": tokens, "label": label, "start_ix": start,
                       "end_ix": start + len(tokens.split(" ")) - 1, "relations": [[r, str(t)] for r, t in rels]}
    return {"text": text, "entities": out, "data_source": "MIMIC-CXR", "data_split": "inference"}


def write_radgraph(path: Path, docs: dict[str, dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(docs))
    return path


SNAPSHOT_NODES = """
MATCH (n) WHERE NOT n:SourceFile
RETURN labels(n)[0] AS label, properties(n) AS props
"""
SNAPSHOT_RELS = """
MATCH (a)-[r]->(b)
RETURN type(r) AS type, properties(r) AS props,
       coalesce(a.observation_id, a.study_id, a.patient_id, a.name, a.mention_id, a.image_id, a.report_id) AS source,
       coalesce(b.observation_id, b.study_id, b.patient_id, b.name, b.mention_id, b.image_id, b.report_id) AS target
"""


def _canon(value):
    if isinstance(value, dict):
        return tuple(sorted((k, _canon(v)) for k, v in value.items() if k not in ("loaded_at",)))
    if isinstance(value, list):
        return tuple(_canon(v) for v in value)
    return str(value) if value is not None else None


def graph_snapshot(store) -> tuple[list, list]:
    """Every node (but bookkeeping) and relationship with its properties, as sorted comparable tuples.

    Mention ``file`` properties are kept: the same content from the same path must give the same graph.
    """
    nodes = sorted((r["label"], _canon(r["props"])) for r in store.read(SNAPSHOT_NODES))
    rels = sorted((r["type"], r["source"], r["target"], _canon(r["props"])) for r in store.read(SNAPSHOT_RELS))
    return nodes, rels


def load_into(store, *paths: Path, mapping: str | None = None):
    """One ingest run through the plain functions (no Prefect): plan against the graph, load, relink.

    Returns:
        (IngestPlan, BatchResult) of the run.
    """
    from graph.ingest import discover, load_files, plan_ingest
    from graph.vocabulary import vocabulary

    v = vocabulary()
    files = discover(paths)
    plan = plan_ingest(files, store.source_file_hashes(f.path for f in files), v.version)
    result = load_files(store, plan.load, v, plan.changed, plan.metadata, mapping)
    store.link_patients(result.patients)
    return plan, result
