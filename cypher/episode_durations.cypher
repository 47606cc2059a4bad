// name: episode_durations
// purpose: How long a finding's episodes (finding_episodes) last, in whole days from their first to their
//          last present study: one row for the closed episodes (a stated absence ended them) and one for
//          the open ones (still present at the patient's last mention: a lower bound), with the count,
//          how many span a single study, and the quantiles. level study (default): the finding or a
//          more specific one anywhere in the study; level anatomy: one pair of rows per region. basis
//          derived (default) or stated (a source's own episodes, Lunguage's temporal groups).
// param: finding string                 finding name or synonym
// param: level {study|anatomy}=study    study: anywhere in the study; anatomy: per region
// param: basis {derived|stated}=derived  which episodes count
// columns: finding, anatomy, closed, episodes, single_study, min_days, p25_days, median_days, p75_days, p90_days, max_days, mean_days
MATCH (q:Finding) WHERE q.name = toLower($finding) OR toLower($finding) IN q.synonyms
MATCH (f:Finding)-[:IS_A*0..]->(q)
WITH q, CASE $level WHEN 'study' THEN [q.name] ELSE collect(DISTINCT f.name) END AS names
UNWIND names AS name
MATCH (e:Episode {finding: name, level: $level, basis: $basis})
WHERE e.closed IS NOT NULL AND e.duration_days IS NOT NULL AND e.n_studies IS NOT NULL  // every stored episode
// has them (every study has a date): the episode_duration index then gives all three values
WITH q.name AS finding, CASE $level WHEN 'study' THEN null ELSE e.anatomy END AS anatomy, e.closed AS closed,
     e.duration_days AS days, e.n_studies AS n
RETURN finding, anatomy, closed, count(*) AS episodes, sum(CASE WHEN n = 1 THEN 1 ELSE 0 END) AS single_study,
       min(days) AS min_days, percentileDisc(days, 0.25) AS p25_days, percentileDisc(days, 0.5) AS median_days,
       percentileDisc(days, 0.75) AS p75_days, percentileDisc(days, 0.9) AS p90_days, max(days) AS max_days,
       round(avg(days), 1) AS mean_days
ORDER BY anatomy, closed DESC
