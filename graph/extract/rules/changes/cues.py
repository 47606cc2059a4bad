"""The change cues of the rules extractor and the RadGraph2 class each states, of a condition and of a device
(the annotation guide's §6), read by the spaCy pipeline's target rules and by every rule that links a cue."""

from __future__ import annotations

_SEEING = ("seen", "present", "visible", "noted", "visualized", "demonstrated", "identified")
#: a finding seen on the prior study (no change) or not seen there (new): the guide's §6, with the verbs of
#: seeing IU uses, an adverb between or before ("seen well on prior", "also identified on the previous study",
#: "not well seen on prior exam") and "previously" for the prior ("This was present previously")
_SEEN_BEFORE = tuple(f"{verb} {adverb}on {the}{prior}"
                     for verb in _SEEING
                     for adverb in ("", "well ", "also ", "again ", "previously ", "clearly ")
                     for the in ("", "the ") for prior in ("prior", "previous", "comparison")) + tuple(
    f"{adverb} {verb} on {the}{prior}" for verb in _SEEING for adverb in ("well", "clearly")
    for the in ("", "the ") for prior in ("prior", "previous", "comparison")) + tuple(
    f"{verb} previously" for verb in _SEEING)
NOT_SEEN_BEFORE = tuple(f"not {cue}" for cue in _SEEN_BEFORE)
#: "again seen / noted" (the guide's §6) with every verb of seeing ("again identified", "again visualized")
_SEEN_AGAIN = tuple(f"again {verb}" for verb in _SEEING)

#: "previously seen / identified" before a finding the sentence negates ("The previously seen nodule is not
#: visualized today"): the finding is resolved (the guide's §6, CHAN-CON-RES); before a present one
#: ("the previously identified nodule has increased") or after one, the sentence's other cues say what changed
SEEN_EARLIER = tuple(f"previously {verb}" for verb in (*_SEEING, "described"))

#: change cue -> (class for a condition, class for a device); None: not a change of that kind. IU redacts the
#: "changed" of "not significantly changed" ("effusion, not significantly XXXX since the last study": 3 reports).
CHANGE_CUES: dict[str, tuple[str | None, str | None]] = {
    **{w: ("CHAN-NC", "CHAN-NC") for w in (
        "unchanged", "stable", "stably", "no change", "no significant change", "no interval change",
        "without significant change", "without interval change", "without significant interval change",
        "not significantly changed", "not significantly xxxx", "without change", "similar to prior",
        "similar to the prior", "appears similar",
        "appear similar", "similar to", "similar from",
        "similar in appearance", "persistent", "persistently", "persistence", "redemonstration",
        "again demonstrated are", "persists", "persist",
        "again seen", "again noted", "again demonstrated", "redemonstrated", "re-demonstrated",
        "grossly unchanged", "remains", "remain", "unchanged in position", "in unchanged position", "as before",
        "there is again", "there are again", "is again", "are again", *_SEEN_BEFORE, *_SEEN_AGAIN)},
    **{w: ("CHAN-CON-WOR", None) for w in (
        "increased", "increasing", "increase", "worsened", "worsening", "worse", "enlarging",
        "progressed", "progression", "progressive", "more prominent", "larger", "interval increase")},
    **{w: ("CHAN-CON-IMP", None) for w in (
        "improved", "improving", "improvement", "decreased", "decreasing", "decrease", "smaller", "resolving",
        "clearing", "near complete clearing", "partially resolved", "near-complete resolution", "near complete resolution",
        "partial resolution", "nearly resolved", "almost resolved", "partially cleared",
        "less prominent", "diminished", "reduced", "interval improvement", "interval decrease")},
    **{w: ("CHAN-CON-AP", "CHAN-DEV-AP") for w in (
        "new", "newly", "interval development", "interval appearance", "developing", "new onset", "developed",
        "has developed", "have developed", "development of", *NOT_SEEN_BEFORE,
        # a finding back after it had gone is new on this study ("recurrent effusion", "recurrence of pneumothorax")
        "recurrent", "recurrence of", "recurrence")},
    **{w: (None, "CHAN-DEV-AP") for w in ("placed", "inserted", "interval placement", "placement of", "interval")},
    **{w: ("CHAN-CON-RES", "CHAN-DEV-DISA") for w in (
        "resolved", "resolution", "cleared", "no longer seen", "no longer visualized",
        "no longer present", "no longer identified", "interval resolution", *SEEN_EARLIER)},
    **{w: (None, "CHAN-DEV-DISA") for w in ("removed", "removal", "interval removal", "extubated")},
    **{w: (None, "CHAN-DEV-PLACE") for w in (
        "advanced", "withdrawn", "retracted", "repositioned", "pulled back", "interval advancement",
        # motion, or a place "now" held (the guide's §9a): "the tip has moved", "now projects over the atrium"
        "moved", "has moved", "have moved", "now projects", "now project", "now terminates", "now lies",
        "now overlies", "now extends", "now ends")},
}

#: the only classes of an absent finding (the guide's §6: a resolved finding, a removed device); a negated
#: finding has no change ("Mild cardiomegaly as before with no effusions": the cue is the cardiomegaly's)
RESOLUTIONS = {"CHAN-CON-RES", "CHAN-DEV-DISA"}
