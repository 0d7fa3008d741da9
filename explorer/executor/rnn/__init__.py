"""GRU, LSTM and RNN kernels that record every gate at every time step (every opset version of the spec):
the kernel (kernel.py), the inputs it accepts (inputs.py), the in-place activations (activations.py), the
processing order of the directions (lanes.py) and the time loops (cells.py); onnxruntime's DynamicQuantizeLSTM
on the same loops (quantized.py)."""
from .kernel import rnn_kernel
from .quantized import dynamic_quantize_lstm_kernel

__all__ = ["dynamic_quantize_lstm_kernel", "rnn_kernel"]
