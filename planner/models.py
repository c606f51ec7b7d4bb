"""Planner models arrive with the planner issue (stored plans, scenarios)."""
