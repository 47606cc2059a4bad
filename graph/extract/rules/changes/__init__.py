"""RadGraph2 change entities of the rules extractor: the cue table (:mod:`~graph.extract.rules.changes.cues`), how a
cue links to its observation (:mod:`~graph.extract.rules.changes.linking`), a sign's change passed to its reading
(:mod:`~graph.extract.rules.changes.readings`) and the sentence classes of issue 33
(:mod:`~graph.extract.rules.changes.classes`). Import from the modules: this package imports none of them, so that
the refer-back (:mod:`graph.extract.rules.refer_back`), which :mod:`~graph.extract.rules.changes.linking` uses, can
read the cue table without an import circle."""
