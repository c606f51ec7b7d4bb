"""The composition root, above every app: ``bootstrap`` builds the one engine and wires the
apps into it; ``startup`` says which commands start without it. Only the cluster app's
``ready()`` imports this package; no app's code below it does."""
