// name: recurrent_findings
// purpose: Patients with at least min_episodes episodes of a finding (finding_episodes) that begin in a
//          date range: with the default 2, those in whom the finding resolved (a stated absence) and came
//          back. level study (default): the finding or a more specific one anywhere in the study, one row
//          per patient; level anatomy: one row per patient and region. first_study_ids lists each
//          episode's first study, closed how many of them a stated absence ended. Answers from the
//          episode_recurrence index (finding, level, basis, episode_count, first_datetime, patient_id,
//          closed, first_study_id, last_datetime): where one finding's episodes are counted (study level,
//          or a region with no more specific finding on record), a patient with fewer than min_episodes
//          episodes in all (episode_count) is skipped before episodes are grouped by patient. basis derived
//          (default): the episodes the rules derive; stated: those a source states (Lunguage's temporal
//          groups, at study level).
// param: finding string                 finding name or synonym
// param: start_date date=1900-01-01     first day an episode may begin, ISO
// param: end_date date=2299-12-31       last day, ISO, inclusive
// param: min_episodes int=2             the fewest episodes in the range
// param: level {study|anatomy}=study    study: anywhere in the study; anatomy: per region
// param: basis {derived|stated}=derived  which episodes count
// columns: patient_id, anatomy, finding, episodes, closed, first_study_ids, first_datetime, last_datetime
MATCH (q:Finding) WHERE q.name = toLower($finding) OR toLower($finding) IN q.synonyms
MATCH (f:Finding)-[:IS_A*0..]->(q)
WHERE EXISTS { MATCH (x:Episode) WHERE x.finding = f.name AND x.level = $level AND x.basis = $basis
               AND x.episode_count >= 1 AND x.first_datetime IS NOT NULL AND x.patient_id IS NOT NULL
               AND x.closed IS NOT NULL AND x.first_study_id IS NOT NULL AND x.last_datetime IS NOT NULL }
// (every episode has these values: the predicates let the episode_recurrence index answer)
WITH q, CASE $level WHEN 'study' THEN [q.name] ELSE collect(DISTINCT f.name) END AS names,
     localdatetime({date: date($start_date)}) AS start,
     localdatetime({date: date($end_date) + duration({days: 1})}) AS stop
// episodes of several findings in one region are counted together: then no one finding's count decides
WITH q, names, start, stop, CASE size(names) WHEN 1 THEN $min_episodes ELSE 1 END AS least
UNWIND names AS name
MATCH (e:Episode {finding: name, level: $level, basis: $basis})
WHERE e.episode_count >= least AND start <= e.first_datetime < stop AND e.patient_id IS NOT NULL
      AND e.closed IS NOT NULL AND e.first_study_id IS NOT NULL AND e.last_datetime IS NOT NULL
WITH q.name AS finding, e
ORDER BY e.first_datetime, e.first_study_id
WITH e.patient_id AS patient_id, CASE $level WHEN 'study' THEN null ELSE e.anatomy END AS anatomy, finding,
     collect([e.first_datetime, e.first_study_id, e.closed, e.last_datetime]) AS eps
WHERE size(eps) >= $min_episodes
RETURN patient_id, anatomy, finding, size(eps) AS episodes, size([x IN eps WHERE x[2]]) AS closed,
       [x IN eps | x[1]] AS first_study_ids, toString(eps[0][0]) AS first_datetime,
       toString(eps[-1][3]) AS last_datetime
ORDER BY patient_id, anatomy
