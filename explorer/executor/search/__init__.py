"""onnxruntime's generation operators (com.microsoft GreedySearch, BeamSearch, WhisperBeamSearch, Sampling) as control flow: their
decoder and encoder subgraphs run as bodies, one iteration per decode step, with onnxruntime's CPU semantics (its
logits processors, beam scorer and sampling)."""
