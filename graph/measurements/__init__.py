"""CheXStruct-style measurements from Chest ImaGenome anatomy boxes: pure, below the store.

For a frontal image with boxes: the cardiothoracic ratio, the mediastinal width ratio, tracheal deviation, the
aortic knob ratio, rotation and inclusion, each with CheXStruct's threshold for the image's view, the decision,
``method: box`` and, where it cannot be given, the reason (docs/measurements.md). Modules: thresholds (the
constants and their source), boxes (the boxes read, or why not), formulas (one per measurement, each naming
its CheXStruct counterpart), measure (values, thresholds, decisions).
"""

from graph.measurements.boxes import ImageSize
from graph.measurements.measure import Measurement, measure_image

__all__ = ["ImageSize", "Measurement", "measure_image"]
