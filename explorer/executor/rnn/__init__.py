"""GRU, LSTM and RNN kernels that record every gate at every time step (every opset version of the spec):
the kernel (kernel.py), the inputs it accepts (inputs.py), the in-place activations (activations.py), the
processing order of the directions (lanes.py) and the time loops (cells.py)."""
from .kernel import rnn_kernel

__all__ = ["rnn_kernel"]
