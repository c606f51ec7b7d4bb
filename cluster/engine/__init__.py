"""The replication engine's shell: one unit of work around the pure core (unit_of_work),
the store following the hot state (topology, mirror), and the log's entries of a step."""
