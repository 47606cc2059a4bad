"""The field's temporal benchmarks written from the graph for any cohort it holds: progression pairs in
MS-CXR-T's columns with CheXTemporal's five classes (:mod:`graph.temporal.pairs`) and MI-CXR's five-visit
questions (:mod:`graph.temporal.multivisit`). Each builds its own values from the store's Cypher
(``graph/store/*_statements.py``); the independent checks live in :mod:`graph.checks.nih`.
"""
