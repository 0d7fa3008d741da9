"""ONNX operator knowledge that more than one layer needs, read from the schemas and written from the spec: the
schemas at each opset (onnx's and onnxruntime's), the GRU/LSTM/RNN cells (`rnn`) and the operators that draw
random values. It imports nothing of explorer's but its errors: the model, the executor and the views build on it."""
