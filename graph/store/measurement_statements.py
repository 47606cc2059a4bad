"""The Cypher of the anatomy measurements: the Measurement nodes both loaders write, and the geometry link
step's reads and writes (graph.measurements.trends derives its rows in between)."""

from graph.measurements.trends import FINDINGS
from graph.store.statements import later_map, progressions_statement, property_map

# An image's measurements are recomputed from its boxes whenever its file is loaded: a changed (or re-read)
# file's images lose them first (MERGE variant only), as they lose their boxes.
DELETE_IMAGE_MEASUREMENTS = """
UNWIND $image_ids AS id
MATCH (:Image {image_id: id})-[:HAS_MEASUREMENT]->(m:Measurement)
DETACH DELETE m
"""


def measurements_statement(merge: bool) -> str:
    """Rows {measurement_id, image_id, the Measurement's other properties} (graph.measurements.rows): one
    Measurement per row, linked from its Image by HAS_MEASUREMENT. Run after the images; in MERGE mode after
    :data:`DELETE_IMAGE_MEASUREMENTS` for the batch's images."""
    values = property_map("Measurement")
    if not merge:
        return f"""
UNWIND $rows AS r
MATCH (i:Image {{image_id: r.image_id}})
CREATE (i)-[:HAS_MEASUREMENT]->(m:Measurement)
SET m = {values}
"""
    return f"""
UNWIND $rows AS r
MATCH (i:Image {{image_id: r.image_id}})
MERGE (m:Measurement {{measurement_id: r.measurement_id}})
ON CREATE SET m._created = true
WITH i, m, r, m._created AS created
SET m = {values}
WITH i, m WHERE created
CREATE (i)-[:HAS_MEASUREMENT]->(m)
"""


# Each study of the patients, its PRIOR study and its images' decided measurements of the observed findings.
MEASURED_STUDIES = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(s:Study)
OPTIONAL MATCH (s)-[:PRIOR]->(prior:Study)
RETURN pid AS patient_id, s.study_id AS study_id, toString(s.study_datetime) AS study_datetime,
       prior.study_id AS prior_id,
       COLLECT { MATCH (s)-[:HAS_IMAGE]->(:Image)-[:HAS_MEASUREMENT]->(m:Measurement)
                 WHERE m.name IN $names AND m.decision IS NOT NULL
                 RETURN [m.image_id, m.name, m.value, m.threshold, m.decision] } AS measurements
"""
MEASURED_NAMES = sorted(FINDINGS)

# The patients' geometry observations go, with their PROGRESSION edges (DETACH).
RESET_GEOMETRY = """
UNWIND $patient_ids AS pid
MATCH (:Patient {patient_id: pid})-[:HAS_STUDY]->(:Study)-[:HAS_GEOMETRY_OBSERVATION]->(g:GeometryObservation)
DETACH DELETE g
"""

# The patients that have a measurement: those a bulk load's geometry step links.
MEASURED_PATIENTS = """
MATCH (m:Measurement) WHERE m.decision IS NOT NULL
RETURN DISTINCT m.patient_id AS patient_id ORDER BY patient_id
"""


def write_geometry_observations_statement() -> str:
    """Rows {geometry_observation_id, study_id, measurement_id, the GeometryObservation's properties}
    (graph.measurements.trends.geometry_rows): one node per row, linked from its Study and to its Measurement."""
    values = "{geometry_observation_id: r.geometry_observation_id, " + later_map("GeometryObservation")[1:]
    return f"""
UNWIND $rows AS r
MATCH (s:Study {{study_id: r.study_id}}), (m:Measurement {{measurement_id: r.measurement_id}})
CREATE (s)-[:HAS_GEOMETRY_OBSERVATION]->(g:GeometryObservation)-[:FROM_MEASUREMENT]->(m)
SET g = {values}
"""


GEOMETRY_PROGRESSIONS = progressions_statement("GeometryObservation", "geometry_observation_id")
