// name: changes_between_studies
// purpose: What changed between any two studies of a patient (not only consecutive ones), per finding
//          (level study, default: the finding anywhere in the study, more specific findings included)
//          or per region and finding (level anatomy): the state in each (present, uncertain, absent,
//          not_mentioned), the change the two states imply by the onset / resolution / persistence rules
//          (a higher or lower severity of a persistent finding reads worsened / improved), and the
//          changes stated between exactly these two studies. basis stated lists only stated changes,
//          derived only the implied ones, any both.
// param: current_study_id string        the later study
// param: prior_study_id string          the earlier study
// param: level {study|anatomy}=study    study: per finding; anatomy: per region and finding
// param: basis {any|stated|derived}=any  which changes count
// columns: anatomy, finding, prior_state, current_state, prior_severity, current_severity, change, stated
MATCH (cur:Study {study_id: $current_study_id}), (pri:Study {study_id: $prior_study_id})
CALL (cur, pri) {
  WITH cur, pri WHERE $level = 'study'
  CALL (cur, pri) {
    MATCH (cur)-[:HAS_STUDY_FINDING]->(n:StudyFinding) WHERE n.state <> 'not_mentioned' RETURN n.finding AS finding
    UNION
    MATCH (pri)-[:HAS_STUDY_FINDING]->(n:StudyFinding) WHERE n.state <> 'not_mentioned' RETURN n.finding AS finding
  }
  OPTIONAL MATCH (n:StudyFinding {study_finding_id: cur.study_id + '|' + finding})
  OPTIONAL MATCH (pn:StudyFinding {study_finding_id: pri.study_id + '|' + finding})
  RETURN null AS anatomy, finding, n.state AS now, pn.state AS before, null AS s_now, null AS s_before,
         null AS severity_now, null AS severity_before,
         COLLECT { MATCH (n)-[r:PROGRESSION {basis: 'stated'}]->(pn) RETURN DISTINCT r.change + ' (' + r.source + ')' AS c
                   ORDER BY c } AS stated
  UNION ALL
  WITH cur, pri WHERE $level = 'anatomy'
  CALL (cur, pri) {
    MATCH (cur)-[:HAS_OBSERVATION]->(o:Observation) WHERE o.polarity IS NOT NULL OR o.stated_changes IS NOT NULL
    RETURN o.anatomy AS anatomy, o.finding AS finding
    UNION
    MATCH (pri)-[:HAS_OBSERVATION]->(o:Observation) WHERE o.polarity IS NOT NULL
    RETURN o.anatomy AS anatomy, o.finding AS finding
  }
  OPTIONAL MATCH (o:Observation {observation_id: cur.study_id + '|' + anatomy + '|' + finding})
  OPTIONAL MATCH (po:Observation {observation_id: pri.study_id + '|' + anatomy + '|' + finding})
  RETURN anatomy, finding, o.polarity AS now, po.polarity AS before, o.severity_score AS s_now,
         po.severity_score AS s_before, o.severity AS severity_now, po.severity AS severity_before,
         COLLECT { MATCH (o)-[r:PROGRESSION {basis: 'stated'}]->(po) RETURN DISTINCT r.change + ' (' + r.source + ')' AS c
                   ORDER BY c } AS stated
}
WITH anatomy, finding, coalesce(now, 'not_mentioned') AS now, coalesce(before, 'not_mentioned') AS before,
     s_now, s_before, severity_now, severity_before, CASE WHEN $basis = 'derived' THEN [] ELSE stated END AS stated
WITH *, CASE WHEN $basis = 'stated' THEN null
  WHEN now = 'present' AND before = 'present' AND s_now > s_before THEN 'worsened'
  WHEN now = 'present' AND before = 'present' AND s_now < s_before THEN 'improved'
  WHEN now = 'present' AND before = 'present' THEN 'persistent'
  WHEN now = 'present' THEN 'new'
  WHEN before = 'present' AND now = 'absent' THEN 'resolved'
  WHEN before = 'present' AND now = 'not_mentioned' THEN 'no longer mentioned'
  ELSE null END AS change
WHERE change IS NOT NULL OR size(stated) > 0
RETURN anatomy, finding, before AS prior_state, now AS current_state,
       severity_before AS prior_severity, severity_now AS current_severity, change, stated
ORDER BY anatomy, finding
