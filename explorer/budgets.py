"""explorer's internal budgets, in one place: the sizes, counts and depths past which explorer gives up a
shortcut, splits work into chunks or refuses an input. `Limits` holds what a user or an operator bounds per run;
these are fixed by the code, each for the reason beside it, and the modules that use them import them from here."""
from __future__ import annotations

# Loading a model
MAX_MODEL_BYTES = 2 * 1024**3  # protobuf parses no message over 2 GiB: a bigger file keeps its weights outside
STRIP_MIN_BYTES = 4 << 20  # a smaller model is parsed as it is: its weights cost less than looking for them
MAX_GRAPH_DEPTH = 24  # bodies inside bodies (real models nest a few levels; protobuf stops near 30)
# onnx's shape inference re-reads the enclosing scopes for every body: its time grows as nodes x bodies (a
# 20,000-node model with 1,665 bodies took 20 s). Past this budget a model keeps only its declared types.
INFERENCE_BUDGET = 10_000_000
WEIGHT_READ_BYTES = 16 << 20  # bytes per read of weights read into memory rather than mapped
WEIGHT_COPY_BYTES = 16 << 20  # bytes per copy of weights into a saved model's external data

# Running
MEMO_KEY_ELEMENTS = 16  # inputs larger than this are data, not shape arithmetic: not remembered
MEMO_KEPT_ELEMENTS = 1024  # per output
MEMO_ENTRIES = 64  # per node: a loop counter takes many values; the oldest are dropped all at once
MEMO_MODEL_BYTES = 64 * 2**20  # kept results of one model's nodes, in all
MEMO_CONSTANT_BYTES = 512 * 2**20  # kept results of one model's constant nodes, in all
HEAP_BLOCK_LIMIT = 32 * 2**20  # glibc's largest allowed M_MMAP_THRESHOLD on 64-bit systems
HEAP_KEPT_FREE_BYTES = 2**30  # freed heap glibc keeps for the next run instead of giving it back (heap.py)
RNN_STEP_INPUT_BYTES = 4 * 2**20  # the steps' inputs held at once beside the recorded gates: the products of X·Wᵀ, or
# the rows of step_rows.StepRows
TREE_CHUNK_ELEMENTS = 1 << 22  # rows x trees x targets gathered at once
SVM_CHUNK_ELEMENTS = 1 << 22  # rows x support vectors x features held at once by RBF

# Recording
SUMMARY_CHUNK_ELEMENTS = 1 << 20  # elements per step of a summary: the extra memory it needs stays bounded
SPILL_SEGMENT_BYTES = 256 << 20  # each segment file's capacity (sparse: only what is written takes disk space)
SPILL_SEQUENCE_MAX = 256  # longer sequences are summaries: a list per event that passes one on costs memory (and time)
SPILL_RELEASE_EVERY = 64 << 20  # bytes written between two releases of the mapped pages read meanwhile
SPILL_WRITE_BYTES = 16 << 20  # bytes per write
TRACE_VALUE_DEPTH = 64  # nesting of encoded values (sequences of sequences ...)
TRACE_RELEASE_FROM = 16 << 20  # a spilled value this big, once saved into a trace file, has its pages released
MAX_DISK_BYTES = 16 << 30  # the most a run's spill folder takes by default (Limits.trace_disk_bytes)

# Comparing
# values onnxruntime is asked to return as outputs in one comparison run: each run more costs a session and a run
# of the whole model (a 1,800-value model asked in chunks of 512 took 5 runs instead of 1); smaller chunks lower
# only onnxruntime's own peak, as the comparison keeps every value returned
MAX_EXPOSED = 4096
PAIR_SUM_CHUNK_ELEMENTS = 1 << 22  # elements of the pair-sum array made at once

# Optimizing
FOLD_INPUT_BYTES = 64 * 1024 * 1024  # bigger inputs are not worth holding twice in memory while folding
FOLD_OUTPUT_BYTES = 64 * 1024 * 1024  # a bigger folded result stays a computation
HAND_OVER_BYTES = 16 << 20  # a proof's explorer runs recorded this much: their memory is freed before onnxruntime's
MAPPED_WEIGHT_BYTES = 1 << 20  # a computed weight this big is pointed at in memory, not copied into the model
SCATTER_INDEX_BYTES = 16 * 1024 * 1024  # index grids computed in memory to be recognised (never written)
SCATTER_CONE_NODES = 32  # nodes of constant inputs evaluated to get an index grid
CSE_COMPARED_ELEMENTS = 1024  # elements of a constant input compared by value (exporters repeat small ones: axes, shapes)
RNN_PATTERN_DEPTH = 8  # producers followed back from a value to prove it holds only zeros (a recurrent state's start)
SYMBOLIC_VALUE_ELEMENTS = 64  # integer tensors up to this size have their contents tracked
FOLD_GROWTH = 0.05  # of the original model's bytes: how much folding may grow it
FOLD_GROWTH_MIN_BYTES = 64  # the growth a tiny model may take all the same
SIZE_MARGIN = 0.10  # of the original model's bytes
OPTIMIZER_ROUNDS = 50  # rounds of matching over the model before the optimizer stops where it is
OPTIMIZER_RERUNS = 8  # rewrites left out one after the other before the optimization is declared failed
