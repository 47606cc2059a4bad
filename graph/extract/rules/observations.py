"""Observation entities: one per finding mention that ConText does not skip, labelled by
:func:`graph.extract.rules.polarity.polarity` (and uncertain right before "versus"); a word before a finding
that names another finding with it; severity words (OBS-DP ``modify``) and ``suggestive_of`` between the
observations around a "suggestive of" / "consistent with" cue."""

from __future__ import annotations

from dataclasses import replace

from graph.extract.rules.draft import Draft, before_alternative
from graph.extract.rules.mentions import Mention
from graph.extract.rules.polarity import polarity


def add_observations(d: Draft, obs_spans: list[Mention]) -> None:
    """Add the observation entities of ``obs_spans`` (in order) to ``d.entities`` and ``d.obs_items``, then
    compose them with the word before (:func:`_compose`)."""
    ent_at = {i: e for e in d.doc.ents for i in range(e.start, e.end)}
    for o in obs_spans:
        label = polarity(ent_at[o.start], d.sections[o.start])
        if label is None:
            continue
        if label == "OBS-DP" and before_alternative(d, o):
            label = "OBS-U"
        item = {"_start": o.start, "_end": o.end, "label": label, "rel": [], "_finding": o.value}
        d.entities.append(item)
        d.obs_items.append((o, item))
    d.obs_items = _coordinated(d, _shared_describer(d, _compose(d)))


def link_severity(d: Draft, m: Mention) -> None:
    """A severity word modifies the nearest observation of its sentence, at most three tokens away."""
    hit = d.nearest(m, 3)
    if hit:
        d.entities.append({"_start": m.start, "_end": m.end, "label": "OBS-DP", "rel": [("modify", hit[1])],
                           "_mod": True})


def link_suggestive(d: Draft, m: Mention) -> None:
    """"A suggestive of B": the last observation before the cue in its sentence -> the first one after it."""
    before = [(o, it) for o, it in d.same_sentence(m) if o.end <= m.start]
    after = [(o, it) for o, it in d.same_sentence(m) if o.start >= m.end]
    if before and after:
        src, dst = before[-1][1], after[0][1]
        src["rel"].append(("suggestive_of", dst))


def _compose(d: Draft) -> list[tuple[Mention, dict]]:
    """A word before a finding that, with it, names another finding becomes an OBS-DP ``modify`` of it and
    changes its finding, as ingestion composes modifier + span ("calcified right hilar lymph nodes" ->
    granulomatous disease, not enlarged hilum). Looks back at most six tokens in the sentence, not across another
    finding."""
    sent_of, lower = d.sent_of, d.lower
    out = []
    for o, it in d.obs_items:
        for i in range(o.start - 1, max(o.start - 7, -1), -1):
            if sent_of[i] != sent_of[o.start] or i in d.obs_tokens or lower[i] in (".", ";", ":"):
                break
            f = d.v.finding_for(f"{d.texts[i]} {o.text}")
            if f and f != o.value:
                d.entities.append({"_start": i, "_end": i + 1, "label": "OBS-DP", "rel": [("modify", it)],
                                   "_mod": True})
                it["_finding"] = f
                o = replace(o, value=f)
                break
        out.append((o, it))
    return out


#: words that join two nouns one describing word goes with ("calcified granulomas / lymph nodes")
_NOUN_JOINERS = {"/", "and"}


def _shared_describer(d: Draft, items: list[tuple[Mention, dict]]) -> list[tuple[Mention, dict]]:
    """A describing word that opens a finding of two or more words goes with the noun joined to it by a slash or
    "and" when, with that noun, it names another finding ("calcified granulomas / lymph nodes": calcified lymph
    nodes, granulomatous disease, not enlarged hilum; the guide's §2), as :func:`_compose` composes a word just
    before the noun."""
    out = []
    ends = {o.end: o for o, _ in items}
    for o, it in items:
        j = o.start - 1
        prev = ends.get(j) if j > 0 and d.lower[j] in _NOUN_JOINERS else None
        if prev is not None and prev.end - prev.start >= 2 and d.sent_of[prev.start] == d.sent_of[o.start]:
            f = d.v.finding_for(f"{d.texts[prev.start]} {o.text}")
            if f and f != o.value:
                d.entities.append({"_start": prev.start, "_end": prev.start + 1, "label": "OBS-DP",
                                   "rel": [("modify", it)], "_mod": True})
                it["_finding"] = f
                o = replace(o, value=f)
        out.append((o, it))
    return out


#: words that join two describing words of one noun ("alveolar and interstitial opacities")
_COORDINATORS = {"and", "or", ","}


def _coordinated(d: Draft, items: list[tuple[Mention, dict]]) -> list[tuple[Mention, dict]]:
    """Two describing words that share a noun name two findings ("alveolar and interstitial opacities": airspace
    opacity and interstitial opacities; "chronic inflammatory and fibrotic changes"), as the guide's §2 names each
    phrase: a finding of two or more words whose noun, after the one or two words before "and" / "or" / a comma,
    names another finding gets that one too, as the noun alone (OBS, the same polarity) with the words before as
    its OBS-DP ``modify`` (ingestion composes modifier + span)."""
    sent_of, lower = d.sent_of, d.lower
    out = []
    for o, it in items:
        out.append((o, it))
        j = o.start - 1
        if o.end - o.start < 2 or j < 1 or lower[j] not in _COORDINATORS or sent_of[j] != sent_of[o.start]:
            continue
        head = " ".join(d.texts[o.start + 1:o.end])
        for n in (2, 1):
            words = range(j - n, j)
            if j < n or sent_of[j - n] != sent_of[o.start] or any(i in d.obs_tokens or not lower[i].isalpha()
                                                                  for i in words):
                continue
            f = d.v.finding_for(" ".join(d.texts[i] for i in words) + " " + head)
            if f and f != o.value:
                noun = Mention(o.start + 1, o.end, "OBS", head, f)
                item = {"_start": noun.start, "_end": noun.end, "label": it["label"], "rel": [], "_finding": f}
                d.entities += [item, {"_start": j - n, "_end": j, "label": "OBS-DP", "rel": [("modify", item)],
                                      "_mod": True}]
                out.append((noun, item))
                break
    return out


#: findings that name post-surgical change in general; "of" / "from" a named procedure or device gives way to it
_GENERIC_FINDINGS = {"postsurgical changes"}
_NAMED_CATEGORIES = {"device", "tubesandlines"}
#: words after a generic finding that name what it is ("postsurgical changes of / from / with / consistent with /
#: compatible with / including ...")
_NAMING_WORDS = {"of", "from", "with", "consistent", "compatible", "including"}


#: a bare catheter "with" which a named line or device is described is that device's own ("right chest port
#: with catheter tip in the SVC"), not another device
_BARE_DEVICE_FORMS = {"catheter", "catheters"}


def drop_named_generics(d: Draft) -> None:
    """"Postsurgical changes of prior CABG", "postoperative changes from spinal rods" (or "with", "consistent
    with", "compatible with", "including" the device): the named procedure or device is the finding, the generic
    one goes (the annotation guide's §7 labels these by what they name); so does a bare "catheter" that a named
    line or device before it is "with" ("port with catheter tip")."""
    dropped = set()
    for o, it in d.obs_items:
        if o.value in _GENERIC_FINDINGS and o.end < len(d.lower) and d.lower[o.end] in _NAMING_WORDS:
            sent_end = d.sentence_of(o.start)[1]
            if any(o.end < o2.start < sent_end and d.v.findings[o2.value].category in _NAMED_CATEGORIES
                   for o2, _ in d.obs_items):
                dropped.add(id(it))
        elif o.end - o.start == 1 and d.lower[o.start] in _BARE_DEVICE_FORMS:
            start = d.sentence_of(o.start)[0]
            if any(start <= o2.start < o.start and o2.value != o.value and "with" in d.lower[o2.end:o.start]
                   and d.v.findings[o2.value].category in _NAMED_CATEGORIES for o2, _ in d.obs_items):
                dropped.add(id(it))
    d.drop(dropped)
