"""The result of an evaluation: the report's model, its JSON and Markdown, JUnit, the evidence of what the agent did, failures by rule."""
