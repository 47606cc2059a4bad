// name: changes_between_studies
// purpose: What changed between any two studies of a patient (not only consecutive ones), per anatomy and
//          finding: presence and severity in each, the change they imply, and any change stated between
//          exactly these two studies.
// param: current_study_id string   the later study
// param: prior_study_id string     the earlier study
// columns: anatomy, finding, prior_polarity, current_polarity, prior_severity, current_severity, change, stated
MATCH (cur:Study {study_id: $current_study_id}), (pri:Study {study_id: $prior_study_id})
CALL (cur, pri) {
  MATCH (cur)-[:HAS_OBSERVATION]->(o:Observation)
  RETURN o.anatomy AS anatomy, o.finding AS finding
  UNION
  MATCH (pri)-[:HAS_OBSERVATION]->(o:Observation)
  RETURN o.anatomy AS anatomy, o.finding AS finding
}
OPTIONAL MATCH (o:Observation {observation_id: cur.study_id + '|' + anatomy + '|' + finding})
OPTIONAL MATCH (po:Observation {observation_id: pri.study_id + '|' + anatomy + '|' + finding})
WITH anatomy, finding, o, po,
     COLLECT { MATCH (o)-[r:PROGRESSION]->(po) WHERE r.source <> 'presence'
               RETURN DISTINCT r.change + ' (' + r.source + ')' AS c ORDER BY c } AS stated
WITH anatomy, finding, o.polarity AS now, po.polarity AS before, o.severity_score AS s_now,
     po.severity_score AS s_before, o.severity AS severity_now, po.severity AS severity_before, stated
WITH *, CASE
  WHEN now = 'present' AND before = 'absent' THEN 'new'
  WHEN now = 'absent' AND before = 'present' THEN 'resolved'
  WHEN now = 'present' AND before = 'present' AND s_now > s_before THEN 'worsened'
  WHEN now = 'present' AND before = 'present' AND s_now < s_before THEN 'improved'
  WHEN now = 'present' AND before = 'present' THEN 'no change'
  ELSE null END AS change
WHERE change IS NOT NULL OR size(stated) > 0
RETURN anatomy, finding, before AS prior_polarity, now AS current_polarity,
       severity_before AS prior_severity, severity_now AS current_severity, change, stated
ORDER BY anatomy, finding
