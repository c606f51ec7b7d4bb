"""What tests and the fault campaign use to exercise the pure replication core, kept
beside it and out of it: the product never imports this package (the layering test
says so). ``faults``: seeded random fault schedules, replayable by seed; ``invariants``:
the checker that runs after every step of a schedule, of a sharded tick or of a test.

Like the core, it imports nothing of Django, Celery or Redis: only the core itself.
"""
