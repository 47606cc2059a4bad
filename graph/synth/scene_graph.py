"""One Chest ImaGenome scene graph per frontal image, from the same statements."""

from __future__ import annotations

import random

from graph.synth.geometry import PLANTED_JITTER, PLANTED_REGIONS, Planted
from graph.synth.plan import _Stmt
from graph.synth.render import _Rendered
from graph.synth.simulate import _Study
from graph.synth.tables import _CHRONIC, _PREDICATE, _TEXTURE, _tables
from graph.terms import State


def _objects(rng: random.Random, image_id: str, rows: int, cols: int, planted: Planted) -> list[dict]:
    """36 anatomical boxes (a few images miss some; ~0.5 % faulty boxes), 224-frame and original pixels, placed
    to the ``planted`` geometry (graph.synth.geometry).

    The image's placement (zoom, shift), the missing boxes, each box's jitter and the faulty boxes are drawn from
    ``rng`` in the order they always were, so the statements drawn after them, and hence the reports, stay the
    same for a seed. Original pixels are clamped to the image (a cut-off part lies on the border); the 224 frame
    is the image resized to fit the square and padded, as Chest ImaGenome's (docs/formats.md §1.3).
    """
    t = _tables()
    ratio = 224.0 / max(rows, cols)
    w, h = cols * ratio, rows * ratio
    left, top = (224.0 - w) / 2.0, (224.0 - h) / 2.0
    scale = rng.uniform(0.92, 1.05)
    dx, dy = rng.uniform(-0.03, 0.03), rng.uniform(-0.03, 0.03)
    missing: set[str] = set()
    if rng.random() < 0.03:
        missing = set(rng.sample(t.bboxes, rng.randint(1, 4)))
    draws: list[tuple[str, list[float], tuple[int, int] | None]] = []
    for name in t.bboxes:
        if name in missing:
            continue
        jitter = [rng.uniform(-0.012, 0.012) for _ in range(4)]
        odd = None
        if rng.random() < 0.005:  # odd boxes as in the release: past the right edge, zero-area or past the bottom
            kind = rng.randrange(3)
            odd = (kind, rng.randint(1, 40) if kind == 0 else rng.randint(1, 60) if kind == 2 else 0)
        draws.append((name, jitter, odd))
    boxes = planted.boxes(t.box_template)
    shift = planted.cut_shift(scale, dy)
    out = []
    for name, jitter, odd in draws:
        k = PLANTED_JITTER if name in PLANTED_REGIONS else 1.0
        fx1, fy1, fx2, fy2 = [0.5 + (c - 0.5) * scale + d + k * j
                              for c, d, j in zip(boxes[name], (dx, dy + shift, dx, dy + shift), jitter, strict=True)]
        ox1, ox2 = (min(cols, max(0, round(f * cols))) for f in (fx1, fx2))
        oy1, oy2 = (min(rows, max(0, round(f * rows))) for f in (fy1, fy2))
        if odd is not None:
            kind, extra = odd
            if kind == 0:
                ox2 = cols + extra
            elif kind == 1:
                ox2 = ox1
            else:
                oy2 = rows + extra
        x1, y1 = max(0, round(ox1 * ratio + left)), max(0, round(oy1 * ratio + top))
        x2, y2 = round(ox2 * ratio + left), round(oy2 * ratio + top)
        region = t.vocab.regions[name]
        out.append({
            "object_id": f"{image_id}_{name}", "x1": x1, "y1": y1, "x2": x2, "y2": y2,
            "width": x2 - x1, "height": y2 - y1, "bbox_name": name, "synsets": list(region.cuis),
            "name": name[:1].upper() + name[1:], "original_x1": ox1, "original_y1": oy1, "original_x2": ox2,
            "original_y2": oy2, "original_width": ox2 - ox1, "original_height": oy2 - oy1,
        })
    return out


def _label(finding: str, polarity: str) -> str:
    category = _tables().vocab.findings[finding].category
    return f"{category}|{'no' if polarity == 'absent' else 'yes'}|{finding}"


def _cui(finding: str) -> str:
    return ";;".join(_tables().vocab.findings[finding].cuis)


class _RelCounter:
    def __init__(self) -> None:
        self.n = 0

    def next(self) -> str:
        self.n += 1
        return f"REL_{self.n:08d}"


def _add_phrase(e: dict, sts: list[_Stmt], words: dict[int, str], text: str, phrase_id: str) -> None:
    """One phrase of an attributes entry: its labels with their CUIs, the normal / abnormal label, and the
    comparison, temporal, severity and texture cues, each list parallel to the phrases (formats.md §1.4)."""
    labels: list[str] = []
    ids: list[str] = []
    comp: list[str] = []
    sev: list[str] = []
    tex: list[str] = []
    tmp: list[str] = []
    for st in sts:
        labels.append(_label(st.finding, st.polarity))
        ids.append(_cui(st.finding))
        for extra in st.combo:
            labels.append(_label(extra, State.PRESENT))
            ids.append(_cui(extra))
        if st.imagenome:
            comp.extend(f"comparison|yes|{c}" for c in st.imagenome)
        if id(st) in words:
            sev.append(f"severity|yes|{words[id(st)]}")
        if st.finding in _TEXTURE and st.polarity != State.ABSENT:
            tex.append(f"texture|yes|{_TEXTURE[st.finding]}")
        if st.finding in _CHRONIC:
            tmp.append("temporal|yes|chronic")
        elif st.change == "new" and st.finding in ("consolidation", "pneumonia"):
            tmp.append("temporal|yes|acute")
    abnormal = any("|yes|" in lab for lab in labels)
    labels.append("nlp|yes|abnormal" if abnormal else "nlp|yes|normal")
    ids.append("C0205161" if abnormal else "C0205307")
    e["attributes"].append(labels)
    e["attributes_ids"].append(ids)
    e["phrases"].append(text)
    e["phrase_IDs"].append(phrase_id)
    e["sections"].append("finalreport")
    e["comparison_cues"].append(sorted(set(comp)))
    e["temporal_cues"].append(tmp)
    e["severity_cues"].append(sev)
    e["texture_cues"].append(tex)


def _comparison(relationship_id: str, st: _Stmt, text: str, region: str, image_id: str, prior_image: str) -> dict:
    """A Chest ImaGenome comparison relationship between the same region of this and the prior image."""
    changes = st.imagenome or []
    return {
        "relationship_id": relationship_id,
        "predicate": "[" + ", ".join(f"'{_PREDICATE[c]}'" for c in changes) + "]",
        "synsets": [],
        "relationship_names": [f"comparison|yes|{c}" for c in changes],
        "relationship_contexts": [1.0] * len(changes),
        "phrase": text,
        "attributes": [_label(st.finding, State.PRESENT)],
        "bbox_name": region,
        "subject_id": f"{image_id}_{region}",
        "object_id": f"{prior_image}_{region}",
    }


def _scene_graph(image_id: str, view: str, patient_id: str, study: _Study, order: int | None, gender: str,
                 age: str, reason: str, objects: list[dict], rendered: _Rendered, prior_image: str | None,
                 rels: _RelCounter, with_date: bool) -> tuple[dict, dict[tuple[str, str], str]]:
    """One Chest ImaGenome scene graph, and the comparison label it states per (bbox, finding)."""
    v = _tables().vocab
    entries: dict[str, dict] = {}

    def entry(region: str) -> dict:
        if region not in entries:
            r = v.regions[region]
            entries[region] = {
                region: True, "bbox_name": region, "synsets": list(r.cuis), "name": region[:1].upper() + region[1:],
                "attributes": [], "attributes_ids": [], "phrases": [], "phrase_IDs": [], "sections": [],
                "comparison_cues": [], "temporal_cues": [], "severity_cues": [], "texture_cues": [],
                "object_id": f"{image_id}_{region}",
            }
        return entries[region]

    relationships: list[dict] = []
    stated: dict[tuple[str, str], str] = {}
    for k, (text, stmts, normal, words) in enumerate(rendered.sentences):
        per_region: dict[str, list[_Stmt]] = {}
        for st in stmts:
            if not st.in_scene_graph:
                continue
            for region in st.regions:
                if v.regions[region].has_bbox:
                    per_region.setdefault(region, []).append(st)
        normal_regions = {"lungs": ("right lung", "left lung"), "heart": ("cardiac silhouette",)}.get(normal or "", ())
        for region in normal_regions:
            per_region.setdefault(region, [])
        for region, sts in per_region.items():
            _add_phrase(entry(region), sts, words, text, f"{study.study_id}|{k}")
            if prior_image is None or not v.regions[region].has_bbox:
                continue
            for st in sts:
                if not st.imagenome:
                    continue
                stated.setdefault((region, st.finding), ";;".join(st.imagenome))
                relationships.append(_comparison(rels.next(), st, text, region, image_id, prior_image))
    graph = {
        "image_id": image_id, "viewpoint": view, "patient_id": int(patient_id), "study_id": int(study.study_id),
        "gender": gender, "age_decile": age, "reason_for_exam": reason,
        "StudyOrder": order if with_date else None,
        "StudyDateTime": study.when.strftime("%Y-%m-%d %H:%M:%S") if with_date else None,
        "objects": objects, "attributes": list(entries.values()), "relationships": relationships,
    }
    return graph, stated
