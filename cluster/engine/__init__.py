"""The replication engine's shell: one unit of work around the pure core (unit),
the store following the hot state (topology, mirror), and the log's entries of a step."""
