"""What runs beside the domain code: the local Neo4j process and its ``neo4j-admin`` import (``server``), and
the process utilities the loaders and scorers share (``processes``: cores, a fork pool without inherited
sockets)."""
