// name: finding_episodes
// purpose: A finding's episodes in one patient, the finding given by name or synonym: one row per
//          episode, in time order. An episode starts at a study where the finding is present (stated, or
//          implied by a stated "no change" / "improved" / "resolved" against that study) and the patient
//          is not in one; present and not-mentioned studies continue it; a stated absence closes it at
//          the last present study before (end_study_id states the absence); a later presence is a new
//          episode (number 2, 3, ...: a recurrence). level study (default): the finding or a more specific
//          one anywhere in the study; level anatomy: per region, with the more specific findings.
//          duration_days: first to last present study; implied_study_ids: studies present by
//          implication only (filter them out for the strict reading); basis derived (by these rules) or
//          stated (a source's own episode: Lunguage's temporal group within an entity group, at study
//          level, named in entity_group and temporal_group).
// param: patient_id string              the patient
// param: finding string                 finding name or synonym
// param: level {study|anatomy}=study    study: anywhere in the study; anatomy: per region
// columns: episode_id, number, anatomy, finding, first_study_id, last_study_id, first_datetime, last_datetime, duration_days, n_studies, closed, end_study_id, max_severity, sources, implied_study_ids, basis, entity_group, temporal_group
MATCH (q:Finding) WHERE q.name = toLower($finding) OR toLower($finding) IN q.synonyms
MATCH (f:Finding)-[:IS_A*0..]->(q)
WITH q, CASE $level WHEN 'study' THEN [q.name] ELSE collect(DISTINCT f.name) END AS names
MATCH (e:Episode)
WHERE e.patient_id = $patient_id AND e.finding IN names AND e.level = $level  // the episode_patient index
RETURN e.episode_id AS episode_id, e.number AS number, e.anatomy AS anatomy, e.finding AS finding,
       e.first_study_id AS first_study_id, e.last_study_id AS last_study_id,
       toString(e.first_datetime) AS first_datetime, toString(e.last_datetime) AS last_datetime,
       e.duration_days AS duration_days, e.n_studies AS n_studies, e.closed AS closed,
       e.end_study_id AS end_study_id, e.max_severity AS max_severity, coalesce(e.sources, []) AS sources,
       coalesce(e.implied_study_ids, []) AS implied_study_ids, e.basis AS basis, e.entity_group AS entity_group,
       e.temporal_group AS temporal_group
ORDER BY first_datetime, anatomy, finding, basis, number
