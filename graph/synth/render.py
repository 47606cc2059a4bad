"""Report text and RadGraph entities for a report's statements."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

from graph.synth.plan import _Stmt
from graph.synth.tables import (
    _CHAN,
    _CHAN_DEV,
    _CHANGE_WORDS,
    _CHRONIC,
    _DEVICES,
    _FORMS,
    _IX,
    _LEFT_ONLY_PRE,
    _SEVERITY_WORDS,
    _SITE_POST,
    _SITE_PRE,
    _SITE_UNKNOWN,
    TRACKED,
    UNKNOWN_FORMS,
    L,
    _check,
    _tables,
)
from graph.terms import State

#: a statement's polarity -> the RadGraph v1 label of its observation
_OBS_LABEL: dict[str, str] = {State.PRESENT: "OBS-DP", State.ABSENT: "OBS-DA", State.UNCERTAIN: "OBS-U"}


class _Sentence:
    """Words of one sentence with entity spans (local indices) and relations between them."""

    def __init__(self) -> None:
        self.words: list[str] = []
        self.ents: list[list] = []  # [start, end, label]
        self.rels: list[tuple[int, str, int]] = []

    def w(self, text: str) -> None:
        self.words.extend(text.split(" "))

    def e(self, text: str, label: str) -> int:
        start = len(self.words)
        self.words.extend(text.split(" "))
        self.ents.append([start, len(self.words) - 1, label])
        return len(self.ents) - 1

    def r(self, src: int, rtype: str, tgt: int) -> None:
        self.rels.append((src, rtype, tgt))

    def anatomy(self, phrase: str) -> int:
        """Each anatomy word an ANAT-DP entity; the earlier words modify the last (head) word."""
        words = phrase.split(" ")
        ids = [self.e(w, "ANAT-DP") for w in words]
        for i in ids[:-1]:
            self.r(i, "modify", ids[-1])
        return ids[-1]


class _Report:
    """Accumulates sentences into RadGraph text and entities."""

    def __init__(self) -> None:
        self.tokens: list[str] = []
        self.entities: dict[str, dict] = {}

    def add(self, s: _Sentence, capitalise: bool = True) -> str:
        if capitalise and s.words and s.words[0][:1].islower():
            s.words[0] = s.words[0][:1].upper() + s.words[0][1:]
        offset = len(self.tokens)
        self.tokens.extend(s.words)
        ids = []
        for start, end, label in s.ents:
            eid = str(len(self.entities) + 1)
            ids.append(eid)
            self.entities[eid] = {"tokens": " ".join(s.words[start:end + 1]), "label": label,
                                  "start_ix": start + offset, "end_ix": end + offset, "relations": []}
        for src, rtype, tgt in s.rels:
            self.entities[ids[src]]["relations"].append([rtype, ids[tgt]])
        return " ".join(s.words).replace(" .", ".").replace(" ,", ",").replace(" :", ":")


@lru_cache(maxsize=None)
def _usable_sites(finding: str, obs_text: str) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Anatomy phrases (pre, post) whose head word does not form a finding name with ``obs_text``.

    Raises:
        RuntimeError: no post-nominal phrase is left for a site.
    """
    v = _tables().vocab

    def ok(phrase: str) -> bool:
        return v.finding_for(f"{phrase.split(' ')[-1]} {obs_text}") is None

    pre = {k: [p for p in ps if ok(p)] for k, ps in _SITE_PRE.items()}
    pre.update({f"{k}-left": [p for p in ps if ok(p)] for k, ps in _LEFT_ONLY_PRE.items()})
    post = {k: [p for p in ps if ok(p)] for k, ps in _SITE_POST.items()}
    for k, ps in post.items():
        _check(bool(ps), f"no anatomy phrase for {finding!r} ({obs_text!r}) on site {k!r}")
    return pre, post


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


class _Renderer:
    """Turns statements into sentences; one instance per report (it fixes the report's label spelling).

    ``used`` records the severity word each statement got in the sentence being built, for the scene
    graph's severity cues.
    """

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.alias = rng.random() < 0.15  # this report's extractor writes RadGraph2's code aliases
        self.used: dict[int, str] = {}

    def chan(self, finding: str, change: str) -> str:
        if finding in _DEVICES:
            return _CHAN_DEV[change]
        return _CHAN[change][1 if self.alias else 0]

    def sev_word(self, st: _Stmt) -> str | None:
        scale = _FORMS[st.finding][2]
        if not scale or not st.severity:
            return None
        word = self.rng.choice(_SEVERITY_WORDS[scale][st.severity])
        self.used[id(st)] = word
        return word

    def probe(self, st: _Stmt) -> tuple[str, bool]:
        """(first word, plural) of the noun phrase the next :meth:`noun_phrase` call will write."""
        state = self.rng.getstate()
        used = dict(self.used)
        s = _Sentence()
        _, _, plural = self.noun_phrase(s, st)
        self.rng.setstate(state)
        self.used = used
        return s.words[0], plural

    def noun_phrase(self, s: _Sentence, st: _Stmt, severity: bool = True) -> tuple[int, int | None, bool]:
        """Adds ``[severity] [modifier] [anatomy] observation [anatomy]``; returns (obs id, anatomy head, plural)."""
        rng = self.rng
        forms, plural_form, _, _, mods = _FORMS[st.finding]
        label = _OBS_LABEL[st.polarity]
        obs_text = plural_form if st.side == "bilateral" and plural_form else rng.choice(forms)
        if st.finding in UNKNOWN_FORMS and rng.random() < 0.05:
            obs_text = UNKNOWN_FORMS[st.finding]
        plural = obs_text == plural_form or obs_text == "atelectatic changes"
        word = self.sev_word(st) if severity else None
        sev_id = s.e(word, "OBS-DP") if word else None
        mod_id = None
        if mods and (rng.random() < 0.3 or st.finding == "calcified nodule"):
            mod_id = s.e(rng.choice(mods), "OBS-DP")
        anat = None
        post = None
        if st.finding == "pleural effusion":
            if st.side:
                side_word = st.side if st.side == "bilateral" or rng.random() < 0.75 else f"{st.side}-sided"
                side_id = s.e(side_word, "ANAT-DP")
                anat = s.e("pleural", "ANAT-DP")
                s.r(side_id, "modify", anat)
            else:
                anat = s.e("pleural", "ANAT-DP")
        elif st.finding == "chest tube":
            side_word = (st.side or "") if rng.random() < 0.75 else f"{st.side}-sided"  # planned on a side
            side_id = s.e(side_word, "ANAT-DP")
            anat = s.e(rng.choice(("chest", "chest", "pleural")), "ANAT-DP")
            s.r(side_id, "modify", anat)
            obs_text = "tube"
        elif st.finding == "pulmonary edema/hazy opacity" and obs_text == "edema" and rng.random() < 0.6:
            anat = s.e("pulmonary", "ANAT-DP")
        elif st.site in _SITE_PRE:
            if (st.site, st.side) in _SITE_UNKNOWN and rng.random() < 0.06:
                phrase = _SITE_UNKNOWN[st.site, st.side]
                if rng.random() < 0.5:
                    anat = s.anatomy(phrase)
                else:
                    post = f"in the {phrase}"
            else:
                # the anatomy head must not combine with the observation into another finding name
                # ("left mid lung" + "opacity" would read as "lung opacity" on the whole lung)
                usable = _usable_sites(st.finding, obs_text)
                choices = usable[0][st.site] + (usable[0].get(f"{st.site}-left", []) if st.side == L else [])
                if rng.random() < 0.55 and choices:
                    anat = s.anatomy(rng.choice(choices).format(side=st.side))
                else:
                    post = rng.choice(usable[1][st.site]).format(side=st.side)
        obs = s.e(obs_text, label)
        if sev_id is not None:
            s.r(sev_id, "modify", obs)
        if mod_id is not None:
            s.r(mod_id, "modify", obs)
        if post:
            words = post.split(" ")
            s.w(" ".join(words[:2]))
            anat = s.anatomy(" ".join(words[2:]))
        if anat is not None:
            s.r(obs, "located_at", anat)
        return obs, anat, plural

    def statement(self, st: _Stmt, impression: bool = False) -> _Sentence:
        """One sentence realising a statement; the stated change is rendered exactly."""
        rng = self.rng
        s = _Sentence()
        f = st.finding
        count = _FORMS[f][3]
        if st.polarity == State.ABSENT and st.change is None:
            s.w(rng.choice(("no", "no", "there is no")) if f != "pneumonia" else "no evidence of")
            self.noun_phrase(s, st, severity=False)
            s.w(".")
            return s
        if f in _DEVICES:
            return self.device(s, st)
        if st.polarity == State.UNCERTAIN:
            if rng.random() < 0.6:
                s.w("possible")
                self.noun_phrase(s, st)
            else:
                self.noun_phrase(s, st)
                s.w("cannot be excluded")
            s.w(".")
            return s
        if st.change == "resolved":
            return self._resolved(s, st)
        if st.change is None:
            return self._present(s, st, impression)
        return self._changed(s, st, count)

    def _resolved(self, s: _Sentence, st: _Stmt) -> _Sentence:
        """"Interval resolution of the X." / "Previously seen X has resolved."."""
        if self.rng.random() < 0.5:
            s.w("interval")
            chg = s.e("resolution", self.chan(st.finding, "resolved"))
            s.w("of the")
            obs, _, _ = self.noun_phrase(s, st, severity=False)
        else:
            s.w("previously seen")
            obs, _, plural = self.noun_phrase(s, st, severity=False)
            s.w("have" if plural else "has")
            chg = s.e("resolved", self.chan(st.finding, "resolved"))
        s.r(chg, "modify", obs)
        s.w(".")
        return s

    def _present(self, s: _Sentence, st: _Stmt, impression: bool) -> _Sentence:
        """A present finding without a stated change ("There is a small left effusion.")."""
        rng = self.rng
        if st.finding == "tortuous aorta" and rng.random() < 0.5:
            s.w("the")
            aorta = s.e("aorta", "ANAT-DP")
            s.w("is")
            s.r(s.e("tortuous", "OBS-DP"), "located_at", aorta)
        else:
            if rng.random() < 0.3 and not impression:
                first, plural = self.probe(st)
                s.w("there are" if plural else f"there is {_article(first)}" if _FORMS[st.finding][3] else "there is")
            obs, anat, _ = self.noun_phrase(s, st)
            self._combo(s, st, obs, anat)
        s.w(".")
        return s

    def _changed(self, s: _Sentence, st: _Stmt, count: bool) -> _Sentence:
        """A stated change in one of its forms: adjective, "interval <noun> of", past or state verb."""
        rng, f, change = self.rng, st.finding, st.change
        assert change is not None, "only statements of a change are rendered as one"
        words = _CHANGE_WORDS[change]
        kinds = [k for k in ("past", "state", "adj", "noun") if words[k]]
        if st.combo:
            kinds = ["adj"]
        kind = rng.choice(kinds)
        label = self.chan(f, change)
        if kind == "adj":
            chg = s.e(rng.choice(words["adj"]), label)
            obs, anat, _ = self.noun_phrase(s, st)
            self._combo(s, st, obs, anat)
        elif kind == "noun":
            s.w("interval")
            noun, prep = rng.choice(words["noun"]).split(" ")
            chg = s.e(noun, label)
            s.w(prep)
            if change == "new":
                first, plural = self.probe(st)
                if count and not plural:
                    s.w(_article(first))
            else:
                s.w("the")
            obs, _, _ = self.noun_phrase(s, st)
        else:
            obs, _, plural = self.noun_phrase(s, st)
            if kind == "past":
                s.w("have" if plural else "has")
                chg = s.e(rng.choice(words["past"]), label)
            else:
                s.w("are" if plural else "is")
                chg = s.e(rng.choice(words["state"]), label)
        s.r(chg, "modify", obs)
        s.w(".")
        return s

    def _combo(self, s: _Sentence, st: _Stmt, obs: int, anat: int | None) -> None:
        if not st.combo:
            return
        s.w("may reflect")
        for k, finding in enumerate(st.combo):
            if k:
                s.w("or")
            u = s.e(finding, "OBS-U")
            s.r(obs, "suggestive_of", u)
            if anat is not None:
                s.r(u, "located_at", anat)

    def device(self, s: _Sentence, st: _Stmt) -> _Sentence:
        """Tubes, lines and pacers: placed (CHAN-DEV-AP), removed (CHAN-DEV-DISA), repositioned, unchanged."""
        rng = self.rng
        f, change = st.finding, st.change
        if change == "resolved":
            if rng.random() < 0.5:
                s.w("interval")
                chg = s.e("removal", self.chan(f, change))
                s.w("of the")
                obs, _, _ = self.noun_phrase(s, st)
            else:
                obs, _, _ = self.noun_phrase(s, st)
                s.w("has been")
                chg = s.e("removed", self.chan(f, change))
            s.r(chg, "modify", obs)
        elif change == "new":
            if rng.random() < 0.5:
                chg = s.e("new", self.chan(f, change))
                obs, _, _ = self.noun_phrase(s, st)
            else:
                s.w("interval")
                chg = s.e("placement", self.chan(f, change))
                s.w("of")
                s.w(_article(self.probe(st)[0]))
                obs, _, _ = self.noun_phrase(s, st)
            s.r(chg, "modify", obs)
        elif change == "no change":
            obs, _, _ = self.noun_phrase(s, st)
            s.w("is")
            chg = s.e("unchanged", self.chan(f, change))
            s.w("in position")
            s.r(chg, "modify", obs)
        elif change == "repositioned":
            obs, _, _ = self.noun_phrase(s, st)
            s.w("has been")
            chg = s.e(rng.choice(("advanced", "withdrawn", "repositioned")), self.chan(f, change))
            s.r(chg, "modify", obs)
        else:
            obs, _, _ = self.noun_phrase(s, st)
            if f == "picc" and rng.random() < 0.5:
                s.w("tip is in the")
                s.r(obs, "located_at", s.e("SVC", "ANAT-DP"))
            elif f == "enteric tube" and rng.random() < 0.3:
                s.w("terminates in the")
                s.r(obs, "located_at", s.e("stomach", "ANAT-DP"))
            elif f == "enteric tube":
                s.w("tip is below the diaphragm")
            else:
                s.w(rng.choice(("is in standard position", "is in place", "is present")))
        s.w(".")
        return s


# --- one study: report + scene graph --------------------------------------------------------------------

@dataclass
class _Rendered:
    doc: dict
    # (phrase text, statements, normal-region tag, severity word per id(statement))
    sentences: list[tuple[str, list[_Stmt], str | None, dict[int, str]]]
    stated_radgraph: dict[tuple[str, str], str]


def _joined_negation(rend: "_Renderer", negs: list[_Stmt]) -> _Sentence:
    """"No X, Y or Z." for several absent findings."""
    s = _Sentence()
    s.w("no")
    for k, st in enumerate(negs):
        if k:
            s.w("," if k < len(negs) - 1 else "or")
        rend.noun_phrase(s, st, severity=False)
    s.w(".")
    return s


def _normal_sentence(anatomy: str, verb: str, word: str, article: bool = False) -> _Sentence:
    """"The lungs are clear.", "Heart size is normal.": a normal word located at an anatomy (the words
    name no vocabulary finding, as in real reports)."""
    s = _Sentence()
    if article:
        s.w("the")
        place = s.e(anatomy, "ANAT-DP")
    else:
        place = s.anatomy(anatomy)
    s.w(verb)
    s.r(s.e(word, "OBS-DP"), "located_at", place)
    s.w(".")
    return s


def _no_acute_process() -> _Sentence:
    """"No acute cardiopulmonary process." (no vocabulary finding either)."""
    s = _Sentence()
    s.w("no")
    acute = s.e("acute", "OBS-DA")
    cp = s.e("cardiopulmonary", "ANAT-DP")
    proc = s.e("process", "OBS-DA")
    s.r(acute, "modify", proc)
    s.r(proc, "located_at", cp)
    s.w(".")
    return s


def _render_report(rng: random.Random, stmts: list[_Stmt], has_prior: bool, compare: bool, reason: str,
                   cur: list[int], sparse: bool = False) -> _Rendered:
    """RadGraph text and entities for one report, and the sentence list the scene graph is built from; a
    ``sparse`` report has no normal statements (they state absences), its random draws are the same."""
    rep = _Report()
    rend = _Renderer(rng)
    sentences: list[tuple[str, list[_Stmt], str | None, dict[int, str]]] = []

    def emit(s: _Sentence, stmts: list[_Stmt], normal: str | None = None) -> None:
        sentences.append((rep.add(s), stmts, normal, rend.used))
        rend.used = {}

    def header(text: str) -> None:
        s = _Sentence()
        s.w(text)
        rep.add(s, capitalise=False)

    header("EXAMINATION : Chest radiograph .")
    header(f"INDICATION : {reason} .")
    header("COMPARISON : Prior chest radiograph ." if has_prior and compare else "COMPARISON : None .")
    header("FINDINGS :")
    lung_findings = any(cur[_IX[k]] for k in TRACKED if k[0] in ("lung opacity", "consolidation", "pneumonia",
                                                                  "pulmonary edema/hazy opacity", "atelectasis"))
    negs = [st for st in stmts if st.polarity == State.ABSENT and st.change is None]
    others = [st for st in stmts if not (st.polarity == State.ABSENT and st.change is None)]
    for st in others:
        emit(rend.statement(st), [st])
    if len(negs) >= 2 and rng.random() < 0.5:
        emit(_joined_negation(rend, negs), negs)
    else:
        for st in negs:
            emit(rend.statement(st), [st])
    if not lung_findings and rng.random() < 0.2 and not sparse:
        emit(_normal_sentence("lungs", "are", "clear", article=True), [], "lungs")
    if cur[_IX["enlarged cardiac silhouette", "cardiac silhouette"]] == 0 and rng.random() < 0.15 and not sparse:
        emit(_normal_sentence("heart size", "is", "normal"), [], "heart")
    if rng.random() < 0.1:
        emit(_normal_sentence("osseous structures", "are", "unremarkable"), [])

    header("IMPRESSION :")
    key = [st for st in others if st.polarity == State.PRESENT and st.finding not in _DEVICES + _CHRONIC
           and (st.severity >= 2 or st.change in ("new", "worsened"))]
    if key:
        for st in key[:2]:
            emit(rend.statement(st, impression=True), [st])
    elif negs and rng.random() < 0.6:
        st = rng.choice(negs)
        emit(rend.statement(st, impression=True), [st])
    else:
        emit(_no_acute_process(), [])

    stated: dict[tuple[str, str], str] = {}
    for _, sts, _, _ in sentences:
        for st in sts:
            if st.change:
                for region in st.regions:
                    stated.setdefault((region, st.finding), st.change)
    doc = {"text": " ".join(rep.tokens), "entities": rep.entities, "data_source": "MIMIC-CXR",
           "data_split": "inference"}
    return _Rendered(doc, sentences, stated)
