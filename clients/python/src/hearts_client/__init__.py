"""Python client for the Hearts TableService (hearts.v1); the generated code lives in hearts.v1."""
