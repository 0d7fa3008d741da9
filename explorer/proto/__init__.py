"""The ONNX protobuf as explorer reads it: graph and node references, the graph index, function bodies, tensors (weights) and the wire format."""
