"""CXReasonBench-style staged diagnostic items from the graph's Measurement nodes (``cxrkg cxreasonbench
generate``).

Per frontal image and task (cardiomegaly, mediastinal widening, tracheal deviation, aortic knob enlargement,
rotation, inclusion): the direct question, then the criterion, the body parts, the measurement and the
decision, laid out as CXReasonBench's evaluation reads its reasoning path (docs/cxreasonbench.md), each
answer with its basis (the Measurement's id, value, threshold, regions). Modules: facts (an image's stored
measurements and boxes, read from the graph or measured from records), templates (the wordings and what each
task measures), items (one item, pure), generate (the cohort's items written as JSON lines).
"""
