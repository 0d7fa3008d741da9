"""onnxruntime run in a child process, the independent judge of values."""
