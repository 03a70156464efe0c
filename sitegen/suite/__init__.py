"""What is evaluated: the case file and trace shapes, reading them, the suite's settings, their JSON Schemas and `sitegen check`'s findings."""
