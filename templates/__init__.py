"""harnessgit templates, installed as the harnessgit_templates package: the demo's
triage harness, example evaluators and proposers, and the CI workflow."""
