// name: new_finding_patients
// purpose: Patients in whom a finding appeared (an onset: present in a study, not present in the patient's
//          prior study) in a date range. level study (default): the finding or a more specific one
//          anywhere in the study; level anatomy: per region, hierarchy-aware. basis stated: a change
//          stated as new (RadGraph2 CHAN-CON-AP / CHAN-DEV-AP); derived: the onset rule over the mention
//          states; any (default): either. prior_state says what the prior study said (absent,
//          uncertain, not_mentioned): filter on absent for the strict reading. A patient's first study
//          has no onset. Uses the (finding, onset_datetime) indexes the ingest's link step maintains; the
//          onset date is the study's date and the node names its patient, so no Study is read.
// param: finding string                 finding name or synonym
// param: start_date date                first day, ISO (2150-01-01)
// param: end_date date                  last day, ISO, inclusive
// param: level {study|anatomy}=study    study: anywhere in the study; anatomy: per region
// param: basis {any|stated|derived}=any  which onsets count
// columns: patient_id, study_id, study_datetime, anatomy, finding, basis, prior_state, sources
MATCH (q:Finding) WHERE q.name = toLower($finding) OR toLower($finding) IN q.synonyms
WITH q, localdatetime({date: date($start_date)}) AS start,
     localdatetime({date: date($end_date) + duration({days: 1})}) AS stop
CALL (q, start, stop) {
  WITH q WHERE $level = 'study'
  MATCH (n:StudyFinding {finding: q.name})
  WHERE start <= n.onset_datetime < stop AND ($basis = 'any' OR $basis IN n.onset_bases)
  RETURN n.patient_id AS patient_id, n.study_id AS study_id, n.onset_datetime AS study_datetime,
         null AS anatomy, n.finding AS finding, n.onset_bases AS basis, n.onset_prior_state AS prior_state,
         n.onset_sources AS sources
  UNION ALL
  WITH q WHERE $level = 'anatomy'
  MATCH (f:Finding)-[:IS_A*0..]->(q)
  WITH collect(DISTINCT f.name) AS names
  MATCH (n:Observation)
  WHERE n.finding IN names AND start <= n.onset_datetime < stop
    AND ($basis = 'any' OR $basis IN n.onset_bases)
  RETURN n.patient_id AS patient_id, n.study_id AS study_id, n.onset_datetime AS study_datetime,
         n.anatomy AS anatomy, n.finding AS finding, n.onset_bases AS basis, n.onset_prior_state AS prior_state,
         n.onset_sources AS sources
}
RETURN patient_id, study_id, toString(study_datetime) AS study_datetime, anatomy, finding, basis, prior_state,
       sources
ORDER BY study_datetime, patient_id, anatomy, finding
