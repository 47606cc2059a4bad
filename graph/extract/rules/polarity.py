"""How a finding's polarity is read: the rules of the pipeline's medspaCy ConText component and the
RadGraph label its attributes give (negated -> OBS-DA; possible, hypothetical, or stated in the indication /
history section -> OBS-U; historical stays OBS-DP; family history and the comparison section: skipped)."""

from __future__ import annotations

from graph.extract.rules.changes.cues import NOT_SEEN_BEFORE

_NO_NEGATION = ("no change", "no significant change", "no interval change", "without change",
                "not significantly changed", "no longer",
                # a finding "without significant change" is there, unchanged (the guide's §6: CHAN-NC)
                "without significant change", "without interval change", "without significant interval change",
                "no significant interval change", "without appreciable change", "no appreciable change")
_POSSIBLE_AFTER = ("may be present", "could be present", "is suspected", "are suspected", "not excluded",
                   "cannot be excluded", "can not be excluded", "is possible", "are possible", "is questioned",
                   "not entirely excluded", "not completely excluded", "may not be demonstrated",
                   "may not be visualized", "may not be seen", "is not excluded", "are not excluded",
                   # the guide's §3 "cannot be excluded", in IU's other wordings
                   "cannot be entirely excluded", "cannot be completely excluded", "cannot be ruled out",
                   "can not be ruled out", "is also possible", "are also possible",
                   "cannot be confidently excluded", "can not be confidently excluded",
                   # the guide's §3 "differential diagnosis includes", said after the reading
                   "is in the differential", "are in the differential", "is a consideration", "is another consideration",
                   "would be a consideration", "are considerations", "would be considerations",
                   # the guide's §3 "possible", as a noun ("true nodule is a possibility")
                   "is a possibility", "are a possibility")
#: "difficult to exclude" hedges the finding on either side of it ("pulmonary edema difficult to entirely exclude",
#: "difficult to completely exclude a superimposed pneumonia"): one rule per span, as two rules of one span prune
#: each other
_POSSIBLE_EITHER_SIDE = ("difficult to exclude", "difficult to entirely exclude", "difficult to completely exclude",
                         "would be difficult to exclude", "would be difficult to completely exclude")
_POSSIBLE_BEFORE = ("could be", "may", "could", "question of", "questionable", "suspicious for", "cannot exclude",
                    "can not exclude", "could indicate", "may indicate", "versus", "vs", "differential",
                    "possibly", "question", "questioned", "suspected", "suspicion for", "suspicion of",
                    "concern for", "evaluation for", "evaluate for", "for evaluation of", "to evaluate for",
                    "if there is", "if", "consider", "rule out", "r/o", "might", "might be", "potentially",
                    "suggest", "suggests", "suggesting", "suggestive of",
                    # hedges of the annotation guide's §3
                    "concerning for", "presumed", "presumably", "favor", "favored", "favoring", "suggestion of",
                    "equivocal", "perhaps", "possibility of", "considerations", "considerations include",
                    "considerations would include",
                    # a reading to be checked clinically is offered, not stated ("Please correlate clinically for
                    # pneumonia")
                    "correlate clinically for", "correlate for", "clinical correlation for",
                    # a reading "secondary to" a hedge: ConText's default rules end a scope at "secondary"
                    "may be secondary to", "could be secondary to", "possibly secondary to", "may be related to",
                    "could be related to", "possibly related to",
                    # IU's de-identification took "likely" out of every report ("most XXXX", "XXXX represents";
                    # graph/extract/eval/gold/ANNOTATION_GUIDE.md §9)
                    "most xxxx", "xxxx represents", "xxxx representing", "xxxx represent", "xxxx reflecting",
                    "xxxx reflects", "xxxx reflect", "xxxx due to", "xxxx secondary to", "xxxx from")
_NORMAL_AFTER = ("within normal limits", "within limits of normal", "appear normal", "appears normal",
                 "are normal", "is normal", "are within normal limits", "is within normal limits")
#: a finding denied after it ("Pneumothorax is not seen."; the annotation guide's §3, NegBio's "not seen"
#: pattern); "not seen on the prior study" is new, not absent (a longer cue, which wins)
_ABSENT_AFTER = tuple(f"{verb} not {seen}" for verb in ("is", "are", "was", "were")
                      for seen in ("seen", "identified", "visualized", "appreciated", "demonstrated", "evident"))
#: how far back "... is normal" / "... is not seen" reaches: its own subject, not a finding of an earlier
#: clause ("Left effusion, heart size is normal.")
_AFTER_SCOPE = 3
#: ConText's default rules left out: backward ": no" / ": none" and "free" (add_context), and its negating "evaluate for",
#: which this module's hedge of the same span replaces (two rules of one span prune each other, and which one is
#: kept depended on how many rules there are)
_DROPPED_CONTEXT_RULES = {": no", ": none", "free", "evaluate for"}
_TERMINATE = ("there is", "there are", "which", "however", "although", "but", "otherwise", "with the exception",
              "except", "while", "though",
              # "no X seen, Y": the verb closes the negated clause, the comma opens another (the guide's §3
              # negates what the negation names, not a later clause's findings)
              "seen ,")


def add_context(nlp):
    """Append medspaCy's ConText component to ``nlp`` and return it (as
    :class:`graph.extract.rules.scoped_context.ScopedConText`, which pairs modifiers and targets faster to the same
    effect): its default rules less ": no" / ": none" (backward negation, which would negate across our "FINDINGS:
    No ..." section headers) and "free" (backward, "pain free": inside "free air" it ended the scope of "no
    visible" before the finding) and "evaluate for" (a negation there, a hedge here), then this module's
    pseudo-negations, terminations, possibility cues and "... is normal" negations."""
    from medspacy.context import ConText, ConTextRule

    from graph.extract.rules.scoped_context import FACTORY, register_factory

    defaults = [r for r in ConText(nlp, rules="default").rules if r.literal not in _DROPPED_CONTEXT_RULES]
    register_factory()
    context = nlp.add_pipe(FACTORY, config={"rules": None})
    context.add(defaults)
    context.add([ConTextRule(w, "PSEUDO_NEGATED_EXISTENCE") for w in _NO_NEGATION + NOT_SEEN_BEFORE]
                + [ConTextRule(w, "TERMINATE", direction="TERMINATE") for w in _TERMINATE]
                + [ConTextRule(w, "POSSIBLE_EXISTENCE", direction="BACKWARD") for w in _POSSIBLE_AFTER]
                + [ConTextRule(w, "POSSIBLE_EXISTENCE", direction="FORWARD") for w in _POSSIBLE_BEFORE]
                + [ConTextRule(w, "POSSIBLE_EXISTENCE", direction="BIDIRECTIONAL") for w in _POSSIBLE_EITHER_SIDE]
                + [ConTextRule(w, "NEGATED_EXISTENCE", direction="BACKWARD", max_scope=_AFTER_SCOPE)
                   for w in _NORMAL_AFTER + _ABSENT_AFTER]
                # "either atelectasis or infiltrate": two readings offered (the guide's §3); "on either side" names
                # no finding after it
                + [ConTextRule("either", "POSSIBLE_EXISTENCE", direction="FORWARD", max_scope=4)])
    return context


def polarity(ent, section: str | None) -> str | None:
    """RadGraph label for a finding (a ConText-processed ``doc.ents`` span), or None to skip it."""
    attributes = ent._  # spaCy builds a new accessor object per ``ent._``
    if attributes.is_family or section == "comparison":
        return None
    if attributes.is_negated:
        return "OBS-DA"
    if attributes.is_uncertain or attributes.is_hypothetical or section in ("indication", "history"):
        return "OBS-U"
    return "OBS-DP"
