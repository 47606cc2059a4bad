"""The latent process: per patient, study times and the severity of every tracked (finding, region)."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from graph.synth.tables import _IX, SIDES, TRACKED, L, R


@dataclass
class _Study:
    study_id: str
    when: datetime
    sev: list[int]
    icu: bool
    images: list[tuple[str, str]] = field(default_factory=list)  # (dicom_id, view) frontal, sorted by dicom
    laterals: list[str] = field(default_factory=list)
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)  # dicom -> (Rows, Columns)


STUDY_WEIGHTS = (0.06, 0.1, 0.13, 0.15, 0.16, 0.15, 0.13, 0.12)  # of 1..8 studies per patient: mean 4.79
MIMIC_STUDIES_PER_PATIENT = 227_835 / 65_379  # 3.48: MIMIC-CXR's studies and patients (Johnson et al., Sci Data 2019)


def study_count_weights(mean: float | None = None) -> tuple[float, ...]:
    """Weights of 1..8 studies per patient: :data:`STUDY_WEIGHTS`, or, for a ``mean``, those weights tilted
    exponentially (``w_k * exp(t * k)``, ``t`` found by bisection) so that the expected count is ``mean``
    (e.g. :data:`MIMIC_STUDIES_PER_PATIENT` for a cohort of MIMIC-CXR's size per patient).

    Raises:
        ValueError: ``mean`` outside (1, 8).
    """
    if mean is None:
        return STUDY_WEIGHTS
    if not 1 < mean < 8:
        raise ValueError(f"mean studies per patient must be between 1 and 8, got {mean}")

    def tilted(t: float) -> tuple[float, ...]:
        raw = [w * math.exp(t * k) for k, w in enumerate(STUDY_WEIGHTS, start=1)]
        return tuple(r / sum(raw) for r in raw)

    lo, hi = -20.0, 20.0
    for _ in range(100):
        mid = (lo + hi) / 2
        expected = sum(k * w for k, w in enumerate(tilted(mid), start=1))
        lo, hi = (mid, hi) if expected < mean else (lo, mid)
    return tilted((lo + hi) / 2)


def _quantise(value: float, rng: random.Random, noise: float = 0.22) -> int:
    x = value + rng.gauss(0.0, noise)
    return 0 if x < 0.5 else min(3, int(x + 0.5))


def _interval(rng: random.Random, acute: bool) -> float:
    """Days to the next study: hours to days while acutely ill (daily inpatient films), else up to months."""
    u = rng.random()
    if acute and u < 0.75:
        return rng.uniform(0.3, 4.0)
    if u < 0.08:
        return rng.uniform(0.1, 0.9)
    if u < 0.4:
        return rng.uniform(1.0, 7.0)
    if u < 0.72:
        return rng.uniform(7.0, 60.0)
    return rng.uniform(60.0, 400.0)


@dataclass
class _Latent:
    """One patient's latent state between studies (module docstring: the drivers and what they drive)."""

    mu_f: float                       # fluid-status baseline
    cardio0: int                      # chronic cardiac-silhouette size
    asym: dict[str, float]            # left/right effusion asymmetry
    tortuous: int
    granuloma_side: str | None
    pacer: int
    icu: bool
    f: float = 0.0                    # fluid status now
    inf: dict[str, float] = field(default_factory=lambda: {L: 0.0, R: 0.0})  # infection per side
    inf_age: float = 0.0              # days since the infection began
    ptx: dict[str, float] = field(default_factory=lambda: {L: 0.0, R: 0.0})  # pneumothorax per side
    tube: dict[str, int] = field(default_factory=lambda: {L: 0, R: 0})       # chest tube per side
    ett: int = 0
    ng: int = 0
    picc: int = 0

    def start_infection(self, rng: random.Random) -> None:
        u = rng.random()
        sides = (L,) if u < 0.45 else (R,) if u < 0.9 else SIDES
        level = rng.uniform(1.2, 3.2)
        for s in sides:
            self.inf[s] = max(0.6, level + rng.gauss(0.0, 0.3))
        self.inf_age = 0.0

    def acute(self) -> bool:
        return self.icu or max(self.inf.values()) > 0 or max(self.ptx.values()) > 0 or self.f > self.mu_f + 0.8

    def advance(self, rng: random.Random, dt: float) -> None:
        """``dt`` days later: ICU stay, fluid status, infection, pneumothorax and tubes, devices."""
        # ICU stay
        self.icu = rng.random() < math.exp(-dt / 6.0) if self.icu else rng.random() < 0.12
        # fluid status: Ornstein-Uhlenbeck around the patient's baseline, plus decompensations
        a = math.exp(-dt / 8.0)
        mean = self.mu_f + 0.8 * self.icu
        f = mean + (self.f - mean) * a + 0.55 * math.sqrt(1.0 - a * a) * rng.gauss(0.0, 1.0)
        if rng.random() < 0.1 + 0.08 * self.icu:
            f += rng.uniform(0.8, 1.8)
        self.f = min(3.6, max(0.0, f))
        self._advance_infection(rng, dt)
        self._advance_pneumothorax(rng, dt)
        self._advance_devices(rng)

    def _advance_infection(self, rng: random.Random, dt: float) -> None:
        # onset, early worsening, decay
        if max(self.inf.values()) > 0:
            self.inf_age += dt
            for s in SIDES:
                if self.inf[s] > 0:
                    bump = rng.uniform(0.5, 1.2) if self.inf_age < 10 and rng.random() < 0.3 else 0.0
                    self.inf[s] = self.inf[s] * math.exp(-dt / 14.0) + rng.gauss(0.0, 0.3) + bump
                    if self.inf[s] < 0.45:
                        self.inf[s] = 0.0
        elif rng.random() < 0.16 + 0.12 * self.icu:
            self.start_infection(rng)

    def _advance_pneumothorax(self, rng: random.Random, dt: float) -> None:
        ptx, tube = self.ptx, self.tube
        for s in SIDES:
            if ptx[s] > 0:
                if tube[s]:
                    ptx[s] = ptx[s] * math.exp(-dt / 1.5) - 0.3 + rng.gauss(0.0, 0.2)
                else:
                    ptx[s] = ptx[s] * math.exp(-dt / 8.0) + rng.gauss(0.0, 0.3)
                    if ptx[s] >= 1.5 and rng.random() < 0.6:
                        tube[s] = 1
                if ptx[s] < 0.45:
                    ptx[s] = 0.0
            elif tube[s] and rng.random() < 0.6:
                tube[s] = 0
        if not any(ptx.values()) and rng.random() < 0.04 + 0.05 * self.icu:
            s = rng.choice(SIDES)
            ptx[s] = rng.uniform(0.8, 3.0)
            tube[s] = int(rng.random() < (0.75 if ptx[s] >= 1.5 else 0.2))

    def _advance_devices(self, rng: random.Random) -> None:
        self.ett = int(self.icu and rng.random() < (0.8 if self.ett else 0.5))
        if self.ett:
            self.ng = int(rng.random() < (0.95 if self.ng else 0.8))
        elif self.icu:
            self.ng = int(rng.random() < (0.6 if self.ng else 0.15))
        else:
            self.ng = int(rng.random() < (0.3 if self.ng else 0.03))
        self.picc = int(rng.random() < (0.8 if self.picc else 0.1 + 0.2 * self.icu))
        if not self.pacer and rng.random() < 0.02:
            self.pacer = 1

    def severities(self, rng: random.Random) -> list[int]:
        """The integer severity (0..3; devices 0/1) of every (finding, region) of TRACKED now."""
        f, inf, icu = self.f, self.inf, self.icu
        sev = [0] * len(TRACKED)
        eff_v = {}
        for s in SIDES:
            eff_v[s] = 1.1 * (f - 0.8) + 0.45 * inf[s] + self.asym[s]
            sev[_IX["pleural effusion", f"{s} costophrenic angle"]] = _quantise(eff_v[s], rng)
        edema = _quantise(1.15 * (f - 1.1), rng)
        cong = _quantise(1.0 * (f - 0.75), rng)
        for s in SIDES:
            sev[_IX["pulmonary edema/hazy opacity", f"{s} lung"]] = edema
            sev[_IX["vascular congestion", f"{s} hilar structures"]] = cong
        sev[_IX["enlarged cardiac silhouette", "cardiac silhouette"]] = _quantise(self.cardio0 + 0.3 * (f - self.mu_f),
                                                                                 rng, 0.15)
        for s in SIDES:
            low = f"{s} lower lung zone"
            sev[_IX["consolidation", low]] = _quantise(inf[s] - 0.4, rng)
            sev[_IX["pneumonia", low]] = _quantise(0.9 * inf[s] - 0.2, rng)
            sev[_IX["lung opacity", low]] = _quantise(inf[s] + 0.25 * icu + 0.2 * max(0.0, f - 1.5), rng)
            sev[_IX["atelectasis", low]] = _quantise(0.45 * inf[s] + 0.7 * icu + 0.35 * max(0.0, eff_v[s]) - 0.25, rng)
            sev[_IX["lung opacity", f"{s} mid lung zone"]] = _quantise(0.6 * inf[s] - 0.2 + 0.3 * max(0.0, f - 1.5), rng)
            sev[_IX["pneumothorax", f"{s} apical zone"]] = _quantise(self.ptx[s], rng, 0.15) if self.ptx[s] else 0
            sev[_IX["chest tube", f"{s} lung"]] = self.tube[s]
            sev[_IX["calcified nodule", f"{s} mid lung zone"]] = int(self.granuloma_side == s)
        sev[_IX["endotracheal tube", "trachea"]] = self.ett
        sev[_IX["enteric tube", "abdomen"]] = self.ng
        sev[_IX["picc", "svc"]] = self.picc
        sev[_IX["tortuous aorta", "aortic arch"]] = self.tortuous
        sev[_IX["cardiac pacer and wires", "cardiac silhouette"]] = self.pacer
        return sev


def _first_state(rng: random.Random) -> tuple[_Latent, datetime]:
    """A new patient's latent state at the first study, and that study's time."""
    mu_f = rng.choices((0.0, 0.8, 1.6), (0.45, 0.3, 0.25))[0]
    cardio0 = max(0, min(3, round(mu_f * 0.8 + rng.gauss(0.0, 0.6))))
    asym = {L: rng.gauss(0.0, 0.25), R: 0.0}
    asym[R] = -asym[L] + 0.1
    tortuous = rng.choices((0, 1, 2), (0.72, 0.22, 0.06))[0]
    granuloma_side = rng.choice(SIDES) if rng.random() < 0.12 else None
    pacer = 1 if rng.random() < 0.08 else 0
    start = datetime(2110, 1, 1) + timedelta(days=rng.uniform(0, 80 * 365.25), seconds=rng.uniform(0, 86400))
    icu = rng.random() < 0.3
    state = _Latent(mu_f, cardio0, asym, tortuous, granuloma_side, pacer, icu)
    state.f = max(0.0, mu_f + 0.8 * icu + rng.gauss(0.0, 0.5))
    state.ett = int(icu and rng.random() < 0.5)
    state.ng = int(state.ett and rng.random() < 0.85)
    state.picc = int(rng.random() < 0.15 + 0.2 * icu)
    if rng.random() < 0.2 + 0.15 * icu:
        state.start_infection(rng)
    return state, start.replace(microsecond=(start.microsecond // 1000) * 1000)


def _simulate(rng: random.Random, n: int) -> tuple[list[datetime], list[list[int]], list[bool]]:
    """Latent drivers -> integer severities per study, for one patient.

    Returns:
        (study datetimes, per study a list of len(TRACKED) severities 0..3, per study ICU flag).
    """
    state, first = _first_state(rng)
    times = [first]
    sevs: list[list[int]] = []
    icus: list[bool] = []
    for t in range(n):
        if t:
            nxt = times[-1] + timedelta(days=_interval(rng, state.acute()))
            times.append(nxt.replace(microsecond=(nxt.microsecond // 1000) * 1000))
            state.advance(rng, (times[t] - times[t - 1]).total_seconds() / 86400.0)
        elif rng.random() < 0.05:
            s = rng.choice(SIDES)
            state.ptx[s] = rng.uniform(0.8, 2.5)
            state.tube[s] = int(rng.random() < 0.5)
        sevs.append(state.severities(rng))
        icus.append(state.icu)
    return times, sevs, icus


def true_change(prior: int, current: int) -> str | None:
    """The progression class between two severities (0 = absent), or None when absent in both."""
    if prior == 0 and current == 0:
        return None
    if prior == 0:
        return "new"
    if current == 0:
        return "resolved"
    return "worsened" if current > prior else "improved" if current < prior else "no change"
