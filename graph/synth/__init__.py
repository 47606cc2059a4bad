"""Synthetic longitudinal chest X-ray cohorts in the released Chest ImaGenome, RadGraph and MIMIC formats.

:func:`write_cohort` simulates patients whose findings evolve under a few latent drivers, then writes two
noisy views of every study, exactly as the real datasets lay them out (docs/formats.md §1-§3):

* ``scene_graphs/p1X/<dicom_id>_SceneGraph.json``: one Chest ImaGenome scene graph per frontal image;
* ``radgraph/p1X/p1XXXXXXX/sXXXXXXXX.json``: one RadGraph v1 / RadGraph2 document per report;
* ``mimic-cxr-2.0.0-metadata.csv``: one MIMIC-CXR-JPG metadata row per image (frontal and lateral);
* ``ground_truth.parquet``: the true change of every tracked (anatomy, finding) between consecutive
  studies, with what each source stated;
* ``geometry_truth.parquet``: per frontal image, the geometry its anatomy boxes were planted with
  (cardiothoracic ratio, mediastinal width, trachea, aortic knob, rotation, cut-off: graph.synth.geometry);
* optionally ``region_embeddings.parquet`` (per image and region) and ``malformed/`` (bad files).

Everything is synthetic: ids are random in the MIMIC layouts, report text comes from templates.
All names of regions, findings, severity words and change labels come from
:func:`graph.vocabulary.vocabulary`; the tables below are checked against it on first use.

The latent process (per patient, evaluated at each study time):

* fluid status ``F`` (an Ornstein-Uhlenbeck process around a patient baseline, raised in the ICU, with
  acute decompensations) drives pleural effusion on both costophrenic angles (with a per-patient
  left/right asymmetry), pulmonary edema on both lungs, vascular congestion on both hila and, a little,
  the enlarged cardiac silhouette (mostly a chronic per-patient baseline);
* infection episodes on one side (sometimes both) drive consolidation, pneumonia, lung opacity and
  atelectasis on that lower lung zone, lung opacity on the neighbouring mid zone, and a parapneumonic
  part of the same side's effusion;
* ICU stays drive basal atelectasis, an endotracheal tube and an enteric tube; PICC lines come and go;
* pneumothorax episodes on one side, often treated with a chest tube that is removed after resolution;
* chronic findings (tortuous aorta, calcified granuloma, pacemaker) stay put.

Each tracked (finding, region) severity is an integer 0..3 (devices 0/1): the driver's value plus
Gaussian noise, rounded. Reports mention only some findings, with noisy severity words and ~10 %
comparison label noise; scene graphs are derived from the same report sentences with their own
extraction noise, so the two sources usually but not always agree."""

from graph.synth.tables import (
    EMBEDDING_DIM,
    GEOMETRY_TRUTH,
    GROUND_TRUTH,
    MALFORMED_KINDS,
    METADATA_CSV,
    RADGRAPH_DIR,
    SCENE_GRAPH_DIR,
    TRACKED,
)
from graph.synth.write import write_cohort

__all__ = ["write_cohort", "TRACKED", "EMBEDDING_DIM", "MALFORMED_KINDS", "GEOMETRY_TRUTH", "GROUND_TRUTH", "METADATA_CSV",
           "RADGRAPH_DIR", "SCENE_GRAPH_DIR"]
