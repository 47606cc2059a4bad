// name: stated_vs_predicted
// purpose: One patient's progression per study pair, anatomy and finding: the changes the reports state
//          (Chest ImaGenome, RadGraph2) and the events the graph derives from the mention states (new,
//          resolved, no longer mentioned, persistent) beside the model's written-back prediction with its
//          probability and model version (`cxrkg predict --write-back`: the progression GNN's change;
//          `cxrkg predict --forecaster`: the next-study forecast, onset / resolution / persistence / stays
//          absent, with the probability of that class).
// param: patient_id string   the patient
// columns: study_id, prior_study_id, anatomy, finding, stated, derived, predicted, probability, model_version
MATCH (:Patient {patient_id: $patient_id})-[:HAS_STUDY]->(s:Study)-[:HAS_OBSERVATION]->(o:Observation)-[r:PROGRESSION]->(po:Observation)
WHERE r.source IN ['chest_imagenome', 'radgraph', 'gnn'] OR r.basis = 'derived'
WITH s, o, po, collect(r) AS rs
WITH s, o, po,
     [x IN rs WHERE x.source IN ['chest_imagenome', 'radgraph'] | x.change + ' (' + x.source + ')'] AS stated,
     [x IN rs WHERE x.basis = 'derived' | x.change] AS derived,
     [x IN rs WHERE x.source = 'gnn'][0] AS g
RETURN s.study_id AS study_id, po.study_id AS prior_study_id, o.anatomy AS anatomy, o.finding AS finding,
       stated, derived, g.change AS predicted, g.probability AS probability, g.model_version AS model_version
ORDER BY s.study_order, anatomy, finding
