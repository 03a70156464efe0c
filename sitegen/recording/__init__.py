"""Recording traces from a running agent over HTTP, and a stand-in agent for tests and demos."""
