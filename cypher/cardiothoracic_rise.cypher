// name: cardiothoracic_rise
// purpose: Patients whose cardiothoracic ratio rose by at least min_rise within max_days days: over every pair
//          of a patient's studies, an earlier and a later one at most max_days apart, each with the study's
//          measured ratio (its geometry observation of enlarged cardiac silhouette: the first image by id
//          whose ratio has a decision, docs/measurements.md), the later minus the earlier ratio (both as
//          stored, 2 decimals) at least min_rise. One row per patient: the pair with the largest rise (ties:
//          the earliest), its geometry states (absent / present: below or above the view's threshold), and
//          how many pairs qualify; the largest rises first. views same (default): both films PA or both AP,
//          as an AP film magnifies the heart (CheXStruct's AP threshold is 0.05 above the PA one); any: any
//          two films.
// param: min_rise float=0.05     the least rise of the ratio
// param: max_days int=365        the longest interval between the two studies, days
// param: views {same|any}=same   same: both films of one view; any: any views
// columns: patient_id, prior_study_id, study_id, prior_datetime, study_datetime, days, views, prior_ratio, ratio, rise, prior_state, state, pairs
MATCH (g:GeometryObservation {finding: 'enlarged cardiac silhouette'})-[:FROM_MEASUREMENT]->(m:Measurement)
WHERE g.value IS NOT NULL
WITH g.patient_id AS patient_id, collect({g: g, view: m.view}) AS films
UNWIND films AS a
UNWIND films AS b
WITH patient_id, a, b, a.g AS p, b.g AS c
WHERE (p.study_datetime < c.study_datetime OR (p.study_datetime = c.study_datetime AND p.study_id < c.study_id))
  AND ($views = 'any' OR a.view = b.view)
WITH patient_id, a, b, p, c, duration.inDays(p.study_datetime, c.study_datetime).days AS days,
     round(c.value - p.value, 2) AS rise
WHERE days <= $max_days AND rise >= $min_rise
WITH patient_id, a, b, p, c, days, rise ORDER BY rise DESC, p.study_datetime, c.study_datetime
WITH patient_id, collect({a: a, b: b, p: p, c: c, days: days, rise: rise}) AS pairs
WITH patient_id, pairs[0] AS top, size(pairs) AS pairs
RETURN patient_id, top.p.study_id AS prior_study_id, top.c.study_id AS study_id,
       toString(top.p.study_datetime) AS prior_datetime, toString(top.c.study_datetime) AS study_datetime,
       top.days AS days, top.a.view + ' -> ' + top.b.view AS views, top.p.value AS prior_ratio, top.c.value AS ratio,
       top.rise AS rise, top.p.state AS prior_state, top.c.state AS state, pairs
ORDER BY rise DESC, patient_id
