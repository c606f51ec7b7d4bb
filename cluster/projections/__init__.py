"""Projections of the metadata log: each reads entries in offset order, writes one target,
records the offset it reached and can replay from any offset (STYLE.md section 7)."""
