"""The model weights cotaudit builds: the embedded default model and the tiny test model."""
