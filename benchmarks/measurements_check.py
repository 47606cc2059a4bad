"""Every stored Measurement against an independent computation from the cohort's files (issue 54, done-when 1).

The independent side reads the scene graphs with the ``json`` module and the metadata CSV (``Rows``,
``Columns``) with the ``csv`` module, and does the arithmetic of docs/measurements.md's formula table, apart
from cxrkg's parser and ``graph.measurements``: a box or threshold read wrongly on either side shows as a
difference. What it re-derives from that page (CheXStruct's definitions, the box version):

* the 12 measurements of an image with at least one box, their thresholds (PA / AP; another view gets values
  and no threshold or decision), 2-decimal rounding (inclusion margins 3), the decision of the rounded value;
* a box the loaders refuse on its own (a negative corner or size, a reversed box, in either frame) counts as
  missing; the reasons ``box missing`` .. ``box past the image`` per region in the page's order, then
  ``image size unknown`` (inclusion), then ``formula undefined``. A measurement over several regions names
  the first region's reason that has one, the regions in the order the formula reads them (the organ, then
  the patient's right before the left, the spine last): the page does not say which region comes first.

The stored side is every ``(:Image)-[:HAS_MEASUREMENT]->(:Measurement)`` of the graph (graph/schema.yaml): value, threshold, decision, direction and reason are compared, values to 2
decimals (3 for the inclusion margins). Printed: images and measurements compared, equal, differing (the first
ones listed), stored measurements without a value and without a reason, and the measurements without a value
by reason.

Runs against its own local Neo4j (CXRKG_HOME=.cxrkg/bench-measurements, Bolt port 7711; CXRKG_HOME /
CXRKG_BOLT_PORT / CXRKG_HTTP_PORT set by the caller win). With --load, the cohort (written first with
--patients / --seed when the folder has no scene graphs: the demo's are 200 and 7) is bulk-loaded into an
emptied store; otherwise the graph already there is read.

Usage: python benchmarks/measurements_check.py COHORT [--load] [--patients 200] [--seed 7] [--keep]
Exit code 1 when a measurement differs or a value is missing without a reason.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

# The reasons, in docs/measurements.md's order ("the first reason that applies, in this order", per box).
MISSING, REPEATED, NO_ORIGINAL = "box missing", "box repeated", "no original-pixel box"
REVERSED, ZERO_AREA, PAST = "reversed box", "zero-area box", "box past the image"
SIZE_UNKNOWN, UNDEFINED = "image size unknown", "formula undefined"

CORNERS = ("x1", "y1", "x2", "y2")
ORIGINAL = tuple(f"original_{c}" for c in CORNERS)
FRAME = 224

HEART, MEDIASTINUM, TRACHEA, SPINE = "cardiac silhouette", "upper mediastinum", "trachea", "spine"
ARCH, R_CLAVICLE, L_CLAVICLE = "aortic arch", "right clavicle", "left clavicle"
R_LUNG, L_LUNG = "right lung", "left lung"
R_APEX, L_APEX = "right apical zone", "left apical zone"
R_ANGLE, L_ANGLE = "right costophrenic angle", "left costophrenic angle"

# CheXStruct's MD_RANGES as the page's table gives them (a dict: the threshold by view)
CTR = {"PA": 0.5, "AP": 0.55}
MEDIASTINAL = {"PA": 0.25, "AP": 0.33}
KNOB, ROTATION, APEX, SIDE, BOTTOM, BOTTOM_INCLUDED = 2.5, 0.4, 0.01, 0.005, 0.03, 0.09
VIEWS = ("PA", "AP")

NAMES = ("cardiothoracic_ratio", "mediastinal_width_ratio", "tracheal_deviation", "aortic_knob_ratio",
         "rotation_ratio", "inclusion_apex_right", "inclusion_apex_left", "inclusion_side_right",
         "inclusion_side_left", "inclusion_bottom_right", "inclusion_bottom_left", "inclusion")
INCLUSION_PARTS = NAMES[5:11]


class _Fault(Exception):
    """A measurement has no value: ``reason`` is one of the reasons above."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Expected:
    """One measurement as the files give it: rounded value, threshold, decision, direction, or the reason."""

    value: float | None = None
    threshold: float | None = None
    decision: str | None = None
    direction: str | None = None
    reason: str | None = None


def _whole(v: Any) -> int | None:
    """A JSON whole number (52 or 52.0) as int; None for anything else (a missing corner included)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v):
        return None
    return int(v)


def _refused(box: Mapping[str, Any]) -> bool:
    """Whether the loaders drop this box on its own: a negative corner or size, or a reversed box in either
    frame (docs/measurements.md, "When a measurement has no value")."""
    keys = (*CORNERS, "width", "height", *ORIGINAL, "original_width", "original_height")
    values = {k: _whole(box.get(k)) for k in keys}
    if any(v is not None and v < 0 for v in values.values()):
        return True
    for x1, y1, x2, y2 in (CORNERS, ORIGINAL):
        if None not in (values[x1], values[x2]) and values[x2] < values[x1]:
            return True
        if None not in (values[y1], values[y2]) and values[y2] < values[y1]:
            return True
    return False


class _Boxes:
    """An image's readable boxes by region (original pixels), or the reason a region's box cannot be read."""

    def __init__(self, objects: list[Mapping[str, Any]], size: tuple[int, int] | None):
        self.size = size  # (rows, columns)
        self.by_region: dict[str, list[Mapping[str, Any]]] = {}
        for box in objects:
            if not _refused(box):
                self.by_region.setdefault(box.get("bbox_name"), []).append(box)

    def fault(self, region: str) -> str | None:
        boxes = self.by_region.get(region, [])
        if not boxes:
            return MISSING
        if len(boxes) > 1:
            return REPEATED
        corners = [_whole(boxes[0].get(k)) for k in ORIGINAL]
        if None in corners:
            return NO_ORIGINAL
        x1, y1, x2, y2 = corners
        if x2 < x1 or y2 < y1:
            return REVERSED
        if x2 == x1 or y2 == y1:
            return ZERO_AREA
        frame = [_whole(boxes[0].get(k)) for k in CORNERS]
        if min(x1, y1) < 0 or (self.size and (x2 > self.size[1] or y2 > self.size[0])) \
                or any(c is not None and not 0 <= c <= FRAME for c in frame):
            return PAST
        return None

    def read(self, *regions: str) -> list[tuple[int, int, int, int]]:
        """The regions' original corners (x1, y1, x2, y2); raises the fault of the first region that has one."""
        for fault in map(self.fault, regions):
            if fault is not None:
                raise _Fault(fault)
        return [tuple(_whole(self.by_region[r][0][k]) for k in ORIGINAL) for r in regions]  # type: ignore[misc]


def _positive(v: float) -> float:
    if v <= 0:
        raise _Fault(UNDEFINED)
    return v


def _thorax(right_lung, left_lung) -> int:
    return _positive(left_lung[2] - right_lung[0])


def _at_least(value: float, threshold: float | None, view: str | None, yes: str = "yes", no: str = "no"):
    if threshold is None or view not in VIEWS:
        return Expected(value)
    return Expected(value, threshold, yes if value >= threshold else no)


def _ratio_at_least(boxes: _Boxes, view: str | None, thresholds: dict[str, float], region: str) -> Expected:
    organ, right, left = boxes.read(region, R_LUNG, L_LUNG)
    value = round((organ[2] - organ[0]) / _thorax(right, left), 2)
    return _at_least(value, thresholds.get(view or ""), view)


def _trachea(boxes: _Boxes, view: str | None) -> Expected:
    trachea, spine = boxes.read(TRACHEA, SPINE)
    c = (spine[0] + spine[2]) / 2
    if trachea[0] > c:
        value, direction = (trachea[0] - c) / (trachea[2] - c), "left"
    elif trachea[2] < c:
        value, direction = (c - trachea[2]) / (c - trachea[0]), "right"
    else:
        near, far = sorted((c - trachea[0], trachea[2] - c))
        value, direction = near / far, None
    if view not in VIEWS:
        return Expected(round(value, 2), direction=direction)
    return Expected(round(value, 2), None, "yes" if direction else "no", direction)


def _knob(boxes: _Boxes, view: str | None) -> Expected:
    arch, trachea = boxes.read(ARCH, TRACHEA)
    value = round(_positive(arch[2] - trachea[2]) / (trachea[2] - trachea[0]), 2)
    return _at_least(value, KNOB, view)


def _rotation(boxes: _Boxes, view: str | None) -> Expected:
    right, left, spine = boxes.read(R_CLAVICLE, L_CLAVICLE, SPINE)
    c = (spine[0] + spine[2]) / 2
    near, far = sorted((c - right[2], left[0] - c))
    if near < 0 or far <= 0:
        raise _Fault(UNDEFINED)
    value = round(near / far, 2)
    if view not in VIEWS:
        return Expected(value)
    return Expected(value, ROTATION, "yes" if value < ROTATION else "no")


def _margin(boxes: _Boxes, view: str | None, part: str) -> Expected:
    region = {"apex_right": R_APEX, "apex_left": L_APEX, "side_right": R_LUNG, "side_left": L_LUNG,
              "bottom_right": R_ANGLE, "bottom_left": L_ANGLE}[part]
    (x1, y1, x2, y2), = boxes.read(region)
    if boxes.size is None:
        raise _Fault(SIZE_UNKNOWN)
    rows, columns = boxes.size
    kind = part.split("_")[0]
    value = round({"apex": y1 / rows, "side": (x1 if part == "side_right" else columns - x2) / columns,
                   "bottom": (rows - y2) / rows}[kind], 3)
    threshold = {"apex": APEX, "side": SIDE, "bottom": BOTTOM}[kind]
    if view not in VIEWS:
        return Expected(value)
    if kind == "bottom" and BOTTOM <= value < BOTTOM_INCLUDED:
        return Expected(value, threshold, "mixed")
    return Expected(value, threshold, "included" if value >= threshold else "excluded")


def _inclusion(parts: list[Expected], view: str | None) -> Expected:
    """The six parts together: cut off when one is excluded, else mixed when a bottom is, else complete.
    A part without a value leaves it without one (the first such part's reason)."""
    for p in parts:
        if p.reason is not None:
            raise _Fault(p.reason)
    if view not in VIEWS:
        return Expected()
    decisions = {p.decision for p in parts}
    return Expected(decision="cut off" if "excluded" in decisions else "mixed" if "mixed" in decisions
                    else "complete")


def _guarded(compute: Callable[[], Expected]) -> Expected:
    try:
        return compute()
    except _Fault as fault:
        return Expected(reason=fault.reason)


def expected_image(scene_graph: Mapping[str, Any], size: tuple[int, int] | None) -> dict[str, Expected]:
    """The 12 measurements of one scene graph (a ``json.load``-ed file) by name; {} for an image without
    anatomy boxes. ``size``: (Rows, Columns) from the metadata CSV, or None."""
    # a box with a finding_label marks where a finding lies (NIH's, docs/formats.md §1.7), not a region's extent
    objects = [o for o in scene_graph.get("objects") or [] if o.get("finding_label") is None]
    if not objects:
        return {}
    view = scene_graph.get("viewpoint")
    view = view.strip().upper() if isinstance(view, str) else None
    boxes = _Boxes(objects, size)
    out = {
        "cardiothoracic_ratio": _guarded(lambda: _ratio_at_least(boxes, view, CTR, HEART)),
        "mediastinal_width_ratio": _guarded(lambda: _ratio_at_least(boxes, view, MEDIASTINAL, MEDIASTINUM)),
        "tracheal_deviation": _guarded(lambda: _trachea(boxes, view)),
        "aortic_knob_ratio": _guarded(lambda: _knob(boxes, view)),
        "rotation_ratio": _guarded(lambda: _rotation(boxes, view)),
    }
    for name in INCLUSION_PARTS:
        out[name] = _guarded(partial(_margin, boxes, view, name.removeprefix("inclusion_")))
    out["inclusion"] = _guarded(lambda: _inclusion([out[n] for n in INCLUSION_PARTS], view))
    return out


def image_sizes(cohort: Path) -> dict[str, tuple[int, int]]:
    """(Rows, Columns) by dicom_id from every metadata CSV under ``cohort`` (``*metadata*.csv``)."""
    sizes: dict[str, tuple[int, int]] = {}
    for path in sorted(cohort.rglob("*metadata*.csv")):
        with path.open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                try:
                    sizes[row["dicom_id"]] = (int(float(row["Rows"])), int(float(row["Columns"])))
                except (KeyError, TypeError, ValueError):  # no size given: inclusion names the reason
                    continue
    return sizes


def expected_measurements(cohort: Path) -> dict[str, dict[str, Expected]]:
    """Every scene graph's measurements under ``cohort``, by image id ({} for an image without boxes)."""
    sizes = image_sizes(cohort)
    out = {}
    for path in sorted(cohort.rglob("*_SceneGraph.json")):
        scene_graph = json.loads(path.read_text(encoding="utf-8"))
        image_id = str(scene_graph["image_id"])
        out[image_id] = expected_image(scene_graph, sizes.get(image_id))
    return out


STORED = """
MATCH (i:Image)
OPTIONAL MATCH (i)-[:HAS_MEASUREMENT]->(m:Measurement)
RETURN i.image_id AS image_id, m.name AS name, m.value AS value, m.threshold AS threshold,
       m.decision AS decision, m.direction AS direction, m.reason AS reason
"""


def stored_measurements(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Expected]]:
    """The rows of :data:`STORED` as :func:`expected_measurements` gives the files' (an Image without
    Measurement nodes: {})."""
    out: dict[str, dict[str, Expected]] = {}
    for r in rows:
        image = out.setdefault(r["image_id"], {})
        if r["name"] is not None:
            image[r["name"]] = Expected(r["value"], r["threshold"], r["decision"], r["direction"], r["reason"])
    return out


def _same(a: Expected, b: Expected, decimals: int) -> bool:
    def close(x, y):
        return (x is None) == (y is None) and (x is None or round(x, decimals) == round(y, decimals))
    return (close(a.value, b.value) and close(a.threshold, b.threshold) and a.decision == b.decision
            and a.direction == b.direction and a.reason == b.reason)


@dataclass
class Comparison:
    """What :func:`compare` found.

    Attributes:
        images: images in the files; ``missing_images`` of them not in the graph, ``extra_images`` in the
            graph only.
        compared, equal: measurements compared and equal; ``differing``: (image id, name, expected, stored).
        unnamed: stored measurements without a value and without a reason (image id, name).
        by_reason: measurements without a value (in the files) by (name, reason).
        images_without_value: images with at least one measurement without a value; ``no_boxes``: images
            without boxes (no measurement expected).
    """

    images: int = 0
    missing_images: list[str] = field(default_factory=list)
    extra_images: list[str] = field(default_factory=list)
    compared: int = 0
    equal: int = 0
    differing: list[tuple[str, str, Expected | None, Expected | None]] = field(default_factory=list)
    unnamed: list[tuple[str, str]] = field(default_factory=list)
    by_reason: Counter = field(default_factory=Counter)
    images_without_value: int = 0
    no_boxes: int = 0

    @property
    def ok(self) -> bool:
        return not (self.differing or self.unnamed or self.missing_images or self.extra_images)


def compare(expected: dict[str, dict[str, Expected]], stored: dict[str, dict[str, Expected]]) -> Comparison:
    """Each image's expected measurements against the stored ones (values to 2 decimals, 3 for the
    inclusion margins, as they are rounded)."""
    c = Comparison(images=len(expected))
    c.missing_images = sorted(set(expected) - set(stored))
    c.extra_images = sorted(set(stored) - set(expected))
    for image_id, mine in expected.items():
        theirs = stored.get(image_id, {})
        c.no_boxes += not mine
        c.images_without_value += any(e.value is None and e.decision is None for e in mine.values())
        for name in sorted(set(mine) | set(theirs), key=lambda n: NAMES.index(n) if n in NAMES else len(NAMES)):
            e, s = mine.get(name), theirs.get(name)
            if e is not None and e.reason is not None:
                c.by_reason[(name, e.reason)] += 1
            if s is not None and s.reason is None and s.value is None and s.decision is None:
                c.unnamed.append((image_id, name))
            c.compared += 1
            if e is not None and s is not None and _same(e, s, 3 if name in INCLUSION_PARTS else 2):
                c.equal += 1
            else:
                c.differing.append((image_id, name, e, s))
    return c


def _counted(counts: Counter, key: Callable[[Any], str]) -> str:
    """``reason n, reason n`` of ``counts`` summed by ``key``, the largest first."""
    summed: Counter = Counter()
    for k, n in counts.items():
        summed[key(k)] += n
    return ", ".join(f"{k} {n:,}" for k, n in summed.most_common()) or "none"


def report(c: Comparison, listed: int = 10) -> str:
    """The figures of ``c`` as printed lines."""
    lines = [f"images in the files: {c.images:,} ({c.no_boxes:,} without boxes, no measurement expected); "
             f"not in the graph {len(c.missing_images):,}, in the graph only {len(c.extra_images):,}",
             f"measurements compared: {c.compared:,}; equal {c.equal:,}; differing {len(c.differing):,}; "
             f"stored without a value and without a reason {len(c.unnamed):,}",
             f"images with a measurement without a value: {c.images_without_value:,}; measurements without a "
             f"value: {sum(c.by_reason.values()):,}, by reason: " + _counted(c.by_reason, lambda key: key[1])]
    names = sorted({name for name, _ in c.by_reason}, key=NAMES.index)
    lines += [f"  {name}: " + _counted(Counter({r: n for (m, r), n in c.by_reason.items() if m == name}), str)
              for name in names]
    lines += [f"  differs: {i} {n}: files {e}, graph {s}" for i, n, e, s in c.differing[:listed]]
    lines += [f"  no reason: {i} {n}" for i, n in c.unnamed[:listed]]
    lines += [f"  not in the graph: {i}" for i in c.missing_images[:listed]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("cohort", type=Path)
    parser.add_argument("--load", action="store_true", help="bulk-load the cohort into an emptied store first")
    parser.add_argument("--patients", type=int, default=200, help="patients when the cohort is written")
    parser.add_argument("--seed", type=int, default=7, help="seed when the cohort is written")
    parser.add_argument("--keep", action="store_true", help="leave the server running at the end")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_env import cxrkg, stop_server, use_dedicated_server

    use_dedicated_server("bench-measurements", 7711, 7501)
    if not any(args.cohort.rglob("*_SceneGraph.json")):
        cxrkg("synth", "--patients", str(args.patients), "--seed", str(args.seed), "--out", str(args.cohort))
    try:
        if args.load:
            _load(args.cohort)
        cxrkg("db", "start")
        from graph.store import shared_store

        stored = stored_measurements(shared_store().read(STORED))
    finally:
        if not args.keep:
            stop_server()
    result = compare(expected_measurements(args.cohort), stored)
    print(report(result))
    sys.exit(0 if result.ok else 1)


def _load(cohort: Path) -> None:
    import shutil

    from bench_env import cxrkg

    cxrkg("db", "stop")
    shutil.rmtree(Path(os.environ["CXRKG_HOME"]) / "data", ignore_errors=True)
    print(f"bulk ingest: {cxrkg('ingest', '--bulk', str(cohort))[0]:.1f} s", flush=True)


if __name__ == "__main__":
    main()
