"""ONNX operator knowledge that more than one layer needs: control-flow body signatures (`bodies`) and the
GRU/LSTM/RNN cell specs (`rnn`). Reads only the model; the executor and the views both build on it."""
from .bodies import BodySignature, Carried, Slot, body_signature
from .rnn import CELLS, Activation, Cell, RnnConfig, rnn_config

__all__ = ["CELLS", "Activation", "BodySignature", "Carried", "Cell", "RnnConfig", "Slot", "body_signature",
           "rnn_config"]
