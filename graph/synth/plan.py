"""What one report states: the statements of a study given its severities and the prior's."""

from __future__ import annotations

import random
from dataclasses import dataclass

from graph.synth.simulate import true_change
from graph.synth.tables import (
    _CHRONIC,
    _CONFUSIONS,
    _DEVICES,
    _FORMS,
    _IMAGENOME_CHANGE,
    _IX,
    _PREDICATE,
    SIDES,
    TRACKED,
    L,
    R,
    _tables,
)
from graph.terms import State


@dataclass
class _Stmt:
    """One report statement about one finding on one site."""

    finding: str
    site: str             # "side", "none", "lower", "lower-bilateral", "mid", "apical", "aorta", "svc"
    side: str | None      # left / right / "bilateral" / None
    regions: tuple[str, ...]
    polarity: str         # present / absent / uncertain
    severity: int         # stated level (0: no severity word)
    change: str | None    # stated progression class
    imagenome: list[str] | None = None  # Chest ImaGenome comparison labels
    combo: tuple[str, ...] = ()         # uncertain findings suggested by this opacity ("may reflect ...")
    in_scene_graph: bool = True


def _noisy_change(rng: random.Random, change: str) -> str:
    return rng.choice(_CONFUSIONS[change]) if rng.random() < 0.1 else change


def _noisy_severity(rng: random.Random, level: int, scale: str | None) -> int:
    if scale is None or level == 0:
        return 0
    u = rng.random()
    if u < 0.25:
        return 0
    if u < 0.35:
        return min(3, max(1, level + rng.choice((-1, 1))))
    return level


def _units(cur: list[int], prior: list[int] | None, rng: random.Random) -> list[tuple[str, str, str | None, tuple[str, ...]]]:
    """(finding, site, side, regions) groups a report may speak about, given what is present now or before."""
    p = prior or [0] * len(TRACKED)

    def on(key: tuple[str, str]) -> bool:
        return cur[_IX[key]] > 0 or p[_IX[key]] > 0

    def chg(key: tuple[str, str]) -> str | None:
        return true_change(p[_IX[key]], cur[_IX[key]])

    out: list[tuple[str, str, str | None, tuple[str, ...]]] = []
    # both sides as one statement when both are present now with the same change
    for finding, site, region_of in (
        ("pleural effusion", "side", "{} costophrenic angle"),
        ("atelectasis", "lower", "{} lower lung zone"),
        ("consolidation", "lower", "{} lower lung zone"),
        ("lung opacity", "lower", "{} lower lung zone"),
    ):
        keys = {s: (finding, region_of.format(s)) for s in SIDES}
        both = all(cur[_IX[keys[s]]] > 0 for s in SIDES) and chg(keys[L]) == chg(keys[R])
        if both and rng.random() < 0.6:
            regions = tuple(keys[s][1] for s in (R, L)) if site == "lower" else tuple(keys[s][1] for s in SIDES)
            out.append((finding, "lower-bilateral" if site == "lower" else "side", "bilateral", regions))
            continue
        for s in SIDES:
            if on(keys[s]):
                out.append((finding, site, s, (keys[s][1],)))
    for finding, region in (("pulmonary edema/hazy opacity", "{} lung"), ("vascular congestion", "{} hilar structures")):
        if on((finding, region.format(L))) or on((finding, region.format(R))):
            out.append((finding, "none", None, tuple(region.format(s) for s in SIDES)))
    for s in SIDES:
        for finding, site, region in (("pneumonia", "lower", f"{s} lower lung zone"), ("lung opacity", "mid", f"{s} mid lung zone"),
                                      ("pneumothorax", "apical", f"{s} apical zone"), ("chest tube", "side", f"{s} lung"),
                                      ("calcified nodule", "mid", f"{s} mid lung zone")):
            if on((finding, region)):
                out.append((finding, site, s, (region,)))
    for finding, region, site in (("enlarged cardiac silhouette", "cardiac silhouette", "none"), ("endotracheal tube", "trachea", "none"),
                                  ("enteric tube", "abdomen", "none"), ("picc", "svc", "svc"), ("tortuous aorta", "aortic arch", "aorta"),
                                  ("cardiac pacer and wires", "cardiac silhouette", "none")):
        if on((finding, region)):
            out.append((finding, site, None, (region,)))
    return out


def _present_statement(rng: random.Random, finding: str, site: str, side: str | None, regions: tuple[str, ...],
                       now: int, change: str | None, compare: bool, sparse: bool) -> _Stmt | None:
    """The statement of a present finding, or None when the report leaves it out; its stated change is
    drawn with label noise, and the polarity may be hedged or (noise) spoken as resolved."""
    device = finding in _DEVICES
    p_mention = 0.85 if device else 0.5 if finding in _CHRONIC else \
        0.7 if finding == "enlarged cardiac silhouette" else 0.92 if now >= 2 else 0.78
    if not sparse and rng.random() >= p_mention:
        return None
    stated = None
    if compare and change is not None:
        p_state = 0.75 if change == "new" else 0.4 if finding in _CHRONIC else 0.62
        if rng.random() < p_state:
            stated = change if device else _noisy_change(rng, change)
            if device and change == "no change" and rng.random() < 0.08:
                stated = "repositioned"
    polarity = State.PRESENT
    if sparse:
        pass
    elif stated is None and finding in ("consolidation", "pneumonia") and rng.random() < 0.1:
        polarity = State.UNCERTAIN
    elif stated == "resolved":  # label noise on an improving finding: spoken as resolved
        polarity = State.ABSENT
    return _Stmt(finding, site, side, regions, polarity, _noisy_severity(rng, now, _FORMS[finding][2]), stated)


def _resolution_statement(rng: random.Random, finding: str, site: str, side: str | None, regions: tuple[str, ...],
                          compare: bool) -> _Stmt | None:
    """A finding gone since the prior study: stated resolved (with label noise) in some compared reports."""
    if not (compare and rng.random() < 0.55):
        return None
    stated = "resolved" if finding in _DEVICES else _noisy_change(rng, "resolved")
    return _Stmt(finding, site, side, regions, State.ABSENT if stated == "resolved" else State.PRESENT, 0, stated)


def _imagenome_labels(rng: random.Random, st: _Stmt) -> None:
    """Chest ImaGenome's comparison label of a stated change, with its own label noise (formats.md §1.5)."""
    if st.change is not None and st.change != "repositioned" and st.finding not in _DEVICES:
        labels = [_IMAGENOME_CHANGE[st.change]]
        if rng.random() < 0.05:
            labels = [rng.choice([c for c in _PREDICATE if c != labels[0]])]
        if rng.random() < 0.04:
            labels.append(rng.choice([c for c in _PREDICATE if c != labels[0]]))
        st.imagenome = labels


def _plan(rng: random.Random, cur: list[int], prior: list[int] | None, compare: bool,
          sparse: bool = False) -> list[_Stmt]:
    """The statements one report makes (in findings order); negations and hedges included.

    ``sparse``: every present finding is stated present and nothing else is stated (no absences, no
    hedges), as a report that lists only what it sees; stated comparisons stay.
    """
    v = _tables().vocab
    stmts: list[_Stmt] = []
    mentioned: set[str] = set()
    p = prior or [0] * len(TRACKED)
    for finding, site, side, regions in _units(cur, prior, rng):
        now = max(cur[_IX[finding, r]] for r in regions)
        before = max(p[_IX[finding, r]] for r in regions)
        change = true_change(before, now) if prior is not None else None
        st = None
        if now > 0:
            st = _present_statement(rng, finding, site, side, regions, now, change, compare, sparse)
        elif before > 0 and change == "resolved" and not sparse:
            st = _resolution_statement(rng, finding, site, side, regions, compare)
        if st is None:
            continue
        mentioned.add(finding)
        stmts.append(st)

    # "opacity ... may reflect atelectasis or pneumonia": fold hedged findings into an opacity statement
    for st in [] if sparse else stmts:
        if st.finding == "lung opacity" and st.site == "lower" and st.polarity == State.PRESENT and \
                st.change in (None, "no change", "worsened", "improved", "new") and rng.random() < 0.25:
            st.combo = ("atelectasis", "pneumonia")
            stmts[:] = [o for o in stmts if not (o.finding in st.combo and o.regions == st.regions and o.change is None)]
            break

    for st in stmts:
        _imagenome_labels(rng, st)
        st.in_scene_graph = rng.random() < 0.9

    # negations of common findings that are absent now
    absent_now = {f: all(cur[_IX[f, r]] == 0 for ff, r in TRACKED if ff == f) for f, _ in TRACKED}
    for finding, prob in () if sparse else (("pneumothorax", 0.55), ("pleural effusion", 0.5),
                                            ("consolidation", 0.35), ("pulmonary edema/hazy opacity", 0.25)):
        if absent_now[finding] and finding not in mentioned and rng.random() < prob:
            regions = v.default_regions(finding, None)
            stmts.append(_Stmt(finding, "none", None, regions, State.ABSENT, 0, None))
    return stmts
